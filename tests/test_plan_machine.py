"""The plan's state machine (worker/plan.py, worker/plan_phases.py) on CPU: one handler per
phase, the class docstring's table is the one the code follows, the other modules use
TargetRun's public steps only, and a whole plan driven with fakes for the GPU parts walks
the phases in the table's order."""

from __future__ import annotations

import ast
import contextlib
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.worker import plan, plan_profiles  # noqa: E402
from launchprof.worker.config import WorkerConfig  # noqa: E402
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.plan import TargetRun  # noqa: E402
from launchprof.worker.plan_phases import FINISH_REASONS, TRANSITIONS, Exit, Phase  # noqa: E402
from launchprof.worker.call_timer import Timed

ROOT = Path(__file__).resolve().parent.parent


def make_run(tmp_path: Path, fn=lambda x: x * 2, **config) -> TargetRun:
    cfg = WorkerConfig(script="s.py", script_args=[], target="f", events_path=str(tmp_path / "e.jsonl"), trace_path="", **config)
    return TargetRun(fn, "f", cfg, EventWriter(cfg.events_path))


def events(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "e.jsonl").read_text().splitlines()]


def test_every_phase_but_done_has_exactly_one_handler_of_its_own(tmp_path):
    table = make_run(tmp_path).handlers()
    assert set(table) == set(Phase) - {Phase.DONE}  # DONE's calls go straight to the function
    functions = [handler.__func__ for handler in table.values()]
    assert len(set(functions)) == len(functions)
    assert all(f.__qualname__.startswith("TargetRun.") for f in functions)


def test_the_class_docstring_table_is_the_transition_table():
    rows = re.findall(r"^\s*([A-Z]+)\s+([A-Z_]+)\s+([A-Z]+)\s\s", TargetRun.__doc__ or "", re.MULTILINE)
    documented = {(Phase[a], Exit[why]): Phase[b] for a, why, b in rows}
    assert documented == TRANSITIONS and len(rows) == len(TRANSITIONS)


def test_every_phase_leaves_and_every_close_has_its_reason():
    assert {phase for phase, _ in TRANSITIONS} == set(Phase) - {Phase.DONE}
    assert {target for target in TRANSITIONS.values()} == set(Phase) - {Phase.WARMUP}
    assert {why for (_, why), target in TRANSITIONS.items() if target is Phase.DONE} == set(FINISH_REASONS)


def test_a_transition_writes_the_new_phase_restarts_the_same_one_and_closes_on_done(tmp_path):
    run = make_run(tmp_path)
    run.in_phase = 3
    run._transition(Exit.CALLS_MADE)
    assert run.phase is Phase.EAGER and run.in_phase == 0
    run.phase, run.in_phase = Phase.PROFILE, 3
    run._transition(Exit.TRACE_LOST)
    assert run.phase is Phase.PROFILE and run.in_phase == 0
    run.phase = Phase.CAPTURE
    run._transition(Exit.CAPTURE_FAILED)
    assert run.phase is Phase.DONE
    run._transition(Exit.COMPLETE)  # DONE is final
    run.events.close()
    kinds = [(e["type"], e.get("name") or e.get("reason")) for e in events(tmp_path) if e["type"] in ("phase", "plan-end")]
    assert kinds == [("phase", "eager"), ("plan-end", "capture failed")]


