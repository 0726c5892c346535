"""``analyze --nproc-per-node 2`` on CPU, through torch's real launcher (torch.distributed.run).

On this machine every rank's worker finds no CUDA and ends with an ``environment`` event: the
CLI must still launch both ranks, keep each rank's events in its own run file, say why for each
rank in the combined report, exit 4, and leave no process behind. The scripts that exercise a
failing rank run with a test-only wrapper of the worker (tests/rank_scripts/cpu_rank_worker.py)
that answers the CUDA check, naming a target that the script never calls, so the worker
measures nothing and needs no GPU; launching, per-rank events, exits and stopping are real.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from launchprof.commands.analyze import AnalyzeOptions  # noqa: E402
from launchprof.commands.analyze_ranks import run_ranks_analysis  # noqa: E402
from launchprof.errors import ExitCode  # noqa: E402
from launchprof.fileio.output_files import Output
from launchprof.run import load_run  # noqa: E402

pytestmark = pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()), reason="needs torch.distributed with gloo")

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).resolve().parent / "rank_scripts"
TAG = "LAUNCHPROF_TEST_TAG"


def tagged_processes(tag: str) -> list[int]:
    """Processes still alive that inherited this test's tag in their environment."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if f"{TAG}={tag}".encode() in fh.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            continue
    return found


def no_orphans(tag: str) -> None:
    deadline = time.time() + 5
    while tagged_processes(tag) and time.time() < deadline:
        time.sleep(0.2)
    assert not tagged_processes(tag), "processes of the run are still alive"


def test_two_ranks_without_cuda_each_say_why(tmp_path):
    script = tmp_path / "step.py"
    script.write_text("def step(x):\n    return x + 1\n\n\nfor i in range(5):\n    step(i)\n")
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir()
    tag = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": str(ROOT), TAG: tag}
    # The CLI counts the GPUs before launching (tests/test_ranks_gpu_count.py) and would stop
    # here with one line; that count is switched off so the launch itself is exercised: each
    # rank's worker finds no CUDA, as it would where the count cannot be told.
    bypass = (
        "import sys, launchprof.commands.analyze as a; a.check_rank_gpus = lambda n: None; "
        "from launchprof.cli import main; sys.argv = ['launchprof', *sys.argv[1:]]; main()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", bypass, "analyze", str(script), "--target", "step", "--nproc-per-node", "2", "-o", str(out)],
        capture_output=True, text=True, timeout=240, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == ExitCode.ENVIRONMENT == 4, proc.stderr
    assert "rank 0: no CUDA device" in proc.stderr and "rank 1: no CUDA device" in proc.stderr
    report = json.loads(out.read_text())
    assert [r["rank"] for r in report["ranks"]] == [0, 1]
    for r in report["ranks"]:
        assert r["status"] == "environment"
        assert "no CUDA device" in r["cause"]
        run = load_run(Path(r["run_file"]))
        assert Path(r["run_file"]).name == f"report.rank{r['rank']}.lprun"
        rank_events = [e for e in run.events if e["type"] == "rank"]
        assert rank_events and rank_events[0]["rank"] == r["rank"] and rank_events[0]["world_size"] == 2
        assert any(e["type"] == "environment" for e in run.events)
        assert json.loads((out.parent / f"report.rank{r['rank']}.json").read_text())["script"] == "step.py"
    no_orphans(tag)


