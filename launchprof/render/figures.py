"""Each figure of a report defined once, in words, for every format.

The console, Markdown, HTML and JUnit renderers all take their sentences and rows from
here, so a figure reads the same everywhere: the GPU idle share in the headline is the
one in the table, the max |diff| of a replay mismatch is the validation row's, and the
payback says what it counts. Reports from before the typed models lack some fields
(``prediction``, ``replay.setup_us``, ...): every optional field is read with
:func:`get`, so old and new reports both render.
"""

from __future__ import annotations

from typing import Any

from launchprof.enums import Severity, Verdict
from launchprof.model.hazard_codes import HazardCode
from launchprof.crossover.replay_model import RNG_PROLOGUE_FILLS
from launchprof.render import headline_text as headline
from launchprof.render.words import format as fmt
from launchprof.render.words.hazard_hints import HINTS
from launchprof.render.words.hazard_text import without_diff
from launchprof.render.words.fix_text import fix_sentence
from launchprof.render.words.verify_text import FAILED, fix_state
from launchprof.render.paths import location, report_root, sorted_hazards
from launchprof.render.words.prediction_text import basis_of, explanation_of
from launchprof.render.words.training_text import once_fixed, verdict_clause

__all__ = ["get", "location", "report_root", "sorted_hazards", "verdict_sentence"]


def get(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]``, None when absent: old reports lack the newer fields."""
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def verdict(report: Any) -> Verdict | None:
    try:
        return Verdict(report.verdict)
    except ValueError:
        return None


def severity(value: str) -> Severity | None:
    try:
        return Severity(value)
    except ValueError:
        return None


def no_measurable_gain(report: Any) -> bool:
    """The headline speedup's interval includes 1.0 (``Report.no_measurable_gain`` reads
    ``speedup``; the headline reads ``speedup_as_used`` where there is one)."""
    if get(report, "speedup_as_used") is not None:
        return headline.headline_gain_unmeasurable(report)
    return bool(get(report, "no_measurable_gain"))


def verdict_label(report: Any) -> str:
    """The verdict in words: a marginal speedup whose interval includes 1.0 is no measurable
    gain; graphs that help only once padding is made safe say so."""
    v = verdict(report)
    if v is Verdict.MARGINAL and no_measurable_gain(report):
        return "no measurable gain (marginal)"
    if v is Verdict.GRAPHS_HELP and headline.unsafe_padding(report):
        return "CUDA graphs help once padding is safe"
    if v is Verdict.SCRIPT_FAILED and interrupted(report):
        return "interrupted before a verdict"
    return v.label if v else report.verdict


def interrupted(report: Any) -> bool:
    """The run was stopped by the user (Ctrl-C, SIGTERM), not failed by the script."""
    return report.run is not None and report.run.interrupted


def speedup_text(report: Any) -> str:
    """The measured speedup with its interval and, when known, how the interval is computed."""
    sp = report.speedup
    if sp is None:
        return fmt.NA
    text = fmt.speedup(sp.median, sp.low, sp.high)
    method = get(sp, "method")
    text += once_fixed(report, "speedup")
    return f"{text}, {method}" if method else text


def _old_setup(replay: Any) -> bool:
    """A replay recorded before set-up was timed as a whole (capture and instantiate only)."""
    return replay is not None and get(replay, "setup_us") is None


def payback(report: Any) -> tuple[float | None, str]:
    """(replays to pay back, what they pay back): the report's own ``breakeven_replays``.

    Reports with ``replay.setup_us`` counted capture + warm-up + instantiate; older reports
    with a replay but no ``setup_us`` counted instantiation alone, and are labelled so. A
    report with no replay (not capturable) says what a payback would count.
    """
    basis = "instantiation" if _old_setup(report.replay) else "capture + warm-up + instantiate"
    return report.breakeven_replays, basis


def payback_text(report: Any) -> str | None:
    """The payback in words; where the user's code needs output clones, with them
    (``breakeven_replays_as_used``), as the headline's speedup is."""
    if report.replay is None or report.speedup is None:
        return None
    count, basis = payback(report)
    if get(report, "speedup_as_used") is not None:
        count, basis = get(report, "breakeven_replays_as_used"), basis + " with the output clone"
    if count is None:
        return f"never pays back {basis} (replay is no faster)"
    return f"pays back {basis} after {fmt.replays(count)} replays" + once_fixed(report, "breakeven_replays")


