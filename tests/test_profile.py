"""The device profile file: JSON, cache location, lookup, and the crossover command's CPU-side paths."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.commands import crossover as command
from launchprof.crossover import profile as prof
from launchprof.crossover.fit import derive_profile
from launchprof.crossover.simulate import simulate_samples
from launchprof.crossover.sweep import QUICK_PLAN, SweepResult
from launchprof.errors import EnvironmentProblem, Interrupted, UsageError
from launchprof.model.core import Machine

H200 = Machine(gpu="NVIDIA H200", driver="580.95.05", cuda="13.0", torch="2.11.0+cu130", python="3.12.3")
H100 = Machine(gpu="NVIDIA H100 80GB HBM3", driver="570.86.15", cuda="12.8", torch="2.9.0+cu128", python="3.12.3")
REQUIRED = (
    "schema_version", "machine", "partial", "eager_op_us", "raw_launch_us", "graph_launch_fixed_us", "graph_node_us",
    "floor_node_us", "instantiate_node_us", "update_node_us", "crossover", "gain_below_5pct_kernel_us", "samples", "notes",
)


@pytest.fixture(scope="module")
def profile() -> prof.DeviceProfile:
    return derive_profile(simulate_samples(QUICK_PLAN), H200, quick=True)


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "profiles"


def test_json_has_the_contract_fields(profile):
    data = json.loads(profile.to_json())
    for key in REQUIRED:
        assert key in data, key
    assert data["schema_version"] == prof.SCHEMA_VERSION
    assert set(data["graph_node_us"]) == {"median", "low", "high"}
    assert set(data["crossover"][0]) >= {"kernel_us", "nodes_crossover", "gain_at_64_nodes"}
    assert data["machine"]["gpu"] == "NVIDIA H200"
    assert {"kind", "count", "kernel_us", "values_us"} == set(data["samples"][0])


def test_json_round_trip(profile):
    again = prof.profile_from_dict(json.loads(profile.to_json()))
    assert dataclasses.replace(again, samples=[]) == dataclasses.replace(profile, samples=[])
    assert len(again.samples) == len(profile.samples)
    assert again.samples[0].values_us == pytest.approx(profile.samples[0].values_us, abs=1e-3)


def test_newer_fields_are_ignored_and_older_files_load(profile):
    data = json.loads(profile.to_json())
    data["from_the_future"] = {"x": 1}
    data["crossover"][0]["also_new"] = 2
    for key in ("fits", "amortisation", "crossover_throughput", "model", "graph_gap_us"):
        del data[key]
    loaded = prof.profile_from_dict(data)
    assert loaded.graph_node_us == profile.graph_node_us and loaded.fits == [] and loaded.graph_gap_us is None


@pytest.mark.parametrize("version", [None, 0, prof.SCHEMA_VERSION + 1, "1", True])
def test_unsupported_schema_is_a_usage_error(profile, version):
    data = json.loads(profile.to_json())
    data["schema_version"] = version
    with pytest.raises(UsageError, match="schema_version"):
        prof.profile_from_dict(data)


@pytest.mark.parametrize("name", ["profile.json", "profile-quick.json", "crossover_h200.json"])
def test_recorded_version_1_profiles_load_through_the_migration(name):
    path = Path(__file__).parent / "data" / name
    raw = json.loads(path.read_text())
    assert raw["schema_version"] == 1
    p = prof.load_profile(path).profile
    assert p.schema_version == prof.SCHEMA_VERSION
    assert p.noisy is False and p.spread == {}
    assert any("spread is unknown" in n for n in p.notes)
    assert p.eager_op_us.median == pytest.approx(raw["eager_op_us"]["median"])
    assert len(p.samples) == len(raw["samples"]) and all(s.round is None for s in p.samples)


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d.update(graph_node_us={"median": "fast", "low": 0, "high": 1}),
        lambda d: d.update(samples=[{"kind": "eager_op", "count": "many", "values_us": [1.0]}]),
        lambda d: d.update(crossover="none"),
        lambda d: d.pop("machine"),
        lambda d: d.update(noisy="perhaps"),
    ],
)
def test_malformed_profiles_are_one_usage_error(profile, tmp_path, change):
    data = json.loads(profile.to_json())
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="not a launchprof device profile") as raised:
        prof.load_profile(path)
    assert "\n" not in str(raised.value)


def test_the_profile_publishes_a_json_schema(profile):
    schema = prof.profile_json_schema()
    assert {"eager_op_us", "noisy", "spread", "samples"} <= set(schema["properties"])
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(json.loads(profile.to_json()), schema)


def test_cli_exit_code_for_a_malformed_profile_is_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema_version": 2, "machine": {"gpu": 3}}))
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    done = subprocess.run([sys.executable, "-m", "launchprof", "analyze", str(script), "--profile", str(bad)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "not a launchprof device profile" in done.stderr and "Traceback" not in done.stderr


def test_load_profile_errors_are_one_line_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="not found"):
        prof.load_profile(tmp_path / "missing.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema_version": 1, "mach')
    with pytest.raises(UsageError, match="not valid JSON"):
        prof.load_profile(broken)
    markdown = tmp_path / "README.md"
    markdown.write_text("# not a profile\n")
    with pytest.raises(UsageError, match="is not a launchprof device profile: it is not JSON"):
        prof.load_profile(markdown)
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(UsageError, match="not a text JSON file"):
        prof.load_profile(binary)
    foreign = tmp_path / "foreign.json"
    foreign.write_text('{"schema_version": 1}')
    with pytest.raises(UsageError, match="not a launchprof device profile"):
        prof.load_profile(foreign)


def test_cache_location_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("LAUNCHPROF_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert prof.cache_dir() == tmp_path / "home" / ".cache" / "launchprof" / "profiles"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert prof.cache_dir() == tmp_path / "xdg" / "launchprof" / "profiles"
    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "lp"))
    assert prof.cache_dir() == tmp_path / "lp" / "profiles"


def test_slug_is_one_safe_file_name_per_gpu_driver_torch():
    slug = prof.profile_slug(H200)
    assert slug == "nvidia-h200_driver-580.95.05_torch-2.11.0-cu130"
    assert prof.profile_slug(H100) != slug
    assert prof.profile_slug(Machine(None, None, None, None, "3.12")) == "unknown-gpu_driver-unknown_torch-unknown"
    assert "/" not in prof.profile_slug(Machine("a/b c", "1", None, "2", "3"))


def test_cached_profile_is_found_for_the_same_machine(cache, profile):
    path = prof.save_to_cache(profile)
    assert path.parent == cache
    found = prof.find_cached_profile(H200)
    assert found is not None and found.path == path and found.warnings == ()
    assert found.profile.graph_node_us == profile.graph_node_us


def test_a_profile_from_another_machine_loads_with_a_warning(cache, profile):
    prof.save_to_cache(dataclasses.replace(profile, machine=H100))
    found = prof.find_cached_profile(H200)
    assert found is not None and found.profile.machine == H100
    assert len(found.warnings) == 1
    assert "NVIDIA H100" in found.warnings[0] and "run `launchprof crossover`" in found.warnings[0]


def test_lookup_prefers_the_same_gpu_and_skips_broken_files(cache, profile):
    prof.save_to_cache(dataclasses.replace(profile, machine=H100, created="2030-01-01T00:00:00+00:00"))
    prof.save_to_cache(dataclasses.replace(profile, machine=dataclasses.replace(H200, driver="575.1")))
    (cache / "zz-broken.json").write_text("{not json")
    found = prof.find_cached_profile(H200)
    assert found.profile.machine.gpu == "NVIDIA H200"
    assert "driver 575.1" in found.warnings[0]


def test_no_cache_means_no_profile(cache):
    assert prof.find_cached_profile(H200) is None


def test_partial_profile_warns(profile, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(dataclasses.replace(profile, partial=True).to_json())
    loaded = prof.load_profile(path, H200)
    assert any("partial" in w for w in loaded.warnings)


# --- the command, without a GPU ------------------------------------------------------


def options(**kw) -> command.CrossoverOptions:
    base = dict(quick=True, output=None, format="text", plot=None)
    base.update(kw)
    return command.CrossoverOptions(**base)


def test_usage_errors_come_before_the_environment(tmp_path):
    with pytest.raises(UsageError, match="unknown format"):
        command.run(options(format="md"))
    with pytest.raises(UsageError, match="plot"):
        command.run(options(plot=tmp_path / "curves.jpg"))
    with pytest.raises(UsageError, match="does not exist"):
        command.run(options(output=tmp_path / "no" / "such" / "p.json"))


def test_no_cuda_is_one_line_and_exit_4():
    pytest.importorskip("typer")
    try:
        import torch

        if torch.cuda.is_available():
            pytest.skip("a CUDA device is present: this checks the no-GPU message")
    except ImportError:
        pass
    done = subprocess.run([sys.executable, "-m", "launchprof", "crossover", "--quick"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 4
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "lint, report and compare work without a GPU" in lines[0]


def test_run_writes_cache_output_and_plot(monkeypatch, cache, tmp_path, capsys):
    sweep = SweepResult(samples=tuple(simulate_samples(QUICK_PLAN)), notes=("cupy empty kernel unavailable",), partial=False, elapsed_s=1.0)
    _fake_gpu(monkeypatch, sweep)
    out, plot = tmp_path / "profile.json", tmp_path / "curves.html"
    assert command.run(options(output=out, plot=plot, format="json")) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["graph_node_us"]["median"] > 0
    assert prof.load_profile(out).profile.machine == H200
    assert (cache / f"{prof.profile_slug(H200)}.json").is_file()
    page = plot.read_text()
    assert page.startswith("<!doctype html>") and "<svg" in page and "NVIDIA H200" in page


def test_ctrl_c_writes_a_partial_profile_then_exits_130(monkeypatch, cache, tmp_path):
    samples = tuple(s for s in simulate_samples(QUICK_PLAN) if s.kind in ("calibration", "eager_op"))
    _fake_gpu(monkeypatch, SweepResult(samples=samples, notes=("interrupted during floor",), partial=True, elapsed_s=0.5))
    out = tmp_path / "partial.json"
    with pytest.raises(Interrupted) as raised:
        command.run(options(output=out))
    assert int(raised.value.exit_code) == 130
    data = json.loads(out.read_text())
    assert data["partial"] is True and data["eager_op_us"] is not None and data["graph_node_us"] is None


def test_a_device_that_fails_at_start_is_an_environment_problem(monkeypatch, cache):
    def broken(plan, progress=None):
        raise RuntimeError("CUDA error: no kernel image is available for execution on the device")

    _fake_gpu(monkeypatch, None, sweep_fn=broken)
    with pytest.raises(EnvironmentProblem, match="no kernel image"):
        command.run(options())


def test_png_and_svg_plots(profile, tmp_path):
    from launchprof.crossover.plot import render_svg, write_plot

    write_plot(profile, tmp_path / "c.png")
    assert (tmp_path / "c.png").read_bytes().startswith(b"\x89PNG")
    assert render_svg(profile).startswith("<svg")


def _fake_gpu(monkeypatch, result, sweep_fn=None) -> None:
    """Stand in for the GPU: the environment check passes, the sweep returns ``result``."""
    import launchprof.crossover.sweep as sweep
    import launchprof.model.machine as machine

    monkeypatch.setattr(command, "check_environment", lambda plot: None)
    monkeypatch.setattr(machine, "collect_machine", lambda: H200)
    monkeypatch.setattr(sweep, "run_sweep", sweep_fn or (lambda plan, progress=None: result))