# ---------------------------------------------------------------- private members
def _private_members() -> set[str]:
    """TargetRun's ``_`` members: its methods and the attributes it sets on ``self``."""
    names = {n for n in vars(TargetRun) if n.startswith("_") and not n.startswith("__")}
    for node in ast.walk(ast.parse((ROOT / "launchprof/worker/plan.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            if node.attr.startswith("_") and not node.attr.startswith("__"):
                names.add(node.attr)
    return names


def _python_files() -> list[Path]:
    files = [p for p in (ROOT / "launchprof").rglob("*.py") if p != ROOT / "launchprof/worker/plan.py"]
    for folder in ("benchmarks", "scripts"):
        for p in sorted((ROOT / folder).iterdir()):
            if p.is_file() and (p.suffix == ".py" or p.read_text(encoding="utf-8", errors="replace").startswith("#!/usr/bin/env python")):
                files.append(p)
    return files


def private_uses(source: str, names: set[str]) -> list[tuple[int, str]]:
    """Reads of ``names`` on anything but ``self``/``cls``, by attribute or by getattr-like calls."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in names:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "setattr", "hasattr"):
            if len(node.args) > 1 and isinstance(node.args[1], ast.Constant) and node.args[1].value in names:
                found.append((node.lineno, node.args[1].value))
    return found


def test_the_checker_sees_private_reads_but_not_a_classes_own():
    names = {"_state_of", "_step"}
    assert sorted(private_uses("run._state_of(a, k)\ngetattr(run, '_step')\n", names)) == [(1, "_state_of"), (2, "_step")]
    assert private_uses("self._state_of(a, k)\nrun.state_of(a, k)\n", names) == []


def test_no_module_outside_plan_touches_a_private_member_of_target_run():
    names = _private_members()
    assert {"_transition", "_warmup", "_user"} <= names  # the collection found them
    files = _python_files()
    assert len(files) > 20 and any(p.parent.name == "benchmarks" for p in files)
    offenders = [
        f"{p.relative_to(ROOT)}:{line}: {attr}"
        for p in files
        for line, attr in private_uses(p.read_text(encoding="utf-8"), names)
    ]
    assert not offenders, "private TargetRun members used outside plan.py:\n" + "\n".join(offenders)


# ---------------------------------------------------------------- a whole plan
@pytest.fixture
def fake_gpu(monkeypatch):
    """The GPU parts of the plan replaced: timing, profiler, probe, capture, validation,
    bursts and what runs at the close. Losses of the eager trace come from ``lost``."""
    lost: list[bool] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda *a, **k: None)
    monkeypatch.setattr(plan, "nvtx_range", lambda name: contextlib.nullcontext())
    monkeypatch.setattr(plan, "timed", lambda fn: (fn(), Timed(wall_us=1.0, gpu_us=1.0)))
    monkeypatch.setattr(plan_profiles, "nvtx_range", lambda name: contextlib.nullcontext())
    monkeypatch.setattr(plan_profiles, "tear_down_after_profiling", lambda: None)
    monkeypatch.setattr(plan_profiles, "new_profile", contextlib.nullcontext)
    monkeypatch.setattr(plan_profiles, "lost_device_activity", lambda prof: lost.pop(0) if lost else False)
    monkeypatch.setattr(plan_profiles, "write_table", lambda prof, run_dir, what: f"trace-{what}.json.gz")
    no_findings = dict(syncs=[], effects=[], rng=[], streams=[], writes=[], containers=[], event=lambda i, max_functions: NoteEvent(text="probe"))
    monkeypatch.setattr(plan, "probe_call", lambda user, a, k: (user(*a, **k), SimpleNamespace(**no_findings)))

    from rank_scripts.cpu_plan_worker import capture, validate  # the whole-worker fakes' capture and validation

    monkeypatch.setattr(plan, "capture", capture)
    monkeypatch.setattr(plan, "validate", validate)
    monkeypatch.setattr(plan, "memory_event", lambda *a: NoteEvent(text="memory"))
    monkeypatch.setattr(plan, "profile_replay", lambda run, a, k: setattr(run, "profiled_replay", True))
    monkeypatch.setattr(plan, "run_plan_bursts", lambda run: run.events.write(NoteEvent(text="bursts")))
    monkeypatch.setattr(plan, "measure_buckets", lambda run: None)
    monkeypatch.setattr(plan, "compare_compile", lambda run: None)
    return lost


def test_a_whole_plan_walks_the_table_in_order(tmp_path, fake_gpu):
    fake_gpu.append(True)  # the first eager trace comes back lost: the profile phase again
    run = make_run(tmp_path, repeat=10, profiler="kernels")
    calls = 0
    while run.phase is not Phase.DONE and calls < 100:
        run(torch.ones(4) * calls)
        calls += 1
    run.events.close()
    log = events(tmp_path)
    phases = [e["name"] for e in log if e["type"] == "phase"]
    assert phases == ["eager", "profile", "probe", "capture", "replay"]
    profiled = [e["call"] for e in log if e["type"] == "phase"][2] - [e["call"] for e in log if e["type"] == "phase"][1]
    assert profiled == 2 * run.config.profile_calls  # taken twice after the lost trace
    end = [e for e in log if e["type"] == "plan-end"]
    assert len(end) == 1 and end[0]["reason"] == FINISH_REASONS[Exit.COMPLETE] and end[0]["phase"] == "replay"
    assert run(torch.ones(4)).equal(torch.ones(4) * 2)  # after the plan: the function, untouched


def test_a_step_with_host_effects_gets_its_own_result_on_every_script_call(tmp_path, fake_gpu, monkeypatch):
    """A replay runs no Python: where the probe found host side effects, the script's calls
    are served eagerly (validations and fallbacks), never by a replay, and the plan still ends."""
    effects = dict(syncs=[], effects=[{"what": "write to outside variable `n`"}], rng=[], streams=[], writes=[], containers=[],
                   event=lambda i, max_functions: NoteEvent(text="probe"))  # fmt: skip
    monkeypatch.setattr(plan, "probe_call", lambda user, a, k: (user(*a, **k), SimpleNamespace(**effects)))
    run = make_run(tmp_path, repeat=10)
    calls = 0
    while run.phase is not Phase.DONE and calls < 200:
        x = torch.ones(4) * calls
        assert run(x).equal(x * 2), calls  # the call's own result, never the captured one
        calls += 1
    run.events.close()
    log = events(tmp_path)
    assert not [e for e in log if e["type"] == "replay-timing" and e.get("mode") == "in-loop"]
    assert any(e["type"] == "fallback" and e["reason"] == "host-state" for e in log)
    end = [e for e in log if e["type"] == "plan-end"]
    assert len(end) == 1 and end[0]["reason"] == FINISH_REASONS[Exit.COMPLETE], end
