"""stream-race: two streams touch the same memory, one writing, with nothing ordering them.

Found by PyTorch's CUDA sanitizer in one extra eager call (worker/race_check.py), which
names both accesses with their user lines. A captured graph keeps only the edges the
streams recorded, so the schedule decides which access comes first on every replay. The
finding sits on the later access, where the wait goes; the message names the write's line.
"""

from __future__ import annotations

from typing import Any

from launchprof.events.capture import RaceAccess
from launchprof.evidence import Evidence
from launchprof.hazards.common import code_text, hazard
from launchprof.models import Hazard


def _stream(access: RaceAccess, origin: Any) -> str:
    return "the calling stream" if access.stream == origin else f"side stream {access.stream}"


def _where(access: RaceAccess) -> str:
    code = code_text(access)
    line = f"line {access.line}" if access.line else "an unknown line"
    return f"`{code}` ({line})" if code else line


def fix_of(later: RaceAccess, earlier: RaceAccess, origin: Any) -> str:
    """The wait that orders the two, written for the later access's line."""
    reader, writer = _stream(later, origin), _stream(earlier, origin)
    at = f"line {later.line}" if later.line else "the access"
    after = f" after line {earlier.line}" if earlier.line else ""
    return (
        f"before {at}, make {reader} wait for {writer}: `torch.cuda.current_stream().wait_stream(<{writer}>)` "
        f"there, or record an event on {writer}{after} and `wait_event` it before {at}"
    )


def graph_confirms(ev: Evidence) -> bool | None:
    """True when the captured graph has nodes no path orders (a level wider than one):
    replay can run the two accesses in either order. None without a graph's edges."""
    if ev.capture is None or not ev.capture.ok or ev.anatomy is None or ev.anatomy.edges is None:
        return None
    from launchprof.analysis.anatomy import levels_of

    level = levels_of(len(ev.anatomy.nodes), ev.anatomy.edges)
    return any(level.count(lv) > 1 for lv in set(level))


def stream_races(ev: Evidence) -> list[Hazard]:
    if ev.race_check is None:
        return []
    origin = ev.race_check.origin_stream
    confirmed = graph_confirms(ev)
    out = []
    for race in ev.race_check.races:
        access, previous = race.access, race.previous
        write = previous if previous.type == "write" else access
        other = access if write is previous else previous
        verb = "writes" if other.type == "write" else "reads"
        msg = (
            f"{_where(other)} {verb} memory on {_stream(other, origin)} that {_where(write)} writes on "
            f"{_stream(write, origin)}, with nothing ordering the two"
        )
        if confirmed:
            msg += "; the captured graph has no edge between them either, so every replay races"
        elif confirmed is False:
            msg += " (the captured graph happens to order every node, but eager runs race)"
        out.append(hazard(
            "stream-race", msg, access, write=_brief(write), access=_brief(other),
            fix=fix_of(access, previous, origin), graph_confirms=confirmed,
        ))
    return out


def _brief(access: RaceAccess) -> dict[str, Any]:
    return {k: getattr(access, k) for k in ("type", "file", "line", "code", "op", "stream")}
