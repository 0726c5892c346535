"""Static capture-hazard check (``launchprof lint``): reads code, runs nothing, needs no GPU.

Layout: :mod:`files` (which files, parsing), :mod:`modules`, :mod:`definitions` and
:mod:`index` (what the code defines, name resolution), :mod:`walker` and
:mod:`call_walker` (one pass per function that records facts), :mod:`scalars` (unannotated
arguments the code shows to be numbers), :mod:`rules` (one rule per hazard family),
:mod:`suppress` (inline ``# launchprof: ignore``), :mod:`driver` (host driver code, info
under ``--all``), :mod:`engine` (targets, call following, findings). Nothing here
imports torch: lint runs on CI runners without it. The modules import each other by their
own names (``import launchprof.lint.values as v``), never this package: it loads the
engine, which sits above every one of them.
"""

from launchprof.lint.engine import LintResult, Target, lint

__all__ = ["LintResult", "Target", "lint"]
