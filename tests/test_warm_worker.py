"""The worker started before the CLI parsed its options (launchprof/commands/warm_worker.py):
which command lines start one, that ``analyze`` runs its measurement in it, that the
script's output (what the torch import prints included) and input are what a worker
started with its config gives, and that an unused one is gone with the CLI. The worker is
the CPU fake (tests/rank_scripts/cpu_plan_worker.py); no GPU."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")
from launchprof.commands import analyze, warm_worker  # noqa: E402
from launchprof.commands.analyze import AnalyzeOptions  # noqa: E402
from launchprof.run import load_run  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAKES = Path(__file__).resolve().parent / "rank_scripts"
MARK = "printed-by-the-script"


@pytest.mark.parametrize(
    "argv, wanted",
    [
        (["analyze", "train.py"], True),
        (["analyze", "--target", "step", "train.py", "--", "--steps", "3"], True),
        (["analyze", "train.py", "--help"], False),
        (["analyze", "-h"], False),
        (["analyze", "train.py", "--nproc-per-node", "2"], False),
        (["analyze", "train.py", "--nproc-per-node=2"], False),
        (["analyze", "train.py", "--", "-h", "--nproc-per-node=2"], True),  # the script's own arguments
        (["analyze"], False),
        (["report", "run.lprun"], False),
        (["crossover", "--quick"], False),
        ([], False),
    ],
)
def test_which_command_lines_start_a_waiting_worker(argv, wanted):
    assert warm_worker.wanted(argv) is wanted


def test_an_installed_package_adds_no_path_ahead_of_the_users(monkeypatch):
    """site-packages ahead of the user's PYTHONPATH would let an installed library win over
    the user's own copy of it inside the worker."""
    import site

    here = str(Path(warm_worker.__file__).resolve().parent.parent.parent)
    monkeypatch.setattr(site, "getsitepackages", lambda: [here])
    monkeypatch.setenv("PYTHONPATH", "/users/own/path")
    assert warm_worker.worker_env()["PYTHONPATH"] == "/users/own/path"


def test_the_workers_path_holds_the_package_not_its_folder():
    """The package's own folder on the path would let launchprof's subpackages (model, run,
    events...) stand in for the user's modules of those names."""
    entries = warm_worker.worker_env()["PYTHONPATH"].split(os.pathsep)
    assert (Path(entries[0]) / "launchprof" / "__init__.py").is_file()
    assert not any((Path(e) / "worker" / "__main__.py").is_file() and Path(e).name == "launchprof" for e in entries)


@pytest.fixture
def fake_worker(monkeypatch):
    """Every worker process, waiting or not, is the CPU fake."""
    real = subprocess.Popen
    started: list[subprocess.Popen] = []

    def popen(cmd, *args, **kwargs):
        proc = real(["cpu_plan_worker" if part == "launchprof.worker" else part for part in cmd], *args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(FAKES)]))
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}  # prestart sets its own
    yield started
    warm_worker.discard()
    for sig, handler in handlers.items():
        signal.signal(sig, handler)


SCRIPT = f"""
import pathlib, sys
import torch

out = pathlib.Path(sys.argv[1])
(out / "stdin").write_text(repr(sys.stdin.read()))
print({MARK!r}, flush=True)


def step(x):
    return x * 2


for i in range(200):
    step(torch.ones(4))
"""


def analyze_with(tmp_path: Path, **options) -> tuple[int, Path]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    run_out = tmp_path / "r.lprun"
    opts = AnalyzeOptions(
        script=script, script_args=(str(tmp_path),), target="step", outputs=(tmp_path / "r.json",), formats=("json",),
        calibrate=False, project_root=tmp_path, run_out=run_out, **options,
    )  # fmt: skip
    return analyze.run(opts), run_out


