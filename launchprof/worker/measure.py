"""The measurement of one target, driven by the user's own calls to it.

Each call the script makes advances a fixed plan: warm-up -> timed eager calls ->
profiled calls -> one probed call -> capture -> timed replays with validation. Every
step writes its result to the event log at once, so whatever the script does next
(crash, exit, stop calling) cannot lose it. After the plan ends the original function
runs untouched.
"""

from __future__ import annotations

import enum
import inspect
import sys
import weakref
from collections.abc import Callable
from typing import Any

import torch

from launchprof.worker.capture import CaptureFailed, Captured, capture
from launchprof.worker.config import WorkerConfig, pre_capture_calls
from launchprof.worker.events import EventWriter
from launchprof.worker.frames import frame_site, snippet
from launchprof.worker.hoststate import HostState
from launchprof.worker.nvtx_ranges import nvtx_range
from launchprof.worker.observe import (
    bind_arguments,
    call_signature,
    describe_call,
    module_state,
    referenced_state,
    scalar_values,
)
from launchprof.worker.probe import probe_call
from launchprof.worker.timing import timed
from launchprof.worker.trees import clone_tensors, copy_into, flat_tensors, leaves, map_tree, tensor_leaves

MAX_CALL_EVENTS = 400


class UserError(Exception):
    """Carries an exception raised by the user's code through launchprof's frames."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


class Phase(enum.Enum):
    WARMUP = "warmup"
    EAGER = "eager"
    PROFILE = "profile"
    PROBE = "probe"
    CAPTURE = "capture"
    REPLAY = "replay"
    DONE = "done"


class TargetRun:
    """Callable that stands in for the target while the plan runs."""

    def __init__(self, fn: Callable[..., Any], name: str, config: WorkerConfig, events: EventWriter) -> None:
        self.fn = fn
        self.name = name
        self.config = config
        self.events = events
        self.phase = Phase.WARMUP
        try:
            self.signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        self.calls = 0
        self.in_phase = 0
        self.busy = False
        self.mutated_args: set[str] = set()
        self.mutated_state: set[str] = set()
        self.last_ptrs: dict[str, int] = {}
        self.arg_ptrs: dict[str, int] = {}
        self.arg_refs: dict[str, weakref.ref] = {}
        self.moved_args: set[str] = set()
        self.profiler: Any = None
        self.captured: Captured | None = None
        self.captured_signature: tuple | None = None
        self.captured_scalars: dict[str, Any] = {}
        self.replays_timed = 0
        self.validations = 0
        self.replay_calls = 0
        self.fallbacks = 0
        self.profiled_replay = False
        self.host_writes: list[tuple[Any, str]] = []
        self.host_containers: list[Any] = []
        self.eager_interleaved = 0
        self.copy_plan: list[int] = []  # flat indices of inputs copied into static buffers
        self.kept: list[int] = []  # flat indices of inputs the graph reads in place
        self.static_flat: list[torch.Tensor] = []
        # Before capture, enough eager calls to report an eager step if capture fails; after
        # it, eager and replay calls alternate so both see the same machine state.
        self.pre_capture_calls = pre_capture_calls(config.repeat)

    # ------------------------------------------------------------------ dispatch
    def _canon(self, args: tuple, kwargs: dict) -> Any:
        """The call's arguments in the target's parameter order, whatever keyword order the
        caller used: static buffers are matched to new data by this order."""
        if not kwargs:
            return args
        if self.signature is not None:
            try:
                return tuple(self.signature.bind(*args, **kwargs).arguments.values())
            except TypeError:
                pass
        return (args, tuple(sorted(kwargs.items())))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.busy or self.phase is Phase.DONE:
            return self.fn(*args, **kwargs)
        self.busy = True
        try:
            return self._guarded(args, kwargs)
        finally:
            self.busy = False

    def _guarded(self, args: tuple, kwargs: dict) -> Any:
        """The user's exceptions pass through untouched; launchprof's own are reported as
        internal errors, the plan stops, and the call runs as if launchprof were absent."""
        try:
            if self.calls == 0:
                site = frame_site(sys._getframe(1))
                if site is not None:
                    self.events.write("call-site", **site.as_dict())
            return self._step(args, kwargs)
        except UserError as wrapped:
            raise wrapped.original from None
        except Exception as exc:
            if is_device_error(exc):
                # Kernels run asynchronously: the user's device assert or OOM surfaces at
                # launchprof's next synchronise. It is the script's failure, not ours.
                raise
            import traceback

            self.events.write("internal-error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc()[-3000:])
            try:
                self.finish(reason=f"launchprof internal error: {type(exc).__name__}: {exc}")
            except Exception:
                self.phase = Phase.DONE
            return self.fn(*args, **kwargs)

    def _user(self, *args: Any, **kwargs: Any) -> Any:
        """Call the user's function; its exceptions are marked as the user's."""
        try:
            return self.fn(*args, **kwargs)
        except Exception as exc:
            raise UserError(exc) from None

    def _step(self, args: tuple, kwargs: dict) -> Any:
        index = self.calls
        self.calls += 1
        named = bind_arguments(self.fn, args, kwargs)
        records = describe_call(named)
        state = referenced_state(self.fn)
        state.update(module_state(named))
        self._observe(index, records, state)
        self._observe_args(args, kwargs)
        handler = {
            Phase.WARMUP: self._warmup,
            Phase.EAGER: self._eager,
            Phase.PROFILE: self._profile,
            Phase.PROBE: self._probe,
            Phase.CAPTURE: self._capture,
            Phase.REPLAY: self._replay,
        }[self.phase]
        return handler(index, args, kwargs, records, state)

    def _advance(self, phase: Phase) -> None:
        self.events.write("phase", name=phase.value, call=self.calls)
        self.phase = phase
        self.in_phase = 0

    def _observe_args(self, args: tuple, kwargs: dict) -> None:
        """An input is stable only if it is the very same tensor every call. A fresh tensor
        that happens to land at the same address (the caching allocator reuses blocks) is
        not: once capture holds the old one, the new ones land elsewhere."""
        for p, t in tensor_leaves(self._canon(args, kwargs)):
            ptr = t.data_ptr()
            first = self.arg_refs.setdefault(p, weakref.ref(t))
            if self.arg_ptrs.setdefault(p, ptr) != ptr or first() is not t:
                self.moved_args.add(p)

    def _observe(self, index: int, records: list[dict[str, Any]], state: dict[str, torch.Tensor]) -> None:
        if index < MAX_CALL_EVENTS:
            self.events.write("call", index=index, phase=self.phase.value, args=records)
        ptrs = {name: t.data_ptr() for name, t in state.items()}
        changed = {n: p for n, p in ptrs.items() if n in self.last_ptrs and self.last_ptrs[n] != p}
        if changed and index < MAX_CALL_EVENTS:
            self.events.write("state-realloc", index=index, names=sorted(changed))
        self.last_ptrs = ptrs

    # ------------------------------------------------------------------ eager phases
    def _warmup(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        before_args = {p: version_of(t) for p, t in tensor_leaves(self._canon(args, kwargs))}
        before_state = {n: version_of(t) for n, t in state.items()}
        with nvtx_range("eager"):
            out = self._user(*args, **kwargs)
        for p, t in tensor_leaves(self._canon(args, kwargs)):
            if version_of(t) is None or (p in before_args and version_of(t) != before_args[p]):
                self.mutated_args.add(p)
        for n, t in state.items():
            if version_of(t) is None or (n in before_state and version_of(t) != before_state[n]):
                self.mutated_state.add(n)
        self.in_phase += 1
        if self.in_phase >= self.config.warmup:
            self.events.write("mutations", args=sorted(self.mutated_args), state=sorted(self.mutated_state))
            self._advance(Phase.EAGER)
        return out

    def _eager(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        with nvtx_range("eager"):
            out, t = timed(lambda: self._user(*args, **kwargs))
        self.events.write("eager-timing", index=index, wall_us=t.wall_us, gpu_us=t.gpu_us, phase="eager")
        self.in_phase += 1
        if self.in_phase >= self.pre_capture_calls:
            self._advance(Phase.PROFILE)
        return out

    def _profile(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        from torch.profiler import ProfilerActivity, profile, record_function

        if self.profiler is None:
            self.profiler = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            torch.cuda.synchronize()
            self.profiler.__enter__()
        with nvtx_range("eager"), record_function(f"launchprof/call{self.in_phase}"):
            out = self._user(*args, **kwargs)
            torch.cuda.synchronize()
        self.in_phase += 1
        if self.in_phase >= self.config.profile_calls:
            self._finish_profile()
            self._advance(Phase.PROBE)
        return out

    def _finish_profile(self) -> None:
        if self.profiler is None:
            return
        prof, self.profiler = self.profiler, None
        prof.__exit__(None, None, None)
        prof.export_chrome_trace(self.config.trace_path)
        self.events.write("trace", path=self.config.trace_path, calls=self.in_phase, what="eager")

    def _probe(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        with nvtx_range("eager"):
            out, found = probe_call(self._user, args, kwargs)
        torch.cuda.synchronize()
        for entry in found.syncs + found.effects + found.rng + found.streams:
            if entry.get("file") and entry.get("line"):
                entry["snippet"] = snippet(entry["file"], int(entry["line"]))
        self.events.write(
            "probe",
            index=index,
            syncs=found.syncs,
            effects=found.effects,
            rng=found.rng,
            streams=found.streams,
            functions=found.user_functions[:200],
        )
        self.host_writes, self.host_containers = found.writes, found.containers
        self._advance(Phase.CAPTURE)
        return out

    # ------------------------------------------------------------------ capture and replay
    def _snapshot(self, args: tuple, kwargs: dict, state: dict) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
        """Clones of everything the call mutates, to undo it (validation, warm-up)."""
        snap = {f"arg:{p}": (t, t.detach().clone()) for p, t in tensor_leaves(self._canon(args, kwargs)) if p in self.mutated_args}
        snap.update({f"state:{n}": (t, t.detach().clone()) for n, t in state.items() if n in self.mutated_state})
        return snap

    @staticmethod
    def _restore(snap: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> None:
        with torch.inference_mode():
            for live, saved in snap.values():
                live.copy_(saved)

    def _static_inputs(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Static buffers: a tensor passed at the same address every call is its own static
        buffer (the graph reads it in place, as a hand-graphed loop would); one that is a new
        allocation each call gets a copy that new data is copied into before each replay."""
        keep = {id(t) for p, t in tensor_leaves(self._canon(args, kwargs)) if p not in self.moved_args}

        def pick(v: Any) -> Any:
            if isinstance(v, torch.Tensor):
                return v if id(v) in keep else v.detach().clone()
            return v

        both = map_tree((args, kwargs), pick)
        return both[0], both[1]

    def _capture(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        static_args, static_kwargs = self._static_inputs(args, kwargs)
        snap = self._snapshot(args, kwargs, state)
        rng = torch.cuda.get_rng_state()

        def reset() -> None:
            self._restore(snap)
            copy_into((static_args, static_kwargs), (args, kwargs))
            torch.cuda.set_rng_state(rng)

        # The warm-up calls and the capture run the step's Python three more times.
        host = HostState.save(self.host_writes, self.host_containers)
        with nvtx_range("capture"):
            try:
                try:
                    self.captured = capture(self._user, static_args, static_kwargs, warmup=2, before_capture=reset)
                finally:
                    host.restore()
            except CaptureFailed as failed:
                info = failed.info
                if info.get("file") and info.get("line"):
                    info["snippet"] = snippet(info["file"], int(info["line"]))
                self.events.write("capture", ok=False, index=index, **info)
                self._restore(snap)
                torch.cuda.set_rng_state(rng)
                self.finish(reason="capture failed")
                return self._user(*args, **kwargs)
        cap = self.captured
        self.events.write(
            "capture",
            ok=True,
            index=index,
            capture_us=cap.capture_us,
            instantiate_us=cap.instantiate_us,
            graph_nodes=cap.graph_nodes,
            node_types=cap.node_types,
            pool_bytes=cap.pool_bytes,
            notes=cap.notes,
        )
        self.captured_signature = call_signature(records)
        self.captured_scalars = scalar_values(records)
        self.static_flat = flat_tensors(self._canon(cap.static_args, cap.static_kwargs))
        live = flat_tensors(self._canon(args, kwargs))
        self.copy_plan = [i for i, (st, lv) in enumerate(zip(self.static_flat, live, strict=True)) if st is not lv]
        copied = set(self.copy_plan)
        self.kept = [i for i in range(len(live)) if i not in copied]
        # The capture itself ran the step on the static buffers: undo it, then this call
        # becomes the first validation (same data as captured).
        self._restore(snap)
        torch.cuda.set_rng_state(rng)
        self._advance(Phase.REPLAY)
        return self._validate(index, args, kwargs, state, changed_scalars=[])

    def _replay(self, index: int, args: tuple, kwargs: dict, records: list, state: dict) -> Any:
        self.replay_calls += 1
        assert self.captured is not None
        if call_signature(records) != self.captured_signature:
            return self._fallback(index, args, kwargs, reason="shape")
        if self.kept:
            live = flat_tensors(self._canon(args, kwargs))
            if any(live[i] is not self.static_flat[i] for i in self.kept):
                # An input that stayed put until capture moved: the graph would read the old
                # tensor. Run eagerly; the reallocated-input finding names it.
                return self._fallback(index, args, kwargs, reason="input moved after capture")
        scalars = scalar_values(records)
        changed = sorted(k for k, v in scalars.items() if self.captured_scalars.get(k) != v)
        want_validation = self.validations < self.config.validations and (
            self.replay_calls in (1, max(2, self.config.repeat // 2)) or self.replays_timed >= self.config.repeat
        )
        if changed:
            if self.validations < self.config.validations + 2:
                return self._validate(index, args, kwargs, state, changed_scalars=changed)
            return self._fallback(index, args, kwargs, reason="scalar", changed=changed)
        if want_validation:
            return self._validate(index, args, kwargs, state, changed_scalars=[])
        if self.eager_interleaved < self.replays_timed and self.eager_interleaved < self.config.repeat:
            return self._timed_eager(index, args, kwargs)
        return self._timed_replay(index, args, kwargs)

    def _fallback(self, index: int, args: tuple, kwargs: dict, reason: str, **extra: Any) -> Any:
        """A call the graph cannot serve runs eagerly, untimed, and is counted."""
        self.fallbacks += 1
        self.events.write("fallback", index=index, reason=reason, **extra)
        out = self._user(*args, **kwargs)
        self._maybe_done()
        return out

    def _timed_eager(self, index: int, args: tuple, kwargs: dict) -> Any:
        """An eager call between two replays: the speedup compares neighbours in time."""
        with nvtx_range("eager"):
            out, t = timed(lambda: self._user(*args, **kwargs))
        self.events.write("eager-timing", index=index, wall_us=t.wall_us, gpu_us=t.gpu_us, phase="interleaved")
        self.eager_interleaved += 1
        self._maybe_done()
        return out

    def _run_graph(self, args: tuple, kwargs: dict) -> None:
        """Copy what changed into the static buffers, replay. Kept lean: it is timed."""
        assert self.captured is not None
        if self.copy_plan:
            new = flat_tensors(self._canon(args, kwargs))
            static = self.static_flat
            for i in self.copy_plan:
                static[i].copy_(new[i], non_blocking=True)
        self.captured.graph.replay()

    def _timed_replay(self, index: int, args: tuple, kwargs: dict) -> Any:
        cap = self.captured
        assert cap is not None
        if not self.profiled_replay:
            self._profile_replay(args, kwargs)
        with nvtx_range("replay"):
            _, t = timed(lambda: self._run_graph(args, kwargs))
        self.events.write("replay-timing", index=index, wall_us=t.wall_us, gpu_us=t.gpu_us)
        self.replays_timed += 1
        out = clone_tensors(cap.static_out)
        self._copy_back(args, kwargs)
        self._maybe_done()
        return out

    def _profile_replay(self, args: tuple, kwargs: dict) -> None:
        """One replay under the profiler, for the timeline and the replay kernel count.

        Replays the same data twice is harmless only if the step does not mutate its
        state, so this runs on a snapshot that is restored afterwards."""
        from torch.profiler import ProfilerActivity, profile, record_function

        self.profiled_replay = True
        state = referenced_state(self.fn)
        state.update(module_state(bind_arguments(self.fn, args, kwargs)))
        snap = self._snapshot(args, kwargs, state)
        rng = torch.cuda.get_rng_state()
        path = self.config.trace_path.replace(".json", "-replay.json")
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            with record_function("launchprof/call0"):
                self._run_graph(args, kwargs)
                torch.cuda.synchronize()
        prof.export_chrome_trace(path)
        self._restore(snap)
        torch.cuda.set_rng_state(rng)
        self.events.write("trace", path=path, calls=1, what="replay")

    def _copy_back(self, args: tuple, kwargs: dict) -> None:
        """Arguments the target mutates in place: replay mutated the static copies, so copy
        the result back into the caller's tensors (eager semantics)."""
        if not self.mutated_args or self.captured is None:
            return
        static = dict(tensor_leaves(self._canon(self.captured.static_args, self.captured.static_kwargs)))
        with torch.inference_mode():
            for p, t in tensor_leaves(self._canon(args, kwargs)):
                if p in self.mutated_args and p in static and static[p] is not t:
                    t.copy_(static[p])

    def _validate(self, index: int, args: tuple, kwargs: dict, state: dict, changed_scalars: list[str]) -> Any:
        """Eager and replay of the same call from the same state, compared leaf by leaf."""
        cap = self.captured
        assert cap is not None
        self.validations += 1
        snap = self._snapshot(args, kwargs, state)
        rng = torch.cuda.get_rng_state()
        torch.cuda.synchronize()
        eager_out = clone_tensors(self._user(*args, **kwargs))
        torch.cuda.synchronize()
        eager_args = {p: t.detach().clone() for p, t in tensor_leaves(self._canon(args, kwargs)) if p in self.mutated_args}
        eager_state = {n: t.detach().clone() for n, t in state.items() if n in self.mutated_state}
        self._restore(snap)
        torch.cuda.set_rng_state(rng)
        with nvtx_range("replay"):
            _, t = timed(lambda: self._run_graph(args, kwargs))
        replay_out = cap.static_out
        static_args = dict(tensor_leaves(self._canon(cap.static_args, cap.static_kwargs)))
        diffs = compare_trees(eager_out, replay_out, "output")
        for p, expected in eager_args.items():
            if p in static_args:
                diffs += compare_trees(expected, static_args[p], f"argument {p} (mutated in place)")
        for n, expected in eager_state.items():
            if n in state:
                diffs += compare_trees(expected, state[n], f"state {n} (mutated in place)")
        worst = max((d for d in diffs if not d["match"]), key=lambda d: d["max_abs_diff"] or 0.0, default=None)
        max_diff = max((d["max_abs_diff"] or 0.0 for d in diffs), default=0.0)
        match = all(d["match"] for d in diffs)
        self.events.write(
            "validation",
            index=index,
            match=match,
            max_abs_diff=max_diff,
            worst=worst,
            leaves=len(diffs),
            changed_scalars=changed_scalars,
            scalars={k: v for k, v in scalar_values(describe_call(bind_arguments(self.fn, args, kwargs))).items() if k in changed_scalars},
            captured_scalars={k: self.captured_scalars.get(k) for k in changed_scalars},
            wall_us=t.wall_us,
            gpu_us=t.gpu_us,
        )
        # The caller must see eager semantics: put back what eager produced.
        with torch.inference_mode():
            for n, value in eager_state.items():
                state[n].copy_(value)
            live_args = dict(tensor_leaves(self._canon(args, kwargs)))
            for p, value in eager_args.items():
                live_args[p].copy_(value)
        self._maybe_done()
        return eager_out

    def _maybe_done(self) -> None:
        enough = (
            self.replays_timed >= self.config.repeat
            and self.eager_interleaved >= self.config.repeat
            and self.validations >= min(self.config.validations, 3)
        )
        stuck = self.replay_calls >= 6 * self.config.repeat + 10
        if enough or stuck:
            self.finish(reason="complete" if enough else "replay phase could not collect enough matching calls")

    def finish(self, reason: str) -> None:
        """Close the plan: flush an open profiler, free the graph, report counts."""
        if self.phase is Phase.DONE:
            return
        if self.profiler is not None:
            try:
                self._finish_profile()
            except Exception as exc:
                self.events.write("note", text=f"profiler trace could not be written: {exc}")
        self.events.write(
            "plan-end",
            reason=reason,
            phase=self.phase.value,
            calls=self.calls,
            replays_timed=self.replays_timed,
            validations=self.validations,
            fallbacks=self.fallbacks,
        )
        self.phase = Phase.DONE
        self.captured = None
        torch.cuda.empty_cache()


def is_device_error(exc: BaseException) -> bool:
    """CUDA errors (device asserts, illegal addresses, out of memory) raised wherever they surface."""
    return isinstance(exc, torch.cuda.OutOfMemoryError) or type(exc).__name__ == "AcceleratorError" or "CUDA error" in str(exc)


def version_of(t: torch.Tensor) -> int | None:
    """The in-place version counter; None for inference tensors, which have none (treated
    as possibly mutated, so they are snapshotted and restored)."""
    return None if t.is_inference() else t._version


def compare_trees(expected: Any, actual: Any, label: str) -> list[dict[str, Any]]:
    """Leaf-by-leaf comparison; float tensors within a tight tolerance, others exactly."""
    exp, act = list(leaves(expected, label)), list(leaves(actual, label))
    if len(exp) != len(act):
        return [{"path": label, "match": False, "max_abs_diff": None, "why": "different structure"}]
    out = []
    for (path, e), (_, a) in zip(exp, act, strict=True):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            if e.shape != a.shape or e.dtype != a.dtype:
                out.append({"path": path, "match": False, "max_abs_diff": None, "why": "shape or dtype differs"})
                continue
            if e.is_floating_point() or e.is_complex():
                diff = (e.double() - a.double()).abs()
                max_abs = float(diff.max()) if diff.numel() else 0.0
                ok = bool(torch.allclose(e, a, rtol=1e-4, atol=1e-6, equal_nan=True))
            else:
                max_abs = float((e.long() - a.long()).abs().max()) if e.numel() else 0.0
                ok = bool(torch.equal(e, a))
            out.append({"path": path, "match": ok, "max_abs_diff": max_abs})
        else:
            out.append({"path": path, "match": bool(e == a) if not isinstance(e, torch.Tensor) else False, "max_abs_diff": None})
    return out
