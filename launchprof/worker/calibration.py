"""The quick device profile, measured before the script runs when none is cached.

Predictions need a device profile of this GPU, driver and torch; a new user has none. The
crossover package measures and caches one (``ensure_profile``); this calls it, reports
progress through the event log, and never lets its failure stop the run.
"""

from __future__ import annotations

import time
from typing import Any

from launchprof.events.lifecycle_events import CalibrationEvent, CalibrationProgressEvent
from launchprof.worker.event_writer import EventWriter


def calibrate(machine: dict[str, Any], events: EventWriter) -> dict[str, Any]:
    """Write one ``calibration`` event (status cached, measured, skipped or failed)."""
    t0 = time.perf_counter()
    try:
        from launchprof.crossover.calibrate import ensure_profile
    except ImportError as exc:
        result: dict[str, Any] = {"status": "skipped", "path": None, "seconds": 0.0, "message": f"no calibration available: {exc}"}
        events.write(CalibrationEvent(**result))
        return result

    def progress(what: str, fraction: float) -> None:
        events.write(CalibrationProgressEvent(what=what, fraction=round(float(fraction), 3)))

    try:
        got = ensure_profile(machine, progress)
        result = {
            "status": str(got.get("status", "failed")),
            "path": got.get("path"),
            "seconds": float(got.get("seconds", time.perf_counter() - t0)),
            "message": str(got.get("message", "")),
        }
    except Exception as exc:
        result = {"status": "failed", "path": None, "seconds": time.perf_counter() - t0, "message": f"{type(exc).__name__}: {exc}"}
    events.write(CalibrationEvent(**result))
    return result
