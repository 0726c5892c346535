"""The stop once measured, through the real worker on CPU (the plan's GPU parts replaced by
tests/rank_scripts/cpu_plan_worker.py): a script's long loop ends right after the
measurement with its ``finally`` run, ``--run-to-end`` lets it finish, a script that catches
the stop goes on; through ``launchprof analyze`` (one worker, and two gloo ranks under torch's
launcher) the report says where the script was stopped and the exit status is 0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402

from launchprof.commands import analyze  # noqa: E402
from launchprof.commands.analyze import AnalyzeOptions  # noqa: E402
from launchprof.commands.analyze_ranks import run_ranks_analysis  # noqa: E402
from launchprof.fileio.output_files import Output  # noqa: E402
from launchprof.run import load_run  # noqa: E402
from launchprof.worker.config import WorkerConfig  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FAKES = Path(__file__).resolve().parent / "rank_scripts"
SENTENCE = "the script was stopped after {n} calls of the target (`--run-to-end` lets it finish)"

# 100,000 calls of the target in a loop; the iterations done go to a file from `finally`, and
# a file says whether the line after the loop ran.
LONG_LOOP = """
import pathlib, sys
import torch

out = pathlib.Path(sys.argv[1])
done = 0


def step(x):
    return x * 2 + 1


try:
    x = torch.ones(4)
    for i in range(ITERATIONS):
        y = step(x)
        done += 1
    (out / "end").write_text("reached")
finally:
    (out / "finally").write_text(str(done))
"""


def long_loop(iterations: int = 100_000) -> str:
    return LONG_LOOP.replace("ITERATIONS", str(iterations))


def worker_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(FAKES)]), **extra}


def run_worker(tmp_path: Path, source: str, target: str | None = "step", run_to_end: bool = False, env: dict | None = None):
    """The worker (CPU fakes) on ``source``: its process, its events, its wall time."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    config = WorkerConfig(
        script=str(script), script_args=[str(tmp_path)], target=target, events_path=str(tmp_path / "events.jsonl"),
        trace_path=str(tmp_path / "trace.json"), calibrate=False, run_to_end=run_to_end,
    )  # fmt: skip
    config.to_file(tmp_path / "config.json")
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cpu_plan_worker", str(tmp_path / "config.json")], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env=worker_env(**(env or {})))  # fmt: skip
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    return proc, events, time.perf_counter() - t0


def kinds(events: list[dict]) -> list[str]:
    return [e["type"] for e in events if e["type"] in ("plan-end", "race-check", "script-end")]


def one(events: list[dict], kind: str) -> dict:
    (found,) = [e for e in events if e["type"] == kind]
    return found


def test_a_long_loop_is_stopped_once_measured_and_its_finally_runs(tmp_path):
    proc, events, wall = run_worker(tmp_path, long_loop())
    assert proc.returncode == 0, proc.stderr[-2000:]
    end, plan_end = one(events, "script-end"), one(events, "plan-end")
    assert end["status"] == "done" and end["exit_code"] == 0
    # Stopped at the first call after the plan closed: the calls made are the plan's.
    assert plan_end["reason"] == "complete" and end["stopped_after_calls"] == plan_end["calls"] < 100
    assert (tmp_path / "finally").read_text() == str(end["stopped_after_calls"])  # `finally` ran, counting the calls made
    assert not (tmp_path / "end").exists()  # the line after the loop did not
    assert kinds(events) == ["plan-end", "race-check", "script-end"]  # the stream check before the stop
    assert wall < 60


