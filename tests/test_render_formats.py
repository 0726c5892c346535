"""Every renderer over every kind of report: built ones and recorded H200 sessions.

Set LAUNCHPROF_UPDATE_GOLDEN=1 to rewrite the golden Markdown (then read it before committing).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

import reports
from launchprof.crossover.profile import CrossoverPoint, DeviceProfile, Interval
from launchprof.hazards.kinds import KINDS
from launchprof.render import RenderOptions, renderer_for
from launchprof.render.html import HtmlRenderer
from launchprof.render.junit import JUnitRenderer
from launchprof.render.markdown import MarkdownRenderer
from launchprof.render.sarif import FINGERPRINT_KEY, SarifRenderer
from launchprof.model.step_timing import KernelSpan, Timeline
from launchprof.model.core import Report

GOLDEN = Path(__file__).resolve().parent / "data" / "golden" / "report.md"
SARIF_SCHEMA = Path(__file__).resolve().parent / "schemas" / "sarif-schema-2.1.0.json"
XSS = "<script>alert(1)</script>"
OPTIONS = RenderOptions(project_root=reports.ROOT)


def _profile(crossover: list[CrossoverPoint] | None = None, **coefficients: Interval) -> DeviceProfile:
    """A device profile holding only what the HTML crossover panel reads."""
    return DeviceProfile(
        schema_version=2, launchprof_version="test", created="2026-11-29", machine=reports.H200, partial=False, quick=False,
        eager_op_us=coefficients.get("eager_op_us"), raw_launch_us=None, graph_launch_fixed_us=coefficients.get("graph_launch_fixed_us"),
        graph_node_us=coefficients.get("graph_node_us"), floor_node_us=None, instantiate_node_us=None, update_node_us=None,
        crossover=crossover or [], gain_below_5pct_kernel_us=None, samples=[], notes=[],
    )


PROFILE = _profile(
    [CrossoverPoint(2.0, 3, 4.1), CrossoverPoint(8.0, 12, 1.9), CrossoverPoint(32.0, 90, 1.1)],
    graph_node_us=Interval(1.05, 1.0, 1.1),
    eager_op_us=Interval(7.0, 6.8, 7.3),
    graph_launch_fixed_us=Interval(4.2, 4.0, 4.5),
)
ALL = reports.all_reports()


def _with_xss(report: Report) -> Report:
    """A hazard message, a kernel name and a file path carrying markup."""
    hazard = dataclasses.replace(report.hazards[0], message=f"bad {XSS} | pipe", file=str(reports.ROOT / f"{XSS}.py"))
    timeline = Timeline(eager=[KernelSpan(XSS, 0.0, 3.0)] + report.timeline.eager, replay=report.timeline.replay)
    return dataclasses.replace(report, hazards=[hazard] + report.hazards[1:], timeline=timeline)


@pytest.mark.parametrize("name", list(ALL))
@pytest.mark.parametrize("fmt", ["md", "sarif", "junit", "html", "json"])
def test_every_format_renders_every_report(name: str, fmt: str) -> None:
    text = renderer_for(fmt, RenderOptions(project_root=reports.ROOT, device_profile=PROFILE)).render(ALL[name])
    assert text.strip()
    assert ALL[name].verdict in text


def test_renderers_do_not_import_torch() -> None:
    """Reports render on CPU-only CI runners; importing torch there is slow or impossible."""
    code = (
        "import sys; sys.path.insert(0, 'tests'); import reports\n"
        "from launchprof.render import RenderOptions, renderer_for\n"
        "for fmt in ('md', 'sarif', 'junit', 'html'):\n"
        "    for build in reports.BUILDERS.values(): renderer_for(fmt, RenderOptions()).render(build())\n"
        "assert 'torch' not in sys.modules, 'a renderer imported torch'\n"
    )
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)


# --- Markdown ------------------------------------------------------------------------------


def test_markdown_golden() -> None:
    text = MarkdownRenderer(OPTIONS).render(reports.graphs_help())
    if os.environ.get("LAUNCHPROF_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")


def _cells(row: str) -> list[str]:
    """Split a GFM table row on unescaped pipes, as GitHub does."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_markdown_escapes_html_and_pipes_in_cells() -> None:
    text = MarkdownRenderer(OPTIONS).render(_with_xss(reports.graphs_help()))
    assert "<script" not in text
    row = next(line for line in text.splitlines() if "alert(1)" in line and line.startswith("|"))
    cells = _cells(row)
    assert len(cells) == 5  # the pipe in the message did not open a sixth column
    assert cells[3] == r"bad &lt;script&gt;alert(1)&lt;/script&gt; \| pipe"


