"""A run the user stopped (Ctrl-C) reads as interrupted, not as a script that failed, and a
report cut short never says "No hazards found" of checks that did not run.

Built from the decode_loop run recorded on the H200, cut where a Ctrl-C would have cut it.
"""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

import launchprof.commands.analyze as analyze_cmd
from launchprof.analysis import analyse
from launchprof.commands.analyze import AnalyzeOptions
from launchprof.commands.worker_runner import WorkerResult
from launchprof.errors import ExitCode
from launchprof.render import RenderOptions, renderer_for
from launchprof.run import Run
from launchprof.run.evidence import parse_events
from tests.recorded import load, recorded

OPTIONS = RenderOptions(width=300)


def _stopped_before(name: str, phase: str, *, interrupted: bool) -> Run:
    """The recorded run ``name`` as if stopped just before ``phase`` began."""
    run = load(name)
    cut = next(i for i, e in enumerate(run.events) if e["type"] == "phase" and e["name"] == phase)
    worker = dataclasses.replace(run.header.worker, interrupted=interrupted, returncode=-2 if interrupted else 1)
    return dataclasses.replace(run, events=run.events[:cut], header=dataclasses.replace(run.header, worker=worker))


def test_a_run_stopped_before_the_probe_is_interrupted_and_claims_no_clean_bill() -> None:
    run = _stopped_before(recorded(["decode_loop"])[0], "probe", interrupted=True)
    report = analyse(run)
    assert report.run is not None and report.run.interrupted and not report.run.complete
    assert report.verdict == "script-failed" and not report.hazards
    text = renderer_for("text", OPTIONS).render(report)
    assert "interrupted before a verdict" in text and "the script failed" not in text
    assert "No hazards found in what ran before the run stopped" in text
    assert "No hazards found." not in text
    md = renderer_for("md", OPTIONS).render(report)
    assert "Interrupted before a verdict could be reached" in md and "The script failed" not in md


def test_the_terminal_says_interrupted_once_and_exits_130() -> None:
    run = _stopped_before("decode_loop", "probe", interrupted=True)
    result = WorkerResult(run.events, -2, False, True, 1.1, None)
    out = io.StringIO()
    code = analyze_cmd.exit_code(analyse(run), parse_events(run.events), result, AnalyzeOptions(script=run.path), Console(file=out, width=300))
    assert code == ExitCode.INTERRUPTED
    assert out.getvalue().strip() == "launchprof: interrupted"


def test_a_complete_run_without_hazards_still_says_so_plainly() -> None:
    """The plain sentence is kept for a run that ran every check (long_kernels: none found)."""
    report = analyse(load(recorded(["long_kernels"])[0]))
    assert report.run is not None and report.run.complete and not report.run.interrupted and not report.hazards
    assert "No hazards found.\n" in renderer_for("text", OPTIONS).render(report)


def test_a_script_that_failed_still_reads_as_failed() -> None:
    run = _stopped_before("decode_loop", "probe", interrupted=False)
    report = analyse(run)
    assert not report.run.interrupted and report.verdict == "script-failed"
    assert "the script failed before a verdict" in renderer_for("text", OPTIONS).render(report)
