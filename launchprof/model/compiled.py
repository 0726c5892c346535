"""The report's ``compile`` and ``compile_no_cudagraphs`` fields (``--compare compile``).

Kept out of launchprof.model.core so that the comparison with torch.compile can grow without
touching the core contract; :class:`launchprof.model.core.Report` only names these types.
``Stats`` is imported at the bottom: models.py imports this module after defining Report
(both sides resolve their annotations lazily, so either module may be imported first).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from launchprof.model.records import model as _model

STATUS_OK = "ok"


@_model
class CompileFinding:
    """One thing torch.compile reported: a cudagraph skip or a graph break, in launchprof's
    terms. ``kind`` is a hazard kind id (launchprof.hazards.kinds) or None where no kind fits;
    ``reason`` is torch's own words (first line), ``file``/``line`` the user's line where
    torch's log names one."""

    kind: str | None
    reason: str
    file: str | None = None
    line: int | None = None
    count: int = 1
    code: str | None = None  # the line's source where the log quotes it


@_model
class CompileResult:
    """One torch.compile mode, measured like eager and replay (bursts, same sample count)."""

    mode: str  # "reduce-overhead" or "default"
    status: str = STATUS_OK  # ok, failed, timeout
    error: str | None = None
    step_us: Stats | None = None  # steady calls, interleaved bursts like eager and replay
    compile_s: float | None = None  # first calls until steady: compile, warm-up, recording
    kernels_per_step: int | None = None
    cudagraphs_used: bool | None = None  # a profiled steady call launched a CUDA graph
    skip_reasons: list[CompileFinding] = dataclasses.field(default_factory=list)
    graph_breaks: list[CompileFinding] = dataclasses.field(default_factory=list)
    cudagraph_skips: int | None = None  # torch's own counter (inductor.cudagraph_skips)
    recompiles: int | None = None  # frames compiled beyond the first
    samples_us: list[float] = dataclasses.field(default_factory=list)
    timing: str | None = None  # "burst", as eager and replay
    advice: str | None = None  # one line: eager vs hand capture vs compile (on `compile` only)
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    # --compile-rounds N > 1: each fresh compile's step median (µs) and compile time (s), in
    # round order, failed rounds left out; the fields above are the median round's.
    rounds_us: list[float] = dataclasses.field(default_factory=list)
    rounds_compile_s: list[float] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == STATUS_OK


from launchprof.model.step_timing import Stats