def test_markdown_key_numbers_and_hazard_locations() -> None:
    default = MarkdownRenderer(OPTIONS).render(reports.graphs_help())
    short = {c[0]: c[1] for c in map(_cells, default.splitlines()) if len(c) == 2}
    assert short["Speedup (eager / replay)"] == "2.32× (95% interval 2.27–2.35×)"  # the method with --explain
    assert "Kernels per eager step" not in short and "Graph nodes" not in short
    text = MarkdownRenderer(dataclasses.replace(OPTIONS, explain=True)).render(reports.graphs_help())
    rows = {c[0]: c[1] for c in map(_cells, text.splitlines()) if len(c) == 2}
    assert rows["Speedup (eager / replay)"] == "2.32× (95% interval 2.27–2.35×), ratio of medians"  # Speedup.method
    assert rows["Kernels per eager step"] == "212"
    assert rows["GPU idle (eager, profiled)"] == "61.9%"
    assert rows["Graph nodes"] == "214 (212 kernels as in eager + 2 memcpys)"
    assert rows["Capture / instantiate"] == "2.21 ms / 1.93 ms"  # one unit rule: 1934.5 µs is 1.93 ms
    assert rows["Replays to pay back instantiation"] == "1.9"
    assert rows["Validation (replay vs eager)"] == "8/8 calls match (max \\|diff\\| 0)"
    assert "| `decode.py:42` | 🟠 warning | `frozen-scalar` |" in text


def test_markdown_lint_and_crashed_reports() -> None:
    lint = MarkdownRenderer(OPTIONS).render(reports.lint())
    assert "static-only" in lint and "Eager step" not in lint  # nothing measured, no empty table
    assert "`train.py:17`" in lint
    crashed = MarkdownRenderer(OPTIONS).render(reports.crashed())
    assert "did not complete: the script raised torch.OutOfMemoryError" in crashed
    assert "| Eager step | 1.84 ms (p10–p90 1.82–1.90 ms, n=11) |" in crashed
    assert "Replay step" not in crashed  # no replay was measured: no row for one


# --- SARIF ---------------------------------------------------------------------------------


def _sarif(report: Report, root: Path = reports.ROOT) -> dict:
    return json.loads(SarifRenderer(RenderOptions(project_root=root)).render(report))


