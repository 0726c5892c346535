"""``--compare compile``: the same target under torch.compile, beside eager and hand capture.

Runs once, from the plan's ``finish`` after the bursts, on the argument sets the bursts
used. For each mode (``reduce-overhead``: fusion and CUDA graphs; ``default``: the same
fusion without graphs, which separates what fusion gains from what graphs gain):

- compile and warm up: passes over the argument sets until a pass compiles nothing new
  (at least three, since reduce-overhead warms up, records, then replays); the wall time of
  those passes is ``compile_s``, what a user waits before compiled calls run at speed;
- count kernels per call in one profiled steady call (as the eager profile counts them), and
  whether that call launched a CUDA graph;
- time steady calls with the same burst machinery and sample count as eager and replay;
- keep torch's own log records and counters (graph breaks, cudagraph skips): the analysis
  translates them.

The extra calls run on saved user state that is put back afterwards (plan_bursts.UserState),
with the user's prints silenced, and dynamo is reset after each mode so that the script goes
on as ``python script.py`` would. A failure or a timeout (``--compile-timeout``) is one
``compile`` event with its status; nothing else of the run is touched.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from launchprof.worker.compile_logs import TorchLogTap, clear_counters, counters_now
from launchprof.worker.rank_sync import distributed
from launchprof.events.lifecycle_events import NoteEvent
from launchprof.model.findings import NoteCode, RestoredAfter
from launchprof.events.compile_events import CompileEvent, CompileLog, CompileStartEvent

if TYPE_CHECKING:
    from launchprof.worker.event_writer import EventWriter
    from launchprof.worker.plan import TargetRun

# mode -> the Report field (and burst kind) it fills.
MODES = {"reduce-overhead": "compile", "default": "compile-no-cudagraphs"}
MIN_PASSES = 3  # reduce-overhead: warm-up run, recording run, first replay
MAX_PASSES = 8
MAX_ALARM_S = 1e7  # longer --compile-timeout values set no alarm (see deadline)


class CompileTimeout(BaseException):
    """Raised by the alarm inside torch's compile. A BaseException, so that torch's own
    ``except Exception`` handlers (which may fall back to eager) do not swallow it."""


@dataclass
class ModeResult:
    """One mode's outcome, as the ``compile`` event carries it."""

    mode: str
    field: str  # the burst kind of its timed calls: the Report field, "@N" for round N > 1
    status: str = "ok"  # ok, failed, timeout
    round: int = 1  # which fresh compile of this mode (--compile-rounds)
    error: str | None = None
    compile_s: float | None = None
    warmup_calls: int = 0
    passes: int = 0
    kernels_per_step: int | None = None
    graph_launches: int | None = None  # cudaGraphLaunch calls in the profiled call
    cudagraphs_used: bool | None = None
    frames_in_timing: int | None = None  # frames dynamo compiled during the timed calls (0: steady)
    device: str = "cpu"
    logs: list[dict[str, Any]] = field(default_factory=list)
    counters: dict[str, dict[str, int]] = field(default_factory=dict)

    def event(self) -> CompileEvent:
        """The ``compile`` event: this outcome as it stands, its log records as records."""
        fields = {**asdict(self), "logs": [CompileLog(**r) for r in self.logs]}
        return CompileEvent(**fields)


REFIRE_S = 0.1  # the alarm's repeat, should one raise be swallowed


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[bool]:
    """Raise CompileTimeout after ``seconds`` (SIGALRM: main thread, POSIX only). Yields
    whether the limit is enforced; a timer the script had set is re-armed afterwards."""
    # The platform's timer takes at most about 3e8 s (time_t): a longer limit is no limit (the
    # run's own --timeout still applies) rather than an OverflowError that fails the compile.
    usable = seconds is not None and 0 < seconds < MAX_ALARM_S and hasattr(signal, "setitimer")
    if not usable or threading.current_thread() is not threading.main_thread():
        yield False
        return

    armed = [True]

    def _raise(signum: int, frame: Any) -> None:
        if armed[0]:
            raise CompileTimeout()

    old_handler = signal.signal(signal.SIGALRM, _raise)
    # The alarm repeats: a handler that runs inside a finaliser or a C callback has its
    # exception printed and dropped, and the compile would then run on to its end.
    old_left, _ = signal.setitimer(signal.ITIMER_REAL, float(seconds), REFIRE_S)
    start = time.monotonic()
    try:
        yield True
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler if old_handler is not None else signal.SIG_DFL)
        if old_left > 0:
            signal.setitimer(signal.ITIMER_REAL, max(0.001, old_left - (time.monotonic() - start)))


