"""The worker's look at a cached device profile (crossover.cache_files): no pydantic on the
cached path, the same cache file as the profile module's, the files it refuses measured
again, and the CLI setting aside a cached file that passed the look but does not load."""

from __future__ import annotations

import dataclasses
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from launchprof.commands.analyze_steps import load_device_profile
from launchprof.crossover import cache_files, calibrate
from launchprof.crossover import profile as prof
from launchprof.crossover.fit import derive_profile
from launchprof.crossover.plans import CALIBRATION_PLAN
from launchprof.crossover.simulate import simulate_samples
from launchprof.model.core import Machine
from tests.test_calibrate import H200, MACHINE_EVENT, _noisy_calibration, cache, fake_sweep  # noqa: F401 - the shared fixtures

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@pytest.fixture(scope="module")
def calibration() -> prof.DeviceProfile:
    return derive_profile(simulate_samples(CALIBRATION_PLAN), H200, quick=True, plan=CALIBRATION_PLAN.name)


REMOVE = object()


def _cached_json(profile: prof.DeviceProfile, **changes) -> Path:
    """Cache ``profile`` for H200, its JSON fields replaced by ``changes`` (REMOVE: taken out)."""
    path = prof.save_to_cache(profile)
    data = json.loads(path.read_text())
    for name, value in changes.items():
        if value is REMOVE:
            data.pop(name, None)
        else:
            data[name] = value
    path.write_text(json.dumps(data))
    return path


