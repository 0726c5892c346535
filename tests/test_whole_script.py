"""Whole-script mode (issue 13 item 3): sync sites are info, no "per step" claim, and
candidate targets ranked by kernels per call, each with its command."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from launchprof.analysis import analyse
from launchprof.commands.failon import fail_reason
from launchprof.run.header_records import RUN_FORMAT_VERSION, RunHeader
from launchprof.render import RenderOptions, renderer_for
from launchprof.run import load_run, write_run
from launchprof.worker.candidates import candidates, kernel_launches, launches_by_correlation, qualname, tally, trace_rows, user_file_resolver
from tests.recorded import RUNS

SCRIPT = textwrap.dedent(
    """
    import torch

    class Net:
        def forward(self, x):
            return (x * 2) * 3

    def helper(x):
        return x * 5

    def step(net, x):
        return net.forward(x) * helper(x)

    def run():
        net, x = Net(), torch.ones(4)
        for _ in range(4):
            step(net, x)
        float(x.sum())

    run()
    """
)


def test_kernels_are_charged_to_the_innermost_user_function(tmp_path):
    """A real CPU profile with stacks; ``aten::mul`` ops stand in for kernel launches."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile

    script = tmp_path / "s.py"
    script.write_text(SCRIPT)
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        with profile(activities=[ProfilerActivity.CPU], with_stack=True) as prof:
            exec(compile(SCRIPT, str(script), "exec"), {"__name__": "__main__"})
    finally:
        sys.path.remove(str(tmp_path))
    rows = trace_rows(prof, tmp_path)
    assert not (tmp_path / "candidates-trace.json").exists()
    counts = tally(rows, user_file_resolver(str(tmp_path)), lambda r: int(r.get("cat") == "cpu_op" and r.get("name") == "aten::mul"))
    by_name = {t.name: t for t in counts.values()}
    assert by_name["forward"].calls == 4 and by_name["forward"].kernels == 8
    assert by_name["helper"].calls == 4 and by_name["helper"].kernels == 4
    assert by_name["step"].calls == 4 and by_name["step"].kernels == 4  # only its own multiply
    rows = candidates(counts, "s.py")
    assert [r["name"] for r in rows[:3]] == ["Net.forward", "helper", "step"]
    assert rows[0]["kernels_per_call"] == 2.0 and rows[0]["command"] == "launchprof analyze s.py --target Net.forward"
    assert torch.__version__


def test_qualname_of_methods_and_nested_functions(tmp_path):
    src = tmp_path / "m.py"
    src.write_text("class A:\n    @staticmethod\n    def f():\n        def g():\n            pass\n")
    assert qualname(str(src), 2, "f") == "A.f"
    assert qualname(str(src), 4, "g") is None


def _whole_script_run(tmp_path: Path) -> Path:
    recorded = load_run(RUNS / "hidden_sync.lprun")
    probe = next(e for e in recorded.events if e["type"] == "probe")
    assert probe["syncs"], "the recorded hidden_sync run has no sync sites"
    machine = next(e for e in recorded.events if e["type"] == "machine")
    root = Path(recorded.header.project_root or tmp_path)
    events = [
        machine,
        {**probe, "index": None, "effects": [], "rng": [], "streams": [], "functions": []},
        {"type": "candidates", "t": 1.0, "functions": [
            {"name": "step", "file": "sample_models/hidden_sync.py", "line": 20, "calls": 30, "kernels_per_call": 12.0,
             "command": "launchprof analyze sample_models/hidden_sync.py --target step"}]},
        {"type": "script-end", "t": 2.0, "status": "ok", "exit_code": 0, "calls": 0},
        {"type": "worker-end", "t": 2.1, "wall_s": 2.1},
    ]
    header = RunHeader(format_version=RUN_FORMAT_VERSION, launchprof_version="0", created="2026-01-01T00:00:00+00:00",
                       script="sample_models/hidden_sync.py", target=None, project_root=str(root))
    return write_run(header, events, {}, tmp_path / "whole.lprun", {k: v for k, v in []} or None)


def test_whole_script_syncs_are_info_and_do_not_trip_fail_on(tmp_path):
    report = analyse(load_run(_whole_script_run(tmp_path)))
    assert report.target is None and report.hazards
    assert all(h.severity == "info" for h in report.hazards)
    assert all(h.message.startswith("would break capture if this ran inside a target") for h in report.hazards)
    assert fail_reason(report, "error") is None and fail_reason(report, "warning") is None
    assert report.verdict == "eager-only"


def test_candidates_are_in_every_format(tmp_path):
    report = analyse(load_run(_whole_script_run(tmp_path)))
    assert [c.name for c in report.candidates] == ["step"]
    command = "launchprof analyze sample_models/hidden_sync.py --target step"
    data = json.loads(renderer_for("json", RenderOptions()).render(report))
    assert data["candidates"][0]["command"] == command and data["candidates"][0]["kernels_per_call"] == 12.0
    for fmt in ("text", "md", "html"):
        text = " ".join(renderer_for(fmt, RenderOptions(width=200)).render(report).split())
        assert "Candidate targets" in text and command in text, fmt


