"""The run file (``NAME.lprun``): write, load, migrate. See :mod:`launchprof.run.file`."""

from launchprof.run.file import SUFFIX, Run, load_run, raw_samples, write_run
from launchprof.run.store import default_run_path, in_kept_runs, prune

__all__ = ["SUFFIX", "Run", "default_run_path", "in_kept_runs", "load_run", "prune", "raw_samples", "write_run"]