def test_a_cached_profile_is_found_without_pydantic_or_the_profile_models(cache, calibration, tmp_path):
    """The worker's calibration step, in a process of its own (the cache's variable is inherited)."""
    path = prof.save_to_cache(calibration)
    events = tmp_path / "events.jsonl"
    code = (
        "import json, sys\n"
        "from launchprof.worker.calibration import calibrate\n"
        "from launchprof.worker.event_writer import EventWriter\n"
        f"got = calibrate({MACHINE_EVENT!r}, EventWriter({str(events)!r}))\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'torch') or m == 'launchprof.crossover.profile')\n"
        "print(json.dumps({'status': got['status'], 'path': got['path'], 'heavy': heavy}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True).stdout
    got = json.loads(out.splitlines()[-1])
    assert got["status"] == "cached" and got["path"] == str(path), got
    assert got["heavy"] == [], got["heavy"]
    event = json.loads(events.read_text().splitlines()[-1])
    assert event["type"] == "calibration" and event["status"] == "cached" and event["path"] == str(path)


def test_the_cached_path_never_builds_the_profiles_machine(cache, calibration, monkeypatch):
    prof.save_to_cache(calibration)
    fake_sweep(monkeypatch, error=AssertionError("must not measure"))

    def refuse(machine):
        raise AssertionError("the cached path validated the machine with pydantic")

    monkeypatch.setattr(calibrate, "machine_from_dict", refuse)
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached"


def _report_json() -> str:
    return json.dumps({"schema_version": 3, "verdict": {"label": "x"}, "hazards": []})


REFUSED = {
    "not JSON": lambda p: "{not json",
    "empty": lambda p: "",
    "not text": lambda p: b"\xff\xfe\x00{",
    "a list": lambda p: "[1, 2]",
    "a report": lambda p: _report_json(),
    "no profile fields": lambda p: json.dumps({"schema_version": 2, "graph_launch_fixed_us": p["graph_launch_fixed_us"], "graph_node_us": p["graph_node_us"]}),
    "schema too new": lambda p: json.dumps(p | {"schema_version": cache_files.SCHEMA_VERSION + 1}),
    "schema zero": lambda p: json.dumps(p | {"schema_version": 0}),
    "schema as text": lambda p: json.dumps(p | {"schema_version": "2"}),
    "schema as bool": lambda p: json.dumps(p | {"schema_version": True}),
    "no schema": lambda p: json.dumps({k: v for k, v in p.items() if k != "schema_version"}),
    "no graph launch": lambda p: json.dumps(p | {"graph_launch_fixed_us": None}),
    "no per-node cost": lambda p: json.dumps(p | {"graph_node_us": None, "floor_node_us": None}),
    "coefficients absent": lambda p: json.dumps({k: v for k, v in p.items() if k not in ("graph_node_us", "floor_node_us")}),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_cached_file_the_look_refuses_is_measured_again(cache, calibration, monkeypatch, case):
    path = prof.save_to_cache(dataclasses.replace(calibration, plan="default"))
    text = REFUSED[case](json.loads(path.read_text()))
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert cache_files.read_cached(path) is None
    calls = fake_sweep(monkeypatch)
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "measured" and len(calls) == 1 and got["path"] == str(path), got
    assert prof.load_profile(path, H200).profile.plan == CALIBRATION_PLAN.name  # the measured one replaced it


def test_one_per_node_coefficient_is_enough(cache, calibration, monkeypatch):
    """A calibration needs the launch's fixed cost and one per-node cost (measure_and_cache's rule)."""
    fake_sweep(monkeypatch, error=AssertionError("must not measure"))
    for gone in ("graph_node_us", "floor_node_us"):
        path = _cached_json(calibration, **{gone: None})
        assert cache_files.read_cached(path) is not None
        assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached"


def test_the_recheck_is_decided_from_the_files_three_fields(cache, calibration, monkeypatch):
    noisy = dataclasses.replace(calibration, noisy=True, noisy_reason="eager_op_us moved 40% between rounds")
    path = prof.save_to_cache(noisy)
    entry = cache_files.read_cached(path)
    assert entry == cache_files.CachedEntry(path, CALIBRATION_PLAN.name, True, False) and calibrate.needs_recheck(entry)
    for changes in ({"rechecked": True}, {"plan": "default"}, {"noisy": False}, {"noisy": REMOVE}):
        assert not calibrate.needs_recheck(cache_files.read_cached(_cached_json(noisy, **changes))), changes


def test_a_noisy_calibration_is_measured_again_by_the_recheck(cache, monkeypatch):
    prof.save_to_cache(_noisy_calibration(1.4))
    calls = fake_sweep(monkeypatch)
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "measured" and "kept the new one" in got["message"] and len(calls) == 1, got


def test_a_noisy_calibration_that_does_not_load_is_measured_from_scratch(cache, monkeypatch):
    path = _cached_json(_noisy_calibration(1.4), eager_op_us={"median": "slow", "low": 1.0, "high": 2.0})
    assert calibrate.needs_recheck(cache_files.read_cached(path))
    calls = fake_sweep(monkeypatch)
    got = calibrate.ensure_profile(MACHINE_EVENT)
    assert got["status"] == "measured" and "measured a quick device profile" in got["message"] and len(calls) == 1, got
    assert not prof.load_profile(path).profile.rechecked


def test_a_version_1_calibration_has_no_noisy_flag_and_is_not_rechecked(cache, monkeypatch):
    """Version 1 had no rounds: its spread is unknown, never taken for noise."""
    data = json.loads((DATA / "profile.json").read_text()) | {"plan": CALIBRATION_PLAN.name}
    assert data["schema_version"] == 1 and "noisy" not in data
    event = MACHINE_EVENT | {key: data["machine"][key] for key in cache_files.KEY_FIELDS}
    cache.mkdir(parents=True)
    (cache / f"{cache_files.slug(*(event[k] for k in cache_files.KEY_FIELDS))}.json").write_text(json.dumps(data))
    fake_sweep(monkeypatch, error=AssertionError("must not measure"))
    assert calibrate.ensure_profile(event)["status"] == "cached"


MACHINES = [
    H200,
    Machine(gpu="NVIDIA H100 80GB HBM3", driver=None, cuda=None, torch="2.9.0+cu128", python="3.12.3"),
    Machine(gpu="Tesla/V100 (SXM2)  ÄÖ", driver="535.104.05", cuda="12.2", torch="2.4.0a0+git1234/dirty", python="3.11"),
    Machine(gpu=None, driver=None, cuda=None, torch=None, python="3.12"),
    Machine(gpu="", driver="", cuda="", torch="", python="3.12"),
    Machine(gpu="--weird__gpu--", driver="...", cuda=None, torch="__", python="3.12"),
]


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: repr(m.gpu))
@pytest.mark.parametrize("where", ["launchprof", "xdg", "home"])
def test_the_events_cache_path_is_the_profiles(machine, where, monkeypatch, tmp_path):
    for name in ("LAUNCHPROF_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if where == "launchprof":
        monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "lp"))
    elif where == "xdg":
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    event = dataclasses.asdict(machine) | {"cpu_model": "Xeon", "load_avg": 0.3}
    assert cache_files.event_cache_path(event) == prof.cache_path(machine)
    assert cache_files.event_cache_path(event).parent == prof.cache_dir()
    sparse = {k: v for k, v in event.items() if k in cache_files.KEY_FIELDS and v is not None}
    assert cache_files.event_cache_path(sparse) == prof.cache_path(machine)  # a missing key reads as unknown


