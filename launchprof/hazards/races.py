"""stream-race: two streams touch the same memory, one writing, with nothing ordering them.

Found by PyTorch's CUDA sanitizer in one extra eager call (worker/race_check.py), which
names both accesses with their user lines. A captured graph keeps only the edges the
streams recorded, so the schedule decides which access comes first on every replay. The
finding sits on the later access, where the wait goes; the message names the write's line.
"""

from __future__ import annotations

from typing import Any

from launchprof.events.capture_events import RaceAccess
from launchprof.run.evidence import Evidence
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import code_text, hazard
from launchprof.hazards.stream_names import side_streams
from launchprof.model.hazard_records import Hazard
from launchprof.render.words.hazard_runtime_text import race_fix


Sides = dict[int, tuple[int, str | None]]


def _access(who: str, access: RaceAccess, origin: Any, sides: Sides) -> dict[str, Param]:
    """One access as a race's params: its line and code, its stream (the raw id as data; the
    words use its variable or its number, launchprof.hazards.stream_names) and whether that is
    the calling one."""
    number, name = sides.get(access.stream, (None, None)) if access.stream is not None else (None, None)
    return {
        f"{who}_line": access.line,
        f"{who}_code": code_text(access),
        f"{who}_stream": access.stream,
        f"{who}_on_origin": access.stream == origin,
        f"{who}_stream_number": number,
        f"{who}_stream_name": name,
    }


def fix_of(later: RaceAccess, earlier: RaceAccess, origin: Any, sides: Sides | None = None) -> str:
    """The wait that orders the two, written for the later access's line."""
    sides = sides or {}
    return race_fix(_access("later", later, origin, sides) | _access("earlier", earlier, origin, sides))


def graph_confirms(ev: Evidence) -> bool | None:
    """True when the captured graph has nodes no path orders (a level wider than one):
    replay can run the two accesses in either order. None without a graph's edges."""
    if ev.capture is None or not ev.capture.ok or ev.anatomy is None or ev.anatomy.edges is None:
        return None
    from launchprof.common.graph_levels import levels_of

    level = levels_of(len(ev.anatomy.nodes), ev.anatomy.edges)
    return any(level.count(lv) > 1 for lv in set(level))


def stream_races(ev: Evidence) -> list[Hazard]:
    if ev.race_check is None:
        return []
    origin = ev.race_check.origin_stream
    confirmed = graph_confirms(ev)
    sides = side_streams(ev.race_check, [a for race in ev.race_check.races for a in (race.previous, race.access)])
    out = []
    for race in ev.race_check.races:
        access, previous = race.access, race.previous
        write = previous if previous.type == "write" else access
        other = access if write is previous else previous
        params: dict[str, Param] = {
            "other_type": other.type,
            **_access("other", other, origin, sides),
            **_access("write", write, origin, sides),
            "graph_confirms": confirmed,
        }
        out.append(hazard(
            "stream-race", HazardCode.STREAM_RACE, params, access, write=_brief(write), access=_brief(other),
            fix=fix_of(access, previous, origin, sides), graph_confirms=confirmed,
        ))
    return out


def _brief(access: RaceAccess) -> dict[str, Any]:
    return {k: getattr(access, k) for k in ("type", "file", "line", "code", "op", "stream")}
