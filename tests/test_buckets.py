"""The bucket plan on CPU (issue 17): the recommendation rule on recorded shape
distributions, the analysis of the worker's bucket-* events, the migration of the old
list form, the renderers and the CLI options. The GPU side is tests/test_gpu_buckets.py."""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import reports
from bucket_events import MiB, calls, measured_events, measured_plan
from launchprof.analysis.bucket_advice import bucket_plan
from launchprof.common.bucket_rule import batch_axis, bucket_of, default_sizes, eager_calls, fit_memory, padding_waste, parse_bytes, parse_sizes
from launchprof.run.evidence import parse_events
from launchprof.hazards.shapes import varying_shapes
from launchprof.model.core import SCHEMA_VERSION
from launchprof.render import RenderOptions
from launchprof.render.console import ConsoleRenderer
from launchprof.render.html import HtmlRenderer
from launchprof.render.markdown import MarkdownRenderer
from launchprof.analysis.load import load_report
from recorded import load, load_evidence, recorded

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"


def waste_by_hand(seen: list[int], sizes: list[int]) -> float:
    """Padded rows over computed rows, written out without the library's helpers."""
    padded = computed = 0
    for n in seen:
        fits = [s for s in sorted(sizes) if s >= n]
        if fits:
            padded += fits[0] - n
            computed += fits[0]
    return padded / computed


# --- the rule -------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("largest", "sizes"),
    [(1, [1]), (3, [1, 2, 4]), (5, [1, 2, 4, 8]), (8, [1, 2, 4, 8]), (9, [1, 2, 4, 8, 16]),
     (16, [1, 2, 4, 8, 16]), (17, [1, 2, 4, 8, 16, 24]), (40, [1, 2, 4, 8, 16, 24, 32, 40])],
)
def test_default_rule_is_powers_to_8_then_multiples_of_8(largest, sizes):
    assert default_sizes(largest) == sizes


def test_user_list_and_memory_size_parse():
    assert parse_sizes("32,1, 8,8,2") == [1, 2, 8, 32]
    assert parse_bytes("2GiB") == 2 * 2**30 and parse_bytes("512MiB") == 512 * MiB
    assert parse_bytes("1.5G") == int(1.5 * 2**30) and parse_bytes("3000") == 3000
    for bad in ("", "1,,2", "1,x", "0,4", "-2", "1.5"):
        with pytest.raises(ValueError, match="--buckets"):
            parse_sizes(bad)
    for bad in ("lots", "0", "2 parsecs", "-1GiB"):
        with pytest.raises(ValueError, match="--bucket-memory"):
            parse_bytes(bad)


def test_batch_axis_groups_arguments_that_vary_together():
    history = {
        "tokens": [(3,), (8,), (5,)],
        "positions": [(3,), (8,), (5,)],
        "cache": [(33, 4, 64), (33, 4, 64), (33, 4, 64)],
        "prompt": [(1, 7), (1, 9), (1, 7)],
    }
    axis = batch_axis(history)
    assert axis is not None
    assert axis.arguments == [("positions", 0), ("tokens", 0)]
    assert axis.sizes == [3, 8, 5]
    assert axis.others == [("prompt", 1)]


def test_fit_memory_drops_the_largest_sizes_until_the_pool_fits():
    own = {1: 2 * MiB, 2: 2 * MiB, 4: 4 * MiB, 8: 40 * MiB, 16: 80 * MiB}
    assert fit_memory([1, 2, 4, 8, 16], own, 64 * MiB) == ([1, 2, 4, 8], [16])
    assert fit_memory([1, 2, 4, 8, 16], own, 8 * MiB) == ([1, 2, 4], [8, 16])
    assert fit_memory([16, 1], own, 1) == ([1], [16])  # one size always stays


# --- on the recorded H200 run with varying shapes ----------------------------------------

def unmeasured_events(name: str) -> list[dict]:
    """The recorded run's events without the worker's bucket-* events: the run as a worker
    that predates the measurement (or could not run it) leaves it."""
    return [e for e in load(name).events if not str(e.get("type", "")).startswith("bucket-")]


