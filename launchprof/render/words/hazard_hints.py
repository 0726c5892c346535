"""The words of each hazard kind: a one-line title and the general fix hint (SARIF's rule help,
the start of every hazard's ``hint``). The kinds themselves, ids and severities, are
launchprof.hazards.kinds."""

from __future__ import annotations

TITLES: dict[str, str] = {
    "hidden-sync": "Synchronising call inside the target",
    "unjoined-stream": "Side stream forked but never joined",
    "pageable-copy": "Host-to-device copy from pageable memory",
    "capture-allocation": "Allocation that cannot live in a graph",
    "frozen-scalar": "Python number frozen into the graph",
    "reallocated-input": "Input tensor is a new allocation each call",
    "dynamic-shape": "Argument shapes vary between calls",
    "data-dependent-control-flow": "Kernel sequence differs between calls",
    "rng-state": "Random numbers from a generator the graph does not know",
    "replay-mismatch": "Replay gives different results from eager",
    "host-side-effect": "Python work that replay will not repeat",
    "kept-output": "Output kept past the next call",
    "loop-back": "State that loops back into the next call",
    "capture-failed": "Capture failed",
    "kept-autograd-graph": "Autograd graph of an earlier call kept alive",
    "optimizer-not-capturable": "Optimizer built without capturable=True",
    "grad-scaler": "GradScaler reads its inf check on the host",
    "legacy-stream": "Work on the legacy default stream",
    "stream-race": "Two streams touch the same memory without ordering",
    "uncaptured-collective": "Collective issued from a side stream outside the capture",
    "collective-divergence": "Kernel or collective sequence differs between ranks",
    "unresolved-call": "Call that static checking cannot follow",
}

HINTS: dict[str, str] = {
    "hidden-sync": (
        "Capture cannot wait on the GPU. Keep the value on the device (torch.where, masks, clamp) "
        "instead of .item()/.cpu()/.tolist()/nonzero/`if tensor`, or move the check outside the captured"
        " step."
    ),
    "unjoined-stream": (
        "Every stream that joins a capture must rejoin the origin stream before it ends: after the side "
        "work, call torch.cuda.current_stream().wait_stream(side) (or record an event on the side stream"
        " and wait on it from the origin stream)."
    ),
    "pageable-copy": (
        "Build host data once outside the step, in pinned memory (tensor.pin_memory()), or keep it on "
        "the device; inside the step copy_ from a pinned or device buffer with non_blocking=True."
    ),
    "capture-allocation": (
        "Allocate every buffer before capture and reuse it; share one memory pool between graphs "
        "(torch.cuda.graph_pool_handle()), capturing the largest first."
    ),
    "frozen-scalar": (
        "A Python number is baked into the graph at capture. Keep it in a device tensor (e.g. lr = "
        "torch.tensor(0.1, device='cuda')) and update it in place with fill_()/copy_() before each "
        "replay."
    ),
    "reallocated-input": (
        "A graph reads fixed addresses. Allocate the input once and copy_ new data into it before each "
        "replay instead of rebinding the name to a new tensor."
    ),
    "dynamic-shape": (
        "One graph serves one shape. Bucket the varying size (e.g. powers of two), pad each call up to "
        "its bucket, capture one graph per bucket in one shared pool, largest bucket first."
    ),
    "data-dependent-control-flow": (
        "Only the branch taken during capture exists in the graph. Compute both branches and select with"
        " torch.where, or capture one graph per branch and choose on the host outside the step."
    ),
    "rng-state": (
        "Use torch's CUDA generator (torch.rand/randn/dropout on the device), which graphs register and "
        "advance on every replay; numpy, Python random or state passed by value repeat the captured "
        "numbers on every replay."
    ),
    "replay-mismatch": (
        "Some state is frozen in the graph. Pass everything that changes between calls as device tensors"
        " copied into static inputs, and clone outputs that outlive the next replay."
    ),
    "host-side-effect": (
        "Replay runs only the recorded GPU work: counters, list appends, prints and logging inside the "
        "step run once, at capture. Move them outside the captured step or keep the state in device "
        "tensors."
    ),
    "kept-output": (
        "A graph's outputs live in its static buffers and the next replay overwrites them: every kept "
        "entry would alias the same memory. Clone the outputs you keep "
        "(`history.append(logits.clone())`) or copy them into a preallocated buffer "
        "(`out[i].copy_(logits)`)."
    ),
    "loop-back": (
        "Keep the state in a static buffer the step updates in place: inside the captured step, "
        "`h_static.copy_(h_new)`; pass `h_static` every call. No copy-in before each replay and no clone"
        " after it."
    ),
    "capture-failed": (
        "launchprof could not tell the cause from what torch and CUDA reported: torch's message names "
        "the operation that capture rejected, at the line where it surfaced. A graph records only the GPU "
        "work queued on the capturing stream; whatever that operation needs from the host must happen "
        "before or after the captured step."
    ),
    "kept-autograd-graph": (
        "Do not keep a tensor that holds the step's autograd graph past the call: return "
        "`loss.detach()` from the step, or `del loss` before the next call. The graph's AccumulateGrad "
        "nodes keep the stream of the call that made them, and the next backward under capture waits "
        "on it."
    ),
    "optimizer-not-capturable": (
        "Build the optimizer with `capturable=True` (Adam, AdamW, ...): its step counts then live on the "
        "device and a graph can replay its step(). A learning rate that changes must then live in a "
        "device tensor too."
    ),
    "grad-scaler": (
        "GradScaler.step reads its inf check on the host to decide whether to step. Capture the whole step"
        " with an optimizer built with `fused=True` (it skips the step on the device), or with bf16 "
        "autocast and no GradScaler; or capture forward and backward only "
        "(torch.cuda.make_graphed_callables) and keep scaler.step/update outside the graph."
    ),
    "legacy-stream": (
        "A capture cannot make the legacy default stream wait on it. Queue the step's work on the current"
        " (capturing) stream: no `torch.cuda.default_stream()` or stream 0 inside the step; a library or"
        " extension that launches on the default stream needs its per-thread or explicit-stream mode."
    ),
    "stream-race": (
        "Order the two accesses: record an event after the writer and wait on it from the reader's "
        "stream (or use one stream). A graph keeps only the edges the streams recorded."
    ),
    "uncaptured-collective": (
        "Fork the side stream from the capturing stream before the collective "
        "(side.wait_stream(torch.cuda.current_stream())) and join it after "
        "(torch.cuda.current_stream().wait_stream(side)), or issue the collective on the capturing "
        "stream, so every rank's graph holds it."
    ),
    "collective-divergence": (
        "Every rank must launch the same collectives in the same order. Replace a branch on the rank (or"
        " on a value that differs between ranks) with the same ops on every rank, selecting results with"
        " torch.where or masks, and keep rank-specific work outside the captured step."
    ),
    "unresolved-call": (
        "lint checks the code a call leads to only when it can tell which function that is. Call the "
        "function by name, or mark the callee with @launchprof.target so it is checked on its own; "
        "analyze on a GPU sees every call."
    ),
}
