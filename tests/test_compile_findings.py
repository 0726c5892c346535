"""torch.compile's skip reasons and graph breaks -> hazard kinds (launchprof.analysis.
compile_findings), on logs recorded from real CPU compiles (tests/data/compile, re-recorded
by scripts/record-compile-logs) and on the messages torch's source builds on CUDA."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from launchprof.analysis.compile_findings import BREAK_RULES, SKIP_RULES, break_findings, is_skip, skip_findings, user_frame
from launchprof.events.compile_events import CompileLog
from launchprof.hazards.kinds import KINDS

DATA = Path(__file__).resolve().parent / "data" / "compile"
CASES = "tests/data/compile/cases.py"


def _recorded(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def _logs(rec: dict) -> list[CompileLog]:
    """The recorded log records as the ``compile`` event's reader gives them."""
    return [CompileLog(**r) for r in rec["logs"]]


def _one(findings: list, kind: str):
    hits = [f for f in findings if f.kind == kind]
    assert len(hits) == 1, findings
    return hits[0]


def test_every_rule_names_a_known_hazard_kind() -> None:
    for _, kind in SKIP_RULES + BREAK_RULES:
        assert kind is None or kind in KINDS, kind


@pytest.mark.parametrize(
    ("case", "kind", "line", "words"),
    [
        ("item_graph_break", "hidden-sync", 9, "Tensor.item()"),
        ("print_graph_break", "host-side-effect", 15, "`print`"),
        ("branch_graph_break", "data-dependent-control-flow", 21, "Data-dependent branching"),
        ("changing_scalar", "frozen-scalar", 56, "n == 1"),
        ("dynamic_shapes", "dynamic-shape", 59, "size mismatch"),
    ],
)
def test_recorded_graph_breaks_and_recompiles(case: str, kind: str, line: int, words: str) -> None:
    rec = _recorded(case)
    found = _one(break_findings(_logs(rec), rec["counters"]), kind)
    assert found.file is not None and found.file.endswith(CASES) and found.line == line
    assert words in found.reason
    assert "\n" not in found.reason


def test_a_float_that_changes_every_call_is_one_finding_counted_per_recompile() -> None:
    """frozen_scalar.py's pattern: compile recompiles once per new value of ``lr`` (4 values:
    4 graphs, 3 recompiles) and skips cudagraphs for each graph."""
    rec = _recorded("changing_float")
    assert rec["counters"]["stats"]["unique_graphs"] == 4
    found = break_findings(_logs(rec), rec["counters"])
    assert [(f.kind, f.line, f.count) for f in found] == [("frozen-scalar", 83, 3)]
    assert found[0].reason == "recompiled: 0/0: lr == 0.1" and (found[0].code or "").startswith("param.add_(grad, alpha=-lr)")
    assert sum(f.count for f in skip_findings(_logs(rec), rec["counters"], rec["device"])) == 4


def test_recorded_break_counts_come_from_torch_counters() -> None:
    rec = _recorded("item_graph_break")
    counted = sum(rec["counters"]["graph_break"].values())
    found = break_findings(_logs(rec), rec["counters"])
    assert sum(f.count for f in found if not f.reason.startswith("recompiled")) == counted == 1
    # After the break, the resumed code recompiles on the .item() value: a Python number
    # that changes between calls, at the line that uses it.
    again = [f for f in found if f.reason.startswith("recompiled")]
    assert [(f.kind, f.line) for f in again] == [("frozen-scalar", 10)]


def test_cpu_reduce_overhead_skips_are_counted_without_a_logged_reason() -> None:
    """On CPU torch bumps ``cudagraph_skips`` and logs nothing; the finding says why."""
    for case in ("cpu_reduce_overhead", "item_graph_break", "mutated_input", "changing_scalar", "changing_float"):
        rec = _recorded(case)
        skips = skip_findings(_logs(rec), rec["counters"], rec["device"])
        assert rec["counters"]["inductor"]["cudagraph_skips"] >= 1
        assert [(f.kind, f.count) for f in skips] == [("host-side-effect", rec["counters"]["inductor"]["cudagraph_skips"])]
        assert "cpu device" in skips[0].reason


def test_default_mode_records_no_skip() -> None:
    rec = _recorded("print_graph_break")
    assert skip_findings(_logs(rec), rec["counters"], rec["device"]) == []


USER = '  File "/proj/decode.py", line {n}, in step\n    {code}\n'
TORCH = '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1775, in _call_impl\n    return forward_call(*args, **kwargs)\n'

