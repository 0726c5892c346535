"""Every hazard rule, run in order on one run's evidence (``find_hazards``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from launchprof.enums import hazard_order, severity_rank
from launchprof.run.evidence import Evidence
from launchprof.model.hazard_codes import Placed
from launchprof.hazards import control_flow, inputs, outputs, races, rng, scalars, shapes, side_effects, streams, syncs, validation
from launchprof.hazards.released_graphs import released_graph
from launchprof.hazards.common import is_library_file, restated, user_target
from launchprof.hazards.fixes import with_fixes
from launchprof.model.hazard_records import Hazard

Rule = Callable[[Evidence], list[Hazard]]

RULES: tuple[Rule, ...] = (
    syncs.hidden_syncs,
    streams.unjoined_streams,
    syncs.capture_failure,
    released_graph,
    scalars.frozen_scalars,
    inputs.reallocated_inputs,
    shapes.dynamic_shapes,
    control_flow.data_dependent_control_flow,
    rng.foreign_rng,
    side_effects.host_side_effects,
    validation.replay_mismatch,
    races.stream_races,
    outputs.kept_outputs,
    outputs.loop_back_state,
)


def find_hazards(evidence: Evidence) -> list[Hazard]:
    """Run every rule; one finding per identity (``Hazard.fingerprint``: kind, project-relative
    file and the code at the line, launchprof.model.hazard_identity) and named argument; most
    severe first, then by place."""
    functions = list(evidence.probe.functions if evidence.probe is not None else [])
    evidence = dataclasses.replace(evidence, target=user_target(evidence.target, functions))
    found: dict[tuple[str, str | None], Hazard] = {}
    for rule in RULES:
        for hazard in rule(evidence):
            # Two frozen scalars on one line (`1 - lr * wd`) are two findings.
            name = hazard.details.get("argument") or hazard.details.get("variable")
            key = (hazard.fingerprint, name)
            if key not in found or severity_rank(hazard.severity) < severity_rank(found[key].severity):
                found[key] = hazard
    return with_fixes(sorted((_placed(h) for h in found.values()), key=hazard_order), evidence)


def _placed(h: Hazard) -> Hazard:
    """A hazard with no line in the user's code says why, so the user does not hunt for a line that is not theirs."""
    if h.file and not is_library_file(h.file):
        return h
    return restated(h, {Placed.OUTSIDE_USER_CODE: True, Placed.LIBRARY_FILE: h.file, Placed.LIBRARY_LINE: h.line})

