"""unjoined-stream: fork/join bookkeeping of the probe call's stream operations.

A side stream joins a capture when it waits on the capturing (origin) stream; it must
rejoin before capture ends: the origin waits on the side stream, or on an event
recorded on it. A fork with no later join is reported at the fork line.
"""

from __future__ import annotations

from typing import Any

from launchprof.events.observation_events import ProbeEntry
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import code_text, hazard
from launchprof.model.hazard_records import Hazard


def unjoined_forks(ops: list[ProbeEntry]) -> list[ProbeEntry]:
    event_stream: dict[Any, Any] = {}
    forks: dict[Any, ProbeEntry] = {}  # side stream -> fork op
    for op in ops:
        origin = op.origin
        kind = op.op
        if kind == "record":
            event_stream[op.event] = op.stream
        elif kind == "wait_stream":
            waiter, waited = op.waiter, op.waited
            if waited == origin and waiter != origin:
                forks.setdefault(waiter, op)
            elif waiter == origin and waited in forks:
                forks.pop(waited)
        elif kind == "wait_event":
            waiter, source = op.waiter, event_stream.get(op.event)
            if source == origin and waiter != origin:
                forks.setdefault(waiter, op)
            elif waiter == origin and source in forks:
                forks.pop(source)
    return list(forks.values())


def unjoined_streams(ev: Evidence) -> list[Hazard]:
    if ev.capture is not None and ev.capture.ok:
        return []  # capture ended cleanly: every fork was joined, whatever the bookkeeping saw
    ops = ev.probe.streams if ev.probe is not None else []
    capture_says = ev.capture is not None and not ev.capture.ok and ev.capture.kind == "unjoined-stream"
    out = []
    for fork in unjoined_forks(ops):
        params: dict[str, Param] = {"code": code_text(fork), "capture_says": capture_says}
        out.append(hazard("unjoined-stream", HazardCode.UNJOINED_FORK, params, fork))
    return out