def prediction(report: Any) -> dict[str, Any] | None:
    """The prediction as plain values: structured when recorded, else the old median alone."""
    pred = get(report, "prediction")
    if pred is not None and get(pred, "median") is not None:
        keys = ("median", "low", "high", "basis", "replay_step_us", "explanation")
        out = {k: get(pred, k) for k in keys}
        out["explanation"] = explanation_of(get(pred, "explanation_finding"), out["explanation"])
        out["basis"] = basis_of(get(pred, "basis_findings"), out["basis"])
        return out
    if report.predicted_speedup is not None:
        return {"median": report.predicted_speedup, "low": None, "high": None, "basis": None, "replay_step_us": None, "explanation": None}
    return None


def prediction_text(report: Any) -> str | None:
    """"fix the hazards and expect about 3.10× (2.80–3.40×)" for not-capturable, else "predicted …"."""
    p = prediction(report)
    if p is None:
        return None
    value = fmt.ratio(p["median"]) + (f" ({fmt.interval(p['low'], p['high'])})" if p["low"] is not None and p["high"] is not None else "")
    if report.verdict == Verdict.NOT_CAPTURABLE:
        return f"fix the hazards and expect about {value}"
    return f"predicted {value}"


def basis_text(report: Any) -> str | None:
    """What the prediction was computed from, on one line."""
    p = prediction(report)
    basis = p and p["basis"]
    if not basis:
        return None
    if isinstance(basis, dict):
        return "; ".join(f"{k}: {v}" for k, v in basis.items())
    return " ".join(str(basis).split())


def eager_basis(report: Any, field: str) -> str:
    """How the report obtained an eager figure: "profiled" (a report without the map too),
    "graph-nodes" or "events" (model.step_timing.basis_of)."""
    return (get(report.eager, "basis") or {}).get(field, "profiled")


def counted_from_graph(report: Any) -> bool:
    """The eager kernel count is the captured graph's kernel nodes, not a traced count."""
    return eager_basis(report, "kernels_per_step") != "profiled"


def gpu_idle_text(report: Any) -> str | None:
    idle = report.eager and report.eager.gpu_idle_fraction
    if idle is None:
        return None
    if eager_basis(report, "gpu_idle_fraction") == "events":
        return f"GPU idle {fmt.percent(idle)} of the eager step (from CUDA events)"
    return f"GPU idle {fmt.percent(idle)} of the profiled eager step"


def kernels_text(report: Any) -> str | None:
    """Kernels per step, or in the whole run when there is no step (whole-script mode)."""
    kernels = report.eager.kernels_per_step if report.eager else None
    if kernels is None:
        return None
    if report.mode == "analyze" and report.target is None:
        return f"{kernels} kernels in the whole run (no target: no step to count per)"
    if counted_from_graph(report):
        return f"{kernels} kernels per replay (the captured graph's kernel nodes)"
    return f"{kernels} kernels per eager step"


