"""Whether a marginal speedup is "no measurable gain" is the verdict rule's call
(launchprof.analysis.verdict), kept in the report (``no_measurable_gain``); render only words it."""

from __future__ import annotations

import dataclasses
import json

import reports
from launchprof.model.core import Report
from launchprof.model.step_timing import Speedup
from launchprof.render import figures
from launchprof.model.step_timing import no_measurable_gain


def test_the_rule_reads_the_interval() -> None:
    assert no_measurable_gain(Speedup(1.03, 0.97, 1.08)) is True
    assert no_measurable_gain(Speedup(1.05, 1.01, 1.08)) is False
    assert no_measurable_gain(None) is None


def test_the_report_carries_the_rules_reading_of_its_own_speedup() -> None:
    base = reports.graphs_help()
    assert base.no_measurable_gain is False
    straddles = dataclasses.replace(base, verdict="marginal", speedup=Speedup(1.03, 0.97, 1.08))
    assert straddles.no_measurable_gain is True  # follows the speedup it was given
    data = json.loads(straddles.to_json())
    assert data["no_measurable_gain"] is True
    assert Report.from_dict(data).no_measurable_gain is True
    assert figures.verdict_label(straddles) == "no measurable gain (marginal)"
    assert figures.verdict_label(dataclasses.replace(straddles, speedup=Speedup(1.05, 1.01, 1.08))) == "no clear gain (marginal)"
