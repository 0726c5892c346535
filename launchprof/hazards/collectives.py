"""Multi-GPU hazards, found over every rank's profiler traces (pure analysis, no GPU).

- ``uncaptured-collective``: a collective kernel that ran in the eager step but is missing
  from the replay of the graph. Work issued during capture on a stream that never joined
  the capture runs once, eagerly, and is not in the graph: on replay this rank skips the
  collective while the other ranks wait for it.
- ``collective-divergence``: the ranks launch different kernel or collective sequences per
  step. Collectives are matched by order across ranks, so a branch taken on one rank only
  deadlocks a replay (and a mismatched eager step too).

Both read the GPU tables of :mod:`launchprof.common.trace_tables` (one row per activity, with its stream
and the call it belongs to) and compare them with pandas.
"""

from __future__ import annotations

import re

import pandas as pd

from launchprof.events.record import Site
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.hazards.common import hazard
from launchprof.model.hazard_records import Hazard
from launchprof.render.words.hazard_runtime_text import short_name

# Kernel names of collectives: NCCL's device kernels (ncclDevKernel_AllReduce_Sum_f32_RING_LL,
# ncclKernel_...), and the spelled-out op names other backends and symmetric memory use.
COLLECTIVE_PATTERN = r"nccl|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|send_?recv"
# Kernels shown either side of the first difference.
CONTEXT = 2


def is_collective(names: pd.Series) -> pd.Series:
    return names.astype(str).str.contains(COLLECTIVE_PATTERN, flags=re.IGNORECASE, regex=True)


def first_call(gpu: pd.DataFrame) -> pd.DataFrame:
    """The kernels of the first profiled call, in launch order (a whole-script trace is call 0)."""
    kernels = gpu[(gpu["kind"] == "kernel") & gpu["call"].notna()]
    if kernels.empty:
        return kernels
    return kernels[kernels["call"] == kernels["call"].min()].sort_values("start_us", kind="stable")


def collectives_per_call(gpu: pd.DataFrame) -> int:
    return int(is_collective(first_call(gpu)["name"]).sum())


def uncaptured_collectives(eager: pd.DataFrame, replay: pd.DataFrame, site: Site | None, rank: int) -> list[Hazard]:
    """Collectives of the eager step that one replay of the graph does not run."""
    step = first_call(eager)
    coll = step[is_collective(step["name"])]
    if coll.empty:
        return []
    graph = first_call(replay)
    in_graph = graph.loc[is_collective(graph["name"]), "name"].value_counts()
    missing = (coll["name"].value_counts() - in_graph.reindex(coll["name"].unique(), fill_value=0)).clip(lower=0)
    missing = missing[missing > 0]
    if missing.empty:
        return []
    main = step["stream"].value_counts().idxmax()  # the stream the step launches most of its kernels on
    lost = coll[coll["name"].isin(missing.index)]
    side = sorted({s for s in lost["stream"].tolist() if s != main}, key=str)
    params: dict[str, Param] = {
        "rank": rank,
        "missing": int(missing.sum()),
        "collectives": len(coll),
        "kernels": [str(n) for n in missing.index],
        "counts": [int(c) for c in missing.to_numpy()],
        "side_streams": [str(s) for s in side],
        "main_stream": str(main),
    }
    return [hazard("uncaptured-collective", HazardCode.UNCAPTURED_COLLECTIVE, params, site, ranks=[rank], streams=[str(s) for s in side], missing=int(missing.sum()))]


def _first_difference(a: list[str], b: list[str]) -> int | None:
    """The first position where two sequences differ (one ending early counts), else None."""
    frame = pd.DataFrame({"a": pd.Series(a, dtype=object), "b": pd.Series(b, dtype=object)})
    differ = frame["a"].ne(frame["b"]).to_numpy()
    return int(differ.argmax()) if differ.any() else None


def _around(seq: list[str], pos: int) -> list[str]:
    """The lines either side of ``pos``, each ``N: kernel`` (1-based), the one at ``pos`` marked."""
    lo, hi = max(0, pos - CONTEXT), min(len(seq), pos + CONTEXT + 1)
    lines = [f"{'>' if i == pos else ' '} {i + 1}: {short_name(seq[i])}" for i in range(lo, hi)]
    return lines if pos < len(seq) else [*lines, f"> {pos + 1}: (the step ends here)"]


def collective_divergence(sequences: dict[int, list[str]], site: Site | None) -> list[Hazard]:
    """Each rank's per-step kernel sequence against the lowest rank's: the collectives' order
    first (the deadlock), else the whole sequence. One finding per rank that differs."""
    ranks = sorted(r for r, s in sequences.items() if s)
    if len(ranks) < 2:
        return []
    base = ranks[0]
    out = []
    for other in ranks[1:]:
        a, b = sequences[base], sequences[other]
        ca = [n for n, c in zip(a, is_collective(pd.Series(a, dtype=object)), strict=True) if c]
        cb = [n for n, c in zip(b, is_collective(pd.Series(b, dtype=object)), strict=True) if c]
        pos = _first_difference(ca, cb)
        what, sa, sb = "collective", ca, cb
        if pos is None:
            pos = _first_difference(a, b)
            what, sa, sb = "kernel", a, b
        if pos is None:
            continue
        params: dict[str, Param] = {
            "base": base,
            "other": other,
            "sequence": what,
            "base_count": len(sa),
            "other_count": len(sb),
            "position": pos + 1,
            "base_runs": str(sa[pos]) if pos < len(sa) else None,  # None: that rank's step ends first
            "other_runs": str(sb[pos]) if pos < len(sb) else None,
        }
        lines = {str(base): _around(sa, pos), str(other): _around(sb, pos)}
        out.append(hazard("collective-divergence", HazardCode.COLLECTIVE_DIVERGENCE, params, site, ranks=[base, other], position=pos + 1, sequence=what, lines=lines))
    return out