def _timed_out(exc: BaseException) -> bool:
    """Whether the alarm is behind ``exc`` (torch may wrap it in its own errors)."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, CompileTimeout):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def _sync() -> None:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def _frames_compiled() -> int:
    from torch._dynamo.utils import counters

    return int(sum((counters.get("frames") or {}).values())) + int(sum((counters.get("stats") or {}).values()))


def _frames_total() -> int:
    from torch._dynamo.utils import counters

    return int((counters.get("frames") or {}).get("total", 0))


def burst_kind(mode: str, round_no: int = 1) -> str:
    """The burst kind of one fresh compile's timed calls: the Report field for the first,
    with ``@N`` for round N after it (the analysis keeps each round's samples apart)."""
    field_name = MODES.get(mode, mode)
    return field_name if round_no <= 1 else f"{field_name}@{round_no}"


def warm_up(fn: Callable[..., Any], mode: str, sets: list[tuple[tuple, dict]], timeout_s: float | None, round_no: int = 1) -> tuple[Callable[..., Any] | None, ModeResult]:
    """Compile ``fn`` in ``mode`` afresh and call it over ``sets`` until steady.
    Device-agnostic (runs on CPU tensors too); returns the compiled callable (None on
    failure) and the result."""
    torch._dynamo.reset()
    clear_counters()
    result = ModeResult(mode=mode, field=burst_kind(mode, round_no), round=round_no)
    compiled = None
    tap = TorchLogTap()
    start = time.perf_counter()
    try:
        with tap, deadline(timeout_s):
            start = time.perf_counter()  # the tap's imports are launchprof's, not compile's
            compiled = torch.compile(fn, mode=mode)
            while result.passes < MAX_PASSES:
                before = _frames_compiled()
                for args, kwargs in sets:
                    compiled(*args, **kwargs)
                    _sync()
                    result.warmup_calls += 1
                result.passes += 1
                if result.passes >= MIN_PASSES and _frames_compiled() == before:
                    break
        result.compile_s = time.perf_counter() - start
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)) and not _timed_out(exc):
            raise
        compiled = None
        result.status = "timeout" if _timed_out(exc) else "failed"
        result.compile_s = time.perf_counter() - start
        result.error = (
            f"no steady compiled call within --compile-timeout {timeout_s:g} s"
            if result.status == "timeout"
            else f"{type(exc).__name__}: {str(exc).strip()[:600]}"
        )
    result.logs = tap.records
    result.counters = counters_now()
    return compiled, result


def profile_call(compiled: Callable[..., Any], args: tuple, kwargs: dict, result: ModeResult) -> None:
    """Kernels per call and graph launches in one steady call, counted from the profiler's
    own rows the way the eager profile counts them (worker/profiler_tables.py). A session
    that lost all GPU activity (worker/cupti.py: after a user's own profiler session that
    ended without a teardown) is taken once more, as the plan's eager profile is."""
    from launchprof.worker.cupti import lost_device_activity, tear_down_after_profiling
    from launchprof.worker.profiler_tables import chrome_rows, new_profile

    tear_down_after_profiling()  # this session comes before the compiled bursts (the plan may not have profiled)
    for attempt in range(2):
        _sync()
        with new_profile() as prof:
            compiled(*args, **kwargs)
            _sync()
        if attempt or not lost_device_activity(prof):
            break
    rows = chrome_rows(prof.profiler.kineto_results.events(), 0)
    result.kernels_per_step = sum(1 for r in rows if r["cat"] == "kernel")
    result.graph_launches = sum(1 for r in rows if r["cat"] in ("cuda_runtime", "cuda_driver") and "GraphLaunch" in r["name"])
    result.cudagraphs_used = result.graph_launches > 0


def _bursts(
    compiled: Callable[..., Any], kind: str, sets: list[tuple[tuple, dict]], repeat: int, events: EventWriter, reset: Callable[[], None] | None = None
) -> int:
    """Steady calls timed exactly as eager and replay are (worker/burst.py). Returns the
    frames dynamo compiled meanwhile: the warm-up stops at the first pass that compiles
    nothing, and a guard that fails only later (state the step changes, a value the passes
    did not reach) would put compiling inside the timed calls."""
    from launchprof.worker.burst import Kind, run_bursts

    def call(a: tuple, k: dict) -> Callable[[], Any]:
        return lambda: compiled(*a, **k)

    before = _frames_total()
    run_bursts([Kind(kind, [call(a, k) for a, k in sets])], repeat, events, reset=reset)
    return _frames_total() - before


