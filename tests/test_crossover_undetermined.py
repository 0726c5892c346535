"""Coefficients the sweep does not determine: the rule, the profile's record, every output, the set-up figure.

The rule is checked against the two H200 default sweeps of session 5 (instantiate's fixed
part 9.9 [2.5, 41.4] and 24.8 [4.2, 39.2] µs); the rest uses simulated sweeps whose true
intercept is either buried under the per-node cost (undetermined) or large and clean
(determined), and the H200 profiles recorded in tests/data.
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.commands import crossover as command
from launchprof.crossover import profile as prof
from launchprof.crossover.determined import is_undetermined, not_determined, rough, undetermined_coefficients
from launchprof.crossover.fit import derive_profile, refit
from launchprof.crossover.profile import Interval
from launchprof.crossover.simulate import SimulatedDevice, simulate_samples
from launchprof.crossover.sweep import DEFAULT_PLAN, QUICK_PLAN, SweepResult
from launchprof.crossover.replay_model import predict_speedup
from launchprof.render.crossover_text import print_profile
from launchprof.model.core import Machine

H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")
DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
# The intercept under a per-node cost 3.5x larger than itself at the smallest graph, with 10% host noise...
BURIED = SimulatedDevice(instantiate_fixed_us=2.0, instantiate_node_us=7.0)
# ...and one that is most of the set-up at small graphs, measured with 2% noise.
CLEAN = SimulatedDevice(instantiate_fixed_us=200.0, instantiate_node_us=1.2)


def _profile(device: SimulatedDevice, noise: float, seed: int, plan=DEFAULT_PLAN) -> prof.DeviceProfile:
    return derive_profile(simulate_samples(plan, device, noise=noise, seed=seed), H200)


@pytest.fixture(scope="module")
def buried() -> prof.DeviceProfile:
    return _profile(BURIED, 0.1, 0)


@pytest.fixture(scope="module")
def clean() -> prof.DeviceProfile:
    return _profile(CLEAN, 0.02, 0)


def _console_text(p: prof.DeviceProfile) -> str:
    from rich.console import Console

    console = Console(record=True, width=200, highlight=False)
    print_profile(p, console)
    return console.export_text()


# --- the rule ------------------------------------------------------------------------


@pytest.mark.parametrize("median, low, high", [(9.9, 2.5, 41.4), (24.8, 4.2, 39.2), (11.8, -4.7, 45.0), (0.0, -0.1, 0.1), (1.0, 0.6, 2.2)])
def test_wide_intervals_are_undetermined(median, low, high):
    assert is_undetermined(Interval(median, low, high))


@pytest.mark.parametrize(
    "median, low, high",
    # instantiate per node in an H200 default sweep (its high end 1.8x), a session-5-like tight
    # slope, an exact figure, a tight negative one, and the edges of the factor of two
    [(1.37, 1.04, 2.47), (1.234, 1.18, 1.30), (0.676, 0.676, 0.676), (-0.3, -0.35, -0.25), (1.0, 0.5, 2.0)],
)
def test_intervals_within_a_factor_of_two_are_determined(median, low, high):
    assert not is_undetermined(Interval(median, low, high))


def test_missing_or_non_finite_intervals_are_not_flagged():
    assert not is_undetermined(None)
    assert not is_undetermined(Interval(float("nan"), 1.0, 2.0))


def test_the_text_keeps_two_significant_figures():
    assert [rough(v) for v in (9.9, 41.4, 2.967, 0.7686, 24.8, 1234.5)] == ["9.9", "41", "3.0", "0.77", "25", "1234"]
    assert not_determined(Interval(9.9, 2.5, 41.4)) == "~9.9 µs (not determined by this sweep: 95% CI 2.5–41 µs)"
    assert "95% CI -4.7 to 45 µs" in not_determined(Interval(11.8, -4.7, 45.0))


# --- the profile's record ----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_a_buried_intercept_is_flagged_and_its_slope_is_not(seed):
    p = _profile(BURIED, 0.1, seed)
    assert "instantiate_fixed_us" in p.undetermined
    assert "instantiate_node_us" not in p.undetermined
    assert p.instantiate_node_us.median == pytest.approx(BURIED.instantiate_node_us, rel=0.1)


@pytest.mark.parametrize("seed", range(3))
def test_a_clean_intercept_is_not_flagged(seed):
    p = _profile(CLEAN, 0.02, seed)
    assert p.instantiate_fixed_us.median == pytest.approx(CLEAN.instantiate_fixed_us, rel=0.05)
    assert "instantiate_fixed_us" not in p.undetermined


def test_the_list_is_every_flagged_interval_and_survives_json(buried):
    assert buried.undetermined == undetermined_coefficients(buried)
    assert all(is_undetermined(getattr(buried, n)) for n in buried.undetermined)
    data = json.loads(buried.to_json())
    assert data["undetermined"] == buried.undetermined
    assert prof.profile_from_dict(data).undetermined == buried.undetermined
    data["undetermined"] = []  # a recorded list is what the profile says: not second-guessed on load
    assert prof.profile_from_dict(data).undetermined == []


def test_the_model_paragraph_names_the_undetermined_intercept(buried, clean):
    assert "Not determined by this sweep" in buried.model and "instantiate_fixed_us ~" in buried.model
    assert "instantiate_fixed_us ~" not in clean.model


@pytest.mark.parametrize("name", ["profile.json", "profile-quick.json", "crossover_h200.json"])
def test_recorded_profiles_without_the_field_load_and_are_judged(name):
    raw = json.loads((DATA / name).read_text())
    assert "undetermined" not in raw
    p = prof.load_profile(DATA / name).profile
    # the H200 intercept (32.0 [16.9, 70.1] full, 11.8 [-4.7, 45.0] quick) is flagged; its slopes are not
    assert "instantiate_fixed_us" in p.undetermined
    assert not {"eager_op_us", "graph_node_us", "instantiate_node_us", "capture_node_us"} & set(p.undetermined)
    assert refit(p).undetermined == p.undetermined


def test_a_version_2_profile_loads_with_the_flag():
    p = prof.load_profile(ROOT / "docs" / "h200-profile-quick.json").profile
    assert "instantiate_fixed_us" in p.undetermined and "graph_gap_us" not in p.undetermined


# --- outputs -------------------------------------------------------------------------------


def test_console_says_not_determined_for_the_flagged_intercept_only(buried, clean):
    text = _console_text(buried)
    line = next(x for x in text.splitlines() if x.startswith("instantiate, fixed part ~"))
    assert "(not determined by this sweep: 95% CI" in line
    row = next(x for x in text.splitlines() if "instantiate, per node" in x)
    assert "not determined" not in row
    assert "Set-up includes instantiate's fixed part" in text
    clean_text = _console_text(clean)
    clean_row = next(x for x in clean_text.splitlines() if "instantiate, fixed part" in x)
    assert "~" not in clean_row and "not determined" not in clean_row
    assert "Set-up includes instantiate's fixed part" not in clean_text


def test_console_of_a_recorded_h200_profile(tmp_path):
    text = _console_text(prof.load_profile(DATA / "profile.json").profile)
    assert "instantiate, fixed part ~32 µs (not determined by this sweep: 95% CI 17–70 µs)" in text


def test_html_page_marks_the_intercept(buried, clean):
    from launchprof.crossover.plot import render_html

    def cell(page: str) -> str:
        return re.search(r"instantiate, fixed part</td><td>([^<]*)</td>", page).group(1)

    assert cell(render_html(buried)).startswith("~") and "not determined by this sweep" in cell(render_html(buried))
    assert re.fullmatch(r"\d+\.\d{3} \[\d+\.\d{3}, \d+\.\d{3}\]", cell(render_html(clean)))


def test_crossover_command_says_so_in_text_and_json(monkeypatch, tmp_path, capsys):
    import launchprof.crossover.sweep as sweep
    import launchprof.model.machine as machine

    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "cache"))
    result = SweepResult(samples=tuple(simulate_samples(QUICK_PLAN, BURIED, noise=0.1)), notes=(), partial=False, elapsed_s=1.0)
    monkeypatch.setattr(command, "check_environment", lambda plot: None)
    monkeypatch.setattr(machine, "collect_machine", lambda: H200)
    monkeypatch.setattr(sweep, "run_sweep", lambda plan, progress=None: result)
    assert command.run(command.CrossoverOptions(quick=True, output=None, format="text", plot=None)) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "instantiate, fixed part ~" in out and "(not determined by this sweep: 95% CI" in out
    assert command.run(command.CrossoverOptions(quick=True, output=None, format="json", plot=None)) == 0
    captured = capsys.readouterr()
    assert "instantiate_fixed_us" in json.loads(captured.out)["undetermined"]
    assert "not determined by this sweep" in captured.err


# --- the set-up figure and its payback -------------------------------------------------------


def test_amortisation_table_rows_carry_intervals(buried):
    rows = {a.nodes: a for a in buried.amortisation}
    for a in rows.values():
        assert a.setup_low_us <= a.setup_us <= a.setup_high_us
        assert a.replays_low <= a.replays <= a.replays_high
    relative = {n: (a.setup_high_us - a.setup_low_us) / a.setup_us for n, a in rows.items()}
    assert relative[1] > relative[1024]  # the intercept matters for small graphs, not large ones


def test_recorded_amortisation_without_intervals_still_renders():
    p = prof.load_profile(DATA / "profile.json").profile
    assert p.amortisation and p.amortisation[0].setup_low_us is None
    text = _console_text(p)
    assert "rough." in text and "in parentheses" not in text


def test_prediction_basis_names_an_undetermined_input(clean):
    wide_gap = dataclasses.replace(clean, graph_gap_us=Interval(0.4, 0.05, 1.2))
    wide_gap = dataclasses.replace(wide_gap, undetermined=undetermined_coefficients(wide_gap))
    tight_gap = dataclasses.replace(clean, graph_gap_us=Interval(0.4, 0.38, 0.42))
    tight_gap = dataclasses.replace(tight_gap, undetermined=undetermined_coefficients(tight_gap))
    args = dict(kernels_per_step=50, kernel_us=5.0, gpu_busy_us=250.0, launch_api_us=200.0, eager_step_us=400.0)
    assert "leaves the time per node beyond its kernel uncertain" in predict_speedup(**args, profile=wide_gap).basis
    assert "graph_gap_us" not in predict_speedup(**args, profile=wide_gap).basis  # words, not a field name
    assert "uncertain" not in predict_speedup(**args, profile=tight_gap).basis


# --- scripts/gpu-check's comparison of two sweeps -----------------------------------------------


def _gpu_check_snippet() -> str:
    text = (ROOT / "scripts" / "gpu-check").read_text()
    start = text.index("import json, sys, types")
    return text[start : text.index("\nPY", start)]


def test_gpu_check_comparison_marks_overlap_and_undetermined(tmp_path):
    base = json.loads((DATA / "profile.json").read_text())
    run1, run2 = dict(base), dict(base)
    run1["instantiate_fixed_us"] = {"median": 9.9, "low": 2.5, "high": 41.4}
    run2["instantiate_fixed_us"] = {"median": 24.8, "low": 4.2, "high": 39.2}
    run1["graph_gap_us"] = {"median": 0.544, "low": 0.50, "high": 0.59}
    run2["graph_gap_us"] = {"median": 0.675, "low": 0.63, "high": 0.72}
    paths = []
    for i, data in enumerate((run1, run2)):
        paths.append(tmp_path / f"p{i}.json")
        paths[-1].write_text(json.dumps(data))
    done = subprocess.run(
        [sys.executable, "-c", _gpu_check_snippet(), *map(str, paths)], capture_output=True, text=True, timeout=60,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert "yes" in rows["instantiate_fixed_us"].split() and "undetermined (run1, run2)" in rows["instantiate_fixed_us"]
    assert "NO" in rows["graph_gap_us"].split() and "over 15%" in rows["graph_gap_us"]
    assert "yes" in rows["eager_op_us"].split() and rows["eager_op_us"].rstrip().endswith("yes")


def test_rough_rounds_before_choosing_the_form():
    from launchprof.crossover.determined import rough

    assert [rough(v) for v in (99.7, 99.4, 9.9, 41.0, 0.77, 123.4)] == ["100", "99", "9.9", "41", "0.77", "123"]
