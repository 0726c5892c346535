"""The bucket plan measured on a real GPU (issue 17), on the two bucket samples:
``bucketed_decode.py`` (padding safe) and ``batch_reduce.py`` (a mean over the batch:
padding unsafe). Measured figures are checked against the same things measured here, in
this process: allocator statistics around a capture, and a plain timing loop of replays.
Skipped without CUDA."""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
MiB = 2**20


def analyze(out_dir: Path, sample: str, *extra: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = out_dir / f"{sample}{len(extra)}.json"
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", str(SAMPLES / f"{sample}.py"), "--target", "step", "--run-to-end",
         "-f", "json", "-o", str(out), "-f", "text", *extra],  # the text report on stdout; the script's prints join it there
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert out.exists(), proc.stderr
    return proc, json.loads(out.read_text())


@pytest.fixture(scope="module")
def decode(tmp_path_factory):
    return analyze(tmp_path_factory.mktemp("decode"), "bucketed_decode")


@pytest.fixture(scope="module")
def reduce(tmp_path_factory):
    return analyze(tmp_path_factory.mktemp("reduce"), "batch_reduce")


def sample_module(name: str):
    spec = importlib.util.spec_from_file_location(f"lp_{name}", SAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def line_of(sample: str, text: str) -> int:
    lines = (SAMPLES / f"{sample}.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def checksum(output: str) -> float:
    found = re.search(r"checksum: (\S+)", output)
    assert found, output[-2000:]
    return float(found.group(1))


def measured(report: dict) -> dict[int, dict]:
    return {m["size"]: m for m in report["buckets"]["measured"]}


def test_decode_plan_is_measured_and_padding_is_safe(decode):
    _, report = decode
    b = report["buckets"]
    assert {(a["argument"], a["dim"]) for a in b["arguments"]} == {("tokens", 0), ("slots", 0), ("positions", 0), ("lengths", 0)}
    assert b["recommended"] == [1, 2, 4, 8, 16, 24]  # largest batch 21, rounded up to a multiple of 8
    rows = measured(report)
    assert sorted(rows) == b["recommended"]
    for m in rows.values():
        assert m["capture_ms"] > 0 and m["replay_us"] > 0 and m["pool_bytes"] > 0
        assert m["matches"] is True
    assert b["padding_safe"] is True and b["leaks"] == [] and b["fix"] is None
    # the observed decode sequence through the plan: many tiny kernels, graphs win
    assert b["speedup"]["low"] > 1.0, b["speedup"]
    assert b["eager_calls"] == 0


def test_shared_pool_is_about_the_largest_graph_not_the_sum(decode):
    _, report = decode
    b = report["buckets"]
    largest_own = max(m["pool_bytes"] for m in b["measured"])
    assert b["shared_pool_bytes"] < b["private_pool_bytes"]
    assert b["shared_pool_bytes"] <= largest_own + 2 * MiB * len(b["measured"])
    assert b["workspace_bytes"] is not None


def test_reduce_plan_is_unsafe_and_names_the_mean_line(reduce):
    proc, report = reduce
    b = report["buckets"]
    assert b["padding_safe"] is False
    assert any(m["matches"] is False for m in b["measured"])
    leak = b["leaks"][0]
    assert leak["op"] == "mean"
    assert Path(leak["file"]).name == "batch_reduce.py"
    assert leak["line"] == line_of("batch_reduce", "pooled = h.mean(dim=0)")
    assert "mask" in b["fix"] and "device tensor" in b["fix"]
    assert "Padding is NOT safe" in proc.stdout


def test_pool_bytes_agree_with_allocator_statistics_here(reduce):
    """The size-16 graph captured alone into a private pool, measured in this process with
    torch.cuda.memory_stats (reserved) and memory_allocated."""
    _, report = reduce
    reported = measured(report)[16]["pool_bytes"]
    mod = sample_module("batch_reduce")
    w1, w2 = mod.weights()
    x = torch.randn(16, mod.DIM, device="cuda")
    mod.step(x, w1, w2)
    throwaway = torch.cuda.CUDAGraph()
    with torch.cuda.graph(throwaway):
        mod.step(x, w1, w2)  # absorbs one-time workspaces, as launchprof does
    torch.cuda.synchronize()
    reserved = torch.cuda.memory_stats()["reserved_bytes.all.current"]
    allocated = torch.cuda.memory_allocated()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = mod.step(x, w1, w2)
    torch.cuda.synchronize()
    reserved_delta = torch.cuda.memory_stats()["reserved_bytes.all.current"] - reserved
    allocated_delta = torch.cuda.memory_allocated() - allocated
    assert out.numel() * out.element_size() <= allocated_delta <= reported
    assert abs(reported - reserved_delta) <= 2 * MiB, (reported, reserved_delta)


def test_replay_time_agrees_with_a_plain_timing_loop(reduce):
    _, report = reduce
    reported = measured(report)[8]["replay_us"]
    mod = sample_module("batch_reduce")
    w1, w2 = mod.weights()
    x = torch.randn(8, mod.DIM, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        mod.step(x, w1, w2)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        mod.step(x, w1, w2)
    times = []
    for _ in range(200):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    direct = statistics.median(times)
    assert 0.5 < reported / direct < 2.0, (reported, direct)


def test_the_script_ends_as_it_would_without_launchprof(decode):
    """The bucket measurement's extra calls write the KV cache; the user's state is put back,
    so the rest of the script computes what `python script.py` computes."""
    proc, _ = decode
    plain = subprocess.run([sys.executable, str(SAMPLES / "bucketed_decode.py")], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert plain.returncode == 0, plain.stderr
    # A text report on stdout leaves the script's output on stdout (only a JSON/SARIF/... report
    # there sends it to stderr): search both.
    assert checksum(proc.stdout + proc.stderr) == pytest.approx(checksum(plain.stdout), rel=1e-3)


def test_user_plan_and_memory_limit(tmp_path):
    """--buckets with a --bucket-memory below one graph's pool: the larger sizes are
    dropped and their calls run eagerly, and the report says so."""
    _, report = analyze(tmp_path, "batch_reduce", "--buckets", "2,8,32", "--bucket-memory", "1MiB")
    b = report["buckets"]
    assert b["source"] == "user"
    assert b["recommended"] == [2] and b["dropped"] == [8, 32]
    assert b["memory_limit_bytes"] == MiB
    assert "run eagerly" in b["explanation"]
    assert b["eager_calls"] == sum(n for size, n in b["observed"].items() if int(size) > 2)
