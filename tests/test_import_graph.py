"""The package's import graph has no cycles (scripts/import-cycles, read from the source alone).

An import inside a function counts: a lazy import that closes a loop still ties the two
layers together, it only hides the loop from the interpreter until the call. Imports under
``if TYPE_CHECKING:`` do not count: they never run.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "import-cycles"

# models.Report holds a CompileResult, and compile_report builds on the models' Stats: the
# split of models.py into layers ends this one, and the entry goes with it.
KNOWN = [["launchprof.model.compiled", "launchprof.model.core"]]


def _tool():
    name = "launchprof_import_cycles"
    if name not in sys.modules:
        loader = importlib.machinery.SourceFileLoader(name, str(SCRIPT))
        module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
        sys.modules[name] = module  # its dataclasses look their module up by name
        loader.exec_module(module)
    return sys.modules[name]


def _explain(edges, components) -> str:
    lines = []
    for component in components:
        inside = set(component)
        lines.append(" <-> ".join(component))
        lines += [f"    {e.source}:{e.line} -> {e.target}{' (lazy)' if e.lazy else ''}" for e in edges if e.source in inside and e.target in inside]
    return "\n".join(lines)


def test_the_package_has_no_import_cycles():
    tool = _tool()
    edges = tool.import_edges(ROOT)
    found = tool.cycles(edges, set(tool.module_files(ROOT)))
    new = [c for c in found if c not in KNOWN]
    assert not new, "import cycles (move the function to the module where it belongs):\n" + _explain(edges, new)


def test_nothing_inside_the_package_imports_its_public_api():
    """``launchprof/__init__.py`` exports the API, which loads the worker, the analysis and the
    renderers: a module that imports it (for the version, say) sits above all of them."""
    tool = _tool()
    users = [f"{e.source}:{e.line}" for e in tool.import_edges(ROOT) if e.target == "launchprof"]
    assert not users, users


def test_lint_modules_import_their_siblings_not_the_lint_package():
    """``launchprof/lint/__init__.py`` loads the engine, which loads every other lint module."""
    tool = _tool()
    users = [f"{e.source}:{e.line}" for e in tool.import_edges(ROOT) if e.target == "launchprof.lint" and e.source.startswith("launchprof.lint.")]
    assert not users, users


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / "launchprof" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _cycles(root: Path) -> list[list[str]]:
    tool = _tool()
    return tool.cycles(tool.import_edges(root), set(tool.module_files(root)))


def test_a_lazy_import_that_closes_a_loop_is_a_cycle(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "low.py": "def f():\n    from launchprof.high import g\n    return g\n",
        "high.py": "from launchprof.low import f\n",
    })  # fmt: skip
    assert _cycles(root) == [["launchprof.high", "launchprof.low"]]
    edges = _tool().import_edges(root)
    assert [(e.source, e.lazy) for e in edges if e.source == "launchprof.low"] == [("launchprof.low", True)]


def test_type_checking_imports_do_not_count(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "low.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from launchprof.high import g\n",
        "high.py": "from launchprof.low import f\n",
    })  # fmt: skip
    assert _cycles(root) == []


def test_from_a_package_import_a_module_reads_the_package_too(tmp_path):
    root = _package(tmp_path, {
        "__init__.py": "",
        "sub/__init__.py": "from launchprof.sub.engine import run\n",
        "sub/engine.py": "from launchprof.sub.values import V\n",
        "sub/values.py": "from . import helpers\n",
        "sub/helpers.py": "",
    })  # fmt: skip
    assert _cycles(root) == [["launchprof.sub", "launchprof.sub.engine", "launchprof.sub.values"]]
    (root / "launchprof" / "sub" / "values.py").write_text("import launchprof.sub.helpers as helpers\n")
    assert _cycles(root) == []
