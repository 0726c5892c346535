"""The prediction section: the speedup the device profile predicts from the eager profile.
"""

from __future__ import annotations

import dataclasses

from launchprof.model.findings import Note
from launchprof.model.records import model


@model
class Prediction:
    """The speedup predicted from the eager trace and a device profile.

    ``explanation`` and ``basis`` are sentences for readers; what they say is kept as records
    (PredictionCode notes, worded by launchprof.render.words.prediction_text): ``explanation_finding``
    (the replay estimate, its figures and why it gives this speedup) and ``basis_findings``
    (the profile and measured inputs, then each scaling applied to them), whose sentences,
    joined by "; ", are ``basis``. A prediction read from a report without them keeps its strings."""

    median: float
    low: float | None = None
    high: float | None = None
    basis: str | None = None  # which profile, which measured inputs
    replay_step_us: float | None = None
    explanation: str | None = None
    # This run's host speed over the device profile's (its eager-op loop): the profile's
    # launch costs were multiplied by it; None when not applied.
    host_scale: float | None = None
    # The launch costs the prediction used (µs, at this run's host speed): eager_op,
    # graph_launch, graph_node. The HTML panel draws these, whatever profile it is given.
    launch_costs_us: dict[str, float] | None = None
    explanation_finding: Note | None = None
    basis_findings: list[Note] = dataclasses.field(default_factory=list)
