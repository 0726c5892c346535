"""The HTML report's launch-cost panel draws the launch costs the prediction used: the device
profile's, scaled to this run's host speed where the prediction scaled them."""

from __future__ import annotations

import dataclasses
import re

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.render.html import crossover_svg
from tests.recorded import load


def _panel(name: str, scaled: bool = True) -> tuple[str, float, float | None]:
    run = load(name)
    profile = stored_profile(run.profile)
    report = analyse(run, profile)
    if not scaled:
        report = dataclasses.replace(report, prediction=dataclasses.replace(report.prediction, host_scale=None))
    svg = str(crossover_svg(report, run.profile))
    eager = float(re.search(r"eager: ([\d.]+) µs × N", svg)[1])
    return svg, eager, report.prediction.host_scale


def test_the_panel_uses_the_scaled_launch_costs() -> None:
    run = load("decode_loop")
    profile_op = stored_profile(run.profile).eager_op_us.median
    svg, eager, scale = _panel("decode_loop")
    assert scale is not None and abs(scale - 1) > 0.05  # this run's host differed from the profile's
    assert eager == round(profile_op * scale, 2)
    assert f"device profile × {scale:.2f}, this run's host speed" in svg


def test_without_a_scale_the_panel_is_the_profile_as_measured() -> None:
    run = load("decode_loop")
    svg, eager, _ = _panel("decode_loop", scaled=False)
    assert eager == round(stored_profile(run.profile).eager_op_us.median, 2)
    assert "Launch cost model (device profile)" in svg
