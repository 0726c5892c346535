"""A short legend of the report's terms, the same words in every format.

Shown with ``--explain`` in the terminal and Markdown, and always in HTML (where it
costs a reader nothing: it sits at the end). Each entry says what the number measures
and how to read it, in one sentence; the wording is the reference for all formats.
"""

from __future__ import annotations

TERMS: tuple[tuple[str, str], ...] = (
    ("GPU span", "time on the GPU from the first kernel of a step to the end of its last, measured with CUDA events; "
     "it includes the idle gaps between kernels, unlike the GPU busy time, which sums the kernels alone."),
    ("launch gap", "idle GPU time between one kernel's end and the next one's start, usually the host launching "
     "the next kernel; CUDA graph replay removes most of it. Measured in the profiled eager calls, where tracing "
     "slows every launch: larger than in the timed step (the gaps can add up to more than the timed step), so "
     "compare it between runs, not with the step time. The GPU idle share comes from the same calls. A step that "
     "captures is not profiled unless asked (--kernels): its kernels are then the graph's kernel nodes, and GPU busy, "
     "idle and the mean launch gap come from CUDA events around the timed replays and eager calls."),
    ("p10 / p90", "the 10th and 90th percentiles of the timed samples: one in ten calls was faster than p10, one in "
     "ten slower than p90. The spread between them shows how noisy a figure is."),
    ("payback", "how many replays it takes for the time saved per step to repay the one-off cost of setting the "
     "graph up: capturing it, the warm-up calls before capture, and instantiating it."),
    ("pool vs workspace", "the graph's private memory pool holds every tensor the captured step allocates, kept for "
     "the graph's lifetime; workspace is scratch memory that libraries such as cuBLAS allocate for their kernels."),
)