def nodes_text(report: Any) -> str:
    """Graph nodes, with the ones eager does not launch named (memsets, memcpys, RNG prologue)."""
    replay = report.replay
    nodes = replay and replay.graph_nodes
    if nodes is None:
        return fmt.NA
    types = dict(get(replay, "node_types") or {})
    kernels = report.eager and report.eager.kernels_per_step
    if not types or kernels is None:
        return fmt.count(nodes)
    if counted_from_graph(report):  # no eager trace to set the graph's kernels against
        parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(types.items()) if n]
        return f"{fmt.count(nodes)} ({' + '.join(parts)})" if len(parts) > 1 else fmt.count(nodes)
    extra = []
    surplus = types.pop("kernel", 0) - kernels
    if surplus > 0:
        # The RNG prologue is named only where the prediction counted it (the step draws from
        # the CUDA generator); other graph-only kernels are said to be just that.
        why = f"RNG prologue: {RNG_PROLOGUE_FILLS} fills per generator" if _rng_fills(report) else "not in the eager trace"
        extra.append(f"{surplus} extra kernel{'s' if surplus != 1 else ''} ({why})")
    extra += [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in sorted(types.items()) if n]
    if not extra:
        return f"{fmt.count(nodes)} (one per eager kernel)"
    return f"{fmt.count(nodes)} ({fmt.count(min(kernels, nodes))} kernels as in eager + {' + '.join(extra)})"


def _rng_fills(report: Any) -> int:
    """The RNG prologue's fills the prediction added (its explanation's params); 0 when none."""
    prediction = get(report, "prediction")
    finding = get(prediction, "explanation_finding") if prediction is not None else None
    params = get(finding, "params") if finding is not None else None
    return int((params or {}).get("rng_fills") or 0)


def validation_text(report: Any) -> str:
    val = report.validation
    if val is None:
        return fmt.NA
    if val.matches == val.calls_compared:
        text = f"{val.matches}/{val.calls_compared} calls match"
    else:
        text = f"{val.calls_compared - val.matches} of {val.calls_compared} calls differ"
    if val.max_abs_diff is not None:
        text += f" (max |diff| {fmt.diff(val.max_abs_diff)})"
    return text


def hazard_message(hazard: Any, report: Any) -> str:
    """The hazard's message; a max |diff| it names is the validation row's, not a second figure."""
    val = report.validation
    if val is None or val.max_abs_diff is None:
        return hazard.message
    if hazard.code == HazardCode.TEXT:  # from a report written before codes (run.migrate)
        base = hazard.params.get("without_diff")
        if not isinstance(base, str):
            return hazard.message
    else:
        try:
            base = without_diff(hazard.code, hazard.params)
        except (KeyError, TypeError, ValueError):
            base = None
        if base is None:
            return hazard.message
    return f"{base}; max |diff| {fmt.diff(val.max_abs_diff)} over the {val.calls_compared} compared calls"


def hazard_count(hazards: list[Any]) -> str:
    """"1 hazard", "36 hazards"."""
    return f"{len(hazards)} hazard{'s' if len(hazards) != 1 else ''}"


def severity_counts(hazards: list[Any]) -> str:
    """"11 errors, 3 warnings, 22 info": every severity, errors first, zeros included, so
    that a reader of a CI log sees at once what ``--fail-on error`` or ``warning`` meets."""
    parts = []
    for sev in sorted(Severity, key=lambda s: s.rank):
        n = sum(1 for h in hazards if h.severity == sev)
        parts.append(f"{n} {sev.value}{'s' if n != 1 and sev is not Severity.INFO else ''}")
    return ", ".join(parts)


def no_hazards(report: Any) -> str:
    """An analyze report without hazards: a run that stopped early ran only some checks."""
    if report.run is not None and not report.run.complete:
        return "No hazards found in what ran before the run stopped; the checks after that point did not run."
    return "No hazards found."


def hazard_summary(hazards: list[Any]) -> str:
    """One line that closes a lint report: the counts by severity, or that it found nothing."""
    if not hazards:
        return "No hazards found."
    return f"{hazard_count(hazards)}: {severity_counts(hazards)}"


