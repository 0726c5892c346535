"""Sentences the analysis adds to a report where a figure alone would mislead."""

from __future__ import annotations

from launchprof.session import EagerProfile, ReplayProfile, Speedup


def memory_for_no_gain(replay: ReplayProfile | None, speedup: Speedup | None) -> str | None:
    """When replay is not measurably faster, the memory the graph holds buys nothing."""
    if replay is None or speedup is None or not replay.pool_bytes or speedup.low > 1.0:
        return None
    mib = replay.pool_bytes / 2**20
    return f"replay is not measurably faster, yet the graph holds {mib:.1f} MiB of GPU memory in its pool"


def extra_nodes(eager: EagerProfile | None, replay: ReplayProfile | None) -> str | None:
    """Graph nodes that are not the eager step's kernels (memsets, memcpys, the RNG
    prologue's fills), named by type, so "kernels" and "graph nodes" can be compared."""
    if eager is None or replay is None or eager.kernels_per_step is None or not replay.node_types:
        return None
    others = {t: n for t, n in replay.node_types.items() if t != "kernel" and n}
    extra_kernels = replay.node_types.get("kernel", 0) - eager.kernels_per_step
    if extra_kernels > 0:
        others["kernel (not in the eager trace)"] = extra_kernels
    if not others:
        return None
    named = ", ".join(f"{n} {t}" for t, n in sorted(others.items()))
    return f"the graph has {replay.graph_nodes} nodes for {eager.kernels_per_step} eager kernels; the others: {named}"


def eager_trace_lost(eager: EagerProfile, replay: ReplayProfile | None, said_lost: bool = False) -> bool:
    """The eager profile holds no kernel and no copy while the captured graph holds kernel
    nodes: the profiler lost the eager trace (seen on the H200 when an earlier
    torch.profiler session in the process had ended without a CUPTI teardown). A step that
    only copies has memcpy nodes, not kernels, and copies in its eager trace.

    ``said_lost``: the worker saw the session record no GPU activity at all under teardown
    and could not take it again (the script stopped calling first). Without a graph to
    compare with, a lost trace and a step with no CUDA work then look alike: the counts
    are unknown either way, not zero."""
    if eager.kernels_per_step != 0 or eager.memcpys_per_step:
        return False
    if said_lost:
        return True
    if replay is None:
        return False
    kernels = replay.node_types.get("kernel") if replay.node_types else replay.graph_nodes
    return bool(kernels)


def no_eager_kernels_note(eager: EagerProfile, replay: ReplayProfile | None, said_lost: bool = False) -> str:
    """Why a target's eager profile holds no kernel: a lost trace, or a step with no GPU
    kernel (CPU tensors only, or copies only)."""
    if eager_trace_lost(eager, replay, said_lost):
        if replay is not None and replay.graph_nodes:
            return (
                f"the eager profile recorded no kernels, yet the captured graph holds {replay.graph_nodes} nodes: the profiler lost "
                "the eager trace (an earlier torch.profiler session in this process can do this), so the kernel counts and the "
                "prediction are missing; the timings stand"
            )
        return (
            "the eager profile recorded no GPU activity, and the script stopped calling the target before it could be "
            "profiled again: either the step runs no CUDA work or the profiler lost the trace (an earlier torch.profiler "
            "session in this process can do this), so the kernel counts and the prediction are missing; the timings stand"
        )
    if eager.memcpys_per_step or (replay is not None and replay.graph_nodes):
        return "the target launches no CUDA kernel, only copies: a CUDA graph replays the copies alone"
    return "the target launches no CUDA work (CPU tensors only): a CUDA graph has nothing to replay"
