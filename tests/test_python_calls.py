"""Whole-script candidates from the profiler's result tree (launchprof.worker.python_calls)
against the Chrome export they replace: a real CPU profile with stacks, where a
``record_function("launch")`` annotation stands in for a kernel launch (both readers get
annotation rows from the profiler; CUDA launches need the GPU)."""

from __future__ import annotations

import json
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from launchprof.worker.candidates import candidate_rows, tally, trace_rows, user_file_resolver, user_function  # noqa: E402
from launchprof.worker.profiler_tables import Timeline, read_timeline, write_table  # noqa: E402
from launchprof.worker.python_calls import TooManyCalls, python_call_rows, tree_rows  # noqa: E402

SCRIPT = textwrap.dedent(
    """
    import torch
    from torch.profiler import record_function

    def launch(x):
        with record_function("launch"):
            return x + 1

    class Net:
        def forward(self, x):
            return launch(launch(x))

    def helper(x):
        return launch(x) * 2

    def recurse(x, n):
        launch(x)
        return x if n == 0 else recurse(x, n - 1)

    def inside_an_op(x):
        return launch(x)

    def step(net, x):
        launch(x)
        return net.forward(x) + helper(x)

    def run():
        net, x = Net(), torch.ones(4)
        for _ in range(5):
            step(net, x)
        recurse(x, 3)
        with record_function("outer op"):  # a Python call under an op node of the tree
            inside_an_op(x)
        float(x.sum())

    run()
    """
)


def _launch(row: dict[str, Any]) -> int:
    return int(row.get("cat") == "user_annotation" and row.get("name") == "launch")


@pytest.fixture(scope="module")
def profiled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path, list[dict[str, Any]], dict[str, Any]]:
    """The profile, the script's folder and the export's rows (torch exports a profile only
    once). The namespace is kept, as the worker keeps the script's module in ``sys.modules``."""
    folder = tmp_path_factory.mktemp("script")
    script = folder / "s.py"
    script.write_text(SCRIPT)
    namespace: dict[str, Any] = {"__name__": "__main__"}
    sys.path.insert(0, str(folder))
    try:
        with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
            exec(compile(SCRIPT, str(script), "exec"), namespace)
    finally:
        sys.path.remove(str(folder))
    return prof, folder, trace_rows(prof, folder), namespace


def _rows(prof: Any, folder: Path, **kw: Any) -> list[dict[str, Any]]:
    table = read_timeline(prof)
    assert table is not None
    return tree_rows(prof, table, user_file_resolver(str(folder)), **kw)


def _counts(rows: list[dict[str, Any]], folder: Path) -> dict[str, tuple[int, int]]:
    return {t.name: (t.calls, t.kernels) for t in tally(rows, user_file_resolver(str(folder)), _launch).values()}


def test_the_tree_gives_the_exports_calls_and_launches(profiled):
    prof, folder, export, _ = profiled
    fast = _rows(prof, folder)
    assert _counts(fast, folder) == _counts(export, folder)
    counts = _counts(fast, folder)
    # launch owns every annotation (innermost); the others own none of their own
    assert counts["launch"] == (5 * 4 + 4 + 1, 5 * 4 + 4 + 1)
    assert counts["forward"] == (5, 0) and counts["helper"] == (5, 0) and counts["step"] == (5, 0)
    assert counts["recurse"] == (4, 0) and counts["inside_an_op"] == (1, 0) and counts["run"] == (1, 0)


def test_the_tree_rows_match_the_exports_python_rows(profiled):
    """As many calls with the same durations; each user call under the same user caller."""
    prof, folder, export_rows, _ = profiled
    is_user = user_file_resolver(str(folder))
    fast = [r for r in _rows(prof, folder) if r["cat"] == "python_function"]
    export = [r for r in export_rows if r.get("cat") == "python_function"]

    def user_calls(rows: list[dict[str, Any]]) -> Counter:
        by_id = {r["args"]["Python id"]: r for r in rows}

        def caller(row: dict[str, Any]) -> str | None:
            parent = by_id.get(row["args"].get("Python parent id"))
            while parent is not None and user_function(parent["name"], is_user) is None:
                parent = by_id.get(parent["args"].get("Python parent id"))
            return None if parent is None else parent["name"]

        return Counter((r["name"], caller(r), round(r["dur"], 2)) for r in rows if user_function(r["name"], is_user))

    assert len(fast) == len(export)
    assert Counter(round(r["dur"], 2) for r in fast) == Counter(round(r["dur"], 2) for r in export)
    assert user_calls(fast) == user_calls(export) and len(user_calls(fast)) > 5
    inside = next(r for r in fast if r["name"].endswith(": inside_an_op"))
    parent = next(r for r in fast if r["args"]["Python id"] == inside["args"]["Python parent id"])
    assert parent["name"].endswith(": run")  # found below the op node, its caller kept


