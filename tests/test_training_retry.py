"""A training step whose caller keeps ``loss`` with its autograd graph, on CPU: the plan's
capture fails with kind ``kept-autograd-graph`` (a fake capture that fails exactly while an
output of the step still holds its graph, as torch's does), launchprof detaches the kept
output in place, captures again, and the run goes on; the report names what was detached,
labels the figures measured after it, keeps the hazard, and reads ``not-capturable`` (the code
as written does not capture; its figures read "once fixed"). When the
retry fails too, the second obstacle is the report's capture failure and both are listed."""

from __future__ import annotations

import json
import weakref
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from launchprof.analysis import analyse  # noqa: E402
from launchprof.events.capture_events import CaptureEvent, ValidationEvent  # noqa: E402
from launchprof.events.timing_events import TimingEndEvent, TimingEvent  # noqa: E402
from launchprof.render import renderer_for  # noqa: E402
from launchprof.render.renderer import RenderOptions  # noqa: E402
from launchprof.run import load_run  # noqa: E402
from launchprof.run.file import write_run  # noqa: E402
from launchprof.run.header import RUN_FORMAT_VERSION  # noqa: E402
from launchprof.run.header_records import RunHeader  # noqa: E402
from launchprof.worker import capture_retry, plan  # noqa: E402
from launchprof.worker.capture import CaptureFailed  # noqa: E402
from launchprof.worker.plan_phases import Phase  # noqa: E402
from tests.test_plan_machine import events, fake_gpu, make_run  # noqa: E402,F401

HERE = Path(__file__).resolve()
W = torch.nn.Parameter(torch.ones(4))
RETURNED: list[weakref.ref] = []  # every loss the step returned, to fake torch's check


def step(x):
    loss = (x * W).sum()
    loss.backward()  # the line the capture failure names
    RETURNED.append(weakref.ref(loss))
    return loss


BACKWARD_LINE = next(i for i, text in enumerate(HERE.read_text().splitlines(), 1) if "loss.backward()  # the line" in text)


def kept_graph_info() -> dict:
    return {
        "kind": "kept-autograd-graph", "exception": "AcceleratorError",
        "message": "CUDA error: operation not permitted when stream is capturing", "chain": ["AcceleratorError: CUDA error: ..."],
        "cuda_errors": ["cudaErrorStreamCaptureImplicit"], "file": str(HERE), "line": BACKWARD_LINE, "code": "loss.backward()", "function": "step",
    }  # fmt: skip


@pytest.fixture
def training_fakes(fake_gpu, monkeypatch):
    """The GPU parts faked with real events; ``seen`` gets each kept tensor a capture met,
    ``second`` is the kind a capture fails with once no graph is kept (None: it captures)."""
    seen: list[torch.Tensor] = []
    state = SimpleNamespace(second=None, attempts=0)
    RETURNED.clear()

    def capture(fn, static_args, static_kwargs, warmup, before_capture):
        state.attempts += 1
        kept = [t for t in (r() for r in RETURNED) if t is not None and t.grad_fn is not None]
        if kept:
            seen.extend(kept)
            raise CaptureFailed(kept_graph_info())
        if state.second is not None:
            raise CaptureFailed({**kept_graph_info(), "kind": state.second, "cuda_errors": ["cudaErrorStreamCaptureInvalidated"]})
        before_capture()
        out = fn(*static_args, **static_kwargs).detach()
        event = CaptureEvent(ok=True, index=0, capture_us=40.0, warmup_us=90.0, instantiate_us=30.0, graph_nodes=8, node_types={"kernel": 8}, pool_bytes=1 << 20, workspace_bytes=0)
        return SimpleNamespace(
            graph=SimpleNamespace(replay=lambda: None), static_args=static_args, static_kwargs=static_kwargs, static_out=out,
            anatomy=None, pool_bytes=1 << 20, workspace_bytes=0, event=lambda i, moved: event,
        )  # fmt: skip

    def validate(user, replay, static_out, args, kwargs, *rest):
        replay()
        return SimpleNamespace(eager_out=user(*args, **kwargs), fields={"match": True}, event=lambda *a: ValidationEvent(index=a[0], match=True, max_abs_diff=0.0, leaves=1))

    def bursts(run):
        for b in range(4):
            run.events.write(TimingEvent(kind="eager", burst=b, wall_us=[200.0 + i + b for i in range(10)]))
            if run.captured is not None:
                run.events.write(TimingEvent(kind="replay", burst=b, wall_us=[20.0 + 0.1 * i + b for i in range(10)]))
        for kind in ("eager", "replay") if run.captured is not None else ("eager",):
            run.events.write(TimingEndEvent(kind=kind, samples=40, seconds=0.01))

    monkeypatch.setattr(plan, "capture", capture)
    monkeypatch.setattr(plan, "validate", validate)
    monkeypatch.setattr(plan, "run_plan_bursts", bursts)
    monkeypatch.setattr(capture_retry, "nvtx_range", plan.nvtx_range)  # the fixture's no-op
    return SimpleNamespace(seen=seen, state=state)