@pytest.mark.parametrize("name", recorded(["dynamic_shapes"]))
def test_recommendation_on_the_recorded_shape_distribution(name):
    ev = load_evidence(name)
    seen = [s[0] for s in varying_shapes(ev)["x"]]
    assert len(set(seen)) > 3  # the run really saw several batch sizes
    plan = bucket_plan(ev)
    assert plan is not None
    assert [(a.argument, a.dim) for a in plan.arguments] == [("x", 0)]
    assert plan.recommended == default_sizes(max(seen)) == [1, 2, 4, 8, 16]
    assert plan.observed == dict(sorted(collections.Counter(seen).items()))
    assert plan.padding_waste == pytest.approx(waste_by_hand(seen, plan.recommended), abs=1e-4)
    assert plan.eager_calls == 0 and plan.eager_above == 16
    assert "cudagraph_capture_sizes = [1, 2, 4, 8, 16]" in plan.snippet
    # The worker measured every size of the plan on the GPU: nothing is said to be unmeasured.
    checks = [e for e in ev.buckets if e.TYPE == "bucket-check"]
    assert [m.size for m in plan.measured] == plan.recommended and checks
    assert plan.padding_safe is all(e.match for e in checks) is True  # the sample pads safely
    assert plan.speedup is not None and plan.shared_pool_bytes is not None
    assert not any("not measured" in n for n in plan.notes)


@pytest.mark.parametrize("name", recorded(["dynamic_shapes"]))
def test_recommendation_without_the_measurement_claims_nothing_measured(name):
    """The same shapes with no bucket-* events: the same plan from the rule, nothing measured."""
    measured = bucket_plan(load_evidence(name))
    plan = bucket_plan(parse_events(unmeasured_events(name)))
    assert plan is not None and measured is not None
    for field in ("arguments", "recommended", "observed", "padding_waste", "eager_calls", "eager_above", "snippet"):
        assert getattr(plan, field) == getattr(measured, field), field
    assert plan.measured == [] and plan.padding_safe is None and plan.speedup is None
    assert plan.shared_pool_bytes is None and plan.private_pool_bytes is None
    assert any("not measured" in n for n in plan.notes)


@pytest.mark.parametrize("name", recorded(["dynamic_shapes"]))
def test_user_plan_on_the_recorded_run_sends_larger_calls_to_eager(name):
    ev = load_evidence(name)
    seen = [s[0] for s in varying_shapes(ev)["x"]]
    events = [*unmeasured_events(name), {"type": "bucket-plan", "sizes": [4, 8], "source": "user", "limit_bytes": 2**31}]
    plan = bucket_plan(parse_events(events))
    assert plan.recommended == [4, 8] and plan.source == "user"
    above = sum(1 for n in seen if n > 8)
    assert above > 0 and plan.eager_calls == above == eager_calls(seen, [4, 8])
    assert f"{above} observed calls above 8 run eagerly" in plan.explanation
    assert plan.padding_waste == pytest.approx(waste_by_hand(seen, [4, 8]), abs=1e-4)
    assert plan.padding_waste != bucket_plan(ev).padding_waste


def test_bucket_of_and_waste_edges():
    assert bucket_of(5, [8, 1, 4]) == 8 and bucket_of(9, [8, 1, 4]) is None
    assert padding_waste([9, 10], [8]) == 0.0  # nothing served, nothing wasted
    assert padding_waste([3, 4], [4]) == pytest.approx(1 / 8)


# --- the analysis of measured events ----------------------------------------------------------

def test_measured_plan_reports_what_the_worker_measured():
    plan = measured_plan()
    assert [m.size for m in plan.measured] == plan.recommended == [1, 2, 4, 8, 16]
    m16 = plan.measured[-1]
    assert (m16.pool_bytes, m16.shared_added_bytes, m16.replay_us) == (16 * MiB, 16 * MiB, 56.0)
    assert plan.shared_pool_bytes == 16 * MiB < plan.private_pool_bytes == 31 * MiB
    assert plan.workspace_bytes == 32 * MiB
    assert plan.padding_safe is True and plan.fix is None and not plan.leaks
    # ratio of the medians of the two sequence timings (1004.5 / 404.5)
    assert plan.speedup.median == pytest.approx(1004.5 / 404.5)
    assert plan.speedup.low <= plan.speedup.median <= plan.speedup.high
    assert sum(m.calls for m in plan.measured) == 10


