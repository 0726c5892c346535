"""Graph anatomy on CPU: levels, width, critical path, joined with a recorded replay trace.

The structures are built from the sample's code (two_streams_ok: x@w1 is a GEMM and a
split-K GEMM, then relu, on the calling stream; the same three on the side stream; the add
after the join); the node times come from its replay trace recorded on the H200. The
worker's ``anatomy`` event itself is checked on the GPU (tests/test_gpu_anatomy.py).
"""

from __future__ import annotations

import dataclasses

from launchprof.analysis.anatomy import anatomy_of, critical_path, graph_rows, levels_of, with_anatomy
from launchprof.analysis.concurrency import concurrency_notes, op_chains
from launchprof.events.capture_events import AnatomyEvent, GraphNodeRow, RaceCheckEvent, RaceOp
from launchprof.render.anatomy_text import anatomy_line, anatomy_svg
from launchprof.render.html import HtmlRenderer
from launchprof.render.words.notes_text import note_texts
from launchprof.common.trace_tables import gpu_table
from recorded import load, recorded, report_of

recorded(["two_streams_ok", "decode_loop"])

FORK_JOIN = AnatomyEvent(
    node_count=7,
    nodes=[GraphNodeRow(id=i, type="kernel", name=None) for i in range(7)],
    edges=[[0, 1], [1, 2], [3, 4], [4, 5], [2, 6], [5, 6]],
)
# The race of issue 19: a DtoD copy and the read are both roots; only the add joins them.
RACE = AnatomyEvent(node_count=3, nodes=[GraphNodeRow(id=0, type="memcpy"), GraphNodeRow(id=1, type="kernel"), GraphNodeRow(id=2, type="kernel")], edges=[[0, 2], [1, 2]])


def _replay_rows(name: str):
    trace = load(name).trace("replay")
    return graph_rows(trace, gpu_table(trace))


def test_levels_and_critical_path_of_a_fork_join():
    assert levels_of(7, FORK_JOIN.edges) == [0, 1, 2, 0, 1, 2, 3]
    weights = [1.0, 1.0, 1.0, 5.0, 1.0, 1.0, 1.0]
    assert critical_path(7, FORK_JOIN.edges, weights) == [3, 4, 5, 6]


def test_fork_join_anatomy_with_recorded_replay_times():
    rows = _replay_rows("two_streams_ok")
    assert len(rows) == 7  # the graph launch's kernels, without the copy-in before it
    a = anatomy_of(FORK_JOIN, rows)
    assert a.nodes_by_type == {"kernel": 7}
    assert (a.edges, a.roots, a.leaves, a.max_width) == (6, 2, 1, 2)
    assert a.levels == [2, 2, 2, 1]
    durations = rows.sort_values("start_us")["dur_us"].tolist()
    branch_a, branch_b = sum(durations[0:3]), sum(durations[3:6])
    assert a.critical_path_us == max(branch_a, branch_b) + durations[6]
    assert a.total_us == sum(durations)
    assert a.critical_path_nodes == 4 and a.replay_streams == 2


def test_recorded_replay_did_not_overlap_the_branches():
    """On the H200 the side branch started after the main one ended: the advice says so."""
    a = anatomy_of(FORK_JOIN, _replay_rows("two_streams_ok"))
    rows = _replay_rows("two_streams_ok").sort_values("start_us")
    starts, ends = rows["start_us"].tolist(), rows["end_us"].tolist()
    assert all(s >= max(ends[:i]) - 0.01 for i, s in enumerate(starts) if i)  # the raw fact
    notes = note_texts(concurrency_notes(a, None, None))
    assert len(notes) == 1 and "did not overlap" in notes[0] and "up to 2 nodes" in notes[0]


