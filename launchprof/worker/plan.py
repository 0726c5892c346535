"""The measurement plan of one target, driven by the user's own calls to it.

Each call the script makes advances a fixed plan: warm-up -> timed eager calls ->
profiled calls (or, where no figure needs torch.profiler, calls whose op sequences are
recorded: worker/profiler_choice.py) -> one probed call -> capture -> replays with
validation, timed in the loop, while argument sets are recorded. Once enough sets are recorded (or when the plan
closes), eager, replay and clone are timed back to back in bursts on them (worker/burst.py):
those are the reported numbers. Every step writes its result to the event log at once, so
whatever the script does next (crash, exit, stop calling) cannot lose it. After the plan
ends the script is stopped at its next call (worker/early_stop.py), or with --run-to-end the
original function runs untouched: ``TargetRun`` is the plan's state machine.
"""

from __future__ import annotations

import collections
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from launchprof.worker.bucket_measure import measure_buckets
from launchprof.worker.burst import BURST_SETS
from launchprof.worker.capture import CaptureFailed, Captured, anatomy_event, capture
from launchprof.worker.capture_retry import after_failed_capture
from launchprof.worker.compile_compare import compare_compile
from launchprof.worker.config import WorkerConfig, in_loop_calls, pre_capture_calls
from launchprof.worker.event_writer import EventWriter
from launchprof.worker.fix_trials import try_fixes
from launchprof.worker.frames import frame_site, snippet
from launchprof.worker.memory import memory_event, tensor_bytes
from launchprof.worker.nvtx_ranges import nvtx_range
from launchprof.worker.observe import bind_arguments, call_signature, describe_call, module_state, referenced_state, scalar_values
from launchprof.worker.outputs_watch import OutputsWatch, caller_frame
from launchprof.worker.plan_bursts import run_plan_bursts
from launchprof.worker.plan_phases import FINISH_REASONS, TRANSITIONS, Exit, Phase
from launchprof.worker.op_sequence import recorded_call
from launchprof.worker.plan_profiles import finish_profile, profile_after_plan, profile_call, profile_replay
from launchprof.worker.probe import probe_call
from launchprof.worker.profiler_choice import reason_to_profile
from launchprof.worker.race_check import check_streams
from launchprof.worker.static_inputs import StaticInputs
from launchprof.worker.call_timer import timed
from launchprof.worker.trees import clone_tensors, copy_into, flat_tensors, tensor_leaves
from launchprof.worker.user_errors import UserError, is_device_error
from launchprof.worker.plan_state import KeepState, MutationWatch, put_back, save, stop_if_lost
from launchprof.worker.saved_state import changed_tensors, version_marked
from launchprof.worker.validator import cuda_rng_state, rng_advanced, validate
from launchprof.events.lifecycle_events import CallSiteEvent, InternalErrorEvent, NoteEvent, PhaseEvent, PlanEndEvent, ProfilerPlanEvent
from launchprof.model.findings import NoteCode, RestoredAfter
from launchprof.events.observation_events import ArgLeaf, CallEvent, FallbackEvent, MutationsEvent, StateReallocEvent
from launchprof.events.timing_events import EagerTimingEvent, ReplayTimingEvent

MAX_CALL_EVENTS = 400


