"""The package's layout: a few modules at the root, unique module names, and imports that
only run down the layers (docs/architecture.md, "The layers").

Read from the source with ``ast``: no launchprof module is imported, so a broken import
elsewhere cannot hide a layering error here.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "launchprof"

# Lower number = higher layer. A module may import its own layer and the layers below it.
LAYERS: dict[str, int] = {
    "launchprof": 0,  # the package itself (``target``, the lazy API), cli, entry, __main__
    "launchprof.cli": 0,
    "launchprof.entry": 0,
    "launchprof.__main__": 0,
    "launchprof.commands": 1,
    "launchprof.api": 1,
    "launchprof.ranks": 1,
    "launchprof.render": 2,  # the renderers, one per format
    "launchprof.analysis": 3,
    "launchprof.hazards": 4,
    "launchprof.lint": 4,
    "launchprof.run": 5,
    "launchprof.crossover": 6,
    "launchprof.render.words": 7,  # sentences and number formats, which analysis uses too
    "launchprof.model": 8,
    "launchprof.common": 8,  # torch-free helpers the worker shares; the bucket rule returns a note
    "launchprof.fileio": 7,  # files named and written; streams get the report in ASCII where needed
    "launchprof.events": 9,
    "launchprof.errors": 9,
    "launchprof.enums": 9,
    "launchprof.version": 9,
    "launchprof.marker": 9,  # ``target`` and the hook the worker sets
}
# The worker is a separate process: it imports only these, and the CLI side imports only
# its configuration (the in-process API and the crossover sweep run the worker's own code).
WORKER = "launchprof.worker"
# The worker builds the machine record, runs the quick calibration (crossover) and writes its
# rank's files, so the model's plain dataclasses and the crossover measurement are its too.
WORKER_MAY_IMPORT = (
    WORKER, "launchprof.events", "launchprof.common", "launchprof.errors", "launchprof.enums",
    "launchprof.version", "launchprof.marker", "launchprof.model", "launchprof.crossover", "launchprof.fileio",
    "launchprof.ranks.worker_side", "launchprof.ranks.rank_paths",
)
WORKER_SIDE = ("launchprof.ranks.worker_side", "launchprof.ranks.rank_paths")
# The one edge from the worker into the analysis: the worker tries each written fix before the
# report shows it, and the fix tried must be the fix shown, so it runs the report's own rules
# on its own event log (lazily imported, after the measurement).
WORKER_EDGES = {("launchprof.worker.fix_trials", "launchprof.hazards.fixes.fixes_to_try")}


def modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def imports(path: Path, known: dict[str, Path]) -> set[str]:
    """Every launchprof module ``path`` imports, at the top or inside a function; not the
    imports under ``if TYPE_CHECKING:``, which only annotations read."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test) for n in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name.startswith("launchprof"):
                found.add(name)
    return found


def layer_of(module: str) -> int | None:
    best = None
    for prefix in LAYERS:
        if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > len(best)):
            best = prefix
    return None if best is None else LAYERS[best]


def under(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def test_at_most_twelve_modules_at_the_root():
    root = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(root) <= 12, root


def test_module_names_are_unique():
    names = Counter(p.name for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))
    assert [n for n, c in names.items() if c > 1] == []


def test_every_module_has_a_layer():
    mods = modules()
    assert [m for m in mods if layer_of(m) is None and not under(m, (WORKER,))] == []


def test_imports_run_down_the_layers():
    mods = modules()
    wrong = []
    for mod, path in mods.items():
        if under(mod, (WORKER,) + WORKER_SIDE):
            continue
        for dep in imports(path, mods):
            if under(dep, (WORKER,)):
                continue
            if layer_of(dep) < layer_of(mod):
                wrong.append(f"{mod} -> {dep}")
    assert wrong == []


def test_the_worker_stands_apart():
    mods = modules()
    wrong = []
    for mod, path in mods.items():
        deps = imports(path, mods)
        if under(mod, (WORKER,) + WORKER_SIDE):
            wrong += [f"{mod} -> {d}" for d in deps if not under(d, WORKER_MAY_IMPORT) and d != "launchprof" and (mod, d) not in WORKER_EDGES]
        else:
            for d in deps:
                if under(d, (WORKER,)) and d != "launchprof.worker.config" and not under(mod, ("launchprof.api", "launchprof.crossover")):
                    wrong.append(f"{mod} -> {d}")
    assert wrong == []