def test_overlap_is_reported_when_branches_ran_at_once():
    rows = _replay_rows("two_streams_ok").copy()
    side = rows["stream"] == rows["stream"].iloc[3]
    shift = rows.loc[side, "start_us"].min() - rows["start_us"].min()
    rows.loc[side, ["start_us", "end_us"]] -= shift  # the side branch starts with the main one
    a = anatomy_of(FORK_JOIN, rows)
    assert a.overlap_us > 1.0
    assert "replay overlapped them" in note_texts(concurrency_notes(a, None, None))[0]


def test_race_graph_has_two_unordered_roots():
    a = anatomy_of(RACE, None)
    assert (a.roots, a.leaves, a.max_width, a.nodes_by_type) == (2, 1, 2, {"memcpy": 1, "kernel": 2})
    assert a.critical_path_us is None  # no replay times: not invented


def test_report_carries_anatomy_and_renders_it():
    base = report_of("two_streams_ok")
    replay = with_anatomy(base.replay, FORK_JOIN, load("two_streams_ok").trace("replay"))
    report = dataclasses.replace(base, replay=replay)
    data = report.to_dict()["replay"]["anatomy"]
    assert {"nodes_by_type", "edges", "roots", "leaves", "critical_path_nodes", "critical_path_us", "max_width"} <= set(data)
    assert data["nodes_by_type"] == report.replay.node_types  # the alias agrees
    line = anatomy_line(report)
    assert "7 nodes (kernel 7), 6 edges, 2 root(s)" in line and "widest level 2" in line
    svg = str(anatomy_svg(report))
    assert svg.count("<circle") == 7 and svg.count("<line") == 6
    assert "Captured graph" in HtmlRenderer().render(report)


def test_large_graph_drawn_by_level():
    nodes = [GraphNodeRow(id=i, type="kernel") for i in range(147)]
    event = AnatomyEvent(node_count=147, nodes=nodes, edges=[[i, i + 1] for i in range(146)])
    base = report_of("decode_loop")
    report = dataclasses.replace(base, replay=with_anatomy(base.replay, event, load("decode_loop").trace("replay")))
    a = report.replay.anatomy
    assert a.max_width == 1 and a.nodes == [] and len(a.levels) == 147
    assert a.critical_path_nodes == 147 and abs(a.critical_path_us - a.total_us) < 1e-6
    assert str(anatomy_svg(report)).count("<rect") == 147


def test_one_stream_chains_bound_a_second_stream():
    ops = [RaceOp(stream=7, deps=[]), RaceOp(stream=7, deps=[0]), RaceOp(stream=7, deps=[]), RaceOp(stream=7, deps=[2]), RaceOp(stream=7, deps=[1, 3])]
    crit, total, n = op_chains(ops, [4.0, 4.0, 1.0, 1.0, 2.0])
    assert (crit, total, n) == (10.0, 12.0, 3)
    notes = note_texts(concurrency_notes(None, RaceCheckEvent(status="ok", ops=ops, ops_total=5), [4.0, 4.0, 1.0, 1.0, 2.0]))
    assert "independent chains" in notes[0] and "17%" in notes[0]
    chain = [RaceOp(stream=7, deps=[i - 1] if i else []) for i in range(4)]
    assert "would not shorten" in note_texts(concurrency_notes(None, RaceCheckEvent(status="ok", ops=chain, ops_total=4), None))[0]


def test_unavailable_sanitizer_is_a_note():
    notes = note_texts(concurrency_notes(None, RaceCheckEvent(status="unavailable", reason="this torch has no CUDA sanitizer"), None))
    assert notes == ["stream races were not checked: this torch has no CUDA sanitizer"]


def test_a_skipped_race_check_is_named_with_its_reason() -> None:
    notes = note_texts(concurrency_notes(None, RaceCheckEvent(status="skipped", reason="pass stream_check=True"), None))
    assert notes == ["stream races were not checked: pass stream_check=True"]
    assert not any("not checked" in n for n in note_texts(concurrency_notes(None, RaceCheckEvent(status="ok", ops=[], ops_total=0), None)))
