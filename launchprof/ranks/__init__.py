"""Multi-GPU analysis: one worker per rank under ``torch.distributed.run``, one run file and
report per rank, and a combined report (``ranks``, rank skew, hazards tagged with their rank).

- :mod:`.paths`: the per-rank file names (events, traces, run files, reports);
- :mod:`.worker_side`: what a rank's worker does differently (its own events file, a ``rank`` event);
- :mod:`.launcher`: ``python -m launchprof.ranks.launcher``, torch's own launcher with each rank's exit kept;
- :mod:`.runner`: starts and watches the launcher and every rank (timeouts, Ctrl-C, no orphans);
- :mod:`.models`: the ``ranks`` entries of the combined report;
- :mod:`.combine`: per-rank reports -> the combined report.
"""
