"""The steps of ``launchprof analyze`` that one GPU and every rank of ``--nproc-per-node`` share.

Below both :mod:`launchprof.commands.analyze` and :mod:`launchprof.commands.analyze_ranks`:
find the device profile, save the run file, import the analysis while the worker runs.
"""

from __future__ import annotations

import importlib
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from launchprof.errors import UsageError
from launchprof.fileio.output_files import terminal_width
from launchprof.run import default_run_path, in_kept_runs, prune
from launchprof.commands.worker_runner import WorkerResult

if TYPE_CHECKING:  # these load with the analysis, while the worker runs
    from launchprof.commands.analyze import AnalyzeOptions
    from launchprof.crossover.profile import DeviceProfile
    from launchprof.model.core import Machine
    from launchprof.run.evidence import Evidence


def load_device_profile(path: Path | None, machine: Machine | None, console: Console) -> DeviceProfile | None:
    """The device profile for predictions, by the one rule (analysis.load.choose_profile);
    its warnings (another GPU's profile, say) go to the terminal, and this machine's cached
    profile that does not load is set aside."""
    from launchprof.analysis.load import choose_profile

    try:
        chosen = choose_profile(machine, path, unloadable=lambda bad, exc: set_aside_profile(bad, exc, console))
    except UsageError:
        raise
    except Exception as exc:
        console.print(f"[yellow]launchprof: device profile not used: {exc}[/]")
        return None
    if chosen is None:
        return None
    for warning in chosen.warnings:
        console.print(f"[yellow]launchprof: warning: {warning}[/]")
    return chosen.profile


def set_aside_profile(path: Path, exc: Exception, console: Console) -> None:
    """This machine's cached profile passed the worker's quick look but does not load: kept,
    the worker would take it as cached on every run and never measure again."""
    from rich.markup import escape

    from launchprof.crossover.cache_files import set_aside

    moved = set_aside(path)
    then = f"moved to {moved.name}: the next run measures this GPU again" if moved else "remove it to measure this GPU again"
    console.print(f"[yellow]launchprof: warning: cached device profile not used: {escape(f'{exc}; {then}')}[/]", soft_wrap=True, highlight=False)


def save_run(
    options: AnalyzeOptions,
    root: Path,
    result: WorkerResult,
    rundir: Path,
    evidence: Evidence,
    profile: DeviceProfile | None = None,
) -> Path:
    """Pack the worker's folder into the run file (see launchprof.run), with the device profile
    the prediction uses, and keep the last runs."""
    from launchprof.run.header import run_header
    from launchprof.run.header_records import WorkerOutcome

    worker = WorkerOutcome(result.returncode, result.timed_out, result.interrupted, round(result.wall_s, 3), options.timeout)
    header = run_header(
        options.script, options.target, root, worker, options.repeat,
        argv=options.script_args, machine=evidence.machine,
    )
    # Trace paths in events are relative to the worker's run folder (docs/worker-events.md).
    traces = {what: rundir / p for what, p in evidence.traces.items() if p and (rundir / p).is_file()}
    path = default_run_path(options.script, list(options.outputs), options.run_out)
    stored = profile.to_dict() if profile is not None else None
    try:
        write_run(header, result.events, traces, path, profile=stored)
    except OSError as exc:
        # The GPU run is done: never lose it to an unwritable folder (or `-o /dev/stderr`,
        # whose neighbour `/dev/stderr.lprun` cannot exist). Keep it in the temp folder.
        fallback = Path(tempfile.mkdtemp(prefix="launchprof-run-")) / path.name
        write_run(header, result.events, traces, fallback, profile=stored)
        Console(stderr=True, width=terminal_width()).print(
            f"[yellow]launchprof: warning: cannot write the run file {path} ({exc.strerror or exc}); kept it at {fallback}[/]", soft_wrap=True
        )
        return fallback
    if in_kept_runs(list(options.outputs), options.run_out):
        prune(path.parent)
    return path


def write_run(*args: Any, **kwargs: Any) -> Path:
    """:func:`launchprof.run.file.write_run`, imported when the run is written (after the worker)."""
    from launchprof.run.file import write_run as write

    return write(*args, **kwargs)


# The analysis modules (pandas, numpy, pydantic models: about 0.7 s to import on the CI
# machine) are imported while the worker runs, not before it starts: the parent only waits
# for the worker then, and analyze's wall time is judged against `python script.py`.
# launchprof.analysis imports the rest (its report module: failure, runinfo, anatomy). The
# modules it imports only on first use are named too: the trace tables (pandas), the
# prediction's uncertainty, the device profile's chooser; then the run file's reader and
# writer, the renderers, and the pydantic validators that reading the run builds on first
# use (the events', the run header's and the machine's).
ANALYSIS = "launchprof.analysis"
MEANWHILE = (
    ANALYSIS, "launchprof.common.trace_tables", "launchprof.crossover.uncertainty", "launchprof.analysis.load", "launchprof.run.file",
    "launchprof.run.evidence", "launchprof.run.header", "launchprof.commands.emit",
)  # fmt: skip


def build_validators() -> None:
    """The validators that reading the worker's events and writing the run build on first use."""
    from launchprof.model.core import Machine
    from launchprof.model.records import adapter
    from launchprof.run.event_log import build_validators as event_validators
    from launchprof.run.header_records import RunHeader

    event_validators()
    adapter(RunHeader)
    adapter(Machine)


def import_analysis_meanwhile(formats: Iterable[str] = ()) -> threading.Thread:
    """Import the analysis modules, and the renderers of ``formats``, in a daemon thread; a
    failure is left for the real import after the worker, which raises it where it belongs.
    The caller joins the thread before its own imports of these modules, so two threads never
    import one module at once."""
    from launchprof.render import renderer_module

    renderers = [m for m in dict.fromkeys(map(renderer_module, formats)) if m]

    def load() -> None:
        try:
            for name in MEANWHILE:
                importlib.import_module(name)
            build_validators()
            for name in renderers:
                importlib.import_module(name)
        except Exception:
            return

    thread = threading.Thread(target=load, name="launchprof-import-analysis", daemon=True)
    thread.start()
    return thread
