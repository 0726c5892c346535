"""The run file: what analyze writes is what report re-analyses, on any machine."""

from __future__ import annotations

import gzip
import json
import os
import time
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launchprof.analysis import analyse
from launchprof.cli import app
from launchprof.commands.analyze import AnalyzeOptions, save_run
from launchprof.errors import UsageError
from launchprof.run.evidence import parse_events
from launchprof.run.header_records import RUN_FORMAT_VERSION, RunHeader
from launchprof.model.core import Report
from launchprof.run import default_run_path, in_kept_runs, load_run, prune, write_run
from launchprof.commands.worker_runner import WorkerResult
from tests.recorded import RUNS, load, recorded

SCRIPT = """import torch

def step(x, lr):
    return x * lr  # the hazard's line
"""


def _project(tmp_path: Path) -> tuple[Path, list[dict], Path]:
    """A project with one script, events that name it by absolute path, and a trace."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    script = root / "pkg" / "train.py"
    script.write_text(SCRIPT)
    trace = tmp_path / "rundir" / "trace.json"
    trace.parent.mkdir()
    trace.write_text(json.dumps({"traceEvents": []}))
    events = [
        {"type": "machine", "t": 0.1, "machine": {"gpu": "NVIDIA H200", "driver": "580", "cuda": "13.0", "torch": "2.11", "python": "3.12", "cpu_cores": 16}},
        {"type": "target", "t": 0.2, "name": "step", "file": str(script), "line": 3},
        {"type": "call-site", "t": 0.3, "file": str(script), "line": 4, "code": "return x * lr"},
        {"type": "trace", "t": 0.4, "what": "eager", "path": str(trace), "calls": 0},
        {"type": "timing", "t": 0.5, "kind": "eager", "mode": "burst", "burst": 0, "wall_us": [10.0, 11.0, 12.0]},
        {"type": "a-type-from-the-future", "t": 0.6, "anything": [1, 2]},
        {"type": "script-end", "t": 0.7, "status": "ok", "calls": 3},
    ]
    return root, events, trace


def _fake_worker(events: list[dict], trace: Path, seen: list | None = None):
    """The worker, faked (no GPU here): writes the trace into its run folder and names it
    relative to that folder, as the real one does (docs/worker-events.md). ``seen`` collects
    each config's ``calibrate``."""

    def fake_worker(config, rundir, timeout, show_output, on_events=None, **kwargs):
        if seen is not None:
            seen.append(config.calibrate)
        (rundir / "trace.json").write_text(trace.read_text())
        moved = [dict(e, path="trace.json") if e["type"] == "trace" else e for e in events]
        return WorkerResult(events=moved, returncode=0, timed_out=False, interrupted=False, wall_s=2.0, log_path=None)

    return fake_worker


def _repack(name: str, tmp_path: Path, out: str, profile: dict | None = None) -> Path:
    """A recorded run written again as ``out`` (with or without a device profile inside)."""
    from launchprof.run.file import write_run

    run = load(name)
    traces = {}
    for what, member in run.header.traces.items():
        path = tmp_path / Path(member).name
        path.write_bytes(run.traces[member])
        traces[what] = path
    return write_run(run.header, run.events, traces, tmp_path / out, sources={}, profile=profile)


PROFILE = Path(__file__).parent / "data" / "profile.json"


def _header(root: Path, **kw) -> RunHeader:
    return RunHeader(format_version=RUN_FORMAT_VERSION, launchprof_version="0", created="2026-01-01T00:00:00+00:00",
                     script="pkg/train.py", target="step", project_root=str(root), **kw)


def test_round_trip_stores_sources_and_maps_paths(tmp_path):
    root, events, trace = _project(tmp_path)
    out = write_run(_header(root), events, {"eager": trace}, tmp_path / "a.lprun")
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        assert {"header.json", "events.jsonl", "samples.json", "traces/trace.json.gz", "sources/pkg/train.py"} <= names
        assert json.loads(zf.read("samples.json")) == {"eager": [10.0, 11.0, 12.0]}
        assert json.loads(gzip.decompress(zf.read("traces/trace.json.gz"))) == {"traceEvents": []}
    # The project moves away: the run still holds everything the analysis reads.
    os.rename(root, tmp_path / "gone")
    run = load_run(out)
    assert run.sources["pkg/train.py"] == SCRIPT
    site = next(e for e in run.events if e["type"] == "call-site")
    assert site["file"] == "pkg/train.py"
    assert next(e for e in run.events if e["type"] == "trace")["path"] == "traces/trace.json.gz"
    assert all(e["type"] != "a-type-from-the-future" for e in run.events)
    assert run.trace("eager") == {"traceEvents": []} and run.trace("replay") is None
    report = analyse(run)
    assert report.eager is not None and report.eager.timing == "burst" and report.eager.samples_us == [10.0, 11.0, 12.0]
    assert report.project_root == str(root) and report.run_file == str(out)


