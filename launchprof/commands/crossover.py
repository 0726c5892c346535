"""``launchprof crossover``: measure this GPU's eager-versus-replay crossover, write a device profile.

Options are checked before the GPU is touched (usage errors first, then the
environment), the sweep draws progress bars on stderr, the profile is always cached for
``analyze`` and also written to ``-o``; ``-f json`` prints it, ``text`` prints tables and
the fitted model. Ctrl-C still writes the profile, marked partial, then exits 130.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from launchprof.errors import EnvironmentProblem, Interrupted, UsageError
from launchprof.fileio.output_files import check_writable, is_stdout, refuse_overwriting, terminal_width, write_output

if TYPE_CHECKING:
    from rich.console import Console

    from launchprof.crossover.profile import DeviceProfile

FORMATS = ("text", "json")
NO_GPU_HINT = "lint, report and compare work without a GPU"


@dataclass(frozen=True)
class CrossoverOptions:
    quick: bool
    output: Path | None
    format: str
    plot: Path | None


def check_options(options: CrossoverOptions) -> None:
    """Usage errors, found in a second rather than after a minute of measuring."""
    if options.format not in FORMATS:
        raise UsageError(f"unknown format {options.format!r} for crossover: choose text or json")
    if options.output is not None and is_stdout(options.output):  # its JSON goes to standard output with -f json
        raise UsageError(
            f"crossover -o names a file for the device profile; drop -o {options.output} (standard output): with -f json the profile goes there"
        )
    if options.output is not None:
        check_writable(options.output)
    if options.plot is not None:
        from launchprof.crossover.plot import check_plot_path

        check_plot_path(options.plot)
        refuse_overwriting(options.plot, (), [options.output] if options.output is not None else [], flag="--plot")


def check_environment(plot: bool) -> None:
    """A CUDA device through torch, and matplotlib when a plot is asked for."""
    try:
        import torch
    except Exception as exc:
        raise EnvironmentProblem(
            f"torch is not importable ({type(exc).__name__}): crossover measures a CUDA GPU ({NO_GPU_HINT})"
        ) from None
    try:
        available = torch.cuda.is_available()
    except Exception:
        available = False
    if not available:
        raise EnvironmentProblem(f"no CUDA device: crossover measures the GPU it runs on ({NO_GPU_HINT})")
    if plot:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise EnvironmentProblem("--plot needs matplotlib, which is not installed") from None


class RichProgress:
    """Progress bars on stderr, one per sweep phase; refreshed by hand, so no thread runs during timings."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("{task.description:<14}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            auto_refresh=False,
        )
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._progress.stop()

    def phase(self, name: str, total: int) -> None:
        self._tasks[name] = self._progress.add_task(name, total=max(total, 1))

    def advance(self, name: str, steps: int = 1) -> None:
        if name in self._tasks:
            self._progress.advance(self._tasks[name], steps)
            self._progress.refresh()

    def done(self, name: str) -> None:
        if name in self._tasks:
            task = self._tasks[name]
            self._progress.update(task, completed=self._progress.tasks[task].total)
            self._progress.refresh()


def run(options: CrossoverOptions) -> int:
    check_options(options)
    check_environment(options.plot is not None)
    from rich.console import Console

    from launchprof.crossover.fit import derive_profile
    from launchprof.crossover.sweep import DEFAULT_PLAN, QUICK_PLAN, run_sweep
    from launchprof.model.machine import collect_machine
    from launchprof.render.crossover_text import print_profile, render_json, sweep_time_line

    err = Console(stderr=True, highlight=False, width=terminal_width())
    machine = collect_machine()
    plan = QUICK_PLAN if options.quick else DEFAULT_PLAN
    err.print(f"[dim]measuring {machine.gpu} ({plan.name} sweep); Ctrl-C keeps what was measured[/]")
    try:
        with RichProgress(err) as progress:
            result = run_sweep(plan, progress)
    except RuntimeError as exc:  # a CUDA failure (torch raises RuntimeError and its AcceleratorError); a bug in launchprof stays exit 70
        raise EnvironmentProblem(f"CUDA is not usable: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    profile = derive_profile(
        result.samples, machine, partial=result.partial, quick=options.quick, notes=result.notes, plan=plan.name
    )
    cached = write_outputs(profile, options, err)
    if options.format == "json":
        sys.stdout.write(render_json(profile) + "\n")
        sys.stdout.flush()
    else:
        print_profile(profile, Console(highlight=False, width=terminal_width()))
    if profile.noisy:
        err.print(f"[yellow]warning:[/] noisy device profile: {profile.noisy_reason}")
    if options.format == "json" and profile.undetermined:  # the console table says so itself
        err.print(f"[dim]note: not determined by this sweep (see the profile's undetermined list): {', '.join(profile.undetermined)}[/]")
    err.print(f"[dim]{sweep_time_line(result.elapsed_s, result.phase_s)}[/]", soft_wrap=True)
    if result.partial:
        where = cached or options.output
        raise Interrupted(f"interrupted: a partial device profile was written to {where}" if where else "interrupted")
    return 0


def write_outputs(profile: DeviceProfile, options: CrossoverOptions, err: Console) -> Path | None:
    """Cache the profile (a failure is a warning), then -o and --plot (a failure is an error)."""
    from launchprof.crossover.profile import save_to_cache

    cached: Path | None = None
    try:
        cached = save_to_cache(profile)
        err.print(f"[dim]device profile cached at {cached}[/]", soft_wrap=True)
    except OSError as exc:
        err.print(f"[yellow]warning:[/] could not cache the device profile: {exc.strerror or exc}")
    if options.output is not None:
        try:
            write_output(options.output, profile.to_json())
        except OSError as exc:
            raise UsageError(f"cannot write {options.output}: {exc.strerror or exc}") from None
        err.print(f"[dim]wrote device profile to {options.output}[/]", soft_wrap=True)
    if options.plot is not None:
        from launchprof.crossover.plot import write_plot

        try:
            write_plot(profile, options.plot)
        except OSError as exc:
            raise UsageError(f"cannot write {options.plot}: {exc.strerror or exc}") from None
        err.print(f"[dim]drew the crossover curves to {options.plot}[/]", soft_wrap=True)
    return cached
