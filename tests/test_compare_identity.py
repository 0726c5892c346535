"""Hazard identity in ``compare``, and warnings when the two runs differ in kind."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

import reports
from launchprof.cli import app
from launchprof.analysis.comparison import compare, evaluate, parse_rule
from launchprof.model.hazard_identity import hazard_fingerprint
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report

runner = CliRunner()
REPO = Path(__file__).resolve().parent.parent


def _recorded(name: str) -> Report:
    found = reports.recorded_reports()
    assert name in found, f"recorded report {name} is missing"
    return found[name]


def _move(h: Hazard, lines: int) -> Hazard:
    """The same hazard after ``lines`` lines were inserted above it (snippet moves with it)."""
    details = dict(h.details)
    if "snippet" in details:
        details["snippet"] = [[n + lines, text] for n, text in details["snippet"]]
    return dataclasses.replace(h, line=(h.line or 0) + lines, details=details)


def test_recorded_hazards_moved_down_three_lines_are_not_new() -> None:
    base = _recorded("hidden_sync.report.json")
    assert base.hazards and all(h.details.get("code") for h in base.hazards)
    moved = dataclasses.replace(base, hazards=[_move(h, 3) for h in base.hazards])
    result = compare(base, moved)
    assert result.hazards_added == [] and result.hazards_removed == []
    assert evaluate([parse_rule("new-hazards")], result) == []


def test_a_changed_line_is_new() -> None:
    base = _recorded("hidden_sync.report.json")
    first = base.hazards[1]
    changed = dataclasses.replace(first, details={**first.details, "code": "scale = h.abs().amax().item()"})
    new = dataclasses.replace(base, hazards=[changed if h is first else h for h in base.hazards])
    result = compare(base, new)
    assert [(k.kind, k.line) for k in result.hazards_added] == [(first.kind, first.line)]
    assert [(k.kind, k.line) for k in result.hazards_removed] == [(first.kind, first.line)]
    assert evaluate([parse_rule("new-hazards")], result)[0].startswith("new-hazards: 1 new hazard(s): hidden-sync at ")


def test_code_from_the_snippet_when_details_have_no_code() -> None:
    base = reports.graphs_help()  # frozen-scalar carries a snippet, no "code"
    moved = dataclasses.replace(base, hazards=[_move(base.hazards[0], 3), *base.hazards[1:]])
    assert compare(base, moved).hazards_added == []


def test_a_second_identical_line_is_a_new_hazard() -> None:
    base = _recorded("hidden_sync.report.json")
    twice = dataclasses.replace(base, hazards=[*base.hazards, _move(base.hazards[1], 30)])
    added = compare(base, twice).hazards_added
    assert [(k.kind, k.line) for k in added] == [(base.hazards[1].kind, (base.hazards[1].line or 0) + 30)]


def test_the_reports_fingerprint_is_used_when_present() -> None:
    base = reports.graphs_help()
    h = base.hazards[1]  # dynamic-shape: no code, so without a fingerprint the line decides
    moved = dataclasses.replace(base, hazards=[base.hazards[0], dataclasses.replace(h, line=90), base.hazards[2]])
    assert [k.line for k in compare(base, moved).hazards_added] == [90]
    fp = hazard_fingerprint(h.kind, "decode.py", "def step(tokens, cache, temperature):")

    def stamped(r: Report) -> Report:
        return dataclasses.replace(r, hazards=[r.hazards[0], dataclasses.replace(r.hazards[1], fingerprint=fp), r.hazards[2]])

    assert compare(stamped(base), stamped(moved)).hazards_added == []


# --- runs of a different kind ----------------------------------------------------------------


def _on(report: Report, **machine: object) -> Report:
    return dataclasses.replace(report, machine=dataclasses.replace(report.machine, **machine))


def test_loaded_host_other_gpu_processes_and_cpu_model() -> None:
    base = _on(_recorded("decode_loop.report.json"), cpu_model="AMD EPYC 9654", cpu_cores=16, load_avg=3.1, gpu_other_processes=False)
    new = _on(_recorded("decode_loop.report.json"), cpu_model="Intel Xeon Platinum 8480+", cpu_cores=16, load_avg=22.5, gpu_other_processes=True)
    assert compare(base, new).warnings == [
        "different CPU: AMD EPYC 9654 -> Intel Xeon Platinum 8480+",
        "new run: the host was loaded (load average 22.5 on 16 cores)",
        "new run: other processes were using the GPU",
    ]
    assert compare(base, base).warnings == []


def test_recorded_runs_of_different_scripts_warn_in_every_format(tmp_path: Path) -> None:
    base, new = reports.DATA / "decode_loop.report.json", reports.DATA / "long_kernels.report.json"
    text = runner.invoke(app, ["compare", str(base), str(new)])
    flowing = " ".join(text.stdout.split())  # the terminal text wraps to its width
    assert text.exit_code == 0 and "warning: different script: decode_loop.py -> long_kernels.py: timings may not be comparable" in flowing
    js = runner.invoke(app, ["compare", str(base), str(new), "-f", "json"])
    assert json.loads(js.stdout)["warnings"] == ["different script: decode_loop.py -> long_kernels.py"]
    assert "launchprof: warning: different script: decode_loop.py -> long_kernels.py" in js.stderr
    md = runner.invoke(app, ["compare", str(base), str(new), "-f", "md"])
    assert "> [!WARNING]" in md.stdout and "long\\_kernels.py" in md.stdout


# --- the command: formats, odd terminals, run files --------------------------------------------


def test_help_lists_only_the_formats_compare_supports() -> None:
    result = runner.invoke(app, ["compare", "--help"], terminal_width=200)
    assert "text, json, md" in result.stdout
    assert not any(word in result.stdout for word in ("sarif", "junit", "html"))
    for fmt, ok in (("md", 0), ("html", 2), ("junit", 2)):
        path = str(reports.DATA / "decode_loop.report.json")
        assert runner.invoke(app, ["compare", path, path, "-f", fmt]).exit_code == ok


@pytest.mark.parametrize("fmt", ["text", "md", "json"])
def test_ascii_stdout_does_not_crash(fmt: str) -> None:
    base, new = reports.DATA / "decode_loop.report.json", reports.DATA / "hidden_sync.report.json"
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "PYTHONPATH": str(REPO), "COLUMNS": "120"}
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "compare", str(base), str(new), "-f", fmt, "--fail-on", "verdict"],
        capture_output=True, env=env, timeout=120, check=False,
    )
    assert proc.returncode == 1, proc.stderr.decode(errors="replace")
    out = proc.stdout.decode("ascii")  # raises if anything but ASCII came out
    assert "Traceback" not in proc.stderr.decode("ascii")
    if fmt != "json":
        assert " -> " in out and "5.61 ms" in out and "?" not in out.replace("(?", "")
    else:
        assert json.loads(out)["verdict"]["worse"] is True


def _without_profile(run_file: Path, out: Path) -> Path:
    """A copy of the run file without the device profile it carries (profile.json)."""
    with zipfile.ZipFile(run_file) as zin, zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            if item.filename != "profile.json":
                zout.writestr(item, zin.read(item.filename))
    return out


def test_run_files_go_through_load_any(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded .lprun is re-analysed with the device profile cached for its own machine;
    with none cached, with the profile the run carries; with neither, no prediction."""
    from launchprof.analysis import analyse
    from launchprof.analysis.load import stored_profile
    from launchprof.commands.compare import load_any
    from launchprof.crossover.profile import cache_path, load_profile, mismatch_warnings, profile_slug
    from launchprof.run import load_run

    run_file = reports.DATA / "runs" / "decode_loop.lprun"
    recorded_profile = reports.DATA / "profile.json"
    assert run_file.exists() and recorded_profile.exists(), "recorded run or profile is missing"
    monkeypatch.setenv("LAUNCHPROF_CACHE_DIR", str(tmp_path / "cache"))
    run = load_run(run_file)
    carried = stored_profile(run.profile)
    assert carried is not None, "the recorded run carries no device profile"
    # nothing cached: the prediction is the one the carried profile gives, not an invented one
    assert load_any(run_file).prediction == analyse(run, carried).prediction is not None
    bare = _without_profile(run_file, tmp_path / "bare.lprun")
    assert load_run(bare).profile is None and load_run(bare).events == run.events
    assert load_any(bare).prediction is None  # no profile anywhere: no prediction invented
    machine = run.header.machine
    # a profile is for the GPU, driver and torch (its cache key); the run's header also
    # carries the CPU, load and clocks of the moment, which a profile does not
    profile = load_profile(recorded_profile).profile
    assert profile_slug(profile.machine) == profile_slug(machine), "the recorded profile is for another machine"
    assert mismatch_warnings(profile, machine) == ()
    cached = cache_path(machine)
    cached.parent.mkdir(parents=True)
    cached.write_bytes(recorded_profile.read_bytes())
    prediction = load_any(run_file).prediction
    assert prediction is not None and prediction.low is not None and prediction.high is not None
    # the profile cached for the run's own machine comes before the carried one, for both files
    assert prediction == analyse(run, profile).prediction == load_any(bare).prediction
    assert prediction != analyse(run, carried).prediction, "the two profiles predict alike: the order is not tested"
    assert prediction.low <= prediction.median <= prediction.high and "device profile NVIDIA H200" in (prediction.basis or "")
    result = runner.invoke(app, ["compare", str(run_file), str(run_file), "-f", "json", "--fail-on", "new-hazards"])
    assert result.exit_code == 0, result.output
    bad = tmp_path / "broken.lprun"
    bad.write_bytes(b"")
    result = runner.invoke(app, ["compare", str(bad), str(run_file)])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr


