"""Fixes written for each hazard's own line, with the names on it: a general hint leaves the user to translate it.

One writer per kind reads the line with ``ast`` and writes the change as a small
before/after. Where launchprof cannot write it, the fix says so and gives the kind's
general rule: never a guessed name.
"""

from __future__ import annotations

import dataclasses

from launchprof.run.evidence import Evidence
from launchprof.model.findings import FixCode, FixReason, Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.fixes.fix_context import FixContext, cannot
from launchprof.hazards.fixes.branch_fixes import branch_fix
from launchprof.hazards.fixes.copy_fixes import pageable_fix
from launchprof.hazards.fixes.effect_groups import grouped_effects, kept_fix, with_kept_clones
from launchprof.hazards.fixes.fix_guard import guarded
from launchprof.hazards.fixes.fix_source import source_line
from launchprof.hazards.fixes.fix_verdicts import with_verification
from launchprof.hazards.fixes.race_fixes import race_fix
from launchprof.hazards.fixes.scalar_fixes import scalar_fix
from launchprof.hazards.fixes.state_fixes import effect_fix, mutation_fix, rebinding_fix, rng_fix
from launchprof.hazards.fixes.stream_fixes import join_fix
from launchprof.hazards.fixes.sync_fixes import sync_fix
from launchprof.hazards.fixes.training_fixes import kept_graph_fix, legacy_fix, optimizer_fix, scaler_fix
from launchprof.model.hazard_records import Fix, Hazard
from launchprof.render.words.fix_text import fix_note

__all__ = ["context_of", "write_fix", "with_fixes"]


def context_of(ev: Evidence) -> FixContext:
    scalars = {str(leaf.path).split("[")[0] for call in ev.calls for leaf in call.args if leaf.kind == "scalar"}
    functions = tuple(ev.probe.functions if ev.probe is not None else ())
    return FixContext(scalar_args=frozenset(scalars), functions=functions, call_site=ev.call_site)


def write_fix(h: Hazard, ctx: FixContext) -> Fix | None:
    """The fix for ``h``'s line; a Fix with an empty ``after`` and a note when none can be
    written; None for a finding launchprof handles itself (nothing for the user to change)."""
    if h.code in _HANDLED:
        return None
    src = source_line(h.file, h.line, h.details.get("code"))
    d = h.details
    lib = h.library_site
    if lib is not None:  # the line calls into the library: a rewrite of it would be a guess
        return cannot(src, h.kind, FixReason.IN_LIBRARY, library=f"{lib.file}:{lib.line}" if lib.line else lib.file)
    if h.kind == "hidden-sync":
        return sync_fix(src, ctx, d.get("op"), str(d.get("what") or h.message))
    if h.kind == "data-dependent-control-flow":
        return branch_fix(src, ctx, h.kind)
    if h.kind == "frozen-scalar":
        return scalar_fix(src, ctx, d.get("argument"))
    if h.kind == "pageable-copy":
        return pageable_fix(src)
    if h.kind == "unjoined-stream":
        return join_fix(src)
    if h.kind == "reallocated-input" and d.get("rebound_at"):
        at = d["rebound_at"]
        return rebinding_fix(at["file"], int(at["line"]), str(d.get("variable")))
    if h.kind == "reallocated-input" and d.get("mutated"):
        return mutation_fix(src, str(d.get("argument")))
    if h.kind == "stream-race":
        return race_fix(src, _int(h.params.get("write_line")), _int(h.params.get("other_line")))
    if h.kind == "host-side-effect":
        return effect_fix(src)
    if h.kind == "kept-output":
        return kept_fix(src, h.params)
    if h.kind == "dynamic-shape":
        return cannot(src, h.kind, FixReason.SHAPES_VARY)
    if h.kind == "rng-state":
        return rng_fix(src)
    if h.kind in _TRAINING:
        return _TRAINING[h.kind](h)
    if not h.line:
        return cannot(src, h.kind, FixReason.NO_LINE)
    if h.kind == "replay-mismatch":  # its causes' fixes, when found, are named after all fixes are written
        return cannot(src, h.kind, FixReason.NO_CAUSE_FOUND)
    return cannot(src, h.kind)


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def with_fixes(hazards: list[Hazard], ev: Evidence) -> list[Hazard]:
    """Each hazard with its fix, and what trying the fix found (fix_verdicts.py); a writer
    that fails on odd code falls back to the general rule."""
    ctx = context_of(ev)
    out = []
    for h in hazards:
        try:
            fix = guarded(write_fix(h, ctx), h.kind)  # never a rewrite of a def or decorator line
        except _READ_ERRORS as exc:
            fix = cannot(source_line(h.file, h.line, h.details.get("code")), h.kind, FixReason.READ_ERROR, error=type(exc).__name__)
        out.append(dataclasses.replace(h, fix=fix))
    try:  # fixes that span hazards: on odd code, each hazard keeps its own
        out = with_kept_clones(grouped_effects(out, ctx.call_site))
    except _READ_ERRORS:
        pass
    return with_verification([_point_to_causes(h, out) for h in out], ev)


def _point_to_causes(h: Hazard, hazards: list[Hazard]) -> Hazard:
    """A replay mismatch is the symptom; when the frozen state behind it has its own written
    fix, the mismatch's note names those lines instead of only the general rule."""
    if h.kind != "replay-mismatch" or h.fix is None or h.fix.after:
        return h
    causes = [o for o in hazards if o is not h and o.fix is not None and o.fix.after and o.kind in _CAUSES]
    unfixed = [o for o in hazards if o is not h and o.kind in _CAUSES and o.severity != "info" and o not in causes]
    if not causes and not unfixed:
        return h
    # The causes found, those with a written fix first; "fixed" says how many have one.
    found = causes + unfixed
    params: dict[str, Param] = {"kinds": [o.kind for o in found], "lines": [o.line for o in found], "fixed": len(causes)}
    note = fix_note(FixCode.MISMATCH_CAUSES, params)
    return dataclasses.replace(h, fix=dataclasses.replace(h.fix, note=note, code=FixCode.MISMATCH_CAUSES.value, params=params))


_READ_ERRORS = (SyntaxError, ValueError, TypeError, AttributeError, IndexError, RecursionError)
# Findings launchprof acts on itself (it copies a new input into the static buffers; a loop-back
# is that copy, with the message naming the faster form): no fix line.
_HANDLED = (HazardCode.REALLOCATED_ARGUMENTS.value, HazardCode.LOOP_BACK.value)
_TRAINING = {"kept-autograd-graph": kept_graph_fix, "optimizer-not-capturable": optimizer_fix, "grad-scaler": scaler_fix, "legacy-stream": legacy_fix}
_CAUSES = ("frozen-scalar", "reallocated-input", "data-dependent-control-flow", "host-side-effect", "rng-state")