def test_run_to_end_lets_the_script_finish_and_checks_streams_after_it(tmp_path):
    proc, events, _ = run_worker(tmp_path, long_loop(300), run_to_end=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    end = one(events, "script-end")
    assert end["status"] == "ok" and "stopped_after_calls" not in end
    assert (tmp_path / "end").exists() and (tmp_path / "finally").read_text() == "300"
    race = next(i for i, e in enumerate(events) if e["type"] == "race-check")
    assert race > next(i for i, e in enumerate(events) if e["type"] == "plan-end")


# What the interpreter's exit finalizes for a plain run is finalized under the worker too: an
# object with __del__ in a global (the script's namespace is freed only by the exit's last
# collections: its functions refer back to it), and one in a garbage cycle.
EXIT_FINALIZERS = """
import gc, pathlib, sys
import torch

out = pathlib.Path(sys.argv[1])


class Flush:
    def __init__(self, name):
        self.name = name

    def __del__(self):
        (out / self.name).write_text("finalized")


kept = Flush("kept")


def step(x):
    return x * 2


cycle = Flush("cycle")
cycle.me = cycle
del cycle
gc.disable()  # the cycle is left for the interpreter's exit to find
for i in range(ITERATIONS):
    step(torch.ones(4))
"""


@pytest.mark.parametrize("run_to_end", [False, True], ids=["stopped", "run-to-end"])
def test_the_worker_finalizes_the_scripts_objects_at_exit_as_a_plain_run_does(tmp_path, run_to_end):
    source = EXIT_FINALIZERS.replace("ITERATIONS", "300")
    proc, events, _ = run_worker(tmp_path, source, run_to_end=run_to_end)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert ("stopped_after_calls" not in one(events, "script-end")) == run_to_end
    assert (tmp_path / "kept").read_text() == "finalized"
    assert (tmp_path / "cycle").read_text() == "finalized"


def test_a_script_that_catches_the_stop_goes_on_once_told(tmp_path):
    """A script that catches BaseException around each call sees the stop once; its later
    calls run the function, and its end is reported as any other."""
    source = """
    import pathlib, sys
    import torch

    def step(x):
        return x + 1

    caught = 0
    for i in range(300):
        try:
            step(torch.ones(2))
        except BaseException:
            caught += 1
    pathlib.Path(sys.argv[1], "end").write_text(str(caught))
    """
    proc, events, _ = run_worker(tmp_path, source)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "end").read_text() == "1"
    assert one(events, "script-end")["status"] == "ok" and kinds(events).count("race-check") == 1


def test_a_decorated_target_called_from_a_helper_in_a_data_loader_loop_stops_too(tmp_path):
    source = """
    import pathlib, sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    import launchprof

    out = pathlib.Path(sys.argv[1])
    seen = []


    @launchprof.target
    def step(x):
        return x.sum() * 2


    def helper(batch):
        return step(batch)


    def epoch(loader):
        for (batch,) in loader:
            helper(batch)
            seen.append(1)


    loader = DataLoader(TensorDataset(torch.randn(100_000, 4)), batch_size=1)
    with open(out / "with", "w") as fh:
        try:
            epoch(loader)
        finally:
            fh.write(str(len(seen)))
    (out / "end").write_text("reached")
    """
    proc, events, _ = run_worker(tmp_path, source, target=None)
    assert proc.returncode == 0, proc.stderr[-2000:]
    end = one(events, "script-end")
    assert end["status"] == "done" and (tmp_path / "with").read_text() == str(end["stopped_after_calls"])
    assert not (tmp_path / "end").exists()


def test_a_thread_the_script_would_have_ended_does_not_keep_the_stopped_worker(tmp_path):
    source = long_loop().replace(
        "try:", "import threading\nquit_flag = threading.Event()\nthreading.Thread(target=quit_flag.wait).start()\ntry:", 1
    ).replace('(out / "end").write_text("reached")', '(out / "end").write_text("reached")\n    quit_flag.set()')
    proc, events, wall = run_worker(tmp_path, source, env={"LAUNCHPROF_FAKE_EXIT_GRACE_S": "1"})
    assert proc.returncode == 0 and one(events, "script-end")["status"] == "done"
    assert wall < 30


# ---------------------------------------------------------------- through analyze
@pytest.fixture
def fake_worker(monkeypatch):
    """``analyze`` in this process, its worker the CPU fake."""
    real = subprocess.Popen

    def popen(cmd, *args, **kwargs):
        return real(["cpu_plan_worker" if part == "launchprof.worker" else part for part in cmd], *args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(FAKES)]))