# The skip messages as torch 2.13 builds them on CUDA (see test_messages_match_torch_source).
CUDA_SKIPS = [
    ("skipping cudagraphs due to mutated inputs (1 instances). Found from : \n " + USER.format(n=12, code="state.add_(x)"), "reallocated-input", 12),
    ("skipping cudagraphs due to cpu device (arg1_1). Found from : \n " + TORCH + USER.format(n=7, code="idx = torch.arange(4)"), "host-side-effect", 7),
    ("skipping cudagraphs due to multiple devices: cpu, cuda:0", "host-side-effect", None),
    ("skipping cudagraphs due to graph with symbolic shapes inputs and config.triton.cudagraph_skip_dynamic_graphs=True. Found from " + USER.format(n=20, code="y = x @ w"), "dynamic-shape", 20),
    ("skipping cudagraphs due to disabling cudagraphs due to incompatible op aten._local_scalar_dense.default Found from " + USER.format(n=31, code="n = int(t.sum())"), "hidden-sync", 31),
    ("skipping cudagraphs due to disabling cudagraphs due to incompatible op aten._fused_moving_avg_obs_fq_helper.default", "capture-failed", None),
    ("skipping cudagraphs due to control flow operator: torch.cond. Found from : \n " + USER.format(n=44, code="out = torch.cond(p, f, g, (x,))"), "data-dependent-control-flow", 44),
    ("skipping cudagraphs due to index_put_ fallback with boolean indexing is not compatible with CUDA graphs", "hidden-sync", None),
    ("skipping cudagraphs due to ['non-Tensor inputs']", "frozen-scalar", None),
    ("skipping cudagraphs due to ['mutated inputs']", "reallocated-input", None),
    ("skipping cudagraphs due to cudagraph capture requires the caching allocator; current allocator is uncached", "capture-allocation", None),
    ("skipping cudagraph due to function 0 exceeding max re-recording limit (=50) on cudagraph node 3 due to static input data pointer changed.", "reallocated-input", None),
    ("CUDAGraph supports dynamic shapes by recording a new graph for each distinct input size. Recording too many CUDAGraphs may lead to extra overhead. We have observed 9 distinct sizes.", "dynamic-shape", None),
    ("skipping cudagraphs due to bisector", None, None),
]


@pytest.mark.parametrize(("message", "kind", "line"), CUDA_SKIPS, ids=[m[:50] for m, _, _ in CUDA_SKIPS])
def test_cuda_skip_messages(message: str, kind: str | None, line: int | None) -> None:
    assert is_skip(message)
    found = skip_findings([CompileLog(logger="torch._inductor.cudagraph_utils.__cudagraphs", message=message)], {"inductor": {"cudagraph_skips": 1}}, "cuda")
    assert len(found) == 1 and found[0].kind == kind and found[0].line == line
    if line is not None:
        assert found[0].file == "/proj/decode.py" and found[0].code  # the user's frame, not torch's
    assert "Found from" not in found[0].reason and "\n" not in found[0].reason


def test_repeated_skips_are_counted_once_and_unlogged_ones_kept() -> None:
    msg = CUDA_SKIPS[0][0]
    logs = [CompileLog(logger="x.__cudagraphs", message=msg)] * 2
    found = skip_findings(logs, {"inductor": {"cudagraph_skips": 3}}, "cuda")
    assert [(f.kind, f.count) for f in found] == [("reallocated-input", 2), (None, 1)]


def test_user_frame_skips_torch_frames() -> None:
    assert user_frame(TORCH) == (None, None, None)
    assert user_frame(USER.format(n=3, code="a = b") + TORCH) == ("/proj/decode.py", 3, "a = b")


def test_counted_break_without_a_record_is_kept() -> None:
    found = break_findings([], {"graph_break": {"Data-dependent branching\n  Explanation: ...": 2}})
    assert [(f.kind, f.count, f.file) for f in found] == [("data-dependent-control-flow", 2, None)]


def _torch_source(*parts: str) -> str:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"this torch has no {path}")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("parts", "fragments"),
    [
        (("_inductor", "cudagraph_utils.py"), ['"skipping cudagraphs due to {reason}"', "mutated inputs ({len(mutation_indices)} instances)", 'f"cpu device ({cpu_node.name})"', "multiple devices: ", "cudagraph capture requires the caching allocator", "distinct input size", "Found from : "]),
        (("_inductor", "compile_fx.py"), ["graph with symbolic shapes inputs and config.triton.cudagraph_skip_dynamic_graphs=True.", "disabling cudagraphs due to incompatible op"]),
        (("_inductor", "lowering.py"), ["control flow operator: torch.cond.", "index_put_ fallback with boolean indexing is not compatible with CUDA graphs"]),
        (("_inductor", "output_code.py"), ['"non-Tensor inputs"', '"mutated inputs"', 'f"skipping cudagraphs due to {cudagraph_fail_reasons}"']),
        (("_inductor", "cudagraph_trees.py"), ["exceeding max ", "re-recording limit "]),
    ],
)
def test_messages_match_torch_source(parts: tuple[str, ...], fragments: list[str]) -> None:
    """The CUDA messages above are copied from torch's source: fail when torch changes them."""
    source = _torch_source(*parts)
    for fragment in fragments:
        assert fragment in source, (parts, fragment)
