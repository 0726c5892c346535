"""The HTML report's launch-cost panel draws the launch costs the prediction used (the device
profile's, scaled to this run's host speed where the prediction scaled them), whatever
profile the page is given."""

from __future__ import annotations

import dataclasses
import re

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.crossover.profile import Interval
from launchprof.render.html import crossover_svg
from tests.recorded import load


def _eager_label(svg: str) -> float:
    return float(re.search(r"eager: ([\d.]+) µs × N", svg)[1])


def test_the_panel_uses_the_launch_costs_the_prediction_used() -> None:
    run = load("decode_loop")
    profile = stored_profile(run.profile)
    report = analyse(run, profile)
    scale = report.prediction.host_scale
    assert scale is not None and abs(scale - 1) > 0.05  # this run's host differed from the profile's
    assert report.prediction.launch_costs_us["eager_op"] == profile.eager_op_us.median * scale
    assert report.prediction.launch_costs_us["graph_node"] == profile.graph_node_us.median  # GPU-side: not scaled
    svg = str(crossover_svg(report, profile))
    assert _eager_label(svg) == round(profile.eager_op_us.median * scale, 2)
    assert f"the prediction's, profile × {scale:.2f} for this host" in svg
    # Another profile given to the page (report --profile) does not change the panel's costs.
    other = dataclasses.replace(profile, eager_op_us=Interval(99.0, 98.0, 100.0))
    assert _eager_label(str(crossover_svg(report, other))) == _eager_label(svg)


def test_a_report_without_the_costs_draws_the_profile_as_measured() -> None:
    run = load("decode_loop")
    profile = stored_profile(run.profile)
    report = analyse(run, profile)
    older = dataclasses.replace(report, prediction=dataclasses.replace(report.prediction, launch_costs_us=None))
    svg = str(crossover_svg(older, profile))
    assert _eager_label(svg) == round(profile.eager_op_us.median, 2)
    assert "Launch cost model (device profile)" in svg
