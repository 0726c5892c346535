"""The capture snippet (issue 13 item 8) from recorded runs: valid Python, the recorded
shapes and dtypes, and ``run(*args)`` copying in and cloning out (CUDA replaced by fakes
that run eagerly; tests/test_gpu_advice.py replays it for real)."""

from __future__ import annotations

import ast
import contextlib
import types

import torch
from recorded import load_evidence, recorded, report_of

from launchprof.events.lifecycle_events import TargetEvent
from launchprof.events.observation_events import ArgLeaf, CallEvent
from launchprof.analysis.snippet import capture_snippet, static_arguments


def snippet_of(name: str) -> str:
    """The snippet written from a recorded run's first call, whatever its verdict
    (dict_inputs, the sample with a dict and a list of arguments, measures graphs-dont-help:
    0.90x on the H200 recording)."""
    ev = load_evidence(name)
    code = capture_snippet(ev.target, ev.calls)
    assert code is not None
    return code


def test_snippet_only_for_graphs_help() -> None:
    for name in recorded(["decode_loop", "dict_inputs", "hidden_sync"]):
        report = report_of(name)
        assert (report.capture_snippet is not None) == (report.verdict == "graphs-help")
        if report.capture_snippet is not None:
            assert report.capture_snippet == snippet_of(name)


def test_static_inputs_have_the_recorded_shapes_and_dtypes() -> None:
    ev = load_evidence("dict_inputs")
    code = snippet_of("dict_inputs")
    ast.parse(code)
    args = eval(f"({', '.join(static_arguments(ev.calls[0].args))},)".replace("'cuda'", "'cpu'"), {"torch": torch})
    for leaf in ev.calls[0].args:
        root, _, rest = leaf.path.partition("[")
        value = args[["batch", "extras"].index(root)]
        value = eval("v[" + rest, {"v": value})
        assert list(value.shape) == leaf.shape and str(value.dtype) == f"torch.{leaf.dtype}"


class _FakeGraph:
    def replay(self) -> None:
        pass


def _fake_cuda() -> types.SimpleNamespace:
    class Stream:
        def wait_stream(self, other: object) -> None:
            pass

    return types.SimpleNamespace(
        Stream=Stream,
        stream=lambda s: contextlib.nullcontext(),
        current_stream=lambda: Stream(),
        CUDAGraph=_FakeGraph,
        graph=lambda g: contextlib.nullcontext(),
    )


def test_run_copies_inputs_in_and_returns_clones(monkeypatch) -> None:
    code = snippet_of("dict_inputs").replace("'cuda'", "'cpu'")
    calls = []

    def step(batch, extras):
        calls.append(1)
        h = batch["features"] @ batch["weights"]
        for e in extras:
            h = h + e
        return {"out": torch.relu(h), "norm": h.norm(dim=-1)}

    fake_torch = types.SimpleNamespace(**{k: getattr(torch, k) for k in dir(torch) if not k.startswith("__")})
    fake_torch.cuda = _fake_cuda()
    namespace = {"step": step}
    exec(compile(code, "<snippet>", "exec"), namespace)
    namespace["torch"] = fake_torch
    batch = {"features": torch.randn(16, 128), "weights": torch.randn(128, 128)}
    extras = [torch.randn(16, 128) for _ in range(3)]
    out = namespace["run"](batch, extras)
    expected = step(batch, extras)
    assert torch.allclose(out["out"], expected["out"]) and torch.allclose(out["norm"], expected["norm"])
    assert out["out"].data_ptr() != namespace["_lp_out"]["out"].data_ptr()  # a clone, not the static output
    assert torch.equal(namespace["_lp_static"][1][2], extras[2])  # copied into the static buffer
    assert len(calls) == 3 + 1 + 1  # warm-up, capture, then the eager reference above


def test_no_snippet_when_arguments_cannot_be_rebuilt() -> None:
    target = TargetEvent(name="step", qualname="step")
    assert capture_snippet(target, [CallEvent(index=0, args=[ArgLeaf(path="cfg.lr", kind="scalar", value=0.1)])]) is None
    assert capture_snippet(TargetEvent(name="@launchprof.target <lambda>", qualname="<lambda>"), [CallEvent(index=0)]) is None


def test_report_prints_the_snippet_only_with_the_flag() -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    from recorded import RUNS

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "80"}
    run = str(RUNS / "decode_loop.lprun")  # graphs-help: the report has a snippet
    cmd = [sys.executable, "-m", "launchprof", "report", run]
    shown = subprocess.run([*cmd, "--snippet"], capture_output=True, text=True, env=env, timeout=120)
    hidden = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert shown.returncode == 0 == hidden.returncode, shown.stderr + hidden.stderr
    assert "_lp_graph.replay()" in shown.stdout and "_lp_graph.replay()" not in hidden.stdout
    # pasted code is never wrapped: every line of the snippet appears whole
    for line in report_of("decode_loop").capture_snippet.splitlines():
        assert line.rstrip() in shown.stdout
