"""GitHub-flavoured Markdown, sized for ``$GITHUB_STEP_SUMMARY``.

Also home of the plain-text summary pieces (verdict sentence, key numbers, number
formats) that the HTML report and ``compare`` reuse, so that every format states the
same numbers in the same words.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from launchprof.hazards.kinds import SEVERITY_RANK
from launchprof.render.base import Renderer
from launchprof.render.github import relative_path
from launchprof.session import Hazard, Report, Speedup, Stats

NA = "—"

VERDICT_EMOJI = {
    "graphs-help": "✅",
    "marginal": "⚖️",
    "graphs-dont-help": "❌",
    "not-capturable": "🚫",
    "eager-only": "ℹ️",
    "static-only": "🔍",
}
SEVERITY_EMOJI = {"error": "🔴", "warning": "🟠", "info": "🔵"}


# --- number formats -------------------------------------------------------------------


def fmt_us(value: float | None) -> str:
    """A duration in µs, switching to ms above 10 ms so long steps stay readable."""
    if value is None:
        return NA
    if abs(value) >= 10_000:
        return f"{value / 1000:.2f} ms"
    return f"{value:.1f} µs"


def fmt_stats_us(stats: Stats | None) -> str:
    if stats is None:
        return NA
    return f"{fmt_us(stats.median)} (p10–p90 {fmt_us(stats.p10)}–{fmt_us(stats.p90)}, n={stats.n})"


def fmt_ratio(value: float | None) -> str:
    return NA if value is None else f"{value:.2f}×"


def fmt_speedup(speedup: Speedup | None) -> str:
    if speedup is None:
        return NA
    return f"{fmt_ratio(speedup.median)} (95% interval {speedup.low:.2f}–{speedup.high:.2f}×)"


def fmt_fraction(value: float | None) -> str:
    return NA if value is None else f"{value * 100:.1f}%"


def fmt_count(value: float | None) -> str:
    if value is None:
        return NA
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def fmt_bytes(value: int | None) -> str:
    if value is None:
        return NA
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover - loop always returns


# --- summary pieces shared by md and html -----------------------------------------------


def location(hazard: Hazard, source_root: Path | None) -> str | None:
    """``file:line`` as the user reads it: relative to the source root when under it."""
    if not hazard.file:
        return None
    path = relative_path(hazard.file, source_root)
    return f"{path}:{hazard.line}" if hazard.line else path


def sorted_hazards(hazards: list[Hazard]) -> list[Hazard]:
    """Errors first; within a severity, the order the analysis found them."""
    return sorted(hazards, key=lambda h: -SEVERITY_RANK.get(h.severity, 0))


def verdict_sentence(report: Report) -> str:
    """One plain sentence that says what the verdict means for this workload."""
    sp, predicted = report.speedup, report.predicted_speedup
    interval = f" (95% interval {sp.low:.2f}–{sp.high:.2f}×)" if sp else ""
    errors = sum(h.severity == "error" for h in report.hazards)
    if report.verdict == "graphs-help":
        return f"CUDA graphs help: replay is {fmt_ratio(sp and sp.median)} as fast as eager{interval}."
    if report.verdict == "marginal":
        return f"CUDA graphs help only marginally: {fmt_ratio(sp and sp.median)}{interval}."
    if report.verdict == "graphs-dont-help":
        return f"CUDA graphs do not help here: replay runs at {fmt_ratio(sp and sp.median)} of eager speed{interval}."
    if report.verdict == "not-capturable":
        expect = f"; fix them and expect about {fmt_ratio(predicted)}" if predicted else ""
        return f"The target cannot run as a CUDA graph: {errors} error hazard(s){expect}."
    if report.verdict == "eager-only" and report.target:
        stopped = report.run is not None and not report.run.complete
        return f"Eager profile only: {report.target} was not captured{' (the run stopped first)' if stopped else ''}."
    if report.verdict == "eager-only":
        return "Eager profile only: no target was captured (name one with --target or @launchprof.target)."
    if report.verdict == "static-only":
        return f"Static check only (no GPU run): {len(report.hazards)} hazard(s) found in the source."
    return f"Verdict: {report.verdict}."


def machine_line(report: Report) -> str:
    m = report.machine
    parts = [m.gpu or "no GPU", f"driver {m.driver}" if m.driver else None, f"CUDA {m.cuda}" if m.cuda else None]
    parts += [f"torch {m.torch}" if m.torch else None, f"Python {m.python}"]
    return ", ".join(p for p in parts if p) + f" · launchprof {report.launchprof_version} · {report.created}"


def key_numbers(report: Report) -> list[tuple[str, str]]:
    """The numbers a reader decides on, as (label, plain text value) rows."""
    eager, replay, val = report.eager, report.replay, report.validation
    if val is None:
        validation = NA
    elif val.matches == val.calls_compared:
        validation = f"{val.matches}/{val.calls_compared} calls match"
    else:
        validation = f"{val.calls_compared - val.matches} of {val.calls_compared} calls differ"
    if val is not None and val.max_abs_diff is not None:
        validation += f" (max abs diff {val.max_abs_diff:.3g})"
    breakeven = report.breakeven_replays
    return [
        ("Eager step", fmt_stats_us(eager and eager.step_us)),
        ("Replay step", fmt_stats_us(replay and replay.step_us)),
        ("Speedup (eager / replay)", fmt_speedup(report.speedup)),
        ("Kernels per step", fmt_count(eager and eager.kernels_per_step)),
        ("GPU idle fraction (eager)", fmt_fraction(eager and eager.gpu_idle_fraction)),
        ("Launch gap (eager, median)", fmt_us(eager and eager.launch_gap_us and eager.launch_gap_us.median)),
        ("Graph nodes", fmt_count(replay and replay.graph_nodes)),
        ("Instantiate", fmt_us(replay and replay.instantiate_us)),
        ("Graph pool memory", fmt_bytes(replay and replay.pool_bytes)),
        ("Break-even replays", NA if breakeven is None else f"{breakeven:,.1f}"),
        ("Predicted speedup", fmt_ratio(report.predicted_speedup)),
        ("Validation", validation),
    ]


# --- Markdown escaping -------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def md_text(text: str) -> str:
    """Plain text safe in a table cell: HTML escaped, Markdown inert, no line breaks.

    Backtick code spans are kept (hints and messages use them), through :func:`md_code`.
    """
    out = []
    for i, part in enumerate(_CODE_SPAN.split(text.replace("\r", ""))):
        if i % 2:
            out.append(md_code(part[1:-1]))
        else:
            out.append(_md_escape(part))
    return "".join(out).replace("\n", "<br>")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def md_code(text: str) -> str:
    """``text`` (a path, a kind) in code style, shown literally, ``|`` escaped.

    A backtick span shows ``<`` literally but leaves it raw in the file, and some viewers
    of step summaries are not GitHub; text with markup characters gets ``<code>`` with
    escaped content instead, so no raw tag from user data reaches the document.
    """
    text = text.replace("\n", " ")
    if re.search(r"[<>&`]", text):
        return f"<code>{_md_escape(text)}</code>"
    return "`" + text.replace("|", "\\|") + "`"


def md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# --- the renderer ----------------------------------------------------------------------


class MarkdownRenderer(Renderer):
    format = "md"
    extension = ".md"

    def render(self, report: Report) -> str:
        root = self.options.source_root
        what = f"{md_code(report.target)} in " if report.target else ""
        parts = [
            f"## launchprof {report.mode}: {what}{md_code(relative_path(report.script, root))}",
            f"**{VERDICT_EMOJI.get(report.verdict, '')} {md_text(report.verdict)}** — {md_text(verdict_sentence(report))}",
        ]
        if report.run is not None and not report.run.complete:
            cause = md_text(report.run.cause or "unknown cause")
            parts.append(f"> [!WARNING]\n> The run did not complete: {cause}. The numbers below are what was measured before it stopped.")
        if report.mode != "lint":
            rows = [(label, md_text(value)) for label, value in key_numbers(report)]
            parts.append(md_table(("Measure", "Value"), rows))
        parts += self._buckets(report) + [self._hazards(report)]
        parts += [f"- {md_text(note)}" for note in report.notes]
        parts.append(f"<sub>{md_text(machine_line(report))}</sub>")
        return "\n\n".join(parts) + "\n"

    def _hazards(self, report: Report) -> str:
        if not report.hazards:
            return "No capture hazards found."
        rows = []
        for h in sorted_hazards(report.hazards):
            loc = location(h, self.options.source_root)
            severity = f"{SEVERITY_EMOJI.get(h.severity, '')} {md_text(h.severity)}"
            rows.append((md_code(loc) if loc else NA, severity, md_code(h.kind), md_text(h.message), md_text(h.hint)))
        return f"### Hazards ({len(report.hazards)})\n\n" + md_table(("Location", "Severity", "Kind", "Message", "Fix"), rows)

    @staticmethod
    def _buckets(report: Report) -> list[str]:
        if not report.buckets:
            return []
        rows = [
            (
                md_code(b.argument),
                str(b.dim),
                md_text(", ".join(str(s) for s in b.sizes)),
                fmt_fraction(b.padding_waste),
                fmt_bytes(b.pool_bytes_estimate),
            )
            for b in report.buckets
        ]
        header = ("Argument", "Dim", "Capture sizes", "Padding waste", "Pool memory (est.)")
        return ["### Recommended capture sizes\n\n" + md_table(header, rows)]
