"""What the plan does when capturing the target failed.

The failure is written as it happened (its ``capture`` event), and what the attempt changed
is undone. A failure that an autograd graph kept alive by the caller explains (kind
``kept-autograd-graph``) is answered for the measurement only: launchprof detaches the
earlier calls' outputs that hold it (worker/graph_release.py) and captures once more; when
that works the plan goes on as for any captured step, and the ``kept-graph`` event says
what was detached, so that every figure after it reads "once fixed". When the step still
does not capture, the largest part of it that does is measured instead
(worker/partial_capture.py). The retry runs outside the ``except`` clause that caught the
first failure: that exception's frames hold the failed attempt's autograd graph.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from launchprof.events.capture_events import CaptureEvent
from launchprof.events.training_events import KeptGraphEvent
from launchprof.model.training_records import KEPT_GRAPH_KIND
from launchprof.worker.capture import CaptureFailed, Captured
from launchprof.worker.frames import frame_site, snippet
from launchprof.worker.graph_release import release
from launchprof.worker.nvtx_ranges import nvtx_range
from launchprof.worker.outputs_watch import caller_frame, user_frames
from launchprof.worker.partial_capture import measure_partial
from launchprof.worker.trees import leaves
from launchprof.worker.plan_state import put_back
from launchprof.worker.saved_state import SavedState
from launchprof.model.findings import RestoredAfter

if TYPE_CHECKING:
    from launchprof.worker.plan import TargetRun


def failure_event(run: TargetRun, index: int, info: dict[str, Any]) -> CaptureEvent:
    if info.get("file") and info.get("line"):
        info["snippet"] = snippet(info["file"], int(info["line"]))
    return CaptureEvent(ok=False, index=index, moved_args=sorted(run.inputs.moved_args), **info)


def after_failed_capture(
    run: TargetRun, info: dict[str, Any], index: int, snap: SavedState, retry: Callable[[], Captured], call: tuple[tuple, dict]
) -> Captured | None:
    """Write the failure (the plan has put back what the attempt changed); a kept graph:
    release it and capture again (the graph, or None); still nothing captured: measure the
    step's largest part."""
    failure = failure_event(run, index, info)
    run.events.write(failure)
    captured = None
    if failure.kind == KEPT_GRAPH_KIND:
        captured = release_and_retry(run, failure, index, snap, retry, call)
    if captured is None:
        measure_partial(run, index, *call)
    return captured


def release_and_retry(
    run: TargetRun, failure: CaptureEvent, index: int, snap: SavedState, retry: Callable[[], Captured], call: tuple[tuple, dict]
) -> Captured | None:
    frame = caller_frame()
    site = frame_site(frame)
    exclude = {id(t) for _, t in leaves(call) if isinstance(t, torch.Tensor)}  # the call's own arguments stay
    try:
        rows = release(run.outputs.graphs, user_frames(frame), site.line if site else None, exclude)
    except Exception as exc:
        run.events.write(KeptGraphEvent(index=index, failure=failure, call_site=site, error=f"{type(exc).__name__}: {str(exc)[:300]}"))
        return None
    del frame
    if not any(r.released for r in rows):
        run.events.write(KeptGraphEvent(index=index, failure=failure, tensors=rows, call_site=site))
        return None
    again: dict[str, Any] | None = None
    with nvtx_range("capture"):
        try:
            try:
                captured = retry()
            finally:
                put_back(run, snap, RestoredAfter.CAPTURE)  # the retry ran the step's Python again
        except CaptureFailed as failed:
            again = failed.info
    if again is None:
        run.events.write(KeptGraphEvent(index=index, failure=failure, tensors=rows, call_site=site, retried=True, captured=True))
        return captured
    retry_failure = failure_event(run, index, again)
    run.events.write(KeptGraphEvent(index=index, failure=failure, tensors=rows, call_site=site, retried=True, retry_kind=retry_failure.kind))
    run.events.write(retry_failure)  # the capture the report reads: the retry's
    return None
