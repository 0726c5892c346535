"""torch.compile's own words -> launchprof's hazard kinds, with the user's file:line.

Input: the log records and counters the worker kept (launchprof.worker.compile_logs); output:
``CompileFinding`` lists for the report. Pure: tested on recorded CPU logs and on the skip
messages torch's source builds (torch/_inductor/cudagraph_utils.py, output_code.py,
compile_fx.py, lowering.py, cudagraph_trees.py), so a CI runner checks the translation.

A message maps to the first rule whose pattern it contains (lower-cased). Where no kind fits
(a torch bisector, a testing flag) the finding keeps ``kind=None`` and torch's reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from launchprof.model.compiled import CompileFinding
from launchprof.events.compile_events import CompileLog

# (pattern, kind) for cudagraph skip reasons, most specific first.
SKIP_RULES: tuple[tuple[str, str | None], ...] = (
    ("mutated inputs", "reallocated-input"),
    ("input storage mutation", "reallocated-input"),
    ("data pointer", "reallocated-input"),
    ("non-tensor inputs", "frozen-scalar"),
    ("symbolic shapes", "dynamic-shape"),
    ("distinct size", "dynamic-shape"),
    ("dynamic shape", "dynamic-shape"),
    ("incompatible op aten._local_scalar_dense", "hidden-sync"),
    ("incompatible op aten.nonzero", "hidden-sync"),
    ("incompatible op aten.masked_select", "hidden-sync"),
    ("incompatible op aten.unique", "hidden-sync"),
    ("incompatible op", "capture-failed"),
    ("boolean indexing", "hidden-sync"),
    ("control flow operator", "data-dependent-control-flow"),
    ("caching allocator", "capture-allocation"),
    ("cpu device", "host-side-effect"),
    ("multiple devices: cpu", "host-side-effect"),
    ("non-cuda", "host-side-effect"),
    ("has been overwritten by a subsequent run", "kept-output"),
    ("still require backward", "kept-output"),
    ("re-recording limit", "dynamic-shape"),
)
# (pattern, kind) for graph breaks and recompile reasons.
BREAK_RULES: tuple[tuple[str, str | None], ...] = (
    ("data-dependent branching", "data-dependent-control-flow"),
    ("dynamic control flow", "data-dependent-control-flow"),
    ("generic_jump", "data-dependent-control-flow"),
    ("tensor.item()", "hidden-sync"),
    ("item()", "hidden-sync"),
    ("tolist", "hidden-sync"),
    ("_local_scalar_dense", "hidden-sync"),
    ("data-dependent", "hidden-sync"),
    ("dynamic output shape", "hidden-sync"),
    ("nonzero", "hidden-sync"),
    ("synchronize", "hidden-sync"),
    ("builtin operator `print`", "host-side-effect"),
    ("print", "host-side-effect"),
    ("logging", "host-side-effect"),
    ("logger", "host-side-effect"),
    ("numpy.random", "rng-state"),
    ("random.", "rng-state"),
    ("size mismatch", "dynamic-shape"),
    ("stride mismatch", "dynamic-shape"),
    ("dimensionality", "dynamic-shape"),
    ("data_ptr", "reallocated-input"),
    ("stream", "unjoined-stream"),
)
# Frames inside torch or launchprof are not the user's line.
_NOT_USER = re.compile(r"[\\/](site-packages|dist-packages)[\\/]|[\\/]torch[\\/]_|[\\/]launchprof[\\/](worker|analysis)[\\/]")
_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in [^\n]*)?\n([^\n]*)')
_AT = re.compile(r"user code at (.+?):(\d+)\s*$", re.M)
_VALUE_GUARD = re.compile(r"- \d+/\d+: (?:L\[')?([A-Za-z_][\w.\]\['\"]*?)(?:'\])? == ")


def classify(text: str, rules: Iterable[tuple[str, str | None]]) -> str | None:
    low = text.lower()
    for pattern, kind in rules:
        if pattern in low:
            return kind
    return None


def user_frame(text: str) -> tuple[str | None, int | None, str | None]:
    """The innermost quoted frame that is the user's: (file, line, code)."""
    found: tuple[str | None, int | None, str | None] = (None, None, None)
    for m in _FRAME.finditer(text):
        if not _NOT_USER.search(m.group(1)):
            code = m.group(3).strip()
            found = (m.group(1), int(m.group(2)), code.lstrip("- ").strip() or None)
    if found[0] is None:
        at = _AT.search(text)
        if at and not _NOT_USER.search(at.group(1)):
            return at.group(1), int(at.group(2)), None
    return found


