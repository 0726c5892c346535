"""A run -> the Report: ``analyse(run, device_profile)``. Returns data; never prints or plots."""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from launchprof.analysis.anatomy import with_anatomy
from launchprof.analysis.as_used import clone_in_loop_us, payback_as_used, speedup_as_used
from launchprof.analysis.compile import with_compile
from launchprof.analysis.training_steps import with_training
from launchprof.analysis.argument_spread import argument_notes
from launchprof.analysis.concurrency import concurrency_notes
from launchprof.common.capture_causes import cause_of
from launchprof.analysis.derived_profile import derivable, from_graph, host_before_replay_us
from launchprof.analysis.notes import eager_trace_lost, extra_nodes, figures_from_graph, memory_for_no_gain, no_eager_kernels_note, timings_disagree
from launchprof.analysis.prediction import host_speed_note, predicted
from launchprof.analysis.profiles import calibration_note, eager_profile, replay_profile, validation_of
from launchprof.analysis.runinfo import in_loop_short_note, run_info, script_failed, stopped_note
from launchprof.analysis.failure import with_failure_advice
from launchprof.analysis.whole import whole_script
from launchprof.analysis.host_range import host_variation
from launchprof.analysis.timing import breakeven, eager_samples, replay_samples, speedup, stopped_early_notes
from launchprof.analysis.bucket_advice import bucket_plan
from launchprof.crossover.profile import DeviceProfile
from launchprof.model.findings import Note, NoteCode, note
from launchprof.enums import Severity
from launchprof.errors import UsageError
from launchprof.run.evidence import Evidence, machine_of, parse_events
from launchprof.hazards.rules import find_hazards
from launchprof.hazards.outputs import output_costs
from launchprof.render.words.notes_text import note_texts
from launchprof.run.file import Run
from launchprof.model.core import SCHEMA_VERSION, Report
from launchprof.model.step_timing import EagerProfile, KernelSpan, ReplayProfile, Timeline, derived
from launchprof.analysis.snippet import capture_snippet
from launchprof.common.source import use_sources
from launchprof.analysis.verdict import RunFacts, decide
from launchprof.version import __version__
from launchprof.worker.config import WorkerConfig, plan_size

if TYPE_CHECKING:  # the trace tables (pandas) load with the first trace read: a run without traces never needs them
    from launchprof.common.trace_tables import CallProfile

TraceSource = Callable[[str], "dict[str, Any] | None"]


def eager_calls(traces: TraceSource) -> tuple[list[CallProfile], list[dict[str, Any]]]:
    trace = traces("eager") or traces("whole-script")
    if trace is None:
        return [], []
    from launchprof.common.trace_tables import CallProfile, gpu_table, launch_api_table, per_call, timeline_of

    gpu = gpu_table(trace)
    calls = per_call(gpu, launch_api_table(trace))
    if not calls and gpu.empty:  # traced, and the GPU did nothing: the target runs no CUDA work
        calls = [CallProfile(0, 0, 0.0, 0.0, [], [], [], [], 0.0)]
    return calls, timeline_of(gpu, 0)


def eager_figures(
    ev: Evidence, calls: list[CallProfile], replay: ReplayProfile | None, profile: DeviceProfile | None,
) -> tuple[EagerProfile | None, list[Note], bool]:
    """The eager profile, from the trace or, for a captured step recorded without one, from
    the graph and the CUDA events (analysis.derived_profile); the notes its figures call for;
    and whether the step runs no CUDA work at all."""
    eager = eager_profile(ev, calls)
    notes: list[Note] = []
    if eager is not None and replay is not None and derivable(calls, replay):
        eager = from_graph(eager, replay, host_before_replay_us(ev, profile))
        notes.append(figures_from_graph(ev))
    cpu_only_step = False
    if ev.target is not None and eager is not None and eager.kernels_per_step == 0:
        said_lost = "eager" in ev.lost_traces and not derived(eager)  # a graph's count is no trace's
        notes.append(no_eager_kernels_note(eager, replay, said_lost))
        if eager_trace_lost(eager, replay, said_lost):  # counts from a lost trace are unknown, not zero
            eager = dataclasses.replace(eager, kernels_per_step=None, memcpys_per_step=None)
        else:
            cpu_only_step = not (replay and replay.graph_nodes)
    return eager, notes, cpu_only_step


