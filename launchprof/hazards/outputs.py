"""kept-output and loop-back: what the user's own graph code must do with the outputs.

launchprof clones every replay output before handing it back, so the script stays correct
under analyze; a hand-written graph does not. The worker watched a few calls
(worker/outputs_watch.py): an output still held by the user's code after the next call is
*kept* (under a graph every kept entry aliases the same static buffer: it needs a clone);
an argument that is the previous call's output is state that *loops back* (the copy into
the static input each call can go: the step can update a static buffer in place).

Costs: ``replay.clone_us`` times cloning every output at once; an output's share of it is
taken by bytes (the clone is a memory copy, so its cost follows the bytes), and said so.
"""

from __future__ import annotations

import re
import statistics
from launchprof.events.observation_events import KeptOutputEvent, LoopBackEvent
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import hazard, target_site
from launchprof.model.kept_outputs import KeptOutput, LoopBack, OutputsAdvice
from launchprof.model.hazard_records import Hazard

SHARE_BASIS = "each kept output's share, by bytes, of the measured clone of all outputs (replay.clone_us)"


def _clone_all_us(ev: Evidence) -> float | None:
    samples = ev.burst_wall_us.get("clone") or []
    return statistics.median(samples) if samples else None


def _all_bytes(ev: Evidence) -> int | None:
    clone = ev.memory.clone_bytes if ev.memory is not None else None
    if isinstance(clone, int) and clone > 0:
        return clone
    total = sum(o.bytes or 0 for o in (ev.outputs.outputs if ev.outputs is not None else []))
    return total or None


def clone_share_us(ev: Evidence, nbytes: int | None) -> float | None:
    """This many bytes' share of the measured clone of all outputs."""
    whole, total = _clone_all_us(ev), _all_bytes(ev)
    if whole is None or not total or nbytes is None:
        return None
    return whole * min(1.0, nbytes / total)


def _kept(ev: Evidence) -> dict[tuple[str, str], KeptOutputEvent]:
    """One entry per (holder, output): the latest event, whose ``count`` is the highest."""
    out: dict[tuple[str, str], KeptOutputEvent] = {}
    for e in ev.kept_outputs:
        key = (str(e.holder), str(e.output))
        if key not in out or (e.count or 0) >= (out[key].count or 0):
            out[key] = e
    return out


def _fix(e: KeptOutputEvent) -> str | None:
    """The storing line with the clone written in, when it is a plain ``holder.append(name)``."""
    code = str((e.where.code if e.where is not None else None) or "")
    holder = re.escape(str(e.holder))
    m = re.search(rf"{holder}\s*\.\s*(append|appendleft|add|insert)\((.*)\)\s*$", code.split("#")[0].rstrip())
    if m and m.group(2).strip():
        parts = m.group(2).rsplit(",", 1) if m.group(1) == "insert" else [m.group(2)]
        value = parts[-1].strip()
        head = (parts[0] + ", ") if len(parts) == 2 else ""
        return f"{code[: m.start(2)].strip()}{head}{value}.clone())"
    return None


def kept_outputs(ev: Evidence) -> list[Hazard]:
    out = []
    for e in _kept(ev).values():
        holder = e.holder
        name = e.output_name or f"output{e.output}"
        count = e.count or 1
        params: dict[str, Param] = {
            "holder": holder,
            "holder_kind": e.holder_kind,
            "scope": e.holder_scope,
            "output": name,
            "calls": count,
            "view": bool(e.view),
            "share_us": clone_share_us(ev, e.bytes),
            "fix_code": _fix(e),  # the storing line with the clone written in, when launchprof can write it
            "fix_name": str(e.output_name or ""),
        }
        site = e.where or e.call_site or ev.call_site or target_site(ev.target)
        out.append(hazard("kept-output", HazardCode.KEPT_OUTPUT, params, site, variable=holder, output=name, calls=count, bytes=e.bytes))
    return out


def _loop_backs(ev: Evidence) -> dict[str, LoopBackEvent]:
    out: dict[str, LoopBackEvent] = {}
    for e in ev.loop_backs:
        out.setdefault(str(e.argument), e)
    return out


def loop_back_state(ev: Evidence) -> list[Hazard]:
    out = []
    for arg, e in _loop_backs(ev).items():
        name = e.output_name or f"output{e.output}"
        copy = e.copy_us
        nbytes = e.bytes
        params: dict[str, Param] = {"argument": arg, "output": name, "same_object": e.how == "same-object", "copy_us": copy, "bytes": nbytes}
        site = e.site or ev.call_site or target_site(ev.target)
        out.append(hazard("loop-back", HazardCode.LOOP_BACK, params, site, argument=arg, output=name, copy_us=copy, bytes=nbytes))
    return out


def output_costs(ev: Evidence) -> OutputsAdvice | None:
    """The clones the user's graph code needs (kept outputs only) and their cost per call;
    None when the outputs were not watched (an older run, a script with too few calls)."""
    if ev.outputs is None and not ev.kept_outputs and not ev.loop_backs:
        return None
    kept = [
        KeptOutput(
            output=str(e.output),
            name=str(e.output_name or ""),
            holder=str(e.holder),
            holder_kind=str(e.holder_kind),
            scope=e.holder_scope,
            bytes=e.bytes,
            clone_us=clone_share_us(ev, e.bytes),
            calls=e.count or 1,
        )
        for e in _kept(ev).values()
    ]
    loops = [
        LoopBack(argument=arg, output=str(e.output), name=str(e.output_name or ""), how=str(e.how), bytes=e.bytes, copy_us=e.copy_us)
        for arg, e in _loop_backs(ev).items()
    ]
    # One clone per kept output, however many holders keep it.
    needed_bytes = sum({k.output: k.bytes or 0 for k in kept}.values())
    needed = 0.0 if not kept else clone_share_us(ev, needed_bytes)
    return OutputsAdvice(kept=kept, loop_back=loops, clone_needed_us=needed, clone_all_us=_clone_all_us(ev), basis=SHARE_BASIS)