def test_launches_and_calls_share_a_thread_and_a_clock(profiled):
    """The annotation rows (from ``events()``) fall inside the Python call that made them
    (from the tree) on the same thread id: the tally's sweep depends on it."""
    prof, folder, _, _ = profiled
    rows = _rows(prof, folder)
    launches = [r for r in rows if _launch(r)]
    calls = [r for r in rows if r["cat"] == "python_function" and r["name"].endswith(": launch")]
    assert len(launches) == len(calls) == 25
    for row in launches:
        assert any(c["tid"] == row["tid"] and c["ts"] <= row["ts"] and row["ts"] + row["dur"] <= c["ts"] + c["dur"] for c in calls)


def test_a_profile_without_stacks_is_exported(tmp_path):
    """No Python call in the tree: the ranking reads the export (it has cpu_op rows, which
    the timeline never keeps)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch.ones(3).add_(1)
    table = read_timeline(prof)
    is_user = user_file_resolver(str(tmp_path))
    assert table is not None and tree_rows(prof, table, is_user) == []
    rows = candidate_rows(prof, tmp_path, table, is_user)
    assert any(r.get("cat") == "cpu_op" for r in rows)
    assert not (tmp_path / "candidates-trace.json").exists()


class _ExportOnly:
    """A profiler whose results have no tree and no events: only the export works."""

    class profiler:  # noqa: N801 - torch's attribute name
        kineto_results = object()

    def export_chrome_trace(self, path: str) -> None:
        row = {"ph": "X", "cat": "python_function", "name": "m.py(1): f", "ts": 1, "dur": 2, "pid": 1, "tid": 1}
        Path(path).write_text(json.dumps({"traceEvents": [row]}))


def test_a_torch_without_the_tree_falls_back_to_the_export(tmp_path):
    prof = _ExportOnly()
    assert read_timeline(prof) is None
    is_user = user_file_resolver(str(tmp_path))
    rows = candidate_rows(prof, tmp_path, Timeline(rows=[], base_ns=0), is_user)
    assert [r["name"] for r in rows] == ["m.py(1): f"]
    assert candidate_rows(prof, tmp_path, None, is_user) == rows


def test_too_many_python_calls_are_refused(profiled):
    """As the export's size cap: the worker turns the error into a note."""
    prof, folder, _, _ = profiled
    roots = prof.profiler.kineto_results.experimental_event_tree()
    is_user = user_file_resolver(str(folder))
    assert len(python_call_rows(roots, 0, is_user)) > 40
    with pytest.raises(TooManyCalls, match="over 40 Python calls"):
        python_call_rows(roots, 0, is_user, limit=40)
    with pytest.raises(ValueError):
        _rows(prof, folder, limit=40)


def test_calls_into_freed_code_are_read_safely(tmp_path):
    """The tree names a call through a pointer into its code object's name, which it does
    not own: code outside the user's files freed after the profile (here compiled from a
    string, then dropped and its memory reused) must not be named, nor break the ranking."""
    import gc

    (tmp_path / "u.py").write_text("def user(f, x):\n    return f(x)\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import u  # type: ignore[import-not-found]

        fn_name = "transient_" + "".join(chr(97 + i % 26) for i in range(40))
        scratch: dict[str, Any] = {}
        exec(compile(f"def {fn_name}(x):\n    return x + 1\n", "/elsewhere/gen.py", "exec"), scratch)
        with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
            for _ in range(3):
                with torch.profiler.record_function("launch"):
                    u.user(scratch[fn_name], torch.ones(2))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("u", None)
    scratch.clear()
    gc.collect()
    filler = [("x%d" % i) * 3 for i in range(200_000)]  # reuse the freed memory
    rows = _rows(prof, tmp_path)
    del filler
    names = {r["name"] for r in rows if r["cat"] == "python_function"}
    assert "/elsewhere/gen.py(1)" in names and not any(fn_name in n for n in names)
    assert _counts(rows, tmp_path) == {"user": (3, 0)}


def test_write_table_writes_the_rows_it_is_given(tmp_path):
    """The whole-script run reads the events once: the table is written from those rows."""
    import gzip

    row = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0, "args": {"correlation": 3}}
    name = write_table(_ExportOnly(), tmp_path, "whole-script", Timeline(rows=[row], base_ns=5))
    data = json.loads(gzip.decompress((tmp_path / name).read_bytes()))
    assert data["traceEvents"] == [row] and data["launchprof"]["source"] == "kineto_results"
    name = write_table(_ExportOnly(), tmp_path, "fallback")  # no events: the export, gzipped
    assert json.loads(gzip.decompress((tmp_path / name).read_bytes()))["traceEvents"][0]["name"] == "m.py(1): f"