def drive(run) -> tuple[torch.Tensor, int]:
    """The user's loop: keeps the last loss, reads it after the loop."""
    loss = None
    calls = 0
    while run.phase is not Phase.DONE and calls < 200:
        loss = run(torch.full((4,), float(calls)))  # the loop's line
        calls += 1
    return loss, calls


LOOP_LINE = next(i for i, text in enumerate(HERE.read_text().splitlines(), 1) if "# the loop's line" in text and "run(" in text)


def analysed(tmp_path: Path, run) -> object:
    """The plan's events, with what the worker's own start and end add, as a run file, analysed."""
    run.events.close()
    log = [{"type": "target", "name": "step", "file": str(HERE), "line": 1}, *events(tmp_path), {"type": "script-end", "status": "ok", "exit_code": 0, "calls": run.calls}]
    header = RunHeader(format_version=RUN_FORMAT_VERSION, launchprof_version="0", created="2026-01-01T00:00:00+00:00",
                       script=str(HERE), target="step", project_root=str(HERE.parent.parent), repeat=10)
    return analyse(load_run(write_run(header, log, {}, tmp_path / "r.lprun")))


def test_the_kept_loss_is_detached_and_the_retry_captures(tmp_path, training_fakes):
    run = make_run(tmp_path, fn=step, repeat=10)
    run.fn = step
    last, _ = drive(run)
    assert training_fakes.state.attempts == 2  # failed once, captured once
    [kept] = training_fakes.seen  # the probe call's loss, held by the loop's `loss`
    assert kept.grad_fn is None and not kept.requires_grad  # detached in place ...
    assert kept.item() == pytest.approx(4.0 * (run.config.warmup + run.pre_capture_calls + run.config.profile_calls))  # ... values kept
    assert last.item() == pytest.approx(float(4 * (run.calls - 1)))
    run.events.close()
    log = events(tmp_path)
    kinds = [e["type"] for e in log if e["type"] in ("capture", "kept-graph", "phase")]
    assert kinds[kinds.index("capture") :] == ["capture", "kept-graph", "capture", "phase"]  # failed, released, captured, replay
    failed, released, captured = [e for e in log if e["type"] in ("capture", "kept-graph")]
    assert failed["ok"] is False and failed["kind"] == "kept-autograd-graph" and captured["ok"] is True
    assert released["retried"] is True and released["captured"] is True and released["failure"]["kind"] == "kept-autograd-graph"
    [row] = released["tensors"]
    assert row["name"] == "loss" and row["holder_kind"] == "variable" and row["released"] is True and row["grad_fn"] == "SumBackward0"
    assert row["where"]["line"] == LOOP_LINE and row["where"]["code"].startswith("loss = run(")
    assert released["call_site"]["line"] == LOOP_LINE
    assert [e for e in log if e["type"] == "phase"][-1]["name"] == "replay"


def test_the_report_labels_the_figures_and_keeps_the_hazard(tmp_path, training_fakes):
    run = make_run(tmp_path, fn=step, repeat=10)
    drive(run)
    report = analysed(tmp_path, run)
    assert report.verdict == "not-capturable" and report.speedup.median == pytest.approx(10.0, rel=0.1)
    [fix] = report.assumes_fix
    assert fix.kind == "kept-autograd-graph" and fix.code == "detached-kept-outputs"
    assert [(v.name, v.line, v.grad_fn) for v in fix.variables] == [("loss", LOOP_LINE, "SumBackward0")]
    assert {"replay", "speedup", "breakeven_replays", "validation"} <= set(fix.figures)
    kept = [h for h in report.hazards if h.kind == "kept-autograd-graph"]
    # Filed at the caller's line that keeps `loss` (the release named it), the failing line as detail.
    assert len(kept) == 1 and kept[0].severity == "error" and kept[0].line == LOOP_LINE
    assert kept[0].params["name"] == "loss" and kept[0].params["failed_line"] == BACKWARD_LINE
    data = json.loads(renderer_for("json", RenderOptions()).render(report))
    assert data["assumes_fix"][0]["variables"][0]["name"] == "loss" and "speedup" in data["assumes_fix"][0]["figures"]
    assert data["partial_capture"] is None  # the whole step captured
    for fmt in ("text", "md", "html"):
        text = " ".join(renderer_for(fmt, RenderOptions(width=300, project_root=HERE.parent.parent)).render(report).split()).replace("\\", "")
        assert text.count("(once fixed: loss released)") >= 3, fmt  # replay step, speedup, payback (the headline's too)
        assert "launchprof detached `loss` (kept at tests/test_training_retry.py:" in text.replace("&#96;", "`"), fmt
        assert "Measured once fixed (loss released)" in text, fmt


