"""Run -> Report. Trace frames (launchprof.trace), stats, verdict, prediction, buckets.

``analyse(run, device_profile)`` is the entry point; it returns data and never prints.
"""

from launchprof.analysis.report import analyse, build_report

__all__ = ["analyse", "build_report"]