def _zip(path: Path, header: object, events: str = "") -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("header.json", json.dumps(header))
        zf.writestr("events.jsonl", events)
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: (p.write_text("hello"), p)[1], "not a launchprof run file"),
        (lambda p: _zip(p, {"format_version": 99}), "upgrade launchprof"),
        (lambda p: _zip(p, {"launchprof_version": "0"}), "format_version"),
        (lambda p: _zip(p, {"format_version": 1, "launchprof_version": "0", "created": "x", "script": 5}), "script"),
        (
            lambda p: _zip(p, {"format_version": 1, "launchprof_version": "0", "created": "x", "script": "s.py"},
                           json.dumps({"type": "timing", "kind": "eager", "wall_us": ["ten"]}) + "\n"),
            "event 1 \\(timing\\) field wall_us.0",
        ),
    ],
)
def test_malformed_run_is_a_usage_error(tmp_path, make, message):
    path = make(tmp_path / "bad.lprun")
    with pytest.raises(UsageError, match=message):
        load_run(path)


def test_a_report_named_as_a_run_says_it_holds_json(tmp_path):
    path = tmp_path / "report.lprun"
    path.write_text(" " + (Path(__file__).parent / "data" / "decode_loop.report.json").read_text())
    with pytest.raises(UsageError, match="holds JSON, not a launchprof run file"):
        load_run(path)


@pytest.mark.parametrize("samples", [b'{"eager": ["ten"]}', b"[1, 2]", b"{not json", b'{"eager": [true]}'])
def test_damaged_raw_samples_are_a_damaged_run(tmp_path, samples):
    """samples.json is a view of the events that nothing re-derives: a damaged one says so."""
    source, path = RUNS / "decode_loop.lprun", tmp_path / "d.lprun"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(path, "w") as zout:
        for info in zin.infolist():
            zout.writestr(info, samples if info.filename == "samples.json" else zin.read(info.filename))
    with pytest.raises(UsageError, match="samples.json in the run"):
        load_run(path)
    load_run(source)  # the recorded one is fine


