"""On a GPU: the stream race found at its lines, the fixed twin clean, and the anatomy of
captured graphs checked against the node count cuda.bindings gives and against PyTorch's
own DOT dump of the same graph (an independent reader)."""

from __future__ import annotations

import re

import pytest

from recorded import SAMPLES, expected_markers
from test_gpu_analyze import analyze

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


def test_race_found_at_its_lines(tmp_path):
    _, report = analyze(tmp_path, "stream_race")
    races = [h for h in report["hazards"] if h["kind"] == "stream-race"]
    assert {("stream-race", h["file"].split("/")[-1], h["line"]) for h in races} == expected_markers(SAMPLES / "stream_race.py")
    write = races[0]["details"]["write"]
    assert "staging.copy_(x)" in write["code"] and races[0]["details"]["graph_confirms"] is True
    anatomy = report["replay"]["anatomy"]
    assert anatomy["roots"] >= 2 and anatomy["max_width"] >= 2  # nothing orders the copy before the read
    # An error-severity race corrupts replays: never graphs-help over it (issue 34).
    assert races[0]["severity"] == "error" and report["verdict"] == "replay-invalid"


def test_fixed_twin_clean(tmp_path):
    _, report = analyze(tmp_path, "stream_race_fixed")
    # Clean: no warning or error. Its `x` is a new tensor each call (x = out / out.norm()),
    # which is an info finding, not a hazard of the streams.
    assert [h for h in report["hazards"] if h["severity"] != "info"] == []
    assert not any(h["kind"] == "stream-race" for h in report["hazards"])


@pytest.mark.parametrize("sample", ["decode_loop", "two_streams_ok"])
def test_anatomy_matches_the_graph(tmp_path, sample):
    _, report = analyze(tmp_path, sample, "--kernels")  # node times come from the profiled replay
    replay = report["replay"]
    a = replay["anatomy"]
    assert sum(a["nodes_by_type"].values()) == replay["graph_nodes"] == sum(replay["node_types"].values())
    assert a["nodes_by_type"] == replay["node_types"]
    assert sum(a["levels"]) == replay["graph_nodes"] and max(a["levels"]) == a["max_width"]
    assert a["roots"] >= 1 and a["leaves"] >= 1 and a["edges"] >= replay["graph_nodes"] - a["roots"]
    assert a["critical_path_us"] is not None and 0 < a["critical_path_us"] <= a["total_us"] + 1e-6
    if sample == "two_streams_ok":
        assert a["max_width"] >= 2 and a["roots"] >= 1
        assert not [h for h in report["hazards"] if h["kind"] == "stream-race"]
    else:
        assert a["max_width"] == 1 and a["critical_path_nodes"] == replay["graph_nodes"]


def test_edges_agree_with_pytorch_dot_dump(tmp_path):
    """cuda.bindings' edge count against the DOT file CUDAGraph.debug_dump writes."""
    from launchprof.worker.graphinfo import graph_anatomy

    side = torch.cuda.Stream()
    x = torch.randn(256, 256, device="cuda")
    g = torch.cuda.CUDAGraph(keep_graph=True)
    with torch.cuda.graph(g):
        main = torch.cuda.current_stream()
        side.wait_stream(main)
        a = x * 2
        with torch.cuda.stream(side):
            b = x + 1
        main.wait_stream(side)
        c = a + b  # noqa: F841
    anatomy, problem = graph_anatomy(g.raw_cuda_graph())
    assert problem is None, problem
    g.debug_dump(str(tmp_path / "g.dot"))
    dot = (tmp_path / "g.dot").read_text()
    assert len(anatomy["edges"]) == len(re.findall(r"->", dot))
    assert anatomy["node_count"] == 3 and sorted(map(sorted, anatomy["edges"])) == [[0, 2], [1, 2]]