@pytest.mark.parametrize("where", ["terminal", "hidden"])
def test_analyze_measures_in_the_waiting_worker_and_wires_the_scripts_streams(tmp_path, fake_worker, capfd, where):
    warm_worker.prestart(["analyze", "script.py"])
    (waiting,) = fake_worker
    code, run_out = analyze_with(tmp_path, show_output=where == "terminal")
    assert code == 0
    assert len(fake_worker) == 1  # no second worker was started
    events = load_run(run_out).events
    machine = next(e for e in events if e["type"] == "machine")
    assert machine["pid"] == waiting.pid
    assert (tmp_path / "stdin").read_text() == "''"  # the script's standard input is empty, as before
    out, err = capfd.readouterr()
    if where == "terminal":
        assert MARK in out and MARK not in err
    else:
        assert MARK not in out + err


def test_what_the_interpreters_start_printed_follows_the_scripts_output(tmp_path, fake_worker, capfd, monkeypatch):
    """A site hook prints as the waiting worker's interpreter starts, before the CLI has said
    where the script's output goes: with the report on standard output, it goes to standard
    error, and standard output holds the report alone."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"print({(MARK + '-at-start')!r}, flush=True)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(FAKES), str(site)]))
    warm_worker.prestart(["analyze", "script.py"])
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(SCRIPT), encoding="utf-8")
    opts = AnalyzeOptions(
        script=script, script_args=(str(tmp_path),), target="step", formats=("json",), outputs=(),
        calibrate=False, project_root=tmp_path, run_out=tmp_path / "r.lprun",
    )  # fmt: skip
    assert analyze.run(opts) == 0
    assert len(fake_worker) == 1
    out, err = capfd.readouterr()
    assert json.loads(out)["schema_version"]  # standard output holds the report alone
    assert MARK + "-at-start" in err and MARK in err


def test_a_waiting_worker_that_died_before_it_was_told_is_replaced(tmp_path, fake_worker, monkeypatch):
    """It died after the CLI took it (an out-of-memory kill at the end of its import): the
    CLI starts a worker itself, as it did before there was a waiting one."""
    warm_worker.prestart(["analyze", "script.py"])
    (waiting,) = fake_worker
    real_take = warm_worker.take

    def take_then_die():
        proc = real_take()
        warm_worker.kill(proc)
        return proc

    monkeypatch.setattr(warm_worker, "take", take_then_die)
    code, run_out = analyze_with(tmp_path, show_output=False)
    assert code == 0 and len(fake_worker) == 2
    machine = next(e for e in load_run(run_out).events if e["type"] == "machine")
    assert machine["pid"] == fake_worker[1].pid != waiting.pid


def test_a_taken_worker_is_still_killed_by_a_stop_until_run_worker_watches_it(tmp_path, fake_worker, monkeypatch):
    """Between take() and run_worker's own stop handling, a SIGTERM ends the CLI: the worker
    taken must go with it rather than run the script alone in its own session. Once
    run_worker has it, a stop that comes while it is being told is an interrupt that kills it."""
    from launchprof.commands import worker_runner

    warm_worker.prestart(["analyze", "script.py"])
    (waiting,) = fake_worker
    assert warm_worker.take() is waiting and warm_worker._waiting == [waiting]  # a stop now would kill it
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}

    def stopped_while_told(proc, *args):
        assert proc not in warm_worker._waiting  # run_worker's handling has it now
        assert signal.getsignal(signal.SIGTERM) is worker_runner._raise_interrupt
        raise KeyboardInterrupt

    monkeypatch.setattr(worker_runner, "send", stopped_while_told)
    config = SimpleNamespace(to_file=lambda path: path.write_text("{}"), events_path=str(tmp_path / "events.jsonl"))
    with pytest.raises(KeyboardInterrupt):
        worker_runner.run_worker(config, tmp_path, None, True, waiting=waiting)
    assert waiting.poll() is not None and len(fake_worker) == 1  # killed, and no other worker started
    assert {sig: signal.getsignal(sig) for sig in before} == before


def test_an_unused_waiting_worker_is_killed_having_printed_nothing(fake_worker, capfd):
    warm_worker.prestart(["analyze", "script.py"])
    (waiting,) = fake_worker
    time.sleep(0.2)
    warm_worker.discard()
    assert waiting.poll() is not None
    out, err = capfd.readouterr()
    assert out == err == ""


def test_a_usage_error_leaves_no_worker_behind(tmp_path):
    """Through the real CLI: a torch whose import takes its time stands for the waiting
    worker's; after the CLI's usage error (exit 2) no process it started is left."""
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"import os, time\nopen({str(tmp_path / 'started')!r}, 'w').write('yes')\ntime.sleep(60)\n")
    marker = f"lp-test-{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), str(ROOT)]), "LP_TEST_MARKER": marker}
    t0 = time.time()
    proc = subprocess.Popen([sys.executable, "-m", "launchprof", "analyze", "sample_models/decode_loop.py", "--target", "nope"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)  # fmt: skip
    while not (tmp_path / "started").exists() and time.time() - t0 < 30 and proc.poll() is None:
        time.sleep(0.05)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "unknown target" in err
    deadline = time.time() + 10
    while _marked(marker) and time.time() < deadline:
        time.sleep(0.1)
    assert not _marked(marker)


def _marked(marker: str) -> list[int]:
    """The processes whose environment holds ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _cli(tmp_path: Path, torch_source: str) -> tuple[subprocess.Popen, str]:
    """The real CLI on decode_loop, with a fake torch: its import runs ``torch_source``."""
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(torch_source)
    marker = f"lp-test-{os.getpid()}-{time.time_ns()}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "fake"), str(ROOT)]), "LP_TEST_MARKER": marker, "COLUMNS": "80"}
    proc = subprocess.Popen([sys.executable, "-m", "launchprof", "analyze", "sample_models/decode_loop.py", "--target", "step"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)  # fmt: skip
    return proc, marker


def _gone(marker: str, within: float = 10.0) -> bool:
    deadline = time.time() + within
    while _marked(marker) and time.time() < deadline:
        time.sleep(0.1)
    return not _marked(marker)


def test_a_torch_that_fails_to_import_is_said_once(tmp_path):
    proc, marker = _cli(tmp_path, "print('printed-by-the-broken-import', flush=True)\nraise ImportError('no torch here')\n")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4 and "torch cannot be imported: ImportError: no torch here" in err
    assert (out + err).count("printed-by-the-broken-import") == 1
    assert _gone(marker)


def test_ctrl_c_while_the_worker_still_imports_torch_is_an_interrupt(tmp_path):
    """Cut short, the import reads as a broken torch (torch's own import, interrupted, can
    raise ImportError: "partially initialized module"), which would be exit 4; it is the
    user's Ctrl-C."""
    started = tmp_path / "started"
    cut = tmp_path / "cut"
    source = (
        f"import os, time\nPARTIAL = ImportError(\"cannot import name 'nn' from partially initialized module 'torch'\")\n"
        f"if os.path.exists({str(cut)!r}):\n    raise PARTIAL\n"  # imported again, it fails at once
        f"open({str(started)!r}, 'w').write('1')\ntry:\n    time.sleep(60)\n"
        f"except KeyboardInterrupt:\n    open({str(cut)!r}, 'w').write('1')\n    raise PARTIAL\n"
    )
    proc, marker = _cli(tmp_path, source)
    deadline = time.time() + 30
    while not started.exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)  # the CLI has checked its options and told the worker its config
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "cannot be imported" not in err and "CUDA" not in err
    assert _gone(marker)


def test_a_stop_before_the_worker_is_told_takes_the_waiting_worker_along(tmp_path):
    """SIGTERM's default action alone would leave the waiting worker to finish its import:
    it is killed, then the CLI ends by SIGTERM as it would have."""
    started = tmp_path / "started"
    proc, marker = _cli(tmp_path, f"import time\nopen({str(started)!r}, 'w').write('1')\ntime.sleep(60)\n")
    deadline = time.time() + 30
    while not started.exists() and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode in (-signal.SIGTERM, 130)  # 130: it reached run_worker, where a stop is an interrupt
    assert _gone(marker)