def build_report(
    ev: Evidence, script: str, target: str | None, worker: dict[str, Any], repeat: int,
    profile: DeviceProfile | None = None, traces: TraceSource | None = None,
) -> Report:
    traces = traces or (lambda what: None)
    calls, eager_tl = eager_calls(traces)
    ev = ev.with_sequences([c.sequence for c in calls])
    replay, validation = replay_profile(ev), validation_of(ev)
    replay = with_anatomy(replay, ev.anatomy, traces("replay"))
    eager, eager_notes, cpu_only_step = eager_figures(ev, calls, replay, profile)
    variation = host_variation(ev, eager, replay.step_us.median if replay and replay.step_us else None, profile)
    ratio = speedup(eager_samples(ev), replay_samples(ev), variation) if replay else None
    captured = None if ev.capture is None else ev.capture.ok
    notes = list(ev.notes) + stopped_early_notes(ev) + argument_notes(ev) + eager_notes
    info = run_info(ev, worker, plan_size(WorkerConfig(script, [], target, "", "", repeat=repeat)))
    failed = info.cause is not None and script_failed(ev, worker)
    outputs, hazards = output_costs(ev), find_hazards(ev)
    clone_us = clone_in_loop_us(outputs, ev.host_eager_op_us) if ratio else None
    as_used = None
    if clone_us is not None and replay and replay.step_us:
        used_variation = host_variation(ev, eager, replay.step_us.median + clone_us, profile)
        as_used = speedup_as_used(eager_samples(ev), replay_samples(ev), clone_us, used_variation)
    pay = used_pay = None
    if replay and eager and eager.step_us and replay.step_us and eager.timing == replay.timing:
        pay = breakeven(replay.setup_us, eager.step_us.median, replay.step_us.median)
        used_pay = payback_as_used(replay.setup_us, eager.step_us.median, replay.step_us.median, clone_us)
    errors = tuple(sorted({h.kind for h in hazards if h.severity == Severity.ERROR}))
    verdict = decide(RunFacts(ev.target is not None, captured, validation, as_used or ratio, cpu_only_step, failed, errors, used_pay))
    prediction = predicted(ev, eager, profile, calls)  # structured: renderers show its explanation
    if profile is None and eager is not None and eager.step_us is not None:
        notes.append(note(NoteCode.NO_DEVICE_PROFILE))
    for found in (stopped_note(ev), in_loop_short_note(ev), calibration_note(ev), host_speed_note(ev, profile), memory_for_no_gain(replay, ratio),
                  extra_nodes(eager, replay), timings_disagree(eager, replay)):
        if found:
            notes.append(found)
    kept_graph = ev.capture is not None and not ev.capture.ok and cause_of(ev.capture, ev.probe)[0] == "kept-autograd-graph"
    eager_median = eager.step_us.median if eager is not None and eager.step_us is not None else None
    busy = eager.gpu_busy_us if eager is not None else None
    notes += concurrency_notes(replay.anatomy if replay else None, ev.race_check, [k["dur_us"] for k in eager_tl], kept_graph, eager_median, busy)
    timeline = None
    if eager_tl:
        from launchprof.common.trace_tables import gpu_table, timeline_of

        replay_trace = traces("replay")
        replay_tl = timeline_of(gpu_table(replay_trace), 0) if replay_trace else []
        timeline = Timeline(eager=[KernelSpan(**k) for k in eager_tl], replay=[KernelSpan(**k) for k in replay_tl])
    return Report(
        schema_version=SCHEMA_VERSION,
        launchprof_version=__version__,
        created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        machine=ev.machine or machine_of(None),
        script=script,
        target=target or (ev.target.name if ev.target else None),
        verdict=verdict,
        eager=eager,
        replay=replay,
        speedup=ratio,
        breakeven_replays=pay,
        predicted_speedup=prediction.median if prediction else None,
        validation=validation,
        hazards=hazards,
        buckets=bucket_plan(ev),
        run=info,
        notes=note_texts(notes),
        findings=notes,
        timeline=timeline,
        prediction=prediction,
        outputs=outputs,
        capture_snippet=capture_snippet(ev.target, ev.calls) if verdict == "graphs-help" else None,
        speedup_as_used=as_used,
        breakeven_replays_as_used=used_pay if as_used else None,
    )


def analyse(run: Run, profile: DeviceProfile | None = None) -> Report:
    """The one path from a measurement to a report: ``analyze``, ``report`` and ``compare``
    all come here, so a newer launchprof re-analyses an old run with its own rules."""
    h = run.header
    try:
        ev = parse_events(run.events)
    except ValueError as exc:
        raise UsageError(f"malformed run events: {exc}") from None
    if h.machine is not None and not ev.machine:
        ev = dataclasses.replace(ev, machine=h.machine)
    with use_sources(run.sources):
        report = build_report(ev, h.script, h.target, dataclasses.asdict(h.worker), h.repeat, profile, run.trace)
    created = h.created or report.created
    report = whole_script(report, ev, h.project_root)
    report = with_failure_advice(report, ev, h.script, list(h.argv or []))
    report = with_compile(report, ev, h.project_root)
    report = with_training(report, ev)
    return dataclasses.replace(
        report, created=created, project_root=h.project_root, run_file=str(run.path) if run.path else None
    )
