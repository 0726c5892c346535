"""The command line's options and arguments, as typer aliases that keep the command
signatures in ``launchprof/cli.py`` short. An alias is shared between commands only where
the flag and its help agree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


FormatOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help="Output format: text, json, md, sarif, junit, html (also: txt for text, markdown for md, xml for junit). "
        "Repeat with -o to write several; "
        "guessed from -o's extension when left out.",
        show_default=False,
    ),
]
OutputOpt = Annotated[
    list[Path] | None,
    typer.Option("--output", "-o", help="Write the report here (repeatable, paired with -f in order).", show_default=False),
]
ProjectRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--project-root",
        help="Hazard files are relative to this folder (default: the nearest folder above the script "
        "with pyproject.toml, setup.py or .git, else the script's folder).",
        show_default=False,
    ),
]
ExplainOpt = Annotated[
    bool,
    typer.Option("--explain", help="Text and Markdown: every figure (kernels, graph nodes, GPU idle, setup, prediction basis and why, in-loop timings), the notes that only describe, and a legend of terms; by default only the decision figures and actionable notes. HTML always has everything."),
]
NoCalibrateOpt = Annotated[
    bool,
    typer.Option("--no-calibrate", help="Skip the quick device profile analyze measures (about 2 s) when none is cached for this GPU, driver and torch; the report then has no prediction."),
]
QuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Print nothing but errors (a report sent to standard output with -f, and --github annotations, are still written)."),
]
# crossover and compare write no --github annotations, so their --quiet does not name them.
PlainQuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Print nothing but errors (a report sent to standard output with -f is still written)."),
]
GithubOpt = Annotated[
    bool,
    typer.Option("--github", help="Print ::error/::warning workflow commands for hazards (on by default when GITHUB_ACTIONS=true)."),
]
SnippetOpt = Annotated[
    bool, typer.Option("--snippet", help="Print the capture code to paste for a graphs-help target (Markdown and HTML always show it).")
]

ScriptArg = Annotated[Path, typer.Argument(help="The Python script to run, exactly as `python SCRIPT ARGS...` would.", show_default=False)]
ScriptArgsArg = Annotated[
    list[str] | None, typer.Argument(help="Arguments for the script; put them after `--`.", show_default=False)
]
AnalyzeTargetOpt = Annotated[
    str | None,
    typer.Option(
        "--target",
        "-t",
        metavar="NAME",
        help="The function to measure and capture: `step`, `model.forward`, `Net.forward`, `model` (an nn.Module: its calls) or `pkg.mod:fn`. "
        "Left out: a function marked @launchprof.target, else an eager-only profile of the whole script.",
        show_default=False,
    ),
]
AnalyzeFailOnOpt = Annotated[
    str,
    typer.Option("--fail-on", metavar="WHEN", help="Exit 1 when: never, error (any error hazard), warning (any warning or error), no-benefit (verdict is not graphs-help)."),
]
RepeatOpt = Annotated[
    int,
    typer.Option(
        "--repeat", "-n", min=3, max=10000,
        help="Timed calls of each kind (eager, replay); each kind stops early after 5 s and says so.",
    ),
]
CompareOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--compare",
        metavar="WHAT",
        help="Also measure the target another way, beside eager and hand capture (repeatable). `compile`: "
        'under torch.compile(mode="reduce-overhead") and mode="default": compile time, step time, kernels, '
        "cudagraph skips and graph breaks.",
        show_default=False,
    ),
]
CompileRoundsOpt = Annotated[
    int,
    typer.Option(
        "--compile-rounds",
        min=1,
        max=10,
        metavar="N",
        help="With --compare compile: compile each mode N times (dynamo reset each time, inductor's kernel "
        "caches kept) and report the median one; the advice says when they disagree (compiled objects of "
        "one small step ran 1.7x apart on an H200). Compile time is the first round's.",
    ),
]
CompileTimeoutOpt = Annotated[
    float,
    typer.Option("--compile-timeout", min=1.0, metavar="SECONDS", help="With --compare compile: give up on a torch.compile mode after this many seconds (reported as a timeout; "
        "with --compile-rounds, in each round, and a mode that timed out is not compiled again)."),
]
RunToEndOpt = Annotated[
    bool,
    typer.Option(
        "--run-to-end",
        help="Let the script run to its end. Without it, once the target's measurement is complete (about 40 calls) "
        "the script is stopped at the target's next call, as if it raised SystemExit there (its finally blocks and "
        "context managers run), and the report says after how many calls; a script without a target always runs to its end.",
    ),
]
TimeoutOpt = Annotated[
    float | None,
    typer.Option("--timeout", min=1.0, help="Stop the script after this many seconds and report what was measured.", show_default=False),
]
AnalyzeProfileOpt = Annotated[
    Path | None,
    typer.Option("--profile", help="Device profile from `launchprof crossover` (default: the cached one for this GPU).", show_default=False),
]
ShowOutputOpt = Annotated[
    bool | None,
    typer.Option(
        "--show-output/--hide-output",
        help="Pass the script's output through as it runs, as `python SCRIPT` would (the default; --quiet "
        "hides it); hidden output is kept in a log and named when the script fails. When a report goes to "
        "standard output, the script's output goes to standard error.",
        show_default=False,
    ),
]
AnalyzeSaveTraceOpt = Annotated[
    Path | None,
    typer.Option(
        "--save-trace",
        help="Write the eager and replay profiler traces (Chrome trace JSON, for Perfetto) into this folder; a path ending in .json gets the eager trace. "
        "Runs torch.profiler, as --kernels does.",
        show_default=False,
    ),
]
AnalyzeKernelsOpt = Annotated[
    bool,
    typer.Option(
        "--kernels",
        help="Run torch.profiler on the eager calls for per-kernel durations, the launch-gap distribution, the timeline "
        "and node times. Without it the profiler runs only where a figure needs it "
        "(capture failed, calls that take different paths).",
    ),
]
RunOutOpt = Annotated[
    Path | None,
    typer.Option(
        "--run-out",
        help="Save the run file (NAME.lprun: events, traces, sources, raw samples) here. Default: next to "
        "the first -o file, else in .launchprof/runs/ (the last 10 are kept).",
        show_default=False,
    ),
]
NprocOpt = Annotated[
    int | None,
    typer.Option(
        "--nproc-per-node",
        metavar="N",
        help="Run the script on N GPUs of this machine under torch's launcher (torch.distributed.run), one "
        "worker per rank: one run file and report per rank (NAME.rankN.lprun, REPORT.rankN.EXT next to the "
        "combined ones) and a combined report (ranks, the slowest rank's step time, rank skew, hazards tagged "
        "with their rank). The environment is passed to every rank unchanged.",
        show_default=False,
    ),
]
LocateAsyncOpt = Annotated[
    bool,
    typer.Option(
        "--locate-async",
        help="If the script dies of an asynchronous CUDA error (device-side assert, illegal address), re-run it "
        "in a new worker with CUDA_LAUNCH_BLOCKING=1 to name the line that launched the faulting kernel. "
        "The script's side effects run twice.",
    ),
]
BucketsOpt = Annotated[
    str | None,
    typer.Option(
        "--buckets", metavar="LIST",
        help="Capture sizes to measure when argument shapes vary, e.g. 1,2,4,8,16,32 (default: 1, 2, 4, 8, then "
        "multiples of 8 up to the largest size seen). Each call is padded up to the next size; larger calls run eagerly.",
        show_default=False,
    ),
]
BucketMemoryOpt = Annotated[
    str,
    typer.Option(
        "--bucket-memory", metavar="SIZE",
        help="Most memory the bucket graphs' shared pool may hold (e.g. 2GiB, 512MiB); the largest sizes are "
        "dropped until it fits, and their calls run eagerly.",
    ),
]

QuickOpt = Annotated[bool, typer.Option("--quick", help="A short sweep (10 s rather than 30 on an H200): fewer node counts, durations, repeats and host rounds, and no kernel trace, so predictions do not take an empty kernel's traced time off a node's cost.")]
ProfileOutputOpt = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Also write the device profile JSON here (it is always cached for analyze).", show_default=False),
]
CrossoverFormatOpt = Annotated[str, typer.Option("--format", "-f", metavar="FORMAT", help="What to print: text or json.")]
PlotOpt = Annotated[
    Path | None,
    typer.Option("--plot", help="Draw the crossover curves to this file (.png, .svg or .html).", show_default=False),
]

LintPathsArg = Annotated[list[Path], typer.Argument(help="Python files or folders to check.", show_default=False)]
LintTargetOpt = Annotated[
    str | None, typer.Option("--target", "-t", metavar="NAME", help="Check this function (and what it calls).", show_default=False)
]
AllFunctionsOpt = Annotated[bool, typer.Option("--all", help="Check every function, not only targets.")]
LintFailOnOpt = Annotated[str, typer.Option("--fail-on", metavar="WHEN", help="Exit 1 when: never, error, warning.")]
LintProjectRootOpt = Annotated[
    Path | None,
    typer.Option(
        "--project-root",
        help="Project root: imports are followed inside it and file paths are relative to it "
        "(default: the nearest folder with pyproject.toml, setup.py or .git).",
        show_default=False,
    ),
]
ExcludeOpt = Annotated[
    list[str] | None,
    typer.Option("--exclude", metavar="GLOB", help="Skip files and folders matching this glob (repeatable; also [tool.launchprof] exclude).", show_default=False),
]
StrictOpt = Annotated[bool, typer.Option("--strict", help="Report calls lint cannot follow as warnings.")]

SessionArg = Annotated[
    Path,
    typer.Argument(
        help="A run file (NAME.lprun, re-analysed) or a JSON report written by `analyze -f json`.",
        metavar="RUN|REPORT",
        show_default=False,
    ),
]
ReportProfileOpt = Annotated[
    Path | None,
    typer.Option(
        "--profile",
        help="Device profile from `launchprof crossover`: recomputes a run's prediction and draws the crossover curve in HTML.",
        show_default=False,
    ),
]
ReportSaveTraceOpt = Annotated[
    Path | None,
    typer.Option("--save-trace", help="Write a run file's eager and replay profiler traces (Chrome trace JSON) into this folder.", show_default=False),
]

BaseArg = Annotated[Path, typer.Argument(help="The baseline: a JSON report (or a .lprun run file).", show_default=False)]
NewArg = Annotated[Path, typer.Argument(help="The new run: a JSON report (or a .lprun run file).", show_default=False)]
CompareFailOnOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fail-on",
        metavar="RULE",
        help="Rule that makes the exit code 1, repeatable: METRIC:+N% or METRIC:-N% (relative), METRIC:+X "
        "(absolute), `new-hazards`, `verdict` (got worse). Metrics: kernels_per_step, gpu_idle_fraction, "
        "eager_step_us, replay_step_us, speedup, graph_nodes, instantiate_us, launch_gap_us. "
        "A step-time rule trips only when the change is also significant (Mann-Whitney U, p < 0.05) "
        "wherever both reports keep raw samples. "
        "Example: --fail-on kernels_per_step:+5% --fail-on speedup:-10%.",
        show_default=False,
    ),
]
CompareFormatOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help="Output format: text, json, md (also: txt for text, markdown for md). Repeat with -o to write several; "
        "guessed from -o's extension when left out.",
        show_default=False,
    ),
]