class TargetRun:
    """Callable that stands in for the target while the plan runs: a state machine.

    Each call runs the handler of the current phase (``handlers``); a handler ends its phase
    through ``_transition``, by ``TRANSITIONS`` (worker/plan_phases.py). The table to check:

    from     exit            to       when
    WARMUP   CALLS_MADE      EAGER    ``config.warmup`` calls made (their mutations are written first)
    EAGER    CALLS_MADE      PROFILE  ``pre_capture_calls`` timed calls made
    PROFILE  CALLS_MADE      PROBE    ``config.profile_calls`` profiled (or op-recorded) calls made, a trace kept GPU activity
    PROFILE  TRACE_LOST      PROFILE  the same, but the trace lost all GPU activity: the calls are profiled again, once
    PROBE    CALLS_MADE      CAPTURE  its one call made
    CAPTURE  CAPTURED        REPLAY   the graph was captured; this call becomes the first validation
    CAPTURE  CAPTURE_FAILED  DONE     the capture failed; this call runs eagerly
    REPLAY   COMPLETE        DONE     enough timed replays, interleaved eager calls and validations
    REPLAY   STUCK           DONE     ``6 * in_loop_calls + 10`` replay-phase calls without that

    ``finish`` goes from any phase to DONE (the script ended, or launchprof's own error);
    a call in DONE runs the function untouched, without reaching a handler.
    """

    def __init__(self, fn: Callable[..., Any], name: str, config: WorkerConfig, events: EventWriter) -> None:
        self.fn = fn
        self.name = name
        self.config = config
        self.events = events
        self.phase = Phase.WARMUP
        self.inputs = StaticInputs(fn)
        self.calls = 0
        self.in_phase = 0
        self.busy = False
        self.mutated_args: set[str] = set()
        self.mutated_state: set[str] = set()
        self.last_ptrs: dict[str, int] = {}
        self.profiler: Any = None
        self.profiling = reason_to_profile(config)  # why the eager calls are profiled from the start, or None
        self.op_digests: list[str] = []  # the profile-phase calls' op sequences, where not profiled
        self.captured: Captured | None = None
        self.captured_signature: tuple | None = None
        self.captured_scalars: dict[str, Any] = {}
        self.replays_timed = 0
        self.validations = 0
        self.replay_calls = 0
        self.fallbacks = 0
        self.profiled_replay = False
        self.reprofiled = False  # the eager profile was taken again once (a lost trace)
        self.discarded: tuple[Any, int] | None = None  # that lost session, until the retake ends
        self.draws_cuda_rng = False  # a warm-up call advanced the default CUDA generator
        self.host_writes: list[tuple[Any, str]] = []
        self.host_containers: list[Any] = []
        self.replay_serves = True  # whether a replay may serve the script's own call
        self.keep = KeepState()  # leaving the script working (worker/plan_state.py)
        self.eager_interleaved = 0
        # Argument sets kept for the bursts: the last eager ones (for eager-only bursts when
        # capture fails) and the first replay-eligible ones after capture.
        self.eager_sets: collections.deque[tuple[tuple, dict]] = collections.deque(maxlen=BURST_SETS)
        self.replay_sets: list[tuple[tuple, dict]] = []
        self.bursts_done = False
        # The argument set the stream check runs on, kept from the end of the plan until the
        # script is stopped or done (final_checks).
        self.race_set: tuple[tuple, dict] | None = None
        self.pre_capture_calls = pre_capture_calls(config.repeat)
        self.in_loop_calls = in_loop_calls(config.repeat)
        self.outputs = OutputsWatch(fn, events)  # kept outputs, looped-back state

    # ------------------------------------------------------------------ dispatch
    def _canon(self, args: tuple, kwargs: dict) -> Any:
        return self.inputs.canon(args, kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.busy or self.phase is Phase.DONE:
            stop_if_lost(self)
            return self.fn(*args, **kwargs)
        self.busy = True
        try:
            # Outputs kept / state looped back: outside every timed region.
            self.outputs.before(self.calls, args, kwargs, caller_frame())
            out = self._guarded(args, kwargs)
            self.outputs.after(self.calls - 1, out, caller_frame())
        finally:
            self.busy = False
        stop_if_lost(self)  # raises ScriptStopped where state could not be put back
        return out

    def _guarded(self, args: tuple, kwargs: dict) -> Any:
        """The user's exceptions pass through untouched; launchprof's own are reported as
        internal errors, the plan stops, and the call runs as if launchprof were absent."""
        try:
            if self.calls == 0:
                site = frame_site(sys._getframe(1))
                if site is not None:
                    self.events.write(CallSiteEvent(file=site.file, line=site.line, code=site.code, function=site.function))
                self.events.write(ProfilerPlanEvent(profiled=self.profiling is not None, reason=self.profiling, when="start"))
            return self._step(args, kwargs)
        except UserError as wrapped:
            raise wrapped.original from None
        except Exception as exc:
            if is_device_error(exc):
                # Kernels run asynchronously: the user's device assert or OOM surfaces at
                # launchprof's next synchronise. It is the script's failure, not ours.
                raise
            self.events.write(InternalErrorEvent(error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-3000:]))
            try:
                self.finish(reason=f"launchprof internal error: {type(exc).__name__}: {exc}", bursts=False)
            except Exception:
                self.phase = Phase.DONE
            return self.fn(*args, **kwargs)

    def _user(self, *args: Any, **kwargs: Any) -> Any:
        """Call the user's function; its exceptions are marked as the user's."""
        try:
            return self.fn(*args, **kwargs)
        except Exception as exc:
            raise UserError(exc) from None

    def state_of(self, args: tuple, kwargs: dict) -> dict[str, torch.Tensor]:
        """The tensors the call can reach besides its arguments: globals the function
        references and the state of modules among its arguments, by name."""
        state = referenced_state(self.fn)
        state.update(module_state(bind_arguments(self.fn, args, kwargs)))
        return state

    def _step(self, args: tuple, kwargs: dict) -> Any:
        index = self.calls
        self.calls += 1
        records = describe_call(bind_arguments(self.fn, args, kwargs))
        state = self.state_of(args, kwargs)
        self._observe(index, records, state)
        self.inputs.observe(args, kwargs)
        return self.handlers()[self.phase](index, args, kwargs, records, state)

    def handlers(self) -> dict[Phase, Callable[..., Any]]:
        """Phase -> handler, built per call (the run holds no cycle); DONE's calls reach none."""
        return {Phase.WARMUP: self._warmup, Phase.EAGER: self._eager, Phase.PROFILE: self._profile,
                Phase.PROBE: self._probe, Phase.CAPTURE: self._capture, Phase.REPLAY: self._replay}  # fmt: skip

    def _transition(self, why: Exit) -> None:
        """The phase ends for ``why``: on to the one ``TRANSITIONS`` names (written as an event;
        the same one counts its calls again; DONE closes the plan). DONE is final."""
        if self.phase is Phase.DONE:
            return
        target = TRANSITIONS[self.phase, why]
        if target is Phase.DONE:
            return self.finish(reason=FINISH_REASONS[why])
        if target is not self.phase:
            self.events.write(PhaseEvent(name=target.value, call=self.calls))
            self.phase = target
        self.in_phase = 0

    def _calls_made(self) -> bool:
        """Whether a counted phase has made its calls (the CALLS_MADE rows of the table)."""
        wanted = {Phase.WARMUP: self.config.warmup, Phase.EAGER: self.pre_capture_calls, Phase.PROFILE: self.config.profile_calls}
        return self.in_phase >= wanted[self.phase]

    def _observe(self, index: int, records: list[dict[str, Any]], state: dict[str, torch.Tensor]) -> None:
        if index < MAX_CALL_EVENTS:
            self.events.write(CallEvent(index=index, phase=self.phase.value, args=[ArgLeaf(**r) for r in records]))
        ptrs = {name: t.data_ptr() for name, t in state.items()}
        changed = {n: p for n, p in ptrs.items() if n in self.last_ptrs and self.last_ptrs[n] != p}
        if changed and index < MAX_CALL_EVENTS:
            self.events.write(StateReallocEvent(index=index, names=sorted(changed)))
        self.last_ptrs = ptrs

    # ------------------------------------------------------------------ eager phases
    def _warmup(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        before_args = version_marked(tensor_leaves(self._canon(args, kwargs)))
        before_state = version_marked(state.items())
        rng_before = cuda_rng_state()
        watch = MutationWatch(self, args, kwargs)
        with nvtx_range("eager"):
            out = self._user(*args, **kwargs)
        watch.after()
        self.draws_cuda_rng |= rng_advanced(rng_before)  # its replays launch torch's RNG fills (analysis/prediction.py)
        self.mutated_args.update(changed_tensors(before_args))  # an inference tensor by its checksum
        self.mutated_state.update(changed_tensors(before_state))
        self.in_phase += 1
        if self._calls_made():
            self.events.write(MutationsEvent(args=sorted(self.mutated_args), state=sorted(self.mutated_state), cuda_rng=self.draws_cuda_rng))
            self._transition(Exit.CALLS_MADE)
        return out

    def _eager(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        with nvtx_range("eager"):
            out, t = timed(lambda: self._user(*args, **kwargs))
        self.events.write(EagerTimingEvent(index=index, wall_us=t.wall_us, gpu_us=t.gpu_us, phase="eager", mode="in-loop"))
        self.eager_sets.append((args, kwargs))
        self.in_phase += 1
        if self._calls_made():
            self._transition(Exit.CALLS_MADE)
        return out

    def _profile(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        if self.profiling is None:  # the call's op sequence, no profiler (worker/profiler_choice.py)
            with nvtx_range("eager"):
                out, ops = recorded_call(self._user, args, kwargs)
            self.events.write(ops.event(index))
            self.op_digests.append(ops.digest)
        else:
            out = profile_call(self, lambda: self._user(*args, **kwargs))
        self.in_phase += 1
        if self._calls_made():
            if self.profiling is None or finish_profile(self):
                self._transition(Exit.CALLS_MADE)
            else:  # its trace lost the GPU activity: profile these calls again
                self._transition(Exit.TRACE_LOST)
                self.events.write(NoteEvent(code=NoteCode.REPROFILED))
        return out

    def run_dir(self) -> Any:
        """The run folder, where the profiler traces go (beside the event log)."""
        return Path(self.config.events_path).parent

    def _probe(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        watch = MutationWatch(self, args, kwargs)  # a tensor created lazily in the warm-up calls is seen here
        with nvtx_range("eager"):
            out, found = probe_call(self._user, args, kwargs)
        watch.after()
        torch.cuda.synchronize()
        for entry in found.syncs + found.effects + found.rng + found.streams:
            if entry.get("file") and entry.get("line"):
                entry["snippet"] = snippet(entry["file"], int(entry["line"]))
        self.events.write(found.event(index, max_functions=200))
        self.host_writes, self.host_containers = found.writes, found.containers
        # A replay runs no Python and draws from no host generator: it cannot stand in for
        # the script's own call where the step changes Python state or draws host numbers.
        self.replay_serves = not (found.effects or found.rng)
        self._transition(Exit.CALLS_MADE)
        return out

    # ------------------------------------------------------------------ capture and replay
    def _capture(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        static_args, static_kwargs = self.inputs.make(args, kwargs)
        snap = save(self, [(args, kwargs)])  # everything the call can reach, to undo the captures

        def reset() -> None:
            put_back(self, snap, RestoredAfter.CAPTURE)
            copy_into((static_args, static_kwargs), (args, kwargs))

        failure: dict[str, Any] = {}
        with nvtx_range("capture"):
            try:
                try:
                    self.captured = capture(self._user, static_args, static_kwargs, warmup=2, before_capture=reset)
                finally:
                    put_back(self, snap, RestoredAfter.CAPTURE)
            except CaptureFailed as failed:
                failure = failed.info
        if self.captured is None:  # out of the except clause: its frames no longer hold the attempt's autograd graph
            self.captured = after_failed_capture(self, failure, index, snap, lambda: capture(self._user, static_args, static_kwargs, 2, reset), (args, kwargs))
            if self.captured is None:
                self._transition(Exit.CAPTURE_FAILED)
                return self._user(*args, **kwargs)
        cap = self.captured
        self.events.write(cap.event(index, sorted(self.inputs.moved_args)))
        if cap.anatomy:
            self.events.write(anatomy_event(cap.anatomy))
        self.captured_signature = call_signature(records)
        self.captured_scalars = scalar_values(records)
        self.inputs.plan(cap.static_args, cap.static_kwargs, args, kwargs)
        clone_bytes = tensor_bytes(flat_tensors(cap.static_out))
        self.events.write(memory_event(self.inputs.static_bytes(), clone_bytes, cap.pool_bytes, cap.workspace_bytes))
        # The captures were undone above; this call becomes the first validation (same data).
        self._transition(Exit.CAPTURED)
        return self._validate(index, args, kwargs, state, changed_scalars=[])

    def _replay(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        self.replay_calls += 1
        assert self.captured is not None
        if call_signature(records) != self.captured_signature:
            return self._fallback(index, args, kwargs, reason="shape")
        if self.inputs.moved_since_capture(args, kwargs):
            # The graph would read the old tensor. Run eagerly; the reallocated-input
            # finding names it.
            return self._fallback(index, args, kwargs, reason="input moved after capture")
        scalars = scalar_values(records)
        changed = sorted(k for k, v in scalars.items() if self.captured_scalars.get(k) != v)
        # Validations: the first replay call, one halfway through the in-loop calls, then
        # any left over once the in-loop timing is complete.
        want_validation = self.validations < self.config.validations and (
            self.replay_calls in (1, max(2, self.in_loop_calls // 2)) or self.replays_timed >= self.in_loop_calls or not self.replay_serves
        )
        # A call the graph can serve is a burst argument set even when a Python number in it
        # changed: a replay then computes with the captured value, but does the same work, so
        # its time is what a fixed step would cost (the frozen-scalar finding says the rest).
        if len(self.replay_sets) < BURST_SETS:
            self.replay_sets.append((args, kwargs))
            if len(self.replay_sets) == BURST_SETS:
                self._bursts()
        if changed:
            if self.validations < self.config.validations + 2:
                return self._validate(index, args, kwargs, state, changed_scalars=changed)
            return self._fallback(index, args, kwargs, reason="scalar", changed=changed)
        if want_validation:
            return self._validate(index, args, kwargs, state, changed_scalars=[])
        if not self.replay_serves:
            return self._fallback(index, args, kwargs, reason="host-state")
        if self.eager_interleaved < self.replays_timed and self.eager_interleaved < self.in_loop_calls:
            return self._timed_eager(index, args, kwargs)
        return self._timed_replay(index, args, kwargs)

    def _bursts(self) -> None:
        """The reported timings, once; a failure leaves the in-loop numbers."""
        if self.bursts_done:
            return
        self.bursts_done = True
        run_plan_bursts(self)

    def _fallback(self, index: int, args: tuple, kwargs: dict, reason: str, changed: list[str] | None = None) -> Any:
        """A call the graph cannot serve runs eagerly, untimed, and is counted."""
        self.fallbacks += 1
        self.events.write(FallbackEvent(index=index, reason=reason, changed=changed))
        out = self._user(*args, **kwargs)
        self._maybe_done()
        return out

    def _timed_eager(self, index: int, args: tuple, kwargs: dict) -> Any:
        """An eager call between two replays: the in-loop speedup compares neighbours."""
        with nvtx_range("eager"):
            out, t = timed(lambda: self._user(*args, **kwargs))
        self.events.write(EagerTimingEvent(index=index, wall_us=t.wall_us, gpu_us=t.gpu_us, phase="interleaved", mode="in-loop"))
        self.eager_interleaved += 1
        self._maybe_done()
        return out

    def run_graph(self, args: tuple, kwargs: dict) -> None:
        """Copy what changed into the static buffers, replay. Kept lean: it is timed."""
        assert self.captured is not None
        self.inputs.copy_in(args, kwargs)
        self.captured.graph.replay()

    def _timed_replay(self, index: int, args: tuple, kwargs: dict) -> Any:
        cap = self.captured
        assert cap is not None
        if self.profiling and not self.profiled_replay:
            profile_replay(self, args, kwargs)
        with nvtx_range("replay"):
            _, t = timed(lambda: self.run_graph(args, kwargs))
        self.events.write(ReplayTimingEvent(index=index, wall_us=t.wall_us, gpu_us=t.gpu_us, mode="in-loop"))
        self.replays_timed += 1
        out = clone_tensors(cap.static_out)
        self.inputs.copy_back(args, kwargs, self.mutated_args)
        self._maybe_done()
        return out

    def _validate(self, index: int, args: tuple, kwargs: dict, state: dict, changed_scalars: list[str]) -> Any:
        """Eager and replay of the same call from the same state, compared leaf by leaf."""
        cap = self.captured
        assert cap is not None
        self.validations += 1
        with nvtx_range("replay"):
            result = validate(
                self._user,
                lambda: self.run_graph(args, kwargs),
                cap.static_out,
                args,
                kwargs,
                dict(tensor_leaves(self._canon(args, kwargs))),
                self.inputs.static_named,
                self.mutated_args,
                lambda: save(self, [(args, kwargs)]),
                lambda saved: put_back(self, saved, RestoredAfter.VALIDATION),
            )
        scalars = scalar_values(describe_call(bind_arguments(self.fn, args, kwargs)))
        changed = {k: v for k, v in scalars.items() if k in changed_scalars}
        captured = {k: self.captured_scalars.get(k) for k in changed_scalars}
        self.events.write(result.event(index, changed_scalars, changed, captured))
        if not result.fields["match"]:
            self.replay_serves = False  # the script's later calls get the eager result
        self._maybe_done()
        return result.eager_out

    def _maybe_done(self) -> None:
        timed = self.replays_timed >= self.in_loop_calls and self.eager_interleaved >= self.in_loop_calls
        enough = (timed or (not self.replay_serves and self.bursts_done)) and self.validations >= min(self.config.validations, 3)
        stuck = self.replay_calls >= 6 * self.in_loop_calls + 10
        if enough or stuck:
            self._transition(Exit.COMPLETE if enough else Exit.STUCK)

    def final_checks(self) -> None:
        """The stream check, where the script is stopped (worker/early_stop.py) or after its
        end. Importing the sanitizer switches on trace hooks that slow every later CUDA op of
        the process about 2.5x (worker/race_check.py), so it runs where neither a measurement
        nor the script's own calls follow it."""
        if self.race_set is None:
            return
        args, kwargs = self.race_set
        self.race_set = None
        check_streams(self, args, kwargs)

    def finish(self, reason: str, bursts: bool = True) -> None:
        """Close the plan: flush an open profiler, run the bursts if they have not run yet
        (a short script, a failed capture), try the written fixes, free the graph, report counts."""
        if self.phase is Phase.DONE:
            return
        if self.profiler is not None or self.discarded is not None:
            try:
                finish_profile(self, retry=False)
            except Exception as exc:
                self.events.write(NoteEvent(code=NoteCode.TRACE_NOT_WRITTEN, params={"error": str(exc)}))
        if bursts:
            self._bursts()
            measure_buckets(self)  # varying shapes only: the bucket plan, measured (worker/buckets.py)
            compare_compile(self)  # --compare compile only (worker/compile_compare.py)
            try_fixes(self)  # each written fix tried on the recorded sets (worker/fix_trials.py)
            profile_after_plan(self, reason)  # where a figure needs the profiler after all (worker/plan_profiles.py)
            sets = list(self.replay_sets or self.eager_sets)
            self.race_set = sets[-1] if sets else None
        self.events.write(
            PlanEndEvent(reason=reason, phase=self.phase.value, calls=self.calls, replays_timed=self.replays_timed, validations=self.validations, fallbacks=self.fallbacks)
        )
        self.phase = Phase.DONE
        self.captured = None
        self.eager_sets.clear()
        self.replay_sets.clear()
        torch.cuda.empty_cache()
