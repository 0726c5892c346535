"""The Python API on CPU: the no-CUDA error, call handling, the plan driver, packing a run
folder into the run file the CLI reads, and CaptureHazardError from recorded reports."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import launchprof
from launchprof.api import inprocess, safety
from launchprof.analysis import analyse
from launchprof.enums import Verdict
from launchprof.errors import EnvironmentProblem, ExitCode
from launchprof.run import load_run
from launchprof.worker.plan import Phase
from recorded import load, recorded, report_of


def step(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def test_package_exports_the_api() -> None:
    assert launchprof.analyze is launchprof.api.analyze
    assert launchprof.check is launchprof.api.check
    assert issubclass(launchprof.CaptureHazardError, launchprof.errors.LaunchprofError)
    assert launchprof.target(step) is step
    with pytest.raises(AttributeError):
        launchprof.no_such_name  # noqa: B018


@pytest.mark.parametrize("call", [launchprof.analyze, launchprof.check])
def test_without_cuda_a_clear_environment_problem(call, monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(EnvironmentProblem) as info:
        call(step, torch.ones(3))
    assert info.value.exit_code == ExitCode.ENVIRONMENT
    assert "need a CUDA device" in str(info.value)
    assert "\n" not in str(info.value)


def test_not_a_function_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="needs a function"):
        launchprof.analyze(42)


def test_observed_calls() -> None:
    assert inprocess.observed_calls((1, 2), {"k": 3}, None) == [((1, 2), {"k": 3})]
    calls = inprocess.observed_calls((), {}, [((1,), {}), ([2], None)])
    assert calls == [((1,), {}), ((2,), {})]
    with pytest.raises(TypeError, match=r"calls\[0\]"):
        inprocess.observed_calls((), {}, [1])
    with pytest.raises(ValueError, match="empty"):
        inprocess.observed_calls((), {}, [])


class FakePlan:
    """Stands in for TargetRun: done after ``done_after`` calls; records what it got."""

    def __init__(self, done_after: int | None, fail_at: int | None = None) -> None:
        self.phase = Phase.WARMUP
        self.got: list[tuple] = []
        self.done_after = done_after
        self.fail_at = fail_at

    def __call__(self, *args, **kwargs):
        self.got.append((args, kwargs))
        if self.fail_at is not None and len(self.got) == self.fail_at:
            raise ValueError("user bug")
        if self.done_after is not None and len(self.got) >= self.done_after:
            self.phase = Phase.DONE


def test_drive_cycles_calls_until_the_plan_is_done() -> None:
    plan = FakePlan(done_after=5)
    made = inprocess.drive(plan, [((1,), {}), ((2,), {"a": 1})], needed=4)
    assert made == 5
    assert [a for a, _ in plan.got] == [(1,), (2,), (1,), (2,), (1,)]
    assert plan.got[1][1] == {"a": 1}


def test_drive_stops_at_the_cap_and_passes_user_errors() -> None:
    plan = FakePlan(done_after=None)
    assert inprocess.drive(plan, [((), {})], needed=4) == 4 * inprocess.EXTRA_CALLS_FACTOR
    with pytest.raises(ValueError, match="user bug"):
        inprocess.drive(FakePlan(done_after=None, fail_at=2), [((), {})], needed=4)


@pytest.mark.parametrize("name", recorded(["hidden_sync", "decode_loop"]))
def test_pack_gives_the_run_the_cli_would_analyse(name: str, tmp_path: Path) -> None:
    """A run folder as the in-process plan leaves it -> .lprun -> the same analysis."""
    original = load(name)
    rundir = tmp_path / "rundir"
    for member, data in original.traces.items():
        (rundir / member).parent.mkdir(parents=True, exist_ok=True)
        (rundir / member).write_bytes(data)
    rundir.mkdir(exist_ok=True)
    (rundir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in original.events))
    root = Path(__file__).resolve().parent.parent
    out = inprocess.pack(rundir, step, root, inprocess.PlanSettings(), 1.5, tmp_path / "api.lprun")
    run = load_run(out)
    assert run.header.target == "step" and run.header.script == "tests/test_api.py"
    assert set(run.header.traces) == set(original.header.traces)
    mine, theirs = analyse(run), report_of(name)
    assert mine.verdict == theirs.verdict
    assert mine.eager.kernels_per_step == theirs.eager.kernels_per_step
    assert [(h.kind, h.line) for h in mine.hazards] == [(h.kind, h.line) for h in theirs.hazards]
    assert json.loads(mine.to_json())["verdict"] == str(theirs.verdict)


def test_capture_hazard_error_lists_kind_place_and_fix() -> None:
    report = report_of(recorded(["hidden_sync"])[0])
    error = safety.CaptureHazardError(report)
    text = str(error)
    assert error.exit_code == ExitCode.FAIL_ON and error.report is report
    assert "verdict not-capturable" in text
    assert len(error.hazards) == 5 == text.count("hidden-sync (error) at ")
    assert "sample_models/hidden_sync.py:15" in text
    assert all(h.hint in text for h in error.hazards)


@pytest.mark.parametrize(
    ("name", "safe"), [("decode_loop", True), ("two_streams_ok", True), ("side_effects", False), ("unjoined_stream", False)]
)
def test_capture_safe_rule(name: str, safe: bool) -> None:
    report = report_of(recorded([name])[0])
    assert safety.is_capture_safe(report) is safe
    if not safe:
        assert safety.blocking_hazards(report)
        assert Verdict(report.verdict) is Verdict.NOT_CAPTURABLE or any(h.severity == "warning" for h in report.hazards)


def test_check_raises_on_an_unsafe_report_and_returns_a_safe_one(monkeypatch) -> None:
    reports = {"bad": report_of(recorded(["frozen_scalar"])[0]), "good": report_of(recorded(["dict_inputs"])[0])}
    monkeypatch.setattr(launchprof.api, "quick_report", lambda fn, *a, **k: reports[a[0]])
    assert launchprof.check(step, "good") is reports["good"]
    with pytest.raises(launchprof.CaptureHazardError) as info:
        launchprof.check(step, "bad")
    assert "frozen-scalar (error) at sample_models/frozen_scalar.py:17" in str(info.value)


def test_pack_stores_the_profile_it_predicts_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Like the CLI's run files, the API's carry the device profile (given, or cached)."""
    from launchprof.crossover.profile import load_profile

    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "empty-cache"))
    original = load(recorded(["decode_loop"])[0])
    rundir = tmp_path / "rundir"
    for member, data in original.traces.items():
        (rundir / member).parent.mkdir(parents=True, exist_ok=True)
        (rundir / member).write_bytes(data)
    (rundir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in original.events))
    root = Path(__file__).resolve().parent.parent
    bare = load_run(inprocess.pack(rundir, step, root, inprocess.PlanSettings(), 1.5, tmp_path / "bare.lprun"))
    assert bare.profile is None  # nothing cached for this machine here
    profile = load_profile(Path(__file__).parent / "data" / "profile.json").profile
    given = load_run(inprocess.pack(rundir, step, root, inprocess.PlanSettings(), 1.5, tmp_path / "given.lprun", profile))
    assert given.profile == profile.to_dict()
