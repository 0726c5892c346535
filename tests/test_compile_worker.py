"""The worker's torch.compile pass on CPU (launchprof.worker.compile_compare): compile time,
torch's counters and log records, the timeout, and that torch's logging is left as found.

Slow: one real compile (~5-30 s on a small CPU). The GPU parts (kernels per call, bursts,
the user's state) are in tests/test_gpu_compile.py.
"""

from __future__ import annotations

import logging
import signal
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from launchprof.events.record import event_dict
from launchprof.worker.compile_compare import deadline, measure_mode, warm_up  # noqa: E402
from tests.notes_said import said  # noqa: E402


class Events:
    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def write(self, record: Any) -> None:
        self.items.append(event_dict(record))


def step_with_item(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x) * 2
    n = y.sum().item()  # a graph break: the test checks this line number
    return y / (n + 1.0)


ITEM_LINE = step_with_item.__code__.co_firstlineno + 2


def _logging_state() -> list[tuple]:
    from torch._logging._internal import log_state

    names = ["torch._dynamo", "torch._inductor", "torch._dynamo.symbolic_convert.__graph_breaks", "torch._inductor.cudagraph_utils.__cudagraphs"]
    loggers = [logging.getLogger(n) for n in names]
    return [(lg.name, lg.level, lg.propagate, lg.disabled, tuple(lg.handlers)) for lg in loggers] + [tuple(sorted(log_state.artifact_names))]


def test_deadline_restores_the_scripts_own_timer() -> None:
    fired: list[int] = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        with deadline(10.0) as enforced:
            assert enforced
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 4.0 < left <= 5.0  # re-armed with what was left, not dropped
        assert signal.getsignal(signal.SIGALRM) is not None and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def long_step(x: torch.Tensor) -> torch.Tensor:
    """Thousands of ops for dynamo to trace: no compile of it ends within 0.05 s, even
    with torch's modules already imported and its on-disk caches warm from earlier tests."""
    for i in range(3000):
        x = torch.sin(x) + i
    return x


def test_timeout_is_reported_and_leaves_logging_and_signals_alone() -> None:
    before_logging, before_handler = _logging_state(), signal.getsignal(signal.SIGALRM)
    x = torch.randn(16)
    compiled, result = warm_up(long_step, "default", [((x,), {})], timeout_s=0.05)
    assert compiled is None and result.status == "timeout"
    assert "--compile-timeout 0.05 s" in (result.error or "")
    # Stopped near the limit, not after a whole compile (seconds here; generous for a busy host).
    assert result.compile_s is not None and result.compile_s < 5.0
    assert signal.getsignal(signal.SIGALRM) == before_handler
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0
    assert _logging_state() == before_logging


def test_compile_time_counters_and_graph_break_records(capsys: pytest.CaptureFixture[str]) -> None:
    before = _logging_state()
    events = Events()
    x = [((torch.randn(16),), {}), ((torch.randn(16),), {})]
    result = measure_mode(step_with_item, "default", x, repeat=5, timeout_s=300, events=events)
    assert result.status == "ok", result.error
    assert result.device == "cpu" and result.compile_s is not None and result.compile_s > 0
    assert result.passes >= 3 and result.warmup_calls == 2 * result.passes
    assert sum(result.counters["graph_break"].values()) >= 1
    breaks = [r for r in result.logs if r["logger"].endswith("__graph_breaks")]
    assert breaks and f"{__file__}:{ITEM_LINE}" in breaks[0]["message"]
    assert events.items[0] == {"type": "compile-start", "mode": "default", "timeout_s": 300, "round": 1}
    # Without CUDA there is nothing to profile or time: no kernel count, no bursts.
    assert result.kernels_per_step is None and not [e for e in events.items if e["type"] == "timing"]
    assert _logging_state() == before
    assert "Graph break" not in capsys.readouterr().err  # torch's warnings stayed out of the terminal