def analyze_script(tmp_path: Path, source: str, **options) -> tuple[int, dict, str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    out, text = tmp_path / "r.json", tmp_path / "r.txt"
    opts = AnalyzeOptions(
        script=script, script_args=(str(tmp_path),), target="step", outputs=(out, text), formats=("json", "text"),
        show_output=False, calibrate=False, project_root=tmp_path, run_out=tmp_path / "r.lprun", **options,
    )  # fmt: skip
    code = analyze.run(opts)
    return code, json.loads(out.read_text()), text.read_text()


def test_analyze_says_where_it_stopped_the_script_and_exits_0(tmp_path, fake_worker):
    code, report, text = analyze_script(tmp_path, long_loop())
    assert code == 0
    calls = report["run"]["stopped_after_calls"]
    assert calls == int((tmp_path / "finally").read_text()) and 0 < calls < 100
    assert report["run"]["complete"] and report["run"]["cause"] is None and report["verdict"] != "script-failed"
    said = SENTENCE.format(n=calls)
    assert [n for n in report["notes"] if said in n] and said in " ".join(text.split())
    assert {"code": "stopped-when-measured", "params": {"calls": calls}}.items() <= next(
        f for f in report["findings"] if f["code"] == "stopped-when-measured"
    ).items()


def test_analyze_run_to_end_reports_no_stop(tmp_path, fake_worker):
    code, report, text = analyze_script(tmp_path, long_loop(200), run_to_end=True)
    assert code == 0 and (tmp_path / "end").exists()
    assert report["run"]["stopped_after_calls"] is None
    assert "stopped-when-measured" not in {f["code"] for f in report["findings"]} and "was stopped after" not in text


RANKS_LOOP = """
import pathlib, sys
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
out = pathlib.Path(sys.argv[1])
done = 0


def step(x):
    return x * 2 + 1


try:
    x = torch.ones(4)
    for i in range(100_000):
        y = step(x)
        t = torch.ones(1)
        dist.all_reduce(t)  # a rank stopped before the others would leave them waiting here
        done += 1
    (out / f"end{rank}").write_text("reached")
finally:
    (out / f"finally{rank}").write_text(str(done))
"""


@pytest.mark.skipif(not (dist.is_available() and dist.is_gloo_available()), reason="needs torch.distributed with gloo")
def test_two_ranks_stop_at_the_same_call_though_one_measures_longer(tmp_path, monkeypatch):
    """Rank 1's first eager trace comes back empty, so its plan takes three calls more than
    rank 0's: both stop at rank 1's, and neither is left waiting in the loop's all-reduce."""
    tag = uuid.uuid4().hex
    monkeypatch.setenv("LAUNCHPROF_TEST_TAG", tag)
    monkeypatch.setenv("LAUNCHPROF_FAKE_LOST_TRACE_RANK", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(FAKES)]))
    script, out = tmp_path / "ranks.py", tmp_path / "report.json"
    script.write_text(RANKS_LOOP, encoding="utf-8")
    options = AnalyzeOptions(
        script=script, script_args=(str(tmp_path),), target="step", outputs=(out,), formats=("json",), show_output=False,
        calibrate=False, timeout=150, nproc_per_node=2, project_root=tmp_path,
    )  # fmt: skip
    t0 = time.perf_counter()
    code = run_ranks_analysis(options, [Output("json", out)], module="cpu_plan_worker")
    assert time.perf_counter() - t0 < 150
    report = json.loads(out.read_text())
    assert code == 0, report["ranks"]
    assert [r["status"] for r in report["ranks"]] == ["ok", "ok"]
    ends, plan_calls = [], []
    for r in report["ranks"]:
        events = load_run(Path(r["run_file"])).events
        ends.append(next(e for e in events if e["type"] == "script-end"))
        plan_calls.append(next(e for e in events if e["type"] == "plan-end")["calls"])
    assert plan_calls[1] > plan_calls[0]  # rank 1 measured longer
    assert [e["status"] for e in ends] == ["done", "done"]
    assert [e["stopped_after_calls"] for e in ends] == [plan_calls[1]] * 2
    assert [(tmp_path / f"finally{r}").read_text() for r in (0, 1)] == [str(plan_calls[1])] * 2
    assert not list(tmp_path.glob("end*"))
    assert report["run"]["stopped_after_calls"] == plan_calls[1]
    assert any(SENTENCE.format(n=plan_calls[1]) in n for n in report["notes"]), report["notes"]