def test_memory_limit_drops_sizes_and_says_those_calls_run_eagerly():
    sizes = [3, 8, 5, 13, 8, 1, 16, 8, 2, 8]
    plan = bucket_plan(parse_events(measured_events(sizes, [1, 2, 4, 8, 16], limit=10 * MiB)))
    assert plan.recommended == [1, 2, 4, 8] and plan.dropped == [16]
    assert plan.eager_calls == 2  # 13 and 16
    assert "dropped" in plan.explanation and "calls above 8 run eagerly" in plan.explanation


def test_a_pool_over_the_limit_even_at_the_smallest_size_is_said_in_readable_units():
    plan = bucket_plan(parse_events(measured_events([3, 8, 1], [1, 2, 4, 8], limit=MiB // 2)))
    assert plan.recommended == [1] and plan.dropped == [2, 4, 8]
    assert "the measured shared pool (1 MiB) passes --bucket-memory (0.5 MiB)" in " ".join(plan.notes)
    assert "keep the shared pool under 0.5 MiB" in plan.explanation


def test_a_padding_leak_is_never_called_safe():
    plan = measured_plan(leak=True)
    assert plan.padding_safe is False
    assert [m.matches for m in plan.measured] == [True, True, True, True, False]
    [leak] = plan.leaks
    assert (leak.op, leak.file, leak.line, leak.output) == ("mean", "/proj/model.py", 21, "output")
    assert "mask" in plan.fix and "device tensor" in plan.fix


def test_a_failed_check_without_a_located_op_is_still_unsafe():
    events = [e for e in measured_events([3, 8, 5], [4, 8], leak=True) if e["type"] != "bucket-leak"]
    plan = bucket_plan(parse_events(events))
    assert plan.padding_safe is False and plan.fix is not None


def test_unbucketed_varying_argument_is_named():
    events = calls([3, 8, 5])
    for e, n in zip(events, [7, 7, 9]):
        e["args"].append({"path": "prompt", "kind": "tensor", "shape": [1, n], "dtype": "int64", "device": "cuda:0"})
    plan = bucket_plan(parse_events(events))
    assert [a.argument for a in plan.others] == ["prompt"]
    assert any("prompt dim 1" in n for n in plan.notes)


def test_no_varying_shape_no_plan():
    events = calls([4, 4, 4])
    assert bucket_plan(parse_events(events)) is None


# --- the migration of the list form ------------------------------------------------------------

def test_version_2_report_with_the_list_form_loads():
    path = DATA / "migrations" / "report-v2.json"
    old = json.loads(path.read_text())
    assert old["schema_version"] == 2 and isinstance(old["buckets"], list)
    report = load_report(path)
    assert report.schema_version == SCHEMA_VERSION == 3
    plan = report.buckets
    assert [(a.argument, a.dim) for a in plan.arguments] == [("x", 0)]
    assert plan.recommended == old["buckets"][0]["sizes"]
    assert plan.padding_waste == old["buckets"][0]["padding_waste"]
    # The old pool figure was an estimate with the workspace in it: a note, never a measurement.
    assert plan.shared_pool_bytes is None and plan.measured == [] and plan.padding_safe is None
    assert any(str(old["buckets"][0]["pool_bytes_estimate"]) in n for n in plan.notes)


def test_version_2_without_buckets_and_with_two_arguments(tmp_path):
    data = json.loads((DATA / "migrations" / "report-v2.json").read_text())
    for value, expected in ((None, None), ([], None)):
        path = tmp_path / "r.json"
        path.write_text(json.dumps({**data, "buckets": value}))
        assert load_report(path).buckets is expected
    two = [
        {"argument": "tokens", "dim": 0, "sizes": [1, 2, 4], "padding_waste": 0.1, "pool_bytes_estimate": None},
        {"argument": "positions", "dim": 0, "sizes": [1, 2, 4], "padding_waste": 0.1, "pool_bytes_estimate": None},
        {"argument": "prompt", "dim": 1, "sizes": [8, 16], "padding_waste": 0.3, "pool_bytes_estimate": None},
    ]
    path.write_text(json.dumps({**data, "buckets": two}))
    plan = load_report(path).buckets
    assert [a.argument for a in plan.arguments] == ["tokens", "positions"]
    assert [a.argument for a in plan.others] == ["prompt"]


def test_report_round_trips_the_plan():
    report = dataclasses.replace(reports.graphs_help(), buckets=measured_plan(leak=True))
    again = type(report).from_dict(json.loads(report.to_json()))
    assert again.buckets == report.buckets


# --- the renderers ------------------------------------------------------------------------------

def _rendered(plan):
    report = dataclasses.replace(reports.graphs_help(), buckets=plan)
    opts = RenderOptions(color=False, width=160)
    return {
        "text": ConsoleRenderer(opts).render(report),
        "md": MarkdownRenderer(opts).render(report),
        "html": HtmlRenderer(opts).render(report),
    }


def test_renderers_show_the_table_and_the_plan_to_paste():
    for fmt, text in _rendered(measured_plan()).items():
        assert "cudagraph_capture_sizes = [1, 2, 4, 8, 16]" in text, fmt
        assert "graph_pool_handle()" in text, fmt
        assert "Added to shared pool" in text, fmt
        assert "16.0 MiB" in text and "31.0 MiB" in text, fmt  # shared against private
        assert "Padding is safe" in text, fmt
        assert "2.48" in text, fmt  # the end-to-end speedup


def test_renderers_say_padding_is_unsafe_with_the_line_and_fix():
    for fmt, text in _rendered(measured_plan(leak=True)).items():
        assert "Padding is NOT safe" in text, fmt
        assert "model.py:21" in text, fmt
        assert "DIFFERS" in text, fmt
        assert "mask" in text and "device" in text, fmt
        assert "Padding is safe" not in text, fmt


def test_unmeasured_plan_renders_without_a_table():
    plan = bucket_plan(parse_events(unmeasured_events("dynamic_shapes")))
    for fmt, text in _rendered(plan).items():
        assert "Added to shared pool" not in text, fmt
        assert "not measured" in text, fmt


def test_the_recorded_measured_plan_renders_its_table():
    plan = bucket_plan(load_evidence("dynamic_shapes"))
    for fmt, text in _rendered(plan).items():
        assert "Added to shared pool" in text, fmt
        assert "not measured" not in text and "Padding is safe" in text, fmt


# --- the CLI options ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("option", "value", "says"),
    [("--buckets", "1,x", "--buckets"), ("--buckets", "0", "--buckets"), ("--buckets", "", "--buckets"), ("--buckets", "99999999999999999999", "larger than"),
     ("--bucket-memory", "lots", "--bucket-memory"), ("--bucket-memory", "0GiB", "--bucket-memory")],
)
def test_bad_bucket_options_are_one_line_usage_errors(option, value, says):
    proc = subprocess.run(
        [sys.executable, "-m", "launchprof", "analyze", "sample_models/batch_reduce.py", "--target", "step", option, value],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("launchprof: error:") and says in lines[0]


def test_bucket_options_reach_the_worker_config():
    from launchprof.commands.analyze import AnalyzeOptions, bucket_options

    got = bucket_options(AnalyzeOptions(script=Path("x.py"), buckets="16,1,4", bucket_memory="512MiB"))
    assert got == {"buckets": [1, 4, 16], "bucket_memory": 512 * MiB}
    assert bucket_options(AnalyzeOptions(script=Path("x.py"))) == {"buckets": None, "bucket_memory": 2 * 2**30}


def test_help_explains_the_options():
    proc = subprocess.run([sys.executable, "-m", "launchprof", "analyze", "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, "COLUMNS": "200"})
    assert "--buckets" in proc.stdout and "--bucket-memory" in proc.stdout
    assert "eagerly" in proc.stdout
