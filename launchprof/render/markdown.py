"""GitHub-flavoured Markdown, sized for ``$GITHUB_STEP_SUMMARY``.

Every figure and sentence comes from :mod:`launchprof.render.figures` and every number
from :mod:`launchprof.render.words.format`, so the summary says what the terminal and the HTML
page say.
"""

from __future__ import annotations

from typing import Any

from launchprof.render import figures
from launchprof.render.words import format as fmt
from launchprof.render.anatomy_text import anatomy_line
from launchprof.render.buckets_text import markdown_buckets
from launchprof.render.compile_text import compile_markdown
from launchprof.render.partial_text import training_markdown
from launchprof.render.legend import TERMS
from launchprof.render.markdown_escape import md_code, md_table, md_text
from launchprof.render.words.notes_text import report_notes
from launchprof.render.renderer import Renderer
from launchprof.render.words.fix_text import fix_sentence
from launchprof.render.words.verify_text import FAILED, fix_heading, fix_state, verification_text
from launchprof.render.figures import location, machine_line, sorted_hazards, verdict_sentence
from launchprof.render.number_rows import key_numbers
from launchprof.render.paths import library_location, relative, report_root
from launchprof.render.ranks import markdown_ranks
from launchprof.model.core import Report

NA = fmt.NA

__all__ = ["key_numbers", "location", "machine_line", "sorted_hazards", "verdict_sentence", "MarkdownRenderer"]

# --- the renderer ----------------------------------------------------------------------


class MarkdownRenderer(Renderer):
    format = "md"
    extension = ".md"

    def render(self, report: Report) -> str:
        root = report_root(report, self.options)
        what = f"{md_code(report.target)} in " if report.target else ""
        v = figures.verdict(report)
        badge = f"{v.badge} " if v else ""
        label, sentence = figures.verdict_headline(report)
        parts = [
            f"## launchprof {report.mode}: {what}{md_code(relative(report.script, root))}",
            f"**{badge}{md_text(label)}** ({md_code(report.verdict)}) — {md_text(sentence)}",
        ]
        if report.run is not None and not report.run.complete:
            cause = md_text(report.run.cause or "unknown cause")
            parts.append(f"> [!WARNING]\n> The run did not complete: {cause}. The numbers below are what was measured before it stopped.")
        if report.mode != "lint":
            explain = self.options.explain
            rows = [(label, md_text(value)) for label, value in key_numbers(report, explain)]
            if rows:
                parts.append(md_table(("Measure", "Value"), rows))
            parts += [f"> {md_text(line)}" for line in figures.detail_lines(report, explain)]
            parts += [f"> {md_text(line)}" for line in [anatomy_line(report) if explain else None] if line]
            parts += compile_markdown(report)
            parts += training_markdown(report, root)
        parts += markdown_ranks(report, md_text, md_table)
        parts += markdown_buckets(report, root) + self._candidates(report, root) + [self._hazards(report, root)]
        parts += self._fixes(report, root)
        if report.capture_snippet:
            parts.append("### Capture snippet\n\nPaste after the script's definitions; `run(*args)` returns what the target returns.\n\n```python\n" + report.capture_snippet.rstrip() + "\n```")
        parts += [f"- {md_text(note)}" for note in report_notes(report, self.options.explain)]
        if self.options.explain:
            parts.append("### Terms\n\n" + "\n".join(f"- **{md_text(term)}**: {md_text(meaning)}" for term, meaning in TERMS))
        parts.append(f"<sub>{md_text(machine_line(report))}</sub>")
        return "\n\n".join(parts) + "\n"

    @staticmethod
    def _candidates(report: Report, root: Any) -> list[str]:
        """Whole-script mode: the functions to analyse next (launchprof.analysis.whole)."""
        if not report.candidates:
            return []
        rows = [
            (md_code(c.name), md_code(f"{relative(c.file, root)}:{c.line}") if c.file else "", str(c.calls), f"{c.kernels_per_call:g}", md_code(c.command))
            for c in report.candidates
        ]
        return ["### Candidate targets (most kernels per call)\n\n" + md_table(("Function", "Where", "Calls", "Kernels/call", "Analyse it with"), rows)]

    @staticmethod
    def _hazards(report: Report, root: Any) -> str:
        if not report.hazards:
            return "No capture hazards found."
        rows = []
        for h in sorted_hazards(report.hazards):
            loc = location(h, root)
            sev = figures.severity(h.severity)
            severity = f"{_SEVERITY_DOT.get(sev, '')} {md_text(h.severity)}".strip()
            message = md_text(figures.hazard_message(h, report))
            library = library_location(h, root)
            if library:
                code = f": {md_code(h.library_site.code)}" if h.library_site.code else ""
                message += f"<br>in library code at {md_code(library)}{code}"
            fix = figures.fix_of(h)
            pointer = "written below, under Fixes" if fix is not None and fix.after else "general rule below"  # each rule printed once
            rows.append((md_code(loc) if loc else NA, severity, md_code(h.kind), message, pointer))
        table = f"### Hazards ({len(report.hazards)})\n\n" + md_table(("Location", "Severity", "Kind", "Message", "Fix"), rows)
        rules = "\n".join(
            f"- {md_code(kind)}{' (' + ', '.join(md_code(x) for x in locs) + ')' if locs else ''}: {md_text(hint)}"
            for kind, locs, hint in figures.shared_hints(sorted_hazards(report.hazards), root)
        )
        return table + "\n\n**How to fix, by kind**\n\n" + rules

    @staticmethod
    def _fixes(report: Report, root: Any) -> list[str]:
        """Each written fix as a diff block under its location; a repeated fix is named once."""
        ordered = sorted_hazards(report.hazards)
        repeats = figures.same_fix_as(ordered, root)
        out = []
        for i, h in enumerate(ordered):
            fix = figures.fix_of(h)
            if fix is None or i in repeats:
                continue
            own = location(h, root) or h.kind
            moved = figures.fix_where(h, root)
            also = [location(o, root) for j, o in enumerate(ordered) if repeats.get(j) == own]
            word = "Fix tried" if fix_state(fix) == FAILED else fix_heading(fix).capitalize()
            place = f"**{word} at {md_code(moved)}** for {md_code(own)}" if moved else f"**{word} for {md_code(own)}**"
            head = f"{place} ({md_code(h.kind)}{', also ' + ', '.join(md_code(a) for a in also if a) if also else ''})"
            trial = verification_text(fix)
            if fix_state(fix) == FAILED:  # not a fix: why it failed; the rule is under "How to fix, by kind"
                out.append(f"{head}: {md_text(trial)}")
            elif fix.after:
                diff = "\n".join([*(f"- {fix.indent}{ln}" for ln in fix.before.splitlines()), *(f"+ {fix.indent}{ln}" for ln in fix.after.splitlines())])
                out.append(f"{head}\n\n```diff\n{diff}\n```\n\n{md_text(fix_sentence(fix))}\n\n*{md_text(trial)}*")
            else:
                out.append(f"{head}: {md_text(fix_sentence(fix))}")
        return ["### Fixes\n\n" + "\n\n".join(out)] if out else []


_SEVERITY_DOT = {"error": "🔴", "warning": "🟠", "info": "🔵"}
