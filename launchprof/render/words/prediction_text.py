"""The prediction's explanation and basis in words: each
:class:`~launchprof.model.findings.PredictionCode` from its params, every figure by the one
formatter. launchprof.crossover.replay_model and the analysis call it to fill ``Prediction.explanation`` and
``basis``, so a JSON reader has the sentence beside its records; renderers write them again
from the records, so the words can change without the report.

A prediction without records (a report written before they existed), or records this
launchprof cannot read, keeps the sentence it was written with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from launchprof.model.findings import Note, PredictionCode
from launchprof.render.words.format import number, percent

Params = dict[str, Any]
SENTENCES: dict[str, Callable[[Params], str]] = {}

# What the replay estimate reads from a profile, in words; the basis names any of them the
# sweep left undetermined (crossover/determined.py: a 95% interval beyond 2x its median).
COEFFICIENT_WORDS = {
    "graph_launch_fixed_us": "the graph launch's fixed cost",
    "graph_node_us": "the cost per graph node",
    "floor_node_us": "the per-node floor",
    "graph_gap_us": "the time per node beyond its kernel",
    "empty_kernel_us": "an empty kernel's traced time",
    "eager_op_us": "the cost of an eager op",
}


def sentence(code: PredictionCode) -> Callable[[Callable[[Params], str]], Callable[[Params], str]]:
    def register(write: Callable[[Params], str]) -> Callable[[Params], str]:
        SENTENCES[code.value] = write
        return write

    return register


def prediction_sentence(record: Note) -> str:
    return SENTENCES[record.code](record.params)


def basis_sentence(records: Sequence[Note]) -> str:
    """The basis on one line: its parts (the profile and inputs, then any scaling) joined by "; "."""
    return "; ".join(prediction_sentence(r) for r in records)


def explanation_of(record: Note | None, stored: str | None) -> str | None:
    """A stored prediction's explanation, written from its record where this launchprof can."""
    if record is None:
        return stored
    try:
        return prediction_sentence(record)
    except (KeyError, TypeError, ValueError):
        return stored


def basis_of(records: Sequence[Note] | None, stored: Any) -> Any:
    """A stored prediction's basis, written from its records where this launchprof can."""
    if not records:
        return stored
    try:
        return basis_sentence(records)
    except (KeyError, TypeError, ValueError):
        return stored


# --- no prediction -------------------------------------------------------------------------


@sentence(PredictionCode.NO_PROFILE)
def _no_profile(p: Params) -> str:
    return "no device profile for this GPU: run `launchprof crossover` once to get predictions"


@sentence(PredictionCode.NO_KERNELS)
def _no_kernels(p: Params) -> str:
    return "the step launched no kernels: nothing for a graph to replay"


@sentence(PredictionCode.NO_EAGER_STEP)
def _no_eager_step(p: Params) -> str:
    return "no eager step time was measured: nothing to compare a replay with"


@sentence(PredictionCode.NO_COEFFICIENTS)
def _no_coefficients(p: Params) -> str:
    return "the device profile lacks the replay coefficients (partial sweep?): run `launchprof crossover` again"


# --- the explanation -----------------------------------------------------------------------


@sentence(PredictionCode.REPLAY_ESTIMATE)
def _replay_estimate(p: Params) -> str:
    n, extra, fills = p["nodes"], p["extra_launches"], p["rng_fills"]
    why = (
        f"a replay of {n} graph node{'s' if n != 1 else ''} should take about {number(p['replay_us'], 0)} µs "
        f"({number(p['launch_us'], 1)} µs to launch the graph, then at least {number(p['node_us'], 2)} µs per node"
    )
    why += ", mostly kernel time" if p["bound"] == "gpu" else ", mostly per-node overhead"
    if extra:
        why += f", plus {extra} input cop{'ies' if extra != 1 else 'y'} into the static buffers"
    if fills:
        why += f", plus torch's {fills} RNG fills before each replay"
    why += f") against {number(p['eager_us'], 0)} µs measured eagerly: about {number(p['speedup'], 1)}x"
    if p.get("low") is not None and p.get("high") is not None:
        why += f" (95% interval {number(p['low'], 1)}–{number(p['high'], 1)}x)"
    if p.get("launch_share") is not None:
        why += f"; the eager step spends {percent(p['launch_share'], 0)} of its time in launch calls"
    if p["slower"]:
        why += "; graphs would not help here"
    return why