def test_report_reanalyses_a_run_file(tmp_path):
    out = tmp_path / "r.json"
    result = CliRunner().invoke(app, ["report", str(RUNS / "decode_loop.lprun"), "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert data["verdict"] == "graphs-help" and data["run_file"].endswith("decode_loop.lprun")
    assert data["hazards"] == [] or all(not h["file"].startswith("/work/") for h in data["hazards"])


def test_report_on_a_broken_run_is_one_line_exit_2(tmp_path):
    bad = _zip(tmp_path / "bad.lprun", {"format_version": 7})
    result = CliRunner().invoke(app, ["report", str(bad)])
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if line.strip()] == [
        line for line in result.stderr.splitlines() if "upgrade launchprof" in line
    ]


def test_default_places(tmp_path):
    script = Path("decode.py")
    assert default_run_path(script, [], tmp_path / "x.lprun") == tmp_path / "x.lprun"
    assert default_run_path(script, [tmp_path / "out" / "r.json", tmp_path / "s.sarif"], None) == tmp_path / "out" / "r.lprun"
    auto = default_run_path(script, [], None, cwd=tmp_path)
    assert auto.parent == tmp_path / ".launchprof" / "runs" and auto.name.startswith("decode-") and auto.suffix == ".lprun"
    # `-o -` is standard output: the run goes beside the first file, or to the kept runs
    assert default_run_path(script, [Path("-"), tmp_path / "r.md"], None) == tmp_path / "r.lprun"
    assert default_run_path(script, [Path("-")], None, cwd=tmp_path).parent == tmp_path / ".launchprof" / "runs"
    # the kept runs, pruned to the last ten, are where a run goes without a file -o or --run-out
    assert in_kept_runs([], None) and in_kept_runs([Path("-")], None)
    assert not in_kept_runs([Path("-"), tmp_path / "r.md"], None) and not in_kept_runs([], tmp_path / "x.lprun")


def test_prune_keeps_the_newest_ten(tmp_path):
    for i in range(13):
        p = tmp_path / f"r{i:02d}.lprun"
        p.write_text("")
        os.utime(p, (time.time() + i, time.time() + i))
    gone = prune(tmp_path)
    assert sorted(p.name for p in gone) == ["r00.lprun", "r01.lprun", "r02.lprun"]
    assert len(list(tmp_path.glob("*.lprun"))) == 10


def test_analyze_saves_the_worker_folder_as_a_run(tmp_path, monkeypatch):
    root, events, trace = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = WorkerResult(events=events, returncode=0, timed_out=False, interrupted=False, wall_s=1.5, log_path=None)
    options = AnalyzeOptions(script=root / "pkg" / "train.py", target="step", outputs=(tmp_path / "rep.json",))
    path = save_run(options, root, result, trace.parent, parse_events(events))
    assert path == tmp_path / "rep.lprun"
    run = load_run(path)
    assert run.header.script == "pkg/train.py" and run.header.worker.wall_s == 1.5
    assert run.header.machine is not None and run.header.machine.cpu_cores == 16


def test_analyze_stores_the_loaded_device_profile_in_its_file_format(tmp_path, monkeypatch):
    """save_run takes the profile as loaded (typed) and writes the JSON a profile file holds."""
    from launchprof.analysis.load import stored_profile
    from launchprof.crossover.profile import load_profile

    root, events, trace = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = WorkerResult(events=events, returncode=0, timed_out=False, interrupted=False, wall_s=1.5, log_path=None)
    options = AnalyzeOptions(script=root / "pkg" / "train.py", target="step", outputs=(tmp_path / "rep.json",))
    profile = load_profile(PROFILE).profile
    run = load_run(save_run(options, root, result, trace.parent, parse_events(events), profile))
    assert run.profile == profile.to_dict() and stored_profile(run.profile) == profile


@pytest.mark.parametrize("name", recorded(["decode_loop", "hidden_sync"]))
def test_recorded_runs_load_with_their_sources(name):
    run = load(name)
    assert run.header.project_root == "/work/main" and f"sample_models/{name}.py" in run.sources
    assert not any("/work/main/" in json.dumps(e) for e in run.events)


def test_analyze_end_to_end_with_a_fake_worker(tmp_path, monkeypatch, capsys):
    """analyze -> worker (faked: no GPU here) -> run file -> load_run -> analyse -> outputs."""
    import launchprof.commands.analyze as analyze_cmd

    root, events, trace = _project(tmp_path)

    fake_worker = _fake_worker(events, trace)
    monkeypatch.setattr(analyze_cmd, "run_worker", fake_worker)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    code = analyze_cmd.run(AnalyzeOptions(script=root / "pkg" / "train.py", target="step", outputs=(out,)))
    assert code == 0
    assert f"run saved: {tmp_path / 'r.lprun'}" in capsys.readouterr().err.replace("\n", "")
    data = json.loads(out.read_text())
    assert data["run_file"] == str(tmp_path / "r.lprun") and data["project_root"] == str(root)
    assert data["eager"]["timing"] == "burst" and data["eager"]["samples_us"] == [10.0, 11.0, 12.0]
    assert data["machine"]["cpu_cores"] == 16
    again = analyse(load_run(tmp_path / "r.lprun"))
    assert again.eager == Report.from_dict(data).eager
    assert load_run(tmp_path / "r.lprun").trace("eager") == json.loads(trace.read_text())


def _converter(*args: str):
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "record-test-data"
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=120)


def test_converter_errors_are_one_line(tmp_path):
    for args, words in (((), "give the folder"), ((str(tmp_path / "nope"),), "folder not found"), ((str(tmp_path),), "no raw runs")):
        proc = _converter(*args)
        assert proc.returncode == 2 and words in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_converter_packs_a_raw_old_run(tmp_path):
    """A raw run folder as the old worker left it (absolute paths) becomes a loadable .lprun."""
    root, events, trace = _project(tmp_path)
    raw = tmp_path / "raw" / "train"
    raw.mkdir(parents=True)
    (raw / "events.jsonl.gz").write_bytes(gzip.compress("".join(json.dumps(e) + "\n" for e in events).encode()))
    (raw / "trace.json").write_text(trace.read_text())
    proc = _converter(str(tmp_path / "raw"), "--out", str(tmp_path / "out"), "--root", str(root), "--sources", str(root))
    assert proc.returncode == 0, proc.stderr
    run = load_run(tmp_path / "out" / "train.lprun")
    assert run.sources == {"pkg/train.py": SCRIPT}
    assert next(e for e in run.events if e["type"] == "call-site")["file"] == "pkg/train.py"
    assert run.trace("eager") == {"traceEvents": []}


def test_a_run_file_carries_the_profile_it_predicted_with(tmp_path, monkeypatch):
    """`report RUN.lprun` on a machine without that GPU's cached profile keeps the prediction."""
    from launchprof.analysis.load import report_from

    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "empty-cache"))
    profile = json.loads(PROFILE.read_text())
    bare = _repack("decode_loop", tmp_path, "bare.lprun")
    carried = _repack("decode_loop", tmp_path, "carried.lprun", profile)
    assert report_from(bare).prediction is None
    with_profile = report_from(carried)
    assert with_profile.prediction is not None and with_profile.prediction.median > 1.0
    assert load_run(carried).profile == profile