def _headline(text: str) -> str:
    """torch's reason in one line: the skip sentence up to its stack, or a graph break's
    specific cause (the line after "Graph Break Reason"/"Encountered ...") and explanation."""
    text = text.replace("Found from :", "Found from:")
    if "Graph Break Reason:" in text:
        text = text.split("Graph Break Reason:", 1)[1]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("Encountered graph break when attempting")]
    if not lines:
        return ""
    head = lines[0].split(" Found from", 1)[0].rstrip(". ")
    explanation = next((ln[len("Explanation:"):].strip() for ln in lines[1:4] if ln.startswith("Explanation:")), "")
    return f"{head}: {explanation}" if explanation else head


def _finding(text: str, rules: Iterable[tuple[str, str | None]], count: int = 1) -> CompileFinding:
    file, line, code = user_frame(text)
    return CompileFinding(kind=classify(text, rules), reason=_headline(text)[:400], file=file, line=line, count=count, code=code)


def is_skip(message: str) -> bool:
    low = message.lower()
    return "skipping cudagraph" in low or "disabling cudagraphs" in low or "distinct sizes" in low


def skip_findings(logs: list[CompileLog], counters: dict[str, dict[str, int]], device: str | None) -> list[CompileFinding]:
    """Every logged cudagraph skip, plus one for the skips torch counted without a message
    (it logs none when the compiled graph has no CUDA work at all: a CPU step)."""
    out: dict[tuple, CompileFinding] = {}
    for rec in logs:
        msg = str(rec.message or "")
        if is_skip(msg):
            f = _finding(msg, SKIP_RULES)
            key = (f.kind, f.reason, f.file, f.line)
            out[key] = CompileFinding(**{**_as_dict(out[key]), "count": out[key].count + 1}) if key in out else f
    findings = list(out.values())
    counted = int((counters.get("inductor") or {}).get("cudagraph_skips") or 0)
    unexplained = counted - sum(f.count for f in findings)
    if unexplained > 0:
        if device == "cpu":
            reason, kind = "cpu device: the compiled graph has no CUDA work (torch counts the skip without logging it)", "host-side-effect"
        else:
            reason, kind = "cudagraphs skipped; torch logged no reason", None
        findings.append(CompileFinding(kind=kind, reason=reason, count=unexplained))
    return findings


def _as_dict(f: CompileFinding) -> dict[str, Any]:
    return {k: getattr(f, k) for k in ("kind", "reason", "file", "line", "count", "code")}


def _recompile_findings(msg: str) -> CompileFinding:
    """A recompile: a changing Python number (a value guard) or a changing shape."""
    value = _VALUE_GUARD.search(msg)
    kind = "frozen-scalar" if value else classify(msg, BREAK_RULES)
    reason_line = next((ln.strip(" -") for ln in msg.splitlines() if re.match(r"\s*- \d+/\d+:", ln)), "")
    reason_line = reason_line.split("#", 1)[0].strip()
    file, line, code = user_frame(msg)
    if file is None:
        m = re.search(r"Recompiling function \S+ in (.+?):(\d+)", msg)
        if m:
            file, line = m.group(1), int(m.group(2))
    return CompileFinding(kind=kind, reason=f"recompiled: {reason_line}" if reason_line else "recompiled", file=file, line=line, code=code)


def break_findings(logs: list[CompileLog], counters: dict[str, dict[str, int]]) -> list[CompileFinding]:
    """Graph breaks (from the ``graph_breaks`` records, counted by torch's counters) and
    recompiles; a counted break no record explained is kept with its reason alone."""
    findings: list[CompileFinding] = []
    counted = dict(counters.get("graph_break") or {})
    for rec in logs:
        msg = str(rec.message or "")
        logger = str(rec.logger or "")
        if logger.endswith("__graph_breaks") and "Graph break" in msg:
            key = next((k for k in counted if k.splitlines()[0].strip() and k.splitlines()[0].strip() in msg), None)
            count = counted.pop(key) if key is not None else 1
            findings.append(_finding(msg, BREAK_RULES, count=count))
        elif logger.endswith("__recompiles") and "Recompiling function" in msg:
            findings.append(_recompile_findings(msg))
    for reason, count in counted.items():
        findings.append(_finding(reason, BREAK_RULES, count=int(count)))
    return _merge_recompiles(findings)


def _merge_recompiles(findings: list[CompileFinding]) -> list[CompileFinding]:
    """One finding per recompiled line and kind (a float that changes every call recompiles
    once per value), counted; the first reason is kept."""
    out: list[CompileFinding] = []
    index: dict[tuple, int] = {}
    for f in findings:
        key = (f.kind, f.file, f.line)
        if not f.reason.startswith("recompiled") or key not in index:
            if f.reason.startswith("recompiled"):
                index[key] = len(out)
            out.append(f)
            continue
        first = out[index[key]]
        out[index[key]] = CompileFinding(**{**_as_dict(first), "count": first.count + f.count})
    return out