# --- the basis -----------------------------------------------------------------------------


def _profile_kind(p: Params) -> str:
    kind = "partial " if p["partial"] else ""
    return kind + {"calibration": "quick calibration by analyze", "default": "full"}.get(p.get("plan") or "", "quick" if p["quick"] else "full")


def _uncertain(names: Sequence[str]) -> str:
    unsure = [COEFFICIENT_WORDS[n] for n in names if n in COEFFICIENT_WORDS]
    if not unsure:
        return ""
    wide = "its 95% interval" if len(unsure) == 1 else "their 95% intervals"
    return f"; that sweep leaves {' and '.join(unsure)} uncertain, {wide} over 2x wide"


def _kernels(p: Params) -> str:
    if p.get("node_times"):
        return f"{p['node_times']} node times (median {number(p['node_median_us'], 2)} µs)"
    if p.get("node_median_us") is not None:
        return f"node median {number(p['node_median_us'], 2)} µs"
    return "no node times"


@sentence(PredictionCode.PROFILE_BASIS)
def _profile_basis(p: Params) -> str:
    where = f", {p['source']}" if p.get("source") else ""
    noisy = (", NOISY" if p.get("noisy") else "") + _uncertain(p.get("undetermined") or [])
    head = (
        f"device profile {p['gpu']} · driver {p['driver']} · torch {p['torch']} "
        f"({_profile_kind(p)}, created {p['created']}{where}{noisy})"
    )
    busy = f", GPU busy {number(p['busy_us'], 1)} µs" if p.get("busy_us") is not None else ""
    ci = f" [{number(p['eager_low_us'], 1)}, {number(p['eager_high_us'], 1)}]" if p.get("eager_low_us") is not None else ""
    counted = "the captured graph's kernel, copy and memset nodes" if p.get("nodes_from_graph") else "the eager step's kernels and copies"
    return (
        f"{head}; inputs: {p['nodes']} graph nodes per step ({counted}), "
        f"{_kernels(p)}{busy}, eager step median {number(p['eager_us'], 1)} µs{ci}"
    )


@sentence(PredictionCode.TRACE_BASIS)
def _trace_basis(p: Params) -> str:
    return (
        f"device profile for {p.get('gpu') or 'this GPU'}; "
        f"eager trace: {p['nodes']} nodes, step {number(p['eager_us'], 1)} µs ({p.get('timing') or 'timing unknown'})"
    )


@sentence(PredictionCode.NODE_TIMES_SCALED)
def _node_times_scaled(p: Params) -> str:
    return f"node times scaled by {number(p['scale'], 2)} to the GPU span the timed bursts read"


@sentence(PredictionCode.LAUNCH_COSTS_SCALED)
def _launch_costs_scaled(p: Params) -> str:
    return (
        f"launch costs scaled by {number(p['scale'], 2)} ({number(p['low'], 2)}-{number(p['high'], 2)} over the samples) "
        f"to this run's host speed (an eager op took {number(p['run_op_us'], 2)} µs in this run, "
        f"{number(p['profile_op_us'], 2)} in the profile)"
    )


@sentence(PredictionCode.GRAPH_BASIS)
def _graph_basis(p: Params) -> str:
    return (
        f"no eager trace: the {p['nodes']} nodes are the captured graph's, and its GPU busy time is the replays' "
        "CUDA-event span less the graph launch and the ops launched before it; no per-node times"
    )