@pytest.mark.parametrize("name", list(ALL))
def test_sarif_validates_against_official_schema(name: str) -> None:
    import jsonschema  # a dev dependency: a missing schema or library fails, never skips

    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)  # the schema's own draft (04)
    errors = sorted(validator.iter_errors(_sarif(ALL[name])), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def test_sarif_rules_are_the_hazard_kinds() -> None:
    rules = _sarif(reports.lint())["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(KINDS)
    for rule in rules:
        kind = KINDS[rule["id"]]
        assert rule["shortDescription"]["text"] == kind.title
        assert rule["help"]["text"] == kind.hint
        assert rule["defaultConfiguration"]["level"] == {"error": "error", "warning": "warning", "info": "note"}[kind.severity]


def test_sarif_results_levels_and_locations() -> None:
    run = _sarif(reports.graphs_help())["runs"][0]
    levels = [r["level"] for r in run["results"]]
    assert levels == ["warning", "warning", "note"]  # info -> note
    first = run["results"][0]
    assert run["tool"]["driver"]["rules"][first["ruleIndex"]]["id"] == first["ruleId"] == "frozen-scalar"
    loc = first["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "decode.py", "uriBaseId": "%SRCROOT%"}
    assert loc["region"] == {"startLine": 42}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/llm-decode/")


def test_sarif_file_outside_project_root_gets_absolute_uri() -> None:
    result = _sarif(reports.graphs_help(), root=Path("/somewhere/else"))["runs"][0]["results"][0]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "file:///home/ci/llm-decode/decode.py"}


def test_sarif_fingerprints_survive_moved_lines_and_other_checkouts() -> None:
    def fingerprints(report: Report, root: Path) -> list[str]:
        return [r["partialFingerprints"][FINGERPRINT_KEY] for r in _sarif(report, root)["runs"][0]["results"]]

    base = reports.not_capturable()
    moved = dataclasses.replace(base, hazards=[dataclasses.replace(h, line=h.line + 5) for h in base.hazards])
    elsewhere = reports.not_capturable(Path("/runner/work/llm"))
    assert fingerprints(base, reports.ROOT) == fingerprints(moved, reports.ROOT)
    assert fingerprints(base, reports.ROOT) == fingerprints(elsewhere, Path("/runner/work/llm"))
    assert len(set(fingerprints(base, reports.ROOT))) == 2  # two kinds on one line stay apart


# --- JUnit ---------------------------------------------------------------------------------


def _cases(report: Report) -> dict[str, tuple[str, ET.Element]]:
    root = ET.fromstring(JUnitRenderer(OPTIONS).render(report))
    suite = root.find("testsuite")
    assert suite is not None
    out = {}
    for case in suite.findall("testcase"):
        status = next((child.tag for child in case if child.tag in ("failure", "skipped")), "passed")
        out[case.get("name")] = (status, case)
    return out


@pytest.mark.parametrize("name", list(ALL))
def test_junit_counts_match_testcases(name: str) -> None:
    root = ET.fromstring(JUnitRenderer(OPTIONS).render(ALL[name]))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases[:2]] == ["capture", "validation"]
    assert {c.get("name") for c in cases[2:]} >= set(KINDS)
    assert int(suite.get("tests")) == len(cases)
    assert int(suite.get("failures")) == len(suite.findall("testcase/failure"))
    assert int(suite.get("skipped")) == len(suite.findall("testcase/skipped"))


def test_junit_graphs_help() -> None:
    cases = _cases(reports.graphs_help())
    assert cases["capture"][0] == cases["validation"][0] == "passed"
    status, case = cases["frozen-scalar"]
    assert status == "failure"
    assert case.find("failure").get("message").startswith("decode.py:42: argument `temperature`")
    assert cases["reallocated-input"][0] == "passed"  # info only
    assert "info: decode.py:40" in case_text(cases["reallocated-input"][1])
    assert cases["stream-race"][0] == "passed"


def case_text(case: ET.Element) -> str:
    return "".join(case.itertext())


def test_junit_not_capturable_crashed_and_lint() -> None:
    cases = _cases(reports.not_capturable())
    assert cases["capture"][0] == "failure" and cases["hidden-sync"][0] == "failure"
    assert cases["validation"][0] == "skipped"
    cases = _cases(reports.crashed())
    assert cases["capture"][0] == "skipped"
    assert "OutOfMemoryError" in cases["capture"][1].find("skipped").get("message")
    assert cases["hidden-sync"][0] == "skipped"  # the run died: no claim that it is clean
    cases = _cases(reports.lint())
    assert cases["capture"][0] == cases["validation"][0] == "skipped"
    assert cases["unjoined-stream"][0] == "failure" and cases["pageable-copy"][0] == "passed"
    assert cases["stream-race"][0] == "skipped"  # the static lint cannot see races


# --- HTML ----------------------------------------------------------------------------------


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []
        self.style = ""
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self._in_style = tag == "style"
        self.attrs += [(tag, name, value or "") for name, value in attrs]

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.style += data


def external_references(html: str) -> list[str]:
    """Every attribute that points off the page. XML namespace declarations (xmlns, xmlns:*)
    are names, never fetched, so they are the only URLs allowed; everything else counts."""
    page = _Collector()
    page.feed(html)
    found = [f"<{tag} {name}={value!r}>" for tag, name, value in page.attrs if re.search(r"^\s*(\w+:)?//|://", value) and name != "xmlns" and not name.startswith("xmlns:")]
    found += [f"<{tag} {name}=...>" for tag, name, value in page.attrs if name in ("src", "srcset") and not value.startswith("data:")]
    found += [f"<{tag}>" for tag in page.tags if tag in ("script", "link", "iframe", "object", "embed")]
    found += ["css " + m for m in re.findall(r"@import|url\((?!\s*['\"]?(?:#|data:))", page.style)]
    return found


def test_external_reference_check_catches_what_it_should() -> None:
    assert external_references('<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"></svg>') == []
    assert external_references('<use xlink:href="#m1"/><a href="#hazards">x</a>') == []
    assert external_references('<img src="https://cdn.example/x.png">')
    assert external_references('<a href="//cdn.example/x.css">x</a>')
    assert external_references('<svg><image xlink:href="http://x/y.png"/></svg>')
    assert external_references("<style>@import 'https://x/y.css';</style>")
    assert external_references("<script>1</script>")


@pytest.mark.parametrize("name", list(ALL))
def test_html_is_self_contained(name: str) -> None:
    html = HtmlRenderer(RenderOptions(project_root=reports.ROOT, device_profile=PROFILE)).render(ALL[name])
    assert external_references(html) == []


def test_html_escapes_messages_kernel_names_and_paths() -> None:
    html = HtmlRenderer(OPTIONS).render(_with_xss(reports.graphs_help()))
    assert "<script" not in html.lower()
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert html.count(escaped) >= 3  # message, kernel name (timeline tooltip), file path


@pytest.mark.parametrize("name", list(ALL))
def test_the_verdict_words_are_said_once_in_the_headline(name: str) -> None:
    """The badge holds the label; a sentence that opens with the same words drops them."""
    report = ALL[name]
    html = HtmlRenderer(OPTIONS).render(report)
    headline = re.search(r'<p><span class="verdict[^>]*>([^<]*)</span>([^<]*)</p>', html)
    assert headline is not None
    label, sentence = headline.group(1), headline.group(2).strip()
    assert not sentence.startswith(label), (label, sentence)
    md = MarkdownRenderer(OPTIONS).render(report)
    assert f"{label}** (`{report.verdict}`) — {label}" not in md


def test_html_has_numbers_timeline_plot_and_snippets() -> None:
    html = HtmlRenderer(RenderOptions(project_root=reports.ROOT, device_profile=PROFILE)).render(reports.graphs_help())
    assert "2.32× (95% interval 2.27–2.35×)" in html
    assert html.count("<svg") == 2  # timeline and crossover plot
    assert "Crossover on this device" in html and "this workload" in html
    assert 'class="hit"><span class="ln">42</span>    logits = logits / temperature' in html
    assert "GPU idle" in html  # gaps summarised per lane


def test_html_reads_snippet_from_file_when_not_recorded(tmp_path: Path) -> None:
    source = tmp_path / "decode.py"
    source.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 60)), encoding="utf-8")
    report = reports.graphs_help(tmp_path)
    report = dataclasses.replace(report, hazards=[dataclasses.replace(report.hazards[0], details={})])
    html = HtmlRenderer(RenderOptions(project_root=tmp_path)).render(report)
    assert 'class="hit"><span class="ln">42</span>line_42 = 42' in html
    assert "line_39 = 39" in html and "line_45 = 45" in html and "line_38 = 38" not in html


