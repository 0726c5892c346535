"""The sentence of each note code (launchprof.model.findings), with its figures written by the one
formatter. Every format takes a report's notes from :func:`report_notes`, so a note reads
the same in the terminal, Markdown, HTML and the JSON's ``notes`` strings.

A code this launchprof does not know (a report from a newer one), or params it cannot
read, keep the sentence the report was written with.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from launchprof.model.findings import BucketsUnmeasurable, FiguresWhy, HostSpeedMissing, LostWhy, Note, NoteCode, RestoredAfter, UncoveredWhy
from launchprof.render.words.concurrency_text import STREAM_SENTENCES
from launchprof.render.words.format import duration, memory_text, number, percent, seconds, significant, size

Params = dict[str, Any]
SENTENCES: dict[str, Callable[[Params], str]] = {}


def sentence(code: NoteCode) -> Callable[[Callable[[Params], str]], Callable[[Params], str]]:
    def register(write: Callable[[Params], str]) -> Callable[[Params], str]:
        SENTENCES[code.value] = write
        return write

    return register


def note_text(record: Note, stored: str | None = None) -> str:
    """The note's sentence; ``stored`` (the sentence the report was written with) where this
    launchprof cannot write one."""
    write = SENTENCES.get(record.code)
    if write is not None:
        try:
            return write(record.params)
        except (KeyError, TypeError, ValueError):
            pass
    return stored if stored is not None else str(record.params.get("text", record.code))


def note_texts(records: Iterable[Note]) -> list[str]:
    return [note_text(r) for r in records]


def report_notes(report: Any, everything: bool = True) -> list[str]:
    """The notes of a report (or of its bucket plan) as sentences; without ``everything``,
    only the actionable ones (``Note.actionable``: the terminal's and Markdown's default
    view). One without a record for each of its strings (written before notes had codes)
    shows its strings as written."""
    stored = list(report.notes)
    records = list(getattr(report, "findings", None) or [])
    if len(records) != len(stored):
        return stored
    return [note_text(r, s) for r, s in zip(records, stored) if everything or r.actionable]


def _names(names: Sequence[Any]) -> str:
    return "; ".join(str(n) for n in names)


@sentence(NoteCode.TEXT)
def _text(p: Params) -> str:
    return str(p["text"])


# --- timing --------------------------------------------------------------------------------


def kind_words(kind: str) -> str:
    """A burst kind as a note says it: ``compile-no-cudagraphs@3`` is the third compile of
    torch.compile without graphs (worker/compile_compare.py names the rounds)."""
    name, _, round_no = kind.partition("@")
    words = {"compile": "torch.compile", "compile-no-cudagraphs": "torch.compile (no graphs)"}.get(name, name)
    return f"{words}, compile {round_no}," if round_no else words


@sentence(NoteCode.STOPPED_EARLY)
def _stopped_early(p: Params) -> str:
    why = f": {p['why']}" if p.get("why") else ""
    return f"{kind_words(str(p['kind']))} timing stopped early after {p['samples']} samples in {seconds(p['seconds'])}{why}; its interval is wider"


@sentence(NoteCode.ARGUMENT_SPREAD)
def _argument_spread(p: Params) -> str:
    medians = p["set_medians_us"]
    each = ", ".join(number(m, 1) for m in medians)
    return (
        f"the eager step's time differs between the {len(medians)} recorded calls it was timed on: "
        f"{each} µs (median of each, {number(p['ratio'], 1)}x apart; Kruskal-Wallis p={significant(p['p_value'])}). "
        f"The eager median, {duration(p['mixed_us'])}, mixes them: a loop on one call's arguments times one path only. "
        "The step takes different paths on different calls: a branch on an argument's value, or on a count "
        "of calls (the sets are timed in turn, so the two look alike)"
    )


@sentence(NoteCode.TIMINGS_DISAGREE)
def _timings_disagree(p: Params) -> str:
    pairs = [
        f"{side} {duration(p[side + '_loop_us'])} in the script's loop, {duration(p[side + '_burst_us'])} in the bursts"
        for side in ("eager", "replay")
        if p.get(side + "_loop_us") is not None and p.get(side + "_burst_us") is not None
    ]
    return (
        f"the step's in-loop timings differ from the burst timings the report uses, by up to {number(p['ratio'], 1)}x "
        f"({'; '.join(pairs)}). The in-loop figures time the calls your script made, one at a time between two device "
        "syncs with CUDA events around each, right after the loop's own work (CPU caches, GPU clocks and the allocator as "
        "the script left them); the bursts call the step back to back on recorded arguments with nothing in between, so "
        "they time the step itself"
    )


@sentence(NoteCode.STOPPED_WHEN_MEASURED)
def _stopped_when_measured(p: Params) -> str:
    calls = int(p["calls"])
    return f"the measurement was complete: the script was stopped after {calls} call{'' if calls == 1 else 's'} of the target (`--run-to-end` lets it finish)"


@sentence(NoteCode.IN_LOOP_SHORT)
def _in_loop_short(p: Params) -> str:
    return (
        f"the replays inside the script's loop matched too few calls to be timed there ({p['replays_timed']} timed "
        f"in {p['calls']} calls); the timing bursts after them measured eager and replay"
    )


# --- the eager trace -------------------------------------------------------------------------

_COUNTS_MISSING = "so the kernel counts and the prediction are missing; the timings stand"


@sentence(NoteCode.EAGER_TRACE_LOST)
def _trace_lost(p: Params) -> str:
    return (
        f"the eager profile recorded no kernels, yet the captured graph holds {p['graph_nodes']} nodes: the profiler lost "
        f"the eager trace (an earlier torch.profiler session in this process can do this), {_COUNTS_MISSING}"
    )


@sentence(NoteCode.NO_GPU_ACTIVITY)
def _no_gpu_activity(p: Params) -> str:
    return (
        "the eager profile recorded no GPU activity, and the script stopped calling the target before it could be "
        "profiled again: either the step runs no CUDA work or the profiler lost the trace (an earlier torch.profiler "
        f"session in this process can do this), {_COUNTS_MISSING}"
    )


@sentence(NoteCode.COPIES_ONLY)
def _copies_only(p: Params) -> str:
    return "the target launches no CUDA kernel, only copies: a CUDA graph replays the copies alone"


@sentence(NoteCode.NO_CUDA_WORK)
def _no_cuda_work(p: Params) -> str:
    return "the target launches no CUDA work (CPU tensors only): a CUDA graph has nothing to replay"


@sentence(NoteCode.EXTRA_GRAPH_NODES)
def _extra_nodes(p: Params) -> str:
    named = ", ".join(f"{n} {t}" for t, n in zip(p["node_types"], p["node_counts"]))
    if p.get("kernels_from_graph"):
        return f"the graph has {p['graph_nodes']} nodes, {p['eager_kernels']} of them kernels; the others: {named}"
    return f"the graph has {p['graph_nodes']} nodes for {p['eager_kernels']} eager kernels; the others: {named}"


FIGURES_WHY = {
    FiguresWhy.NOT_NEEDED: "the step captured, so launchprof ran no profiler session",
    FiguresWhy.TRACE_MISSING: "the profiler session{reason} left no eager trace",
    FiguresWhy.NO_TRACE: "the run holds no eager trace",
}


@sentence(NoteCode.FIGURES_FROM_GRAPH)
def _figures_from_graph(p: Params) -> str:
    why = FIGURES_WHY[FiguresWhy(p["why"])].format(reason=f" (run for {p['reason']})" if p.get("reason") else "")
    return (
        f"kernels and copies per step are the captured graph's nodes, and GPU busy and idle come from CUDA events around "
        f"the timed replays and eager calls: {why}; per-kernel times, launch calls and the timeline need one "
        "(analyze with --kernels)"
    )


@sentence(NoteCode.MEMORY_FOR_NO_GAIN)
def _memory_for_no_gain(p: Params) -> str:
    return f"replay is not measurably faster, yet the graph holds {size(p['pool_bytes'])} of GPU memory in its pool"


# --- the prediction --------------------------------------------------------------------------


@sentence(NoteCode.NO_DEVICE_PROFILE)
def _no_device_profile(p: Params) -> str:
    return (
        "no prediction: no device profile for this GPU, driver and torch here "
        "(give --profile PROFILE.json from `launchprof crossover` on that GPU)"
    )


@sentence(NoteCode.CALIBRATION_MEASURED)
def _calibration_measured(p: Params) -> str:
    secs = f" in {seconds(p['seconds'])}" if p.get("seconds") is not None else ""
    # Said of the recording: a re-rendered run is read on another machine, whose cache may differ.
    where = f", and cached on the recording machine at {p['path']}" if p.get("path") else ""
    return f"when this run was recorded, no device profile was cached for its GPU, driver and torch: a quick one was measured{secs}{where}"


@sentence(NoteCode.CALIBRATION_SKIPPED)
def _calibration_skipped(p: Params) -> str:
    return "no device profile for this GPU: the quick calibration was skipped (--no-calibrate), so there is no prediction"


@sentence(NoteCode.CALIBRATION_FAILED)
def _calibration_failed(p: Params) -> str:
    return f"the quick device profile could not be measured: {p.get('message') or 'unknown reason'}"


@sentence(NoteCode.HOST_SPEED_FAILED)
def _host_speed_failed(p: Params) -> str:
    return (
        f"the host-speed loop read {number(p['run_op_us'], 2)} µs per eager op in this run against {number(p['profile_op_us'], 2)} µs "
        f"in the device profile, outside {significant(p['low'], 3)}-{significant(p['high'], 3)}x: taken as a failed measurement, "
        "the prediction uses the profile as measured"
    )


@sentence(NoteCode.HOST_SPEED_SCALED)
def _host_speed_scaled(p: Params) -> str:
    scale = p["scale"]
    return (
        f"this host ran {'faster' if scale < 1 else 'slower'} than when the device profile was measured (an eager op "
        f"took {duration(p['run_op_us'])} in this run, {duration(p['profile_op_us'])} in the profile): the prediction scales the profile's "
        f"launch costs by {number(scale, 2)} to this run's host speed; `launchprof crossover` measures a new profile"
    )


# --- script failures -------------------------------------------------------------------------


@sentence(NoteCode.ASYNC_CUDA_ERROR)
def _async_cuda_error(p: Params) -> str:
    where = f"{p['file']}:{p['line']}" if p.get("file") and p.get("line") else "an unknown line"
    return (
        f"asynchronous CUDA error: it surfaced at {where}, where the host waited for the GPU; "
        f"the kernel that faulted was launched earlier. Find its launching line with `{p['command']}` "
        f"(from the project root), or `launchprof analyze {shlex.quote(str(p['script']))} --locate-async`, which does that re-run "
        "(the script's side effects then run twice)"
    )


# --- several ranks ------------------------------------------------------------------------


@sentence(NoteCode.SLOWEST_RANK)
def _slowest_rank(p: Params) -> str:
    sides = [f"{side} from rank {p[side + '_rank']}" for side in ("eager", "replay") if p[side + "_rank"] is not None]
    ranks, finished = p["ranks"], p["finished"]
    among = f"{ranks} ranks" if finished == ranks else f"the {finished} of {ranks} ranks that finished"
    return f"the slowest rank sets the step time: {' and '.join(sides)} ({among}, each timed in step with the others)"


# --- the bucket plan -------------------------------------------------------------------------


@sentence(NoteCode.BUCKETS_NOT_MEASURED)
def _buckets_not_measured(p: Params) -> str:
    return "not measured on the GPU: capture time, replay time, memory and padding safety are unknown"


@sentence(NoteCode.BUCKET_POOL_OVER_LIMIT)
def _bucket_pool_over_limit(p: Params) -> str:
    return (
        f"the measured shared pool ({memory_text(p['shared_pool_bytes'])}) passes --bucket-memory ({memory_text(p['limit_bytes'])}): "
        "capture fewer sizes (--buckets) or allow more memory"
    )


@sentence(NoteCode.BUCKET_CHOICE)
def _bucket_choice(p: Params) -> str:
    if p["source"] == "user":
        why = f"your --buckets list ({p['sizes']} sizes)"
    else:
        why = f"1, 2, 4, 8 then multiples of 8 up to the largest size seen ({p['largest']})"
    line = f"{why}: {p['graphs']} graphs, padding waste {percent(p['padding_waste'])}"
    if p["dropped"]:
        line += (
            f"; sizes {', '.join(map(str, p['dropped']))} dropped to keep the shared pool under {memory_text(p['limit_bytes'])} "
            f"(--bucket-memory): the {p['eager_calls']} observed calls above {p['eager_above']} run eagerly"
        )
    elif p["eager_calls"]:
        line += f"; {p['eager_calls']} observed calls above {p['eager_above']} run eagerly"
    return line


@sentence(NoteCode.PADDING_LEAKS)
def _padding_leaks(p: Params) -> str:
    return (
        "padding leaks into a reduction over the padded dimension: the padded rows change the real rows' "
        "results. Use a mask of the real rows and the true length held in a device tensor (copy_ it in before "
        "each replay): e.g. `valid = torch.arange(h.shape[0], device=h.device) < n` then "
        "`(h * valid[:, None]).sum(0) / n` instead of `h.mean(dim=0)`"
    )


@sentence(NoteCode.BUCKETS_OTHERS_VARY)
def _buckets_others_vary(p: Params) -> str:
    names = ", ".join(f"{a} dim {d}" for a, d in zip(p["arguments"], p["dims"]))
    return f"also varying, not bucketed by this plan: {names} (one graph per distinct shape there)"


# --- lint ------------------------------------------------------------------------------------


def _scanned(p: Params) -> str:
    return f"{p['files']} file(s), {p['lines']} lines, in {seconds(p['seconds'], 2)}"


@sentence(NoteCode.LINT_CHECKED_ALL)
def _lint_checked_all(p: Params) -> str:
    return f"lint checked every function ({p['functions']}) in {_scanned(p)}"


@sentence(NoteCode.LINT_CHECKED_TARGETS)
def _lint_checked_targets(p: Params) -> str:
    return f"lint checked {p['targets']} target(s) and {p['followed']} function(s) they call, in {_scanned(p)}"


@sentence(NoteCode.LINT_NO_TARGET)
def _lint_no_target(p: Params) -> str:
    return f"no target found in {_scanned(p)}: nothing was checked"


@sentence(NoteCode.LINT_FILES_NOT_READ)
def _lint_files_not_read(p: Params) -> str:
    return f"{p['count']} file(s) not read: {_names(p['names'])}"


@sentence(NoteCode.LINT_FOLDERS_NOT_READ)
def _lint_folders_not_read(p: Params) -> str:
    return f"{p['count']} folder(s) not read (the files in them were not checked): {_names(p['names'])}"


@sentence(NoteCode.LINT_CALLS_NOT_FOLLOWED)
def _lint_calls_not_followed(p: Params) -> str:
    more = f" and {p['more']} more" if p.get("more") else ""
    return f"{p['count']} call(s) not followed (a hazard behind them would be missed): {_names(p['names'])}{more}"


@sentence(NoteCode.LINT_SUPPRESSED)
def _lint_suppressed(p: Params) -> str:
    return f"{p['count']} finding(s) suppressed by `# launchprof: ignore` comments"


@sentence(NoteCode.LINT_FUNCTIONS_SKIPPED)
def _lint_functions_skipped(p: Params) -> str:
    return f"{p['count']} function(s) not checked: {_names(p['names'])}"


# --- the worker's own notes ------------------------------------------------------------------

_WORKER: dict[NoteCode, str] = {  # str.format templates over the note's params
    NoteCode.INTERNAL_ERROR: "launchprof internal error (the measurement stopped there): {error}",
    NoteCode.BURSTS_NOT_STARTED: "timing bursts could not start ({error}); the in-loop timings are reported",
    NoteCode.BURSTS_STOPPED: "timing bursts stopped ({error}); the in-loop timings are reported",
    NoteCode.REPROFILED: (
        "launchprof's first profiled calls recorded no GPU activity, so the next calls are profiled again in their place (after a torch.profiler "
        "session earlier in this process, the first one under CUPTI teardown comes back empty)"
    ),
    NoteCode.TRACE_NOT_WRITTEN: "profiler trace could not be written: {error}",
    NoteCode.WHOLE_SCRIPT_PROFILE_LOST: "the whole-script profile was lost: {error}",
    NoteCode.CANDIDATES_NOT_RANKED: "could not rank candidate targets: {error}",
    NoteCode.OUTPUT_WATCH_STOPPED: "the kept-output watch stopped: {error}",
    NoteCode.MEASUREMENT_NOT_CLOSED: "could not close the measurement: {error}",
    NoteCode.STREAM_CHECK_FAILED: "the stream check could not run: {error}",
    NoteCode.FIX_TRIALS_FAILED: "the written fixes could not be tried ({error}); they are shown as suggestions",
    NoteCode.SANITIZER_IMPORTED: (
        "PyTorch's CUDA sanitizer was imported in this process before (a stream check, launchprof.check): its hooks "
        "slow every CUDA op here, so the step times read high; time it in a fresh process"
    ),
    NoteCode.COMPILE_KERNELS_NOT_COUNTED: "compile ({mode}): kernels per call not counted ({error})",
    NoteCode.COMPILE_FRAMES_IN_TIMING: (
        "compile ({mode}): dynamo compiled {frames} frame(s) during the timed calls, after the warm-up; the compiled step time includes compiling"
    ),
    NoteCode.COMPILE_SKIPPED_RANKS: "compile comparison skipped: the step runs on several ranks (torch.distributed)",
    NoteCode.COMPILE_SKIPPED_NO_CALLS: "compile comparison skipped: no recorded calls to run it on",
    NoteCode.COMPILE_STATE_NOT_SAVED: "compile comparison skipped: the user's state could not be saved ({error})",
    NoteCode.BUCKETS_NOT_SET_UP: "bucket plan not measured ({error})",
    NoteCode.BUCKET_MEASUREMENT_STOPPED: "bucket measurement stopped ({error}); what it measured before is reported",
    NoteCode.BUCKETS_SHAPES_SAME: "--buckets: the target's argument shapes did not vary between calls, so there is no bucket plan",
    NoteCode.ASYNC_LOCATED: (
        "the faulting kernel was launched at {file}:{line} (re-run with CUDA_LAUNCH_BLOCKING=1 by --locate-async; "
        "the script's side effects ran twice)"
    ),
    NoteCode.ASYNC_NOT_LOCATED: (
        "--locate-async: the re-run with CUDA_LAUNCH_BLOCKING=1 did not raise the error again, so the launching line is unknown"
    ),
    NoteCode.STOP_NOT_AGREED: "the ranks could not agree where to stop the script ({error}), so it ran to its end",
}
for _code, _template in _WORKER.items():
    SENTENCES[_code.value] = lambda p, template=_template: template.format(**p)

_RESTORED_AFTER = {
    RestoredAfter.BURSTS: "the timing bursts",
    RestoredAfter.COMPILE: "the compile comparison",
    RestoredAfter.BUCKETS: "the bucket measurement",
    RestoredAfter.CAPTURE: "the capture (its warm-up calls and captures)",
    RestoredAfter.VALIDATION: "a validation (its eager call and replay)",
    RestoredAfter.PROFILED_REPLAY: "the profiled replay",
    RestoredAfter.PROFILED_EAGER: "the profiled eager calls (after the measurement plan)",
    RestoredAfter.STREAM_CHECK: "the stream check",
    RestoredAfter.FIX_TRIAL: "a fix's trial (its captures, eager calls and replays)",
}
_LOST_WHY = {
    LostWhy.NOT_CLONED: "changed, not copied beforehand",
    LostWhy.GENERATOR: "a generator, advanced",
    LostWhy.RESTORE_FAILED: "putting it back failed",
}
_UNCOVERED_WHY = {
    UncoveredWhy.OPAQUE: "kept in C",
    UncoveredWhy.GENERATOR: "a generator",
    UncoveredWhy.ITERATOR: "an iterator",
    UncoveredWhy.BUDGET: "past the save's size limits",
    UncoveredWhy.LONG: "too long a container",
}


def _paths(p: Params, words: dict[Any, str], kind: type) -> str:
    listed = [f"{path} ({words[kind(why)]})" for path, why in zip(p["paths"], p["whys"], strict=True)]
    more = int(p["count"]) - len(listed)
    return ", ".join(listed) + (f" and {more} more" if more > 0 else "")


@sentence(NoteCode.STATE_LOST)
def _state_lost(p: Params) -> str:
    then = (
        "launchprof stopped the script there (the report holds what was measured), rather than let it run on changed state"
        if p["stopped"]
        else "the script had ended"
    )
    return f"{_RESTORED_AFTER[RestoredAfter(p['after'])]} changed state that could not be put back: {_paths(p, _LOST_WHY, LostWhy)}; {then}"


@sentence(NoteCode.STATE_NOT_COVERED)
def _state_not_covered(p: Params) -> str:
    return (
        f"the step reaches state launchprof cannot save: {_paths(p, _UNCOVERED_WHY, UncoveredWhy)}; if the step changes it, "
        "launchprof's extra calls (capture, validation, timing) change it too, and that is not undone"
    )


@sentence(NoteCode.STATE_NOT_RESTORED)
def _state_not_restored(p: Params) -> str:
    return f"state after {_RESTORED_AFTER[RestoredAfter(p['after'])]} could not be restored ({p['error']})"


@sentence(NoteCode.HOST_SPEED_NOT_MEASURED)
def _host_speed_not_measured(p: Params) -> str:
    why = {
        HostSpeedMissing.SAMPLER_FAILED: lambda: str(p["error"]),
        HostSpeedMissing.SAMPLE_FAILED: lambda: f"a sample failed: {p['error']}",
        HostSpeedMissing.NO_SAMPLE: lambda: "no sample was taken",
    }[HostSpeedMissing(p["reason"])]()
    return f"the host's speed was not measured ({why}); the prediction uses the profile as measured"


@sentence(NoteCode.COMPILE_ROUND_FAILED)
def _compile_round_failed(p: Params) -> str:
    ended = "timed out" if p["timed_out"] else "failed"
    return f"compile ({p['mode']}): round {p['round']} {ended}; its later rounds were not run"


@sentence(NoteCode.BUCKETS_UNMEASURABLE)
def _buckets_unmeasurable(p: Params) -> str:
    why = {
        BucketsUnmeasurable.NOT_CAPTURED: lambda: "the step was not captured",
        BucketsUnmeasurable.NO_RECORDED_CALL: lambda: "no recorded call carries the varying arguments",
        BucketsUnmeasurable.TOO_MANY_SIZES: lambda: f"{p['sizes']} capture sizes are too many to measure in one run; pass --buckets with the sizes you would capture",
        BucketsUnmeasurable.DISTRIBUTED: lambda: "the step runs on several ranks (torch.distributed); measure the plan on one GPU",
    }[BucketsUnmeasurable(p["reason"])]()
    return f"bucket plan not measured: {why}"


SENTENCES.update({code.value: write for code, write in STREAM_SENTENCES.items()})