def _analyze(tmp_path: Path, monkeypatch, script: str) -> tuple[int, dict]:
    """The whole multi-rank analyze in this process, each rank running the test-only wrapper."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG, tag)
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{SCRIPTS}")
    out = tmp_path / "report.json"
    options = AnalyzeOptions(
        script=SCRIPTS / script, target="step", outputs=(out,), formats=("json",), show_output=False,
        calibrate=False, timeout=120, nproc_per_node=2, project_root=ROOT,
    )  # fmt: skip
    code = run_ranks_analysis(options, [Output("json", out)], module="cpu_rank_worker")
    no_orphans(tag)
    return code, json.loads(out.read_text())


def test_a_rank_whose_script_exits_non_zero_is_reported_and_rank_0_kept(tmp_path, monkeypatch):
    code, report = _analyze(tmp_path, monkeypatch, "gloo_exit_rank1.py")
    assert code == ExitCode.SCRIPT
    r0, r1 = report["ranks"]
    assert r1["status"] == "script-failed" and "exited with status 3" in r1["cause"]
    # Rank 0 ended well; its only remark is that the target (named for the test) was never called.
    assert r0["status"] == "ok" and "never called" in r0["cause"]
    assert report["verdict"] == "script-failed"
    # Rank 0's own run went on after rank 1 left: its script ran to its end.
    run0 = load_run(Path(r0["run_file"]))
    end = next(e for e in run0.events if e["type"] == "script-end")
    assert end["status"] == "ok"
    assert "rank 1: the script exited with status 3" in report["run"]["cause"]


def test_a_rank_that_dies_is_reported_with_its_exit_and_last_events(tmp_path, monkeypatch):
    code, report = _analyze(tmp_path, monkeypatch, "gloo_kill_rank1.py")
    assert code == ExitCode.SCRIPT
    r0, r1 = report["ranks"]
    assert r1["status"] == "died" and r1["signal"] == "SIGKILL" and r1["exit_code"] == -9
    assert "SIGKILL" in r1["cause"] and "last event: target" in r1["cause"]
    assert r1["last_events"] and r1["last_events"][-1].startswith("target")
    assert any("about to die" in line for line in r1["output_tail"])
    # Rank 0 slept; the launcher stopped it once rank 1 died. What it recorded is kept.
    assert r0["status"] == "stopped" and "after rank 1 failed" in r0["cause"]
    assert {e["type"] for e in load_run(Path(r0["run_file"])).events} >= {"rank", "machine", "target"}


def test_a_timeout_stops_every_rank(tmp_path, monkeypatch):
    tag = uuid.uuid4().hex
    monkeypatch.setenv(TAG, tag)
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{SCRIPTS}")
    out = tmp_path / "report.json"
    options = AnalyzeOptions(
        script=SCRIPTS / "gloo_sleep.py", target="step", outputs=(out,), formats=("json",), show_output=False,
        calibrate=False, timeout=12, nproc_per_node=2, project_root=ROOT,
    )  # fmt: skip
    t0 = time.time()
    code = run_ranks_analysis(options, [Output("json", out)], module="cpu_rank_worker")
    assert time.time() - t0 < 60
    no_orphans(tag)
    assert code == ExitCode.SCRIPT
    report = json.loads(out.read_text())
    assert [r["status"] for r in report["ranks"]] == ["timed-out", "timed-out"]
    assert all("--timeout of 12" in r["cause"] for r in report["ranks"])


DRIVER = """
import sys
from pathlib import Path
from launchprof.commands.analyze import AnalyzeOptions
from launchprof.commands.analyze_ranks import run_ranks_analysis
from launchprof.fileio.output_files import Output
out = Path(sys.argv[1])
options = AnalyzeOptions(script=Path(sys.argv[2]), target="step", outputs=(out,), formats=("json",), show_output=False,
                         calibrate=False, nproc_per_node=2)
sys.exit(run_ranks_analysis(options, [Output("json", out)], module="cpu_rank_worker"))
"""


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_stops_every_rank(tmp_path, sig):
    import signal

    tag = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{SCRIPTS}", TAG: tag}
    out = tmp_path / "report.json"
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(out), str(SCRIPTS / "gloo_sleep.py")], env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 90
    # Wait for the CLI, the launcher and both ranks, let the ranks reach the script, interrupt the CLI.
    while len(tagged_processes(tag)) < 4:
        assert time.time() < deadline and proc.poll() is None, "the ranks did not start"
        time.sleep(0.5)
    time.sleep(6)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.INTERRUPTED, err[-2000:]
    no_orphans(tag)
    report = json.loads(out.read_text())
    assert [r["status"] for r in report["ranks"]] == ["interrupted", "interrupted"]
    # Said once, as a stop: no rank "failed" because the user stopped it
    assert "launchprof: interrupted" in err and "launchprof: rank" not in err, err[-2000:]


def test_a_launcher_that_cannot_start_is_the_environment(tmp_path):
    """No usable torch where the ranks would run: exit 4 in one line, no report pretending to be one."""
    broken = tmp_path / "site" / "torch"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text('raise ImportError("this torch is broken on purpose")\n')
    script = tmp_path / "step.py"
    script.write_text("def step(x):\n    return x\n")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'site'}{os.pathsep}{ROOT}"}
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(script), "--target", "step", "--nproc-per-node", "2", "--hide-output"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == ExitCode.ENVIRONMENT, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "started no rank" in lines[0] and "broken on purpose" in lines[0]