def test_html_reads_snippet_through_the_source_owner(tmp_path: Path) -> None:
    """No file on disk: the lines come from launchprof.common.source, which serves a run's stored copy."""
    from launchprof.common.source import use_sources

    report = reports.graphs_help(tmp_path)
    report = dataclasses.replace(report, hazards=[dataclasses.replace(report.hazards[0], details={})])
    stored = {str(tmp_path / report.hazards[0].file): "".join(f"kept_{n} = {n}\n" for n in range(1, 60))}
    with use_sources(stored):
        html = HtmlRenderer(RenderOptions(project_root=tmp_path)).render(report)
    assert 'class="hit"><span class="ln">42</span>kept_42 = 42' in html
    assert "kept_39 = 39" in html and "kept_45 = 45" in html and "kept_38 = 38" not in html


NAN = float("nan")


@pytest.mark.parametrize(
    "profile",
    [
        None,
        _profile(),  # nothing measured
        _profile([CrossoverPoint(2.0, None, None)], graph_node_us=Interval(NAN, NAN, NAN)),  # no crossover, no usable median
        _profile([CrossoverPoint(NAN, 3, None)], eager_op_us=Interval(7.0, 6.8, 7.3)),  # a point without a duration, one coefficient
    ],
)
def test_html_skips_crossover_plot_without_usable_profile(profile: DeviceProfile | None) -> None:
    html = HtmlRenderer(RenderOptions(device_profile=profile)).render(reports.graphs_help())
    assert "Crossover on this device" not in html
    assert html.count("<svg") == 1


def test_html_without_timeline_says_so() -> None:
    html = HtmlRenderer(OPTIONS).render(reports.crashed())
    assert "No kernel timeline was recorded" in html
    assert "OutOfMemoryError" in html
