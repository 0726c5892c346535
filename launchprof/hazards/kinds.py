"""The hazard kinds (docs/architecture.md "Hazard rules"): id, default severity, one-line title and fix hint.

The ids are a contract (JSON ``kind``, SARIF ``ruleId``). Hints speak in the terms
of the seeds: keep varying scalars in device tensors, ``copy_`` into static inputs,
join every forked stream, bucket and pad shapes, share one pool largest-first,
clone outputs that outlive the next replay.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HazardKind:
    id: str
    severity: str
    title: str
    hint: str


KINDS: dict[str, HazardKind] = {
    k.id: k
    for k in (
        HazardKind(
            "hidden-sync",
            "error",
            "Synchronising call inside the target",
            "Capture cannot wait on the GPU. Keep the value on the device (torch.where, masks, clamp) "
            "instead of .item()/.cpu()/.tolist()/nonzero/`if tensor`, or move the check outside the "
            "captured step.",
        ),
        HazardKind(
            "unjoined-stream",
            "error",
            "Side stream forked but never joined",
            "Every stream that joins a capture must rejoin the origin stream before it ends: after the "
            "side work, call torch.cuda.current_stream().wait_stream(side) (or record an event on the "
            "side stream and wait on it from the origin stream).",
        ),
        HazardKind(
            "pageable-copy",
            "error",
            "Host-to-device copy from pageable memory",
            "Build host data once outside the step, in pinned memory (tensor.pin_memory()), or keep it on "
            "the device; inside the step copy_ from a pinned or device buffer with non_blocking=True.",
        ),
        HazardKind(
            "capture-allocation",
            "warning",
            "Allocation that cannot live in a graph",
            "Allocate every buffer before capture and reuse it; share one memory pool between graphs "
            "(torch.cuda.graph_pool_handle()), capturing the largest first.",
        ),
        HazardKind(
            "frozen-scalar",
            "warning",
            "Python number frozen into the graph",
            "A Python number is baked into the graph at capture. Keep it in a device tensor "
            "(e.g. lr = torch.tensor(0.1, device='cuda')) and update it in place with fill_()/copy_() "
            "before each replay.",
        ),
        HazardKind(
            "reallocated-input",
            "info",
            "Input tensor is a new allocation each call",
            "A graph reads fixed addresses. Allocate the input once and copy_ new data into it before each "
            "replay instead of rebinding the name to a new tensor.",
        ),
        HazardKind(
            "dynamic-shape",
            "warning",
            "Argument shapes vary between calls",
            "One graph serves one shape. Bucket the varying size (e.g. powers of two), pad each call up "
            "to its bucket, capture one graph per bucket in one shared pool, largest bucket first.",
        ),
        HazardKind(
            "data-dependent-control-flow",
            "error",
            "Kernel sequence differs between calls",
            "Only the branch taken during capture exists in the graph. Compute both branches and select "
            "with torch.where, or capture one graph per branch and choose on the host outside the step.",
        ),
        HazardKind(
            "rng-state",
            "warning",
            "Random numbers from a generator the graph does not know",
            "Use torch's CUDA generator (torch.rand/randn/dropout on the device), which graphs register "
            "and advance on every replay; numpy, Python random or state passed by value repeat the "
            "captured numbers on every replay.",
        ),
        HazardKind(
            "replay-mismatch",
            "error",
            "Replay gives different results from eager",
            "Some state is frozen in the graph. Pass everything that changes between calls as device "
            "tensors copied into static inputs, and clone outputs that outlive the next replay.",
        ),
        HazardKind(
            "host-side-effect",
            "warning",
            "Python work that replay will not repeat",
            "Replay runs only the recorded GPU work: counters, list appends, prints and logging inside the "
            "step run once, at capture. Move them outside the captured step or keep the state in device tensors.",
        ),
        HazardKind(
            "kept-output",
            "warning",
            "Output kept past the next call",
            "A graph's outputs live in its static buffers and the next replay overwrites them: every kept "
            "entry would alias the same memory. Clone the outputs you keep (`history.append(logits.clone())`) "
            "or copy them into a preallocated buffer (`out[i].copy_(logits)`).",
        ),
        HazardKind(
            "loop-back",
            "info",
            "State that loops back into the next call",
            "Keep the state in a static buffer the step updates in place: inside the captured step, "
            "`h_static.copy_(h_new)`; pass `h_static` every call. No copy-in before each replay and no "
            "clone after it.",
        ),
        HazardKind(
            "capture-failed",
            "error",
            "Capture failed",
            "Run the step once before capture (lazy init, cuBLAS workspaces), avoid synchronising or "
            "querying the capturing stream, and keep allocations out of the captured region.",
        ),
        HazardKind(
            "stream-race",
            "error",
            "Two streams touch the same memory without ordering",
            "Order the two accesses: record an event after the writer and wait on it from the reader's "
            "stream (or use one stream). A graph keeps only the edges the streams recorded.",
        ),
        HazardKind(
            "uncaptured-collective",
            "error",
            "Collective issued from a side stream outside the capture",
            "Fork the side stream from the capturing stream before the collective "
            "(side.wait_stream(torch.cuda.current_stream())) and join it after "
            "(torch.cuda.current_stream().wait_stream(side)), or issue the collective on the capturing stream, "
            "so every rank's graph holds it.",
        ),
        HazardKind(
            "collective-divergence",
            "error",
            "Kernel or collective sequence differs between ranks",
            "Every rank must launch the same collectives in the same order. Replace a branch on the rank "
            "(or on a value that differs between ranks) with the same ops on every rank, selecting results "
            "with torch.where or masks, and keep rank-specific work outside the captured step.",
        ),
        HazardKind(
            "unresolved-call",
            "warning",
            "Call that static checking cannot follow",
            "lint checks the code a call leads to only when it can tell which function that is. Call the "
            "function by name, or mark the callee with @launchprof.target so it is checked on its own; "
            "analyze on a GPU sees every call.",
        ),
    )
}

def hint_for(kind: str) -> str:
    return KINDS[kind].hint