def test_the_model_lint_compare_and_sarif_share_one_identity() -> None:
    from launchprof.analysis.comparison import hazard_key
    from launchprof.model.hazard_identity import fingerprint_of, identity_from, located_fingerprint, match_key

    report = reports.graphs_help()
    root = Path(report.script).parent
    fields = {"kind": "hidden-sync", "severity": "error", "message": "m", "file": str(root / "decode.py"), "line": 3, "hint": "h"}
    coded = Hazard(**fields, details={"code": "x.item()  # why"})
    fp = hazard_fingerprint("hidden-sync", "decode.py", "x.item()")
    assert identity_from(coded, "decode.py") == fp and hazard_key(coded, report).identity == match_key("hidden-sync", "decode.py", 3, fp) == ("code", fp)
    assert coded.fingerprint == fingerprint_of(coded) == Hazard(**fields, details={"code": "x.item()"}).fingerprint  # lint builds this model too
    bare = Hazard(**fields)  # no code: compare matches the place, SARIF fingerprints kind and file
    assert identity_from(bare, "decode.py") is None and hazard_key(bare, report).identity == ("line", "hidden-sync", "decode.py", 3)
    assert located_fingerprint(bare, "decode.py") == hazard_fingerprint("hidden-sync", "decode.py", None)


def test_an_old_report_with_absolute_paths_matches_the_same_run() -> None:
    """A schema-1 report (absolute hazard paths, no project root) as the baseline of the same
    run's file: its one hazard is neither added nor removed, so new-hazards does not trip."""
    root = Path(__file__).resolve().parent.parent
    old = json.loads((root / "tests" / "data" / "decode_loop.report.json").read_text())
    assert old["schema_version"] == 1 and old.get("project_root") is None
    assert all(Path(h["file"]).is_absolute() for h in old["hazards"])  # the case, not a relative one
    result = CliRunner().invoke(app, ["compare", str(root / "tests/data/decode_loop.report.json"),
                                      str(root / "tests/data/runs/decode_loop.lprun"), "--fail-on", "new-hazards", "-f", "json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    body = json.loads(result.output[result.output.index("{"):])
    assert body["hazards_added"] == [] and body["hazards_removed"] == [], body