def memory_for_no_gain(report: Any) -> str | None:
    """When replay is no faster, the GPU memory the graph would hold for nothing."""
    replay = report.replay
    if replay is None or replay.pool_bytes is None or report.speedup is None:
        return None
    if verdict(report) not in (Verdict.MARGINAL, Verdict.GRAPHS_DONT_HELP):
        return None  # not capturable: the graph would not be kept at all
    if report.speedup.median > 1.0 and not no_measurable_gain(report):
        return None
    text = f"the graph holds {fmt.size(replay.pool_bytes)} of GPU memory for no measurable gain"
    workspace = get(replay, "workspace_bytes")
    return text + (f" (plus {fmt.size(workspace)} of one-time library workspace)" if workspace else "")


def verdict_sentence(report: Any) -> str:
    """One plain sentence that says what the verdict means for this workload, and the fix
    its figures assume when launchprof had to make one to measure them."""
    return _verdict_sentence(report) + verdict_clause(report)


def _verdict_sentence(report: Any) -> str:
    v = verdict(report)
    measured = headline.measured_clause(report)
    errors = sum(h.severity == "error" for h in report.hazards)
    if v is Verdict.GRAPHS_HELP:
        padding = headline.padding_first(report)
        plan = headline.plan_line(report)
        rest = "".join(f"; {x}" for x in (plan, padding) if x)
        return f"{verdict_label(report)}: {measured}{rest}."
    if v is Verdict.MARGINAL:
        reason = headline.marginal_reason(report)
        head = "No measurable gain" if no_measurable_gain(report) else "No clear gain"
        return f"{head}: {measured}{'; ' + reason if reason else ''}."
    if v is Verdict.GRAPHS_DONT_HELP:
        return f"CUDA graphs do not help here: {measured.replace(' as fast', ' of eager speed')}."
    if v is Verdict.REPLAY_INVALID:
        once = f"; once fixed, {measured}" if report.speedup is not None else ""
        return f"The graph captures, but its replay differs from eager ({headline.invalid_reason(report)}){once}."
    if v is Verdict.NOT_CAPTURABLE:
        expect = prediction_text(report)
        return f"The target cannot run as a CUDA graph: {errors} error hazard(s){'; ' + expect if expect else ''}."
    if v is Verdict.SCRIPT_FAILED and interrupted(report):
        return "Interrupted before a verdict could be reached; what was measured is kept."
    if v is Verdict.SCRIPT_FAILED:
        cause = report.run.cause if report.run and report.run.cause else "see the run's cause"
        return f"The script failed before a verdict could be reached ({cause}); what was measured is kept."
    if v is Verdict.EAGER_ONLY and report.target:
        stopped = report.run is not None and not report.run.complete
        return f"Eager profile only: {report.target} was not captured{' (the run stopped first)' if stopped else ''}."
    if v is Verdict.EAGER_ONLY:
        return "Eager profile only: no target was captured (name one with --target or @launchprof.target)."
    if v is Verdict.STATIC_ONLY:
        if not report.hazards:
            return "Static check only (no GPU run): no hazards found in the source."
        return f"Static check only (no GPU run): {hazard_count(report.hazards)} in the source ({severity_counts(report.hazards)})."
    return f"Verdict: {report.verdict}."


def verdict_headline(report: Any) -> tuple[str, str]:
    """(label, sentence) for a headline that shows both: a sentence that opens with the label
    ("CUDA graphs help: replay is ...") loses that opening, so the words are said once."""
    label, sentence = verdict_label(report), verdict_sentence(report)
    if sentence.startswith(label + ": "):
        sentence = sentence[len(label) + 2 :]
    return label, sentence


def detail_lines(report: Any, explain: bool = True) -> list[str]:
    """Sentences under the numbers table, one line each: what the prediction is based on and
    why it says what it says (with ``explain``), and the memory a graph holds for no gain."""
    lines: list[str | None] = []
    basis = basis_text(report) if explain else None
    if basis:
        lines.append(f"prediction basis: {basis}")
    p = prediction(report) if explain else None
    if p and p["explanation"]:
        lines.append(str(p["explanation"]))
    lines.append(memory_for_no_gain(report))
    return [line[0].upper() + line[1:] + ("" if line.endswith(".") else ".") for line in lines if line]


