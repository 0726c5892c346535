"""What makes ``launchprof lint --all`` fast must not change what it finds (docs/lint-speed.md).

Worker processes, byte-balanced chunks, trees freed without the cyclic GC and report
modules loaded late are each checked here against the plain way of doing the same.
"""

from __future__ import annotations

import gc
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from launchprof.lint import engine, lint, parallel

ROOT = Path(__file__).resolve().parent.parent

# One file with a bit of everything the result carries: findings in methods, nested
# functions and a nested class, a suppressed one, an unknown ignore kind, a call chain.
MIXED = textwrap.dedent(
    """
    import torch
    import launchprof


    class Net{i}(torch.nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(n, n)
            self.register_buffer("scale", torch.ones(n))

        def forward(self, x: torch.Tensor, lr: float) -> torch.Tensor:
            if x.sum() > 0:
                x = x * self.scale
            x.add_(lr)
            return x


    def step{i}(x: torch.Tensor, n: int, opt):
        total = x.sum().item()
        ok = x.max().item()  # launchprof: ignore[hidden-sync]
        odd = x.min().item()  # launchprof: ignore[hiden-sync]
        for group in opt.param_groups:
            group["lr"] = n * 0.1

        def inner(y: torch.Tensor):
            return y.cpu()

        class Local:
            def go(self, z: torch.Tensor):
                return bool(z)

        for _ in range(n):
            x = x + 1
        return inner(x), total, ok, odd
    """
)


def _tree(tmp_path: Path, files: int) -> Path:
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (tmp_path / "proj" / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (pkg / "__init__.py").write_text("")
    for i in range(files):
        (pkg / f"m{i:03d}.py").write_text(MIXED.format(i=i) * (1 + i % 3))
    (pkg / "zz_bad.py").write_text("def f(:\n")
    (pkg / "deep.py").write_text("import torch\n\ndef f(x: torch.Tensor):\n    y = x" + " + x" * 30000 + "\n    return y.item()\n")
    return pkg


def _in_workers(monkeypatch, cores: int = 2) -> None:
    monkeypatch.setattr(parallel, "PARALLEL_MIN_FILES", 4)
    monkeypatch.setattr(parallel, "usable_cores", lambda: cores)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="worker processes are forked")
def test_workers_give_exactly_what_one_process_gives(tmp_path, monkeypatch):
    pkg = _tree(tmp_path, 30)
    alone = lint([pkg], all_functions=True)
    assert parallel.workers_for(32) == 0  # the default threshold keeps this tree in one process
    _in_workers(monkeypatch)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 3)
    assert parallel.workers_for(32) == 2
    together = lint([pkg], all_functions=True)
    assert together == alone  # every field: hazards in order, targets, counts, notes
    # a file holds its block 1-3 times; a redefined function is checked once, every comment is read
    assert len(alone.hazards) > 100 and alone.suppressed == 30 and len(alone.unknown_ignores) == 60
    assert alone.skipped and alone.unreadable and len(alone.targets) > 150


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="worker processes are forked")
def test_workers_on_the_sample_models_match_one_process(tmp_path, monkeypatch):
    samples = shutil.copytree(ROOT / "sample_models", tmp_path / "samples")
    alone = lint([samples], all_functions=True)
    _in_workers(monkeypatch, cores=3)
    monkeypatch.setattr(parallel, "CHUNK_FILES", 2)
    assert parallel.workers_for(len(list(samples.glob("*.py")))) == 3
    assert lint([samples], all_functions=True) == alone
    assert len(alone.hazards) >= 20


def test_chunks_keep_file_order_and_balance_bytes(tmp_path):
    sizes = [10, 5000, 20, 20, 20, 4000, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 6000]
    files = []
    for i, size in enumerate(sizes):
        path = tmp_path / f"f{i:02d}.py"
        path.write_text("#" * (size - 1) + "\n")
        files.append(str(path))
    files.append(str(tmp_path / "missing.py"))  # unreadable: noted later, counted as empty here
    chunks = parallel.split(files, 2)
    assert [f for chunk, _ in chunks for f in chunk] == files
    assert all(len(chunk) <= parallel.CHUNK_FILES for chunk, _ in chunks)
    assert [sum(sizes[files.index(f)] if f in files[:-1] else 0 for f in chunk) for chunk, _ in chunks] == [n for _, n in chunks]
    budget = sum(sizes) // (2 * parallel.CHUNKS_PER_WORKER)
    assert all(n <= budget or len(chunk) == 1 for chunk, n in chunks)  # only a file bigger than the budget stands alone


def test_checked_trees_are_freed_without_the_cyclic_gc(tmp_path, monkeypatch):
    """Under --all each file's index is unlinked after it is checked, so its tree goes by
    reference counting: the collections lint runs find (next to) nothing left to free."""
    pkg = _tree(tmp_path, 6)
    collected: list[int] = []
    real_collect = gc.collect

    class CountingGC:
        def __getattr__(self, name):
            return getattr(gc, name)

        def collect(self, *generation):
            collected.append(real_collect(*generation))
            return collected[-1]

    monkeypatch.setattr(engine, "gc", CountingGC())
    result = lint([pkg], all_functions=True)
    assert len(result.targets) > 30
    assert sum(collected) < 50, collected  # before: thousands of AST nodes per file


def test_the_lint_command_forks_before_loading_pydantic_or_rich():
    """Workers start from a small process: the report models and renderers load later."""
    code = (
        "import sys\n"
        "import launchprof.cli, launchprof.commands.lint, launchprof.lint.parallel\n"
        "heavy = sorted(m for m in ('pydantic', 'rich', 'launchprof.hazards') if m in sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_meanwhile_runs_once_and_only_overlapping_time_counts_as_lint(tmp_path, monkeypatch):
    """The command's imports run while workers check, or before a one-process check, whose
    reported time (the report's "in N s") then leaves them out."""
    import time

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    for i in range(6):
        (pkg / f"m{i}.py").write_text(MIXED.format(i=i))
    calls: list[float] = []

    def slow() -> None:
        calls.append(time.perf_counter())
        time.sleep(1.0)

    alone = lint([pkg], all_functions=True, meanwhile=slow)
    assert len(calls) == 1 and alone.seconds < 1.0
    _in_workers(monkeypatch)
    together = lint([pkg], all_functions=True, meanwhile=slow)
    assert len(calls) == 2 and together == alone
    target = lint([pkg / "m0.py"], target="step0", meanwhile=slow)
    assert len(calls) == 3 and target.seconds < 1.0 and target.hazards
