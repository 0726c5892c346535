"""The largest capturable part of a step, on CPU: which modules a step calls directly and
with what (worker/module_calls.py), the module's forward switched and put back exactly
(worker/graphed_module.py, with a stand-in for ``make_graphed_callables``, which needs CUDA),
the choice and the interleaved timing (worker/partial_capture.py), and the report section
in every format (analysis/training_steps.py, render/partial_text.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from launchprof.analysis import analyse  # noqa: E402
from launchprof.render import renderer_for  # noqa: E402
from launchprof.render.renderer import RenderOptions  # noqa: E402
from launchprof.run import load_run  # noqa: E402
from launchprof.run.file import write_run  # noqa: E402
from launchprof.run.header_records import RUN_FORMAT_VERSION, RunHeader  # noqa: E402
from launchprof.worker import partial_capture  # noqa: E402
from launchprof.worker.graphed_module import graph_module  # noqa: E402
from launchprof.worker.module_calls import record_module_calls  # noqa: E402
from tests.test_plan_machine import events, make_run  # noqa: E402
from tests.test_worker_bursts import FakeEvent  # noqa: E402

HERE = Path(__file__).resolve()


class Body(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a, self.b = nn.Linear(8, 32), nn.Linear(32, 8)

    def forward(self, h):
        return self.b(torch.relu(self.a(h)))


class Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(2))

    def forward(self, z, scale=1.0):
        return z * self.w * scale


torch.manual_seed(0)
embed, body, head, scaled = nn.Linear(4, 8), Body(), nn.Linear(8, 2), Scaled()


def step(x, y):
    h = embed(x)
    out = body(h)  # the body's line
    logits = head(out) + head(out)
    logits = scaled(logits, scale=0.5)
    loss = nn.functional.cross_entropy(logits, y)
    loss.backward()
    return loss


BODY_LINE = next(i for i, text in enumerate(HERE.read_text().splitlines(), 1) if "# the body's line" in text and "body(h)" in text)


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(16, 4), torch.randint(0, 2, (16,))


def test_the_modules_the_step_calls_directly_are_recorded_with_samples_and_names():
    x, y = batch()
    calls = record_module_calls(lambda: step(x, y))
    assert [c.module for c in calls] == [embed, body, head, scaled]  # not body.a, body.b: called inside body
    by = {c.expr: c for c in calls}
    assert set(by) == {"embed", "body", "head", "scaled"}
    assert by["body"].arg_exprs == ["h"] and by["body"].site.line == BODY_LINE and by["body"].site.code == "out = body(h)  # the body's line"
    [h] = by["body"].samples
    assert h.is_leaf and h.requires_grad and h.shape == (16, 8)  # embed's output: requires grad, as the real one
    [xs] = by["embed"].samples
    assert not xs.requires_grad and torch.equal(xs, x) and xs is not x  # a clone, not the user's tensor
    assert by["head"].calls == 2 and by["scaled"].keywords and not by["body"].keywords
    assert by["body"].grad_enabled and by["body"].autocast is None and by["body"].tensors_only
    assert by["body"].parameters == 8 * 32 + 32 + 32 * 8 + 8
    from torch.nn.modules import module as torch_module

    assert not torch_module._global_forward_pre_hooks and not torch_module._global_forward_hooks  # the hooks are gone


class FakeMake:
    """Stands in for torch.cuda.make_graphed_callables: sets the instance's ``forward`` as it
    does, to a wrapper that counts its calls (and computes what the module does)."""

    def __init__(self, fail: set[str] | None = None) -> None:
        self.graphed: list[str] = []
        self.grad_modes: list[bool] = []
        self.fail = fail or set()

    def __call__(self, module, samples):
        self.grad_modes.append(torch.is_grad_enabled())
        original = module.forward
        name = type(module).__name__

        def new_fwd(*args, **kwargs):
            self.graphed.append(name)
            return original(*args, **kwargs)

        module.forward = new_fwd
        if name in self.fail:
            raise RuntimeError(f"capture of {name} failed")
        return module


def test_the_switch_runs_either_forward_and_the_module_is_put_back_exactly():
    make = FakeMake()
    m = nn.Linear(3, 3)
    x = torch.randn(2, 3)
    expected = m(x)
    switch = graph_module(m, (x,), None, False, make)
    assert make.grad_modes == [False] and m.__dict__["forward"] == switch.dispatch
    assert torch.equal(m(x), expected) and make.graphed == []  # switch off: the module's own forward
    switch.use_graph = True
    assert torch.equal(m(x), expected) and make.graphed == ["Linear"]
    switch.restore()
    assert "forward" not in m.__dict__ and torch.equal(m(x), expected)
    # A module with a forward of its own on the instance gets that very object back.
    own = m.forward = lambda t: t * 2
    graph_module(m, (x,), None, True, make).restore()
    assert m.__dict__["forward"] is own
    # make_graphed_callables failing half-way leaves the module as it was, and says so.
    del m.forward
    with pytest.raises(RuntimeError, match="capture of Linear failed"):
        graph_module(m, (x,), None, True, FakeMake(fail={"Linear"}))
    assert "forward" not in m.__dict__


@pytest.fixture
def cpu_partial(monkeypatch):
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(partial_capture, "on_gpu", lambda tensors: True)


def measured(tmp_path: Path, make: FakeMake) -> dict:
    run = make_run(tmp_path, fn=step, repeat=10)
    run.state_of = lambda args, kwargs: dict(body.named_parameters())  # on a GPU: every CUDA tensor the step reaches
    x, y = batch()
    run.eager_sets.extend([(batch(), {}), ((torch.randn(3, 4), torch.zeros(3, dtype=torch.long)), {})])  # the second: other shapes
    partial_capture.measure_partial(run, 7, (x, y), {}, make)
    run.events.close()
    [event] = [e for e in events(tmp_path) if e["type"] == "partial-capture"]
    return event


def test_the_largest_module_is_graphed_timed_against_eager_and_put_back(tmp_path, cpu_partial):
    make = FakeMake()
    body.a.weight.grad, body.b.weight.grad = own, _ = torch.full((32, 8), 7.0), None
    e = measured(tmp_path, make)
    assert body.a.weight.grad is own and torch.all(own == 7.0) and body.b.weight.grad is None  # the user's grads, as they were
    assert e["status"] == "measured" and e["index"] == 7 and e["module"] == "body" and e["module_type"] == "Body"
    assert [(c["module"], c["reason"]) for c in e["candidates"]] == [("body", None), ("embed", "not-tried"), ("head", "not-tried"), ("scaled", "not-tried")]
    assert e["args"] == [{"expr": "h", "shape": [16, 8], "dtype": "float32", "requires_grad": True}]
    assert e["site"]["line"] == BODY_LINE and e["match"] is True and e["max_abs_diff"] == 0.0
    assert len(e["eager_us"]) == len(e["graphed_us"]) >= 10 and all(v > 0 for v in e["eager_us"] + e["graphed_us"])
    # Graphed calls: the comparison's one, each burst's untimed first call and the timed and GPU-timed calls.
    assert make.graphed.count("Body") == 1 + 1 + 2 * len(e["graphed_us"])
    assert "forward" not in body.__dict__ and make.grad_modes == [True]


def test_a_module_that_will_not_graph_gives_way_to_the_next(tmp_path, cpu_partial):
    e = measured(tmp_path, FakeMake(fail={"Body"}))
    assert e["status"] == "measured" and e["module"] == "embed" and e["args"][0]["expr"] == "x"
    rows = {c["module"]: c for c in e["candidates"]}
    assert rows["body"]["reason"] == "graphing-failed" and "capture of Body failed" in rows["body"]["error"]
    assert rows["embed"]["reason"] is None and rows["head"]["reason"] == "not-tried"
    assert "forward" not in body.__dict__ and "forward" not in embed.__dict__


def test_modules_that_cannot_be_graphed_say_why(tmp_path, cpu_partial):
    e = measured(tmp_path, FakeMake(fail={"Body", "Linear"}))
    assert e["status"] == "not-measured" and e["reason"] == "graphing-failed"
    assert [(c["module"], c["reason"]) for c in e["candidates"]] == [
        ("body", "graphing-failed"), ("embed", "graphing-failed"), ("head", "called-twice"), ("scaled", "not-tried"),
    ]  # three tried (one refused before graphing), then no more


def test_on_cpu_nothing_is_graphed(tmp_path, monkeypatch):
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    e = measured(tmp_path, FakeMake())
    assert e["status"] == "not-measured" and e["candidates"][0]["reason"] == "not-cuda"


def test_the_burst_sets_keep_the_graphs_shapes():
    """The bursts cycle through this call and recorded calls of the same shapes only."""
    x, y = batch()
    run = type("Run", (), {"eager_sets": [(batch(), {}), ((torch.randn(3, 4), torch.zeros(3, dtype=torch.long)), {}), (batch(), {})]})()
    sets = partial_capture.burst_sets(run, (x, y), {})
    assert len(sets) == 3 and sets[0] == ((x, y), {}) and all(a[0].shape == (16, 4) for a, _ in sets)


# ---------------------------------------------------------------- the report
def partial_event(**over) -> dict:
    site = {"file": str(HERE), "line": BODY_LINE, "code": "out = body(h)", "function": "step"}
    event = {
        "type": "partial-capture", "index": 12, "status": "measured", "module": "body", "module_type": "Body", "parameters": 552,
        "site": site, "args": [{"expr": "h", "shape": [64, 8], "dtype": "float16", "requires_grad": True}], "autocast": "float16",
        "setup_us": 5400.0, "eager_us": [1300.0 + i for i in range(40)], "graphed_us": [1150.0 + i for i in range(40)],
        "match": True, "max_abs_diff": 0.0,
        "candidates": [{"module": "body", "module_type": "Body", "parameters": 552, "site": site},
                       {"module": "head", "module_type": "Linear", "parameters": 18, "site": site, "reason": "called-twice"}],
    }  # fmt: skip
    return {**event, **over}


def report_of(tmp_path: Path, partial: dict):
    log = [
        {"type": "target", "name": "step", "file": str(HERE), "line": 1},
        {"type": "capture", "ok": False, "index": 12, "kind": "grad-scaler", "exception": "AcceleratorError", "message": "operation not permitted when stream is capturing",
         "file": str(HERE), "line": BODY_LINE + 4, "code": "loss.backward()", "chain": [], "cuda_errors": ["cudaErrorStreamCaptureUnsupported"]},
        partial,
        {"type": "timing", "kind": "eager", "burst": 0, "wall_us": [1300.0] * 20},
        {"type": "script-end", "status": "ok", "exit_code": 0, "calls": 20},
    ]  # fmt: skip
    header = RunHeader(format_version=RUN_FORMAT_VERSION, launchprof_version="0", created="2026-01-01T00:00:00+00:00",
                       script=str(HERE), target="step", project_root=str(HERE.parent.parent), repeat=10)
    return analyse(load_run(write_run(header, log, {}, tmp_path / "r.lprun")))


SNIPPET = '''import torch

sample_h = torch.randn((64, 8), dtype=torch.float16, device="cuda", requires_grad=True)
with torch.autocast("cuda", dtype=torch.float16, cache_enabled=False):
    body = torch.cuda.make_graphed_callables(body, (sample_h,))
'''


def test_the_partial_capture_is_a_report_section_in_every_format(tmp_path):
    report = report_of(tmp_path, partial_event())
    p = report.partial_capture
    assert report.verdict == "not-capturable" and p.status == "measured" and p.module == "body" and p.line == BODY_LINE
    assert p.eager_step_us.median == pytest.approx(1319.5) and p.graphed_step_us.median == pytest.approx(1169.5)
    assert p.speedup.median == pytest.approx(1319.5 / 1169.5) and p.speedup.low < p.speedup.median < p.speedup.high
    assert p.snippet == SNIPPET and p.matches is True and report.assumes_fix == []
    data = json.loads(renderer_for("json", RenderOptions()).render(report))
    assert data["partial_capture"]["speedup"]["median"] == pytest.approx(p.speedup.median)
    assert data["partial_capture"]["args"] == [{"expr": "h", "shape": [64, 8], "dtype": "float16", "requires_grad": True}]
    for fmt in ("text", "md", "html"):
        raw = renderer_for(fmt, RenderOptions(width=300, project_root=HERE.parent.parent)).render(report)
        text = " ".join(raw.split()).replace("\\", "").replace("&#34;", '"').replace("&#39;", "'")
        assert "its module's forward and backward graphed, the rest eager" in text, fmt
        assert "`body` (Body, 552 parameters) at tests/test_partial_capture.py:" in text.replace("&#96;", "`"), fmt
        assert "1.32 ms" in text and "1.17 ms" in text and "1.13×" in text, fmt
        assert "body = torch.cuda.make_graphed_callables(body, (sample_h,))" in text, fmt
        assert "With `body`'s forward and backward graphed alone, the whole step runs 1.13×" in text.replace("&#96;", "`"), fmt
        assert "`head` (Linear, 18 parameters)" in text.replace("&#96;", "`") and "more than once" in text, fmt


def test_a_partial_capture_that_was_not_measured_says_why(tmp_path):
    report = report_of(tmp_path, {"type": "partial-capture", "index": 12, "status": "not-measured", "reason": "distributed"})
    assert report.partial_capture.status == "not-measured" and report.partial_capture.speedup is None
    text = " ".join(renderer_for("text", RenderOptions(width=300)).render(report).split())
    assert "not measured: several ranks" in text and "graphed alone" not in text


def test_samples_of_an_inference_mode_call_are_normal_tensors():
    x = torch.randn(2, 4)
    with torch.inference_mode():
        calls = record_module_calls(lambda: embed(x))
    [sample] = calls[0].samples
    assert not sample.is_inference() and torch.equal(sample, x) and not calls[0].grad_enabled
    sample.copy_(torch.zeros(2, 4))  # what the graphed module does with each call's input


def test_every_reason_has_its_words():
    from launchprof.model.training_records import PartialSkip
    from launchprof.render.words.training_text import REASONS

    assert set(REASONS) == set(PartialSkip) and all(REASONS[r] and not REASONS[r].endswith(".") for r in PartialSkip)