def machine_line(report: Any, full: bool = True) -> str:
    """The machine the run was recorded on; without ``full``, its GPU and torch only."""
    m = report.machine
    if not full:
        parts = [m.gpu or "no GPU", f"torch {m.torch}" if m.torch else None]
        return ", ".join(p for p in parts if p) + f" · launchprof {report.launchprof_version} · {report.created}"
    parts = [m.gpu or "no GPU", f"driver {m.driver}" if m.driver else None, f"CUDA {m.cuda}" if m.cuda else None]
    parts += [f"torch {m.torch}" if m.torch else None, f"Python {m.python}"]
    cpu, cores, load = get(m, "cpu_model"), get(m, "cpu_cores"), get(m, "load_avg")
    if cpu or cores:
        parts.append(f"CPU {cpu or '?'}" + (f" ({cores} cores)" if cores else ""))
    if load:
        parts.append("load " + (" ".join(f"{x:.2f}" for x in load) if isinstance(load, (list, tuple)) else str(load)))
    if get(m, "gpu_other_processes"):
        parts.append("other processes on the GPU")
    return ", ".join(p for p in parts if p) + f" · launchprof {report.launchprof_version} · {report.created}"


# --- fixes: one text for every format -------------------------------------------------------


def fix_of(hazard: Any) -> Any:
    return getattr(hazard, "fix", None)


def fix_where(hazard: Any, root: Any) -> str | None:
    """``file:line`` of the fix's line when it is not the hazard's own (a rebinding line)."""
    fix = fix_of(hazard)
    if fix is None or not fix.line or (fix.file == hazard.file and fix.line == hazard.line):
        return None
    from launchprof.render.paths import relative

    return f"{relative(fix.file, root) if fix.file else '?'}:{fix.line}"


def same_fix_as(hazards: list[Any], root: Any) -> dict[int, str]:
    """Hazards whose written fix repeats an earlier one's: index -> that hazard's location, so
    the fix is printed once (two findings on one line share it)."""
    first: dict[tuple[str, str, str], str] = {}
    out: dict[int, str] = {}
    for i, h in enumerate(hazards):
        fix = fix_of(h)
        if fix is None or not fix.after or fix_state(fix) == FAILED:  # a failed fix is not one to repeat
            continue
        key = (fix.before, fix.after, fix_sentence(fix))
        if key in first:
            out[i] = first[key]
        else:
            first[key] = location(h, root) or h.kind
    return out


def shared_hints(hazards: list[Any], root: Any) -> list[tuple[str, list[str], str]]:
    """Each kind's general rule once, with every location it applies to: (kind, locations,
    hint). What a line adds to the rule (lint's "Here: ...") follows it once per distinct
    addition, after the lines it is for; on a whole codebase the rule would otherwise be
    printed again for every such line."""
    groups: dict[tuple[str, str], tuple[list[str], dict[str, list[str]]]] = {}
    for h in hazards:
        general = HINTS.get(h.kind, "")
        own = h.hint[len(general) :].strip() if general and h.hint.startswith(general) else ""
        locs, added = groups.setdefault((h.kind, general if own or h.hint == general else h.hint), ([], {}))
        loc = location(h, root)
        if loc and loc not in locs:
            locs.append(loc)
        if own:
            at = added.setdefault(own, [])
            if loc and loc not in at:
                at.append(loc)
    out = []
    for (kind, rule), (locs, added) in groups.items():
        if len(added) == 1 and list(added.values())[0] == locs:  # every line adds the same: one sentence
            rule += " " + next(iter(added))
        else:
            rule += "".join(f" At {', '.join(at) or 'these lines'}: {_here_stripped(own)}" for own, at in added.items())
        out.append((kind, locs, rule))
    return out


def _here_stripped(own: str) -> str:
    """A line's addition after its location: "Here: do X" reads "At f.py:3: do X"."""
    return own[len("Here:") :].strip() if own.startswith("Here:") else own