def measure_mode(
    fn: Callable[..., Any], mode: str, sets: list[tuple[tuple, dict]], repeat: int, timeout_s: float | None, events: EventWriter, round_no: int = 1,
    reset: Callable[[], None] | None = None,
) -> ModeResult:
    """Compile, profile and time one mode; every failure ends up in the result. ``reset`` puts
    the user's state back between the timed passes, as the eager and replay bursts do."""
    events.write(CompileStartEvent(mode=mode, timeout_s=timeout_s, round=round_no))
    compiled, result = warm_up(fn, mode, sets, timeout_s, round_no)
    result.device = "cuda" if torch.cuda.is_available() else "cpu"
    if compiled is not None and torch.cuda.is_available():
        try:
            profile_call(compiled, *sets[0], result)
        except Exception as exc:
            events.write(NoteEvent(code=NoteCode.COMPILE_KERNELS_NOT_COUNTED, params={"mode": mode, "error": f"{type(exc).__name__}: {str(exc)[:200]}"}))
        try:
            result.frames_in_timing = _bursts(compiled, result.field, sets, repeat, events, reset)
            if result.frames_in_timing:
                events.write(NoteEvent(code=NoteCode.COMPILE_FRAMES_IN_TIMING, params={"mode": mode, "frames": result.frames_in_timing}))
        except Exception as exc:
            result.status, result.error = "failed", f"timing compiled calls failed: {type(exc).__name__}: {str(exc)[:400]}"
    return result


def compare_compile(run: TargetRun) -> None:
    """Both modes on the bursts' argument sets, the user's state put back after each;
    nothing unless ``--compare compile`` asked for it. With ``--compile-rounds N`` each mode
    is compiled N times (dynamo reset each time; inductor's kernel caches kept), the modes
    alternating: compiled objects of one small step can run 1.7x apart,
    and one compile would report whichever it got. ``--compile-timeout`` holds for each mode
    in each round; a mode that failed or timed out is not compiled again."""
    from launchprof.worker.plan_bursts import UserState, silenced

    if "compile" not in run.config.compare:
        return
    if distributed():  # compiling on one rank while the others go on would hang their collectives
        run.events.write(NoteEvent(code=NoteCode.COMPILE_SKIPPED_RANKS))
        return
    sets = list(run.replay_sets if run.captured is not None else run.eager_sets)
    if not sets:
        run.events.write(NoteEvent(code=NoteCode.COMPILE_SKIPPED_NO_CALLS))
        return
    rounds, given_up = max(1, run.config.compile_rounds), set()
    for round_no in range(1, rounds + 1):
        for mode in (m for m in MODES if m not in given_up):
            try:
                state = UserState(run, sets, after=RestoredAfter.COMPILE)
            except Exception as exc:
                run.events.write(NoteEvent(code=NoteCode.COMPILE_STATE_NOT_SAVED, params={"error": f"{type(exc).__name__}: {exc}"}))
                return
            try:
                status = _one_mode(run, mode, sets, silenced, round_no, reset=state.restore)
            finally:
                restored = _restore(run, state)
            if not restored:
                return
            if status != "ok" and round_no < rounds:  # each round may take --compile-timeout: not again
                given_up.add(mode)
                run.events.write(NoteEvent(code=NoteCode.COMPILE_ROUND_FAILED, params={"mode": mode, "round": round_no, "timed_out": status == "timeout"}))


def _one_mode(
    run: TargetRun, mode: str, sets: list[tuple[tuple, dict]], silenced: Callable[[], Any], round_no: int = 1, reset: Callable[[], None] | None = None
) -> str:
    """One mode measured and its ``compile`` event written; launchprof's own failures
    included. Returns the result's status."""
    try:
        with silenced():
            result = measure_mode(run.fn, mode, sets, run.config.repeat, run.config.compile_timeout, run.events, round_no, reset)
    except Exception as exc:  # launchprof's own failure: reported, never fatal
        result = ModeResult(mode=mode, field=burst_kind(mode, round_no), round=round_no, status="failed", error=f"{type(exc).__name__}: {str(exc)[:400]}")
    with contextlib.suppress(Exception):
        torch._dynamo.reset()  # the script goes on with no compiled code of ours
    run.events.write(result.event())  # before the restore, which may fail
    return result.status


def _restore(run: TargetRun, state: Any) -> bool:
    """Put the user's state back; a failure is a note (this runs inside the user's call of
    the target: nothing may raise into their script), and the next mode is not run."""
    try:
        state.restore()
        return True
    except Exception as exc:
        run.events.write(NoteEvent(code=NoteCode.STATE_NOT_RESTORED, params={"after": RestoredAfter.COMPILE.value, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
        return False