def test_an_event_whose_key_is_not_text_has_no_cache_path_and_fails_as_before(cache, monkeypatch):
    event = MACHINE_EVENT | {"driver": 580}
    assert cache_files.event_cache_path(event) is None
    fake_sweep(monkeypatch, error=AssertionError("must not measure"))
    got = calibrate.ensure_profile(event)
    assert got["status"] == "failed" and "ValidationError" in got["message"], got


def _console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=100, color_system=None, force_terminal=False), out


def test_the_cli_sets_aside_a_cached_profile_that_passes_the_look_but_does_not_load(cache, calibration, monkeypatch):
    path = _cached_json(calibration, graph_launch_fixed_us={"median": "fast", "low": 1.0, "high": 2.0})
    fake_sweep(monkeypatch, error=AssertionError("must not measure"))
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "cached"  # the worker takes it
    assert prof.find_cached_profile(H200) is None and path.is_file()  # report and compare leave it be
    console, out = _console()
    assert load_device_profile(None, H200, console) is None
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    assert str(path) in lines[0] and "graph_launch_fixed_us.median" in lines[0] and "the next run measures this GPU again" in lines[0]
    assert lines[0].startswith("launchprof: warning: cached device profile not used:")
    assert not path.exists() and path.with_name(path.name + ".bad").is_file()
    calls = fake_sweep(monkeypatch)
    assert calibrate.ensure_profile(MACHINE_EVENT)["status"] == "measured" and len(calls) == 1
    console, out = _console()
    assert load_device_profile(None, H200, console) is not None and out.getvalue() == ""


def test_the_cli_still_uses_another_cached_profile_after_setting_the_exact_one_aside(cache, calibration, monkeypatch):
    other = dataclasses.replace(calibration, machine=dataclasses.replace(H200, driver="575.1"))
    prof.save_to_cache(other)
    path = _cached_json(calibration, crossover="none")
    console, out = _console()
    chosen = load_device_profile(None, H200, console)
    assert chosen is not None and chosen.machine.driver == "575.1"
    assert not path.exists() and "cached device profile not used" in out.getvalue() and "driver 575.1" in out.getvalue()


def test_a_cache_that_cannot_be_changed_says_to_remove_the_file(cache, calibration, monkeypatch):
    path = _cached_json(calibration, samples="none")
    monkeypatch.setattr(cache_files.os, "replace", lambda *a: (_ for _ in ()).throw(PermissionError(13, "Permission denied")))
    console, out = _console()
    assert load_device_profile(None, H200, console) is None
    assert path.is_file() and "remove it to measure this GPU again" in out.getvalue()


def test_the_cache_module_imports_the_standard_library_only():
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import launchprof.crossover.cache_files\n"
        "print('\\n'.join(sorted(set(sys.modules) - before)))\n"
    )
    added = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, check=True).stdout.split()
    ours = {m for m in added if m.startswith("launchprof")}
    assert ours <= {"launchprof", "launchprof.marker", "launchprof.version", "launchprof.crossover", "launchprof.crossover.cache_files",
                    "launchprof.fileio", "launchprof.fileio.input_files", "launchprof.errors"}, ours
    third_party = {m.split(".")[0] for m in added if not m.startswith("launchprof")} - set(sys.stdlib_module_names) - {"_distutils_hack"}
    assert not third_party, third_party
