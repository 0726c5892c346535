"""Every format renders a combined multi-GPU report: the ranks, the skew, the rank that died
(its cause, last events and output) and the hazards tagged with their ranks."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from launchprof.ranks.combine import combine
from launchprof.render import renderer_for
from launchprof.render.words import format as fmt
from ranks_data import burst_median, cut_after, rank_input, recorded


@pytest.fixture(scope="module")
def combined():
    """Rank 0 measured decode_loop; rank 1 died after its profiled calls, printing markup."""
    died = rank_input(1, cut_after(recorded("decode_loop"), "trace"), exit_code=-11, signal="SIGSEGV", output_tail=["<script>alert(1)</script> Segmentation fault"])
    return combine([rank_input(0, "decode_loop"), died])


def test_text(combined):
    text = renderer_for("text").render(combined)
    assert "Ranks (2): the slowest rank sets the step time" in text
    assert "rank 1 (died, SIGSEGV): the rank's worker died (SIGSEGV)" in text
    assert "graph memory 2.0 MiB" in " ".join(text.split())  # rank 0's own pool
    assert "rank 0: `tokens` is a new allocation" in " ".join(text.split())  # rank 1 died before its hazards were found
    assert max(len(line) for line in text.splitlines()) <= 100


def test_markdown(combined):
    md = renderer_for("md").render(combined)
    assert "### Ranks (2): the slowest rank sets the step time" in md
    assert "| rank | status | verdict | eager step | replay step | speedup | kernels / nodes | collectives eager / graph | graph memory | workspace | hazards |" in md
    row0 = next(line for line in md.splitlines() if line.startswith("| 0 | ok |"))
    eager, replay = (fmt.duration(burst_median("decode_loop", kind)) for kind in ("eager", "replay"))
    assert f"| {eager} | {replay} |" in row0 and "147 / 147" in row0 and "2.0 MiB" in row0
    assert "- :x: rank 1 (died, SIGSEGV)" in md
    assert "<script>" not in md


def test_html(combined):
    page = renderer_for("html").render(combined)
    assert "<h2>Ranks (2): the slowest rank sets the step time</h2>" in page
    assert "<td>died</td>" in page and "<td>SIGSEGV</td>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page


def test_sarif(combined):
    doc = json.loads(renderer_for("sarif").render(combined))
    props = doc["runs"][0]["properties"]
    assert [(r["rank"], r["status"]) for r in props["ranks"]] == [(0, "ok"), (1, "died")]
    assert any(r["message"]["text"].startswith("rank 0: ") for r in doc["runs"][0]["results"])
    rules = {r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]}
    assert {"uncaptured-collective", "collective-divergence"} <= rules


def test_junit(combined):
    root = ET.fromstring(renderer_for("junit").render(combined))
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["rank 0"].find("failure") is None and cases["rank 0"].find("skipped") is None
    failure = cases["rank 1"].find("failure")
    assert failure is not None and "SIGSEGV" in failure.get("message")


def test_json(combined):
    data = json.loads(renderer_for("json").render(combined))
    assert [r["status"] for r in data["ranks"]] == ["ok", "died"]
    assert data["verdict"] == "script-failed"


def test_a_single_gpu_report_renders_no_rank_section():
    report = rank_input(0, "decode_loop").report
    for fmt in ("text", "md", "html"):
        assert "Ranks (" not in renderer_for(fmt).render(report), fmt
    assert "ranks" not in json.loads(renderer_for("sarif").render(report))["runs"][0]["properties"]
    assert not [c for c in ET.fromstring(renderer_for("junit").render(report)).iter("testcase") if c.get("name", "").startswith("rank ")]
