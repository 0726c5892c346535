"""``--compare compile`` in every format: eager, hand capture and torch.compile side by side,
with the analysis's one line of advice and compile's own findings (skip reasons, graph
breaks) in launchprof's hazard kinds. Builds rows and lines once (:func:`compile_table`,
:func:`compile_lines`); the console, Markdown and HTML renderers each call one function here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from markupsafe import Markup, escape

from launchprof.render.words import format as fmt

if TYPE_CHECKING:  # annotations only
    from launchprof.model.compiled import CompileFinding, CompileResult
    from launchprof.model.core import Report

HEADER = ("", "eager", "hand capture", "torch.compile", "compile, no graphs")


def _median(stats: Any) -> str:
    return fmt.duration(getattr(stats, "median", None)) if stats is not None else fmt.NA


def _status(result: CompileResult | None) -> str:
    if result is None:
        return "not run"
    if result.status == "timeout":
        return "timed out"
    return "failed" if not result.ok else "ok"


def _hand_status(report: Report) -> str:
    if report.replay is None:
        return "capture failed" if report.verdict == "not-capturable" else fmt.NA
    v = report.validation
    if v is not None and v.matches < v.calls_compared:
        return f"wrong results ({v.calls_compared - v.matches} of {v.calls_compared} calls)"
    if report.verdict == "replay-invalid":
        return "wrong results (an error hazard)"
    return "ok"


def _compile_cells(result: CompileResult | None, what: str) -> str:
    if result is None or not result.ok and what != "status":
        return fmt.NA if what != "status" else _status(result)
    if what == "step":
        return _median(result.step_us)
    if what == "kernels":
        return fmt.count(result.kernels_per_step) if result.kernels_per_step is not None else fmt.NA
    if what == "setup":
        return fmt.duration(result.compile_s * 1e6) if result.compile_s is not None else fmt.NA
    if what == "graphs":
        if result.cudagraphs_used is None:
            return fmt.NA
        skips = f" ({result.cudagraph_skips} skipped)" if result.cudagraph_skips else ""
        return ("yes" if result.cudagraphs_used else "no") + skips
    if what == "breaks":
        return str(sum(f.count for f in result.graph_breaks if not f.reason.startswith("recompiled")))
    return _status(result)


def compile_table(report: Report) -> list[tuple[str, ...]] | None:
    """Rows (figure, eager, hand capture, compile, compile without graphs); None when
    compile was not compared."""
    ro, plain = report.compile, report.compile_no_cudagraphs
    if ro is None and plain is None:
        return None
    eager, replay = report.eager, report.replay
    hand_kernels = fmt.NA
    if replay is not None and replay.node_types:
        hand_kernels = fmt.count(replay.node_types.get("kernel", replay.graph_nodes))
    rows = [
        ("step time (median)", _median(eager.step_us if eager else None), _median(replay.step_us if replay else None)),
        ("kernels per call", fmt.count(eager.kernels_per_step) if eager and eager.kernels_per_step is not None else fmt.NA, hand_kernels),
        ("one-off cost", "none", fmt.duration(replay.setup_us) if replay and replay.setup_us is not None else fmt.NA),
        ("CUDA graphs", "no", "yes" if replay is not None else fmt.NA),
        ("graph breaks", fmt.NA, fmt.NA),
        ("status", "ok", _hand_status(report)),
    ]
    keys = ("step", "kernels", "setup", "graphs", "breaks", "status")
    table = [(*row, _compile_cells(ro, key), _compile_cells(plain, key)) for row, key in zip(rows, keys)]
    if any(r is not None and len(r.rounds_us) > 1 for r in (ro, plain)):  # --compile-rounds
        table.insert(1, ("step time over compiles", fmt.NA, fmt.NA, _rounds(ro), _rounds(plain)))
    return table


def _rounds(result: CompileResult | None) -> str:
    """The step's range over the mode's compiles (the median one is in the row above), with
    how many were timed and, where some failed, of how many."""
    if result is None or len(result.rounds_us) < 2:
        return fmt.NA
    timed, rounds = len(result.rounds_us), int(result.details.get("rounds") or len(result.rounds_us))
    count = f"{timed}" if timed == rounds else f"{timed} of {rounds}"
    return f"{fmt.duration(min(result.rounds_us))} to {fmt.duration(max(result.rounds_us))} ({count})"


def _where(f: CompileFinding) -> str:
    if not f.file:
        return ""
    return f" ({f.file}:{f.line})" if f.line else f" ({f.file})"


def finding_line(prefix: str, f: CompileFinding) -> str:
    kind = f"[{f.kind}] " if f.kind else ""
    times = f" ×{f.count}" if f.count > 1 else ""
    return f"{prefix}: {kind}{f.reason}{times}{_where(f)}"


def compile_lines(report: Report) -> list[str]:
    """The advice first, then why a mode failed, then compile's findings, each once."""
    out: list[str] = []
    ro, plain = report.compile, report.compile_no_cudagraphs
    if ro is not None and ro.advice:
        out.append(f"advice: {ro.advice}")
    seen: set[str] = set()
    for result in (ro, plain):
        if result is None:
            continue
        if result.error:
            out.append(f"torch.compile mode={result.mode}: {_status(result)}: {result.error}")
        for prefix, findings in (("cudagraph skip", result.skip_reasons), ("graph break", result.graph_breaks)):
            for f in findings:
                line = finding_line("recompile" if f.reason.startswith("recompiled") else prefix, f)
                if line not in seen:
                    seen.add(line)
                    out.append(line)
    return out


def compile_console(report: Report) -> list[Any]:
    """Rich renderables for the terminal: a table and the lines under it."""
    from rich import box
    from rich.text import Text

    from launchprof.render.fitted import Col, FittedTable

    rows = compile_table(report)
    if rows is None:
        return []
    cols = [Col(name, style="bold" if i == 0 else "") for i, name in enumerate(HEADER)]
    title = "eager · hand capture · torch.compile"
    table = FittedTable(cols, rows, title=title, heading=str, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, title_justify="left")
    return [table, *[Text(line, style="bold" if line.startswith("advice:") else None) for line in compile_lines(report)]]


def compile_markdown(report: Report) -> list[str]:
    """Markdown blocks: a heading, the table, the lines as a list."""
    from launchprof.render.markdown_escape import md_table, md_text

    rows = compile_table(report)
    if rows is None:
        return []
    table = md_table(("Measure", *HEADER[1:]), [tuple(md_text(c) for c in row) for row in rows])
    lines = [f"- {md_text(line)}" for line in compile_lines(report)]
    return ["### Eager, hand capture and torch.compile", table, *(["\n".join(lines)] if lines else [])]


def compile_html(report: Report) -> Markup | None:
    """An HTML section (escaped), or None when compile was not compared."""
    rows = compile_table(report)
    if rows is None:
        return None
    head = "".join(f"<th>{escape(h)}</th>" for h in ("Measure", *HEADER[1:]))
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    items = "".join(f"<li>{escape(line)}</li>" for line in compile_lines(report))
    lines = f"<ul>{items}</ul>" if items else ""
    return Markup(f'<h2>Eager, hand capture and torch.compile</h2>\n<table class="compile"><tr>{head}</tr>{body}</table>\n{lines}')
