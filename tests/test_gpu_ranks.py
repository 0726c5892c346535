"""``analyze --nproc-per-node 2`` on two GPUs (skipped with fewer): the tensor-parallel sample
against the plainest timing of the same step under torchrun, its collectives captured on each
rank, and a twin whose ranks branch differently flagged. NVLink multicast is off (conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 2, reason="needs 2 CUDA devices"),
]

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 0.15  # docs/architecture.md: a step time in a report matches the same function timed directly within 15%


def analyze(tmp_path: Path, script: Path) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", "--nproc-per-node", "2", str(script), "--target", "step", "-o", str(out)],
        capture_output=True, text=True, timeout=540, cwd=ROOT,
    )  # fmt: skip
    assert out.exists(), proc.stderr[-3000:]
    return proc, json.loads(out.read_text())


@pytest.fixture(scope="module")
def tp_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("tp")
    proc, report = analyze(tmp, ROOT / "sample_models" / "tp_mlp.py")
    return tmp, proc, report


def test_tp_mlp_graphs_help_on_both_ranks(tp_run):
    tmp, proc, report = tp_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["status"] for r in report["ranks"]] == ["ok", "ok"]
    assert report["verdict"] == "graphs-help", report["notes"]
    assert report["validation"]["matches"] == report["validation"]["calls_compared"] >= 6  # 3+ per rank
    for r in report["ranks"]:
        assert (tmp / f"report.rank{r['rank']}.lprun").is_file() and (tmp / f"report.rank{r['rank']}.json").is_file()
        assert r["pool_bytes"] and r["pool_bytes"] > 0  # graph memory, per rank
    # The slowest rank sets the combined step time.
    assert report["eager"]["step_us"]["median"] == pytest.approx(max(r["eager_step_us"] for r in report["ranks"]))
    assert report["replay"]["step_us"]["median"] == pytest.approx(max(r["replay_step_us"] for r in report["ranks"]))


def test_tp_mlp_collectives_are_captured_on_each_rank(tp_run):
    _, _, report = tp_run
    for r in report["ranks"]:
        assert r["collectives_per_step"] == 4, r  # one all_reduce per layer
        assert r["collectives_captured"] == 4, r  # all four in one replay of the graph
    kinds = {h["kind"] for h in report["hazards"]}
    assert not kinds & {"uncaptured-collective", "collective-divergence", "capture-failed"}, report["hazards"]


def test_tp_mlp_per_rank_times_match_a_plain_timing_loop(tp_run, tmp_path):
    _, _, report = tp_run
    proc = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(ROOT / "tests" / "gpu_scripts" / "tp_mlp_timing.py"), str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    for r in report["ranks"]:
        direct = json.loads((tmp_path / f"direct.rank{r['rank']}.json").read_text())
        assert direct["replay_matches"]
        assert abs(r["eager_step_us"] / direct["eager_us"] - 1) <= TOLERANCE, (r["rank"], r["eager_step_us"], direct)
        assert abs(r["replay_step_us"] / direct["replay_us"] - 1) <= TOLERANCE, (r["rank"], r["replay_step_us"], direct)


def test_a_branch_on_one_rank_is_flagged(tmp_path):
    proc, report = analyze(tmp_path, ROOT / "tests" / "gpu_scripts" / "tp_mlp_divergent.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    [h] = [h for h in report["hazards"] if h["kind"] == "collective-divergence"]
    assert h["severity"] == "error" and h["details"]["sequence"] == "kernel" and h["details"]["ranks"] == [0, 1]
    ranks = report["ranks"]
    assert ranks[1]["kernels_per_step"] == ranks[0]["kernels_per_step"] + 1
    assert report["verdict"] == "replay-invalid"  # each rank captures; the replays would deadlock
