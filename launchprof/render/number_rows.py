"""The table of figures under the headline, as (label, plain text) rows for every format.

A report's default view keeps the figures a reader decides on: the eager and replay steps,
the speedup, the payback, the graph's memory, the validation, and the output clone where
the speedup as used counts it. ``--explain`` (and HTML, always) adds the rest: kernel and
node counts, GPU idle and launch gaps, setup cost, the other memory figures, the in-loop
timings and the speedup's method. A row with nothing measured is left out of the default
view, and no view gives a step's figure to a report that has no step (whole-script mode)
or a replay's figure to a report that has no replay.
"""

from __future__ import annotations

from typing import Any

from launchprof.render import figures
from launchprof.render.figures import get
from launchprof.render.words import format as fmt
from launchprof.render.words.training_text import once_fixed

# (label, value, shown without --explain)
SETUP = "capture + warm-up + instantiate"  # figures.payback's basis for a set-up timed as a whole
Row = tuple[str, str, bool]


def whole_run(report: Any) -> bool:
    """Whole-script mode: analyze with no target, so no step to count or time per."""
    return report.mode == "analyze" and report.target is None


def key_numbers(report: Any, explain: bool = True) -> list[tuple[str, str]]:
    """The rows of the figure table: all of them with ``explain``, else the default few."""
    rows = _whole_rows(report) if whole_run(report) else _step_rows(report, explain)
    return [(label, value) for label, value, default in rows if explain or (default and value != fmt.NA)]


def _whole_rows(report: Any) -> list[Row]:
    eager = report.eager
    return [
        ("Kernels in the whole run", fmt.count(eager and eager.kernels_per_step), True),
        ("GPU idle (whole run, profiled)", fmt.percent(eager and eager.gpu_idle_fraction), False),
        ("Launch gap (whole run, profiled, median)", fmt.duration(eager and eager.launch_gap_us and eager.launch_gap_us.median), False),
    ]


def _timing(profile: Any, label: str) -> str:
    return f"{label} (in-loop)" if get(profile, "timing") == "in-loop" else label


def _short_speedup(report: Any) -> str:
    """The speedup and its interval without the method (--explain adds it)."""
    sp = report.speedup
    return fmt.NA if sp is None else fmt.speedup(sp.median, sp.low, sp.high) + once_fixed(report, "speedup")


def _step_rows(report: Any, explain: bool) -> list[Row]:
    """The decision figures first (eager, replay, speedup, payback, memory, validation), then
    the detail that --explain adds."""
    eager, replay = report.eager, report.replay
    p = figures.prediction(report)
    main: list[Row] = [(_timing(eager, "Eager step"), fmt.stats(eager and eager.step_us), True)]
    main += _loop_rows("Eager step in the script's loop", eager)
    kernels = "Kernels per replay (graph nodes)" if figures.counted_from_graph(report) else "Kernels per eager step"
    detail: list[Row] = [
        ("Predicted speedup", fmt.speedup(p["median"], p["low"], p["high"]) if p else fmt.NA, False),
        (kernels, fmt.count(eager and eager.kernels_per_step), False),
    ]
    if replay is not None:
        main += _replay_main(report, replay, explain)
        detail += _replay_detail(report, replay)
    return main + detail + _gpu_rows(report)


def _gpu_rows(report: Any) -> list[Row]:
    """GPU idle and the launch gap, as the report obtained them: profiled (the gap's median)
    or from CUDA events (the gap's mean)."""
    eager = report.eager
    idle = fmt.percent(eager and eager.gpu_idle_fraction)
    idle_row = ("GPU idle (eager, from CUDA events)", idle, False) if figures.eager_basis(report, "gpu_idle_fraction") == "events" else (
        "GPU idle (eager, profiled)", idle, False)
    if figures.eager_basis(report, "launch_gap_mean_us") == "events":
        return [idle_row, ("Launch gap (eager, from CUDA events, mean)", fmt.duration(get(eager, "launch_gap_mean_us")), False)]
    return [idle_row, ("Launch gap (eager, profiled, median)", fmt.duration(eager and eager.launch_gap_us and eager.launch_gap_us.median), False)]


def _replay_main(report: Any, replay: Any, explain: bool) -> list[Row]:
    fixed = once_fixed(report, "replay")  # the graph measured after a fix launchprof made
    count, basis = figures.payback(report)
    as_used = get(report, "speedup_as_used") is not None  # the clone is part of the headline's figure
    rows: list[Row] = [(_timing(replay, "Replay step (copy-in + replay)") + fixed, fmt.stats(replay.step_us), True)]
    rows += _loop_rows("Replay step in the script's loop", replay)
    if get(replay, "clone_us") is not None:
        rows.append(("Output clone (timed alone)" + fixed, fmt.stats(get(replay, "clone_us")), as_used))
    return rows + [
        ("Speedup (eager / replay)", figures.speedup_text(report) if explain else _short_speedup(report), True),
        (_payback_label(basis, explain) + once_fixed(report, "breakeven_replays"), fmt.NA if count is None else fmt.replays(count), True),
        ("Graph memory (its own pool)" + fixed, fmt.size(replay.pool_bytes), True),
        ("Validation (replay vs eager)" + once_fixed(report, "validation"), figures.validation_text(report), True),
    ]


def _payback_label(basis: str, explain: bool) -> str:
    """What the replays pay back; the default view names the full set-up "the setup" (the
    --explain table has its own row that says what it holds)."""
    if explain or basis != SETUP:
        return f"Replays to pay back {basis}"
    return "Replays to pay back the setup"


def _replay_detail(report: Any, replay: Any) -> list[Row]:
    fixed = once_fixed(report, "replay")
    rows: list[Row] = [("Graph nodes" + fixed, figures.nodes_text(report), False)]
    if get(replay, "setup_us") is not None:
        rows.append(("Setup (capture + warm-up + instantiate)" + fixed, fmt.duration(get(replay, "setup_us")), False))
    else:  # recorded before set-up was timed as a whole
        rows.append(("Capture / instantiate", f"{fmt.duration(replay.capture_us)} / {fmt.duration(replay.instantiate_us)}", False))
    if get(replay, "workspace_bytes") is not None:
        rows.append(("One-time library workspace", fmt.size(get(replay, "workspace_bytes")), False))
    if get(replay, "launchprof_bytes") is not None:
        rows.append(("Memory launchprof adds (buffers, clones)", fmt.size(get(replay, "launchprof_bytes")), False))
    return rows


def _loop_rows(label: str, profile: Any) -> list[Row]:
    """The script's own in-loop timings beside burst figures (--explain only)."""
    loop = get(profile, "in_loop_step_us")
    return [] if loop is None else [(label, fmt.stats(loop), False)]