@pytest.mark.parametrize(("flag", "expected"), [((), True), (("--no-calibrate",), False)])
def test_no_calibrate_reaches_the_workers_config(tmp_path, monkeypatch, flag, expected):
    """`--no-calibrate` on the command line is the worker's `calibrate=False`."""
    from typer.testing import CliRunner

    import launchprof.commands.analyze as analyze_cmd
    from launchprof.cli import app

    root, events, trace = _project(tmp_path)
    seen = []

    fake_worker = _fake_worker(events, trace, seen)
    monkeypatch.setattr(analyze_cmd, "run_worker", fake_worker)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["analyze", str(root / "pkg" / "train.py"), "--target", "step", "-o", str(tmp_path / "r.json"), *flag])
    assert result.exit_code == 0, result.output
    assert seen == [expected]


def test_a_corrupt_trace_inside_a_run_is_a_usage_error(tmp_path):
    """A valid zip whose gzipped trace is cut short: one line, exit 2 (not an internal error)."""
    import zipfile

    from typer.testing import CliRunner

    from launchprof.cli import app

    source = RUNS / "decode_loop.lprun"
    bad = tmp_path / "badtrace.lprun"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(bad, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            zout.writestr(item, data[:100] if item.filename.startswith("traces/") else data)
    result = CliRunner().invoke(app, ["report", str(bad)])
    assert result.exit_code == 2, result.output
    assert "truncated or corrupt" in result.output


def test_an_unwritable_run_file_place_keeps_the_run_and_the_report(tmp_path, monkeypatch, capsys):
    """The GPU run is done when the run file is written: a write error there must not lose it."""
    import launchprof.commands.analyze as analyze_cmd
    import launchprof.commands.analyze_steps as analyze_steps
    from launchprof.run import file as run_file

    root, events, trace = _project(tmp_path)

    fake_worker = _fake_worker(events, trace)
    real = run_file.write_run
    calls = []

    def failing_once(*args, **kwargs):
        calls.append(args[3])
        if len(calls) == 1:
            raise PermissionError(13, "Permission denied")
        return real(*args, **kwargs)

    monkeypatch.setattr(analyze_cmd, "run_worker", fake_worker)
    monkeypatch.setattr(analyze_steps, "write_run", failing_once)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.json"
    assert analyze_cmd.run(AnalyzeOptions(script=root / "pkg" / "train.py", target="step", outputs=(out,))) == 0
    err = capsys.readouterr().err.replace("\n", "")
    assert "cannot write the run file" in err and str(calls[1]) in err
    assert json.loads(out.read_text())["run_file"] == str(calls[1]) and calls[1].is_file()


def test_report_of_a_run_draws_the_curve_of_the_profile_it_predicts_with(tmp_path, monkeypatch):
    """`report RUN.lprun -f html` uses the run's profile for the prediction and the curve alike."""
    from typer.testing import CliRunner

    from launchprof.cli import app

    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "empty-cache"))
    carried = _repack("decode_loop", tmp_path, "carried.lprun", json.loads(PROFILE.read_text()))
    html = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", str(carried), "-o", str(html)])
    assert result.exit_code == 0, result.output
    bare = tmp_path / "bare.html"
    plain = _repack("decode_loop", tmp_path, "plain.lprun")
    assert CliRunner().invoke(app, ["report", str(plain), "-o", str(bare)]).exit_code == 0
    assert "crossover" in html.read_text().lower()
    assert html.read_text().count("<svg") > bare.read_text().count("<svg")


def test_a_report_copied_to_a_run_name_is_read_as_the_report(tmp_path):
    """`report x.lprun` on JSON reads the report it is, as a run file named .json is read as
    the run it is (by content, both ways)."""
    report_json = Path(__file__).parent / "data" / "decode_loop.report.json"
    as_run = tmp_path / "x.lprun"
    as_run.write_bytes(report_json.read_bytes())
    proc = CliRunner().invoke(app, ["report", str(as_run), "-f", "json"])
    assert proc.exit_code == 0, proc.output
    assert json.loads(proc.output)["verdict"] == json.loads(report_json.read_text())["verdict"]
    run_as_json = tmp_path / "y.json"
    run_as_json.write_bytes((RUNS / "decode_loop.lprun").read_bytes())
    assert CliRunner().invoke(app, ["report", str(run_as_json), "-f", "json"]).exit_code == 0
