"""Run -> Report. Trace frames (launchprof.common.trace_tables), stats, verdict, prediction, buckets.

``analyse(run, device_profile)`` is the entry point; it returns data and never prints.
"""

from launchprof.analysis.build_report import analyse, build_report

__all__ = ["analyse", "build_report"]