def test_a_target_run_is_left_alone():
    report = analyse(load_run(RUNS / "hidden_sync.lprun"))
    assert report.target is not None and report.candidates == []
    assert any(h.severity == "error" for h in report.hazards)


def test_kernels_follow_their_runtime_call_into_the_innermost_user_call(tmp_path):
    """Chrome-trace rows as a CUDA profile writes them: a kernel row is charged through its
    correlation id to the runtime call, and that to the innermost open user call on the
    same thread; a launch on another thread, or outside any user call, is charged to none."""
    (tmp_path / "m.py").write_text("def outer():\n    pass\n\ndef inner():\n    pass\n")
    py = lambda name, ts, dur, tid=1: {"ph": "X", "cat": "python_function", "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": tid}
    rt = lambda corr, ts, tid=1: {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts, "dur": 1, "pid": 1, "tid": tid, "args": {"correlation": corr}}
    kern = lambda corr: {"ph": "X", "cat": "kernel", "name": "k", "ts": 500, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": corr}}
    rows = [
        py("m.py(1): outer", 0, 100), py("m.py(4): inner", 10, 20), py("torch/nn/x.py(3): f", 12, 5),
        rt(1, 13), rt(2, 40), rt(3, 200), rt(4, 15, tid=2),
        kern(1), kern(1), kern(2), kern(3), kern(4),
        py("m.py(1): outer", 300, 10),
    ]
    per = launches_by_correlation(rows)
    assert per == {1: 2, 2: 1, 3: 1, 4: 1}
    counts = tally(rows, user_file_resolver(str(tmp_path)), lambda r: per.get(r["args"]["correlation"], 0) if r.get("cat") == "cuda_runtime" else 0)
    by_name = {t.name: (t.calls, t.kernels) for t in counts.values()}
    assert by_name == {"inner": (1, 2), "outer": (2, 1)}


def test_a_recorded_h200_trace_gives_the_profilers_own_kernel_count(tmp_path):
    """Chrome-trace rows of a whole-script CUDA profile recorded on the H200 (torch 2.11,
    whose ``prof.events()`` leaves the Python calls out), against torch.profiler's own
    count of kernels for one call of each function, taken in the same process
    (tests/data/whole_script/expected.json, written by the recording)."""
    import gzip

    from tests.test_whole_script_gpu import SCRIPT

    data = Path(__file__).resolve().parent / "data" / "whole_script"
    rows = json.loads(gzip.decompress((data / "trace-rows.json.gz").read_bytes()))
    expected = json.loads((data / "expected.json").read_text())
    (tmp_path / "heavy.py").write_text(SCRIPT)  # the recorded script: same def lines
    counts = tally(rows, user_file_resolver(str(tmp_path)), kernel_launches(rows))
    found = {c["name"]: c for c in candidates(counts, "heavy.py")}
    for name, per_call in expected["kernels_per_call"].items():
        assert found[name]["kernels_per_call"] == per_call, (name, found.get(name))
        assert found[name]["calls"] == expected["calls"][name]
    assert next(iter(found)) == "Block.forward"


def test_an_oversized_trace_is_not_read_back(tmp_path, monkeypatch):
    """A long script's whole-script trace can be GBs: the ranking is skipped (the worker
    turns the error into a note), and the exported file is removed either way."""
    import launchprof.worker.candidates as cand

    class Prof:
        def export_chrome_trace(self, path: str) -> None:
            Path(path).write_text('{"traceEvents": []}' + " " * 100)

    monkeypatch.setattr(cand, "MAX_TRACE_BYTES", 50)
    with pytest.raises(ValueError, match="over"):
        trace_rows(Prof(), tmp_path)
    assert not (tmp_path / "candidates-trace.json").exists()
    monkeypatch.setattr(cand, "MAX_TRACE_BYTES", 10_000)
    assert trace_rows(Prof(), tmp_path) == []


def test_nested_calls_with_the_same_start_and_length_follow_the_call_tree(tmp_path):
    """At ns ties the row order of the trace must not decide: the child (by ``Python parent
    id``) is the innermost call, listed first or last."""
    (tmp_path / "m.py").write_text("def outer():\n    pass\n\ndef inner():\n    pass\n")
    outer = {"ph": "X", "cat": "python_function", "name": "m.py(1): outer", "ts": 0, "dur": 50, "pid": 1, "tid": 1,
             "args": {"Python id": 7, "Python parent id": 3}}
    inner = {**outer, "name": "m.py(4): inner", "args": {"Python id": 8, "Python parent id": 7}}
    launch = {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": 5}}
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "ts": 20, "dur": 1, "pid": 0, "tid": 7, "args": {"correlation": 5}}
    for rows in ([outer, inner, launch, kernel], [inner, outer, launch, kernel]):
        counts = tally(rows, user_file_resolver(str(tmp_path)), kernel_launches(rows))
        assert {t.name: t.kernels for t in counts.values()} == {"outer": 0, "inner": 1}