def test_a_retry_that_fails_on_something_else_lists_both(tmp_path, training_fakes):
    training_fakes.state.second = "hidden-sync"
    run = make_run(tmp_path, fn=step, repeat=10)
    last, calls = drive(run)
    assert training_fakes.state.attempts == 2 and training_fakes.seen[0].grad_fn is None
    assert last.grad_fn is not None  # after the plan the step runs untouched
    report = analysed(tmp_path, run)
    assert report.verdict == "not-capturable" and report.replay is None
    assert {h.kind for h in report.hazards if h.severity == "error"} >= {"kept-autograd-graph", "hidden-sync"}
    [fix] = report.assumes_fix
    assert fix.figures == []  # nothing measured assumes it
    assert report.partial_capture is not None and report.partial_capture.status == "not-measured"
    assert report.partial_capture.reason == "no-module"  # the step calls no module: nothing to graph alone
    text = " ".join(renderer_for("text", RenderOptions(width=300)).render(report).split())
    assert "(once fixed" not in text and "The step still did not capture; the fix stands: `del loss`" in text


def test_nothing_is_detached_for_another_failure(tmp_path, training_fakes, monkeypatch):
    """Only the kept-graph kind releases anything: a hidden sync leaves the caller's tensors alone."""
    def failing(fn, static_args, static_kwargs, warmup, before_capture):
        training_fakes.state.attempts += 1
        raise CaptureFailed({**kept_graph_info(), "kind": "hidden-sync"})

    monkeypatch.setattr(plan, "capture", failing)
    run = make_run(tmp_path, fn=step, repeat=10)
    drive(run)
    run.events.close()
    log = events(tmp_path)
    assert training_fakes.state.attempts == 1 and not [e for e in log if e["type"] == "kept-graph"]
    assert all(r() is None or r().grad_fn is not None for r in RETURNED)
    assert [e["reason"] for e in log if e["type"] == "partial-capture"] == ["no-module"]


def test_every_figure_of_the_graph_reads_once_fixed(tmp_path, training_fakes):
    from launchprof.render.number_rows import key_numbers

    run = make_run(tmp_path, fn=step, repeat=10)
    drive(run)
    rows = dict(key_numbers(analysed(tmp_path, run)))
    marked = {label.removesuffix(" (once fixed: loss released)") for label in rows if label.endswith("(once fixed: loss released)")}
    assert marked == {
        "Replay step (copy-in + replay)", "Graph nodes", "Setup (capture + warm-up + instantiate)",
        "Replays to pay back capture + warm-up + instantiate", "Graph memory (its own pool)", "Validation (replay vs eager)",
    }  # fmt: skip
    assert rows["Speedup (eager / replay)"].startswith("9.") and "(once fixed: loss released)" in rows["Speedup (eager / replay)"]
    assert "Eager step" in rows  # eager figures assume nothing


def test_a_later_capture_releases_only_after_a_release_was_needed():
    from launchprof.worker.graph_release import GraphOutputs, release_again

    w = torch.ones(3, requires_grad=True)
    kept, arg = (w * 2).sum(), (w * 3).sum()
    outputs = GraphOutputs()
    for out in (kept, (arg, torch.zeros(2)), (w * 4).sum()):  # the third dies at once
        outputs.note(out)
    del out
    assert len(outputs.refs) == 3
    outputs.note(torch.zeros(1))  # a call that returns no graph prunes the dead
    assert len(outputs.refs) == 2
    assert release_again(outputs) == 0 and kept.grad_fn is not None  # no release was ever needed
    outputs.released = True
    assert release_again(outputs, exclude={id(arg)}) == 1
    assert kept.grad_fn is None and kept.item() == 6.0 and arg.grad_fn is not None  # an argument of the call stays