def _mutating_run(monkeypatch: pytest.MonkeyPatch, compare: tuple[str, ...], rounds: int) -> tuple[torch.Tensor, Any, Events, list[str]]:
    """(state, run, events, log): a run whose step mutates the user's state, with a
    stand-in for UserState (the real one synchronises CUDA) that logs saves and restores."""
    from types import SimpleNamespace

    from launchprof.worker import plan_bursts

    state = torch.zeros(4)
    log: list[str] = []

    class FakeState:
        def __init__(self, run: Any, sets: list, after: Any = None) -> None:
            self.saved = state.clone()
            log.append("save")

        def restore(self) -> None:
            state.copy_(self.saved)
            log.append("restore")

    def step(s: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        s.add_(x)  # the user's state the compiled calls mutate
        return s * 2

    monkeypatch.setattr(plan_bursts, "UserState", FakeState)
    events = Events()
    config = SimpleNamespace(compare=compare, repeat=5, compile_timeout=300.0, compile_rounds=rounds)
    run = SimpleNamespace(fn=step, config=config, events=events, captured=None, replay_sets=[], eager_sets=[((state, torch.ones(4)), {})])
    return state, run, events, log


def test_compare_compile_runs_both_modes_and_puts_the_state_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's entry point on CPU: both modes in order, one ``compile`` event each, the
    user's state saved before and restored after each mode, nothing at all without
    ``--compare compile``."""
    from launchprof.worker import compile_compare

    state, run, events, log = _mutating_run(monkeypatch, (), 1)
    compile_compare.compare_compile(run)
    assert events.items == [] and log == []  # not asked for
    run.config.compare = ("compile",)
    compile_compare.compare_compile(run)
    results = [e for e in events.items if e["type"] == "compile"]
    assert [(r["mode"], r["field"], r["status"]) for r in results] == [("reduce-overhead", "compile", "ok"), ("default", "compile-no-cudagraphs", "ok")]
    assert log == ["save", "restore", "save", "restore"]
    assert torch.equal(state, torch.zeros(4))  # 2 x (at least 3 passes) compiled calls, undone
    assert [e["type"] for e in events.items].count("compile-start") == 2


def test_compile_rounds_compile_each_mode_afresh_alternating(monkeypatch: pytest.MonkeyPatch) -> None:
    """--compile-rounds 2: each mode compiled twice, the modes alternating, every round's
    event naming its own burst kind (so the analysis keeps rounds apart), the state saved
    and restored around each one."""
    from launchprof.worker import compile_compare

    compiled: list[str] = []
    real_compile = torch.compile

    def counting_compile(fn: Any, mode: str | None = None, **kw: Any) -> Any:
        compiled.append(str(mode))
        return real_compile(fn, mode=mode, **kw)

    state, run, events, log = _mutating_run(monkeypatch, ("compile",), 2)
    monkeypatch.setattr(torch, "compile", counting_compile)
    compile_compare.compare_compile(run)
    results = [(e["mode"], e["field"], e["round"], e["status"]) for e in events.items if e["type"] == "compile"]
    assert results == [
        ("reduce-overhead", "compile", 1, "ok"), ("default", "compile-no-cudagraphs", 1, "ok"),
        ("reduce-overhead", "compile@2", 2, "ok"), ("default", "compile-no-cudagraphs@2", 2, "ok"),
    ]
    assert compiled == ["reduce-overhead", "default", "reduce-overhead", "default"]
    assert log == ["save", "restore"] * 4 and torch.equal(state, torch.zeros(4))


def test_a_mode_that_failed_is_not_compiled_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """--compile-rounds 3 with reduce-overhead timing out: each round may take
    --compile-timeout, so that mode is given up after round 1 (a note says so) while the
    default mode runs all three."""
    from types import SimpleNamespace

    from launchprof.worker import compile_compare, plan_bursts

    class FakeState:
        def __init__(self, run: Any, sets: list, after: Any = None) -> None:
            pass

        def restore(self) -> None:
            pass

    resets: list[Any] = []

    def fake_measure(fn: Any, mode: str, sets: list, repeat: int, timeout_s: Any, events: Any, round_no: int = 1, reset: Any = None) -> Any:
        resets.append(reset)  # the timed passes put the state back as the eager bursts do
        status = "timeout" if mode == "reduce-overhead" else "ok"
        return compile_compare.ModeResult(mode=mode, field=compile_compare.burst_kind(mode, round_no), round=round_no, status=status)

    monkeypatch.setattr(plan_bursts, "UserState", FakeState)
    monkeypatch.setattr(compile_compare, "measure_mode", fake_measure)
    events = Events()
    config = SimpleNamespace(compare=("compile",), repeat=5, compile_timeout=1.0, compile_rounds=3)
    run = SimpleNamespace(fn=lambda x: x, config=config, events=events, captured=None, replay_sets=[], eager_sets=[((torch.ones(2),), {})])
    compile_compare.compare_compile(run)
    ran = [(e["mode"], e["round"], e["status"]) for e in events.items if e["type"] == "compile"]
    assert ran == [("reduce-overhead", 1, "timeout"), ("default", 1, "ok"), ("default", 2, "ok"), ("default", 3, "ok")]
    assert len(resets) == 4 and all(getattr(r, "__self__", None).__class__ is FakeState for r in resets)
    notes = [said(e) for e in events.items if e["type"] == "note"]
    assert notes == ["compile (reduce-overhead): round 1 timed out; its later rounds were not run"]


def test_an_alarm_that_was_swallowed_fires_again() -> None:
    """A raise inside a finaliser is printed and dropped; the alarm repeats, so the compile
    still stops near its limit instead of running on to its end."""
    import time

    from launchprof.worker.compile_compare import REFIRE_S, CompileTimeout

    dropped = 0
    start = time.monotonic()
    with pytest.raises(CompileTimeout), deadline(0.5):
        try:
            time.sleep(1.0)
        except CompileTimeout:
            dropped += 1
            time.sleep(5.0)
    assert dropped == 1 and time.monotonic() - start < 0.5 + REFIRE_S + 1.0
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


@pytest.mark.parametrize("seconds", [float("inf"), 1e12])
def test_a_limit_too_long_for_the_timer_is_no_limit_not_a_failure(seconds: float) -> None:
    """setitimer raises OverflowError past time_t: --compile-timeout inf must not fail compile."""
    with deadline(seconds) as enforced:
        assert not enforced
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0.0


def test_compare_compile_never_raises_into_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """A restore that fails (CUDA in a bad state after a compile) is a note and stops the
    comparison; a step on several ranks is not compiled at all (the others would hang)."""
    from types import SimpleNamespace

    from launchprof.worker import compile_compare, plan_bursts

    class BrokenRestore:
        def __init__(self, run: Any, sets: list, after: Any = None) -> None:
            pass

        def restore(self) -> None:
            raise RuntimeError("CUDA error: an illegal memory access")

    monkeypatch.setattr(plan_bursts, "UserState", BrokenRestore)
    monkeypatch.setattr(compile_compare, "measure_mode", lambda fn, mode, *a: compile_compare.ModeResult(mode=mode, field="x"))
    events = Events()
    config = SimpleNamespace(compare=("compile",), repeat=5, compile_timeout=300.0, compile_rounds=1)
    run = SimpleNamespace(fn=len, config=config, events=events, captured=None, replay_sets=[], eager_sets=[((torch.ones(1),), {})])
    compile_compare.compare_compile(run)
    assert [e["type"] for e in events.items] == ["compile", "note"]
    assert "could not be restored" in said(events.items[1]) and "illegal memory access" in said(events.items[1])
    events.items.clear()
    monkeypatch.setattr(compile_compare, "distributed", lambda: True)
    compile_compare.compare_compile(run)
    assert [e["type"] for e in events.items] == ["note"] and "several ranks" in said(events.items[0])
