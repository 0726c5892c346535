"""Narrow terminals (COLUMNS=40 up to 120): every figure stays whole, no line is wider than
the terminal, and nothing is dropped.

Each console output is rendered wide (200 columns, where nothing needs wrapping) and narrow;
every figure of the wide output (a number with its unit, a range, a bracketed interval, a
p-value) must appear, unbroken, on one line of the narrow output as many times. The figure
pattern below is written for these tests, independently of launchprof.render.whole_text.
"""

from __future__ import annotations

import ast
import io
import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import pytest
from rich.cells import cell_len
from rich.console import Console
from typer.testing import CliRunner

import reports
from launchprof.analysis.load import report_from
from launchprof.cli import app
from launchprof.analysis.comparison import METRICS, compare
from launchprof.crossover import profile as prof
from launchprof.crossover.fit import derive_profile
from launchprof.crossover.plans import QUICK_PLAN
from launchprof.crossover.simulate import simulate_samples
from launchprof.render.compare_text import value_text
from launchprof.render.crossover_text import print_profile

RUNS = reports.DATA / "runs"
WIDE = 200
WIDTHS = (40, 60, 80, 120)
runner = CliRunner()

_NUM = r"[-+±]?\d+(?:[.,]\d+)*"
FIGURE = re.compile(
    rf"\[{_NUM}(?: \w+)?, {_NUM}(?: \w+)?\]"  # [1521.4, 1583.8]
    rf"|\bp [<=] {_NUM}"  # p < 0.001
    rf"|(?<![\w.]){_NUM}[%×x]?(?: ?– ?{_NUM}[%×x]?)?(?: (?:ns|µs|us|ms|s|KiB|MiB|GiB|B|bytes|pp))?(?!\w)"
)


def figures(text: str) -> Counter[str]:
    """The figures of ``text``, line by line (a figure split over two lines is two others)."""
    found: Counter[str] = Counter()
    for line in text.splitlines():
        found.update(FIGURE.findall(line))
    return found


def code_lines(report: object) -> set[str]:
    """The lines of the code a report gives to paste (bucket plan, capture snippet): never
    wrapped, since a wrapped comment is broken Python; the terminal soft-wraps them."""
    buckets = getattr(report, "buckets", None)
    code = [getattr(buckets, "snippet", None), getattr(report, "capture_snippet", None)]
    return {line.rstrip() for text in code if text for line in text.splitlines()}


def assert_fits(wide: str, narrow: str, width: int, code: set[str] = frozenset()) -> None:
    """No line wider than ``width`` but the lines of code to paste (``code``, whole and
    parseable); each figure of ``wide`` on one line of ``narrow`` (where a table's header
    named the unit, a narrow layout may write it after the figure: "6.97 µs" stands for the
    column's "6.97"); no cell cut with an ellipsis."""
    too_long = [line for line in narrow.splitlines() if cell_len(line) > width and line.rstrip() not in code]
    assert not too_long, f"lines wider than {width}: {too_long}"
    found = figures(narrow)
    found += Counter({f.rsplit(" ", 1)[0]: k for f, k in found.items() if re.search(r"\d [a-zµ]+$", f, re.I)})
    missing = figures(wide) - found
    assert not missing, f"figures broken or lost at {width} columns: {dict(missing)}\n{narrow}"
    assert narrow.count("…") <= wide.count("…"), f"cells cut with an ellipsis at {width} columns:\n{narrow}"


@lru_cache(maxsize=None)
def cli(args: tuple[str, ...], columns: int, code: int = 0) -> tuple[str, str]:
    """(stdout, stderr) of ``launchprof ARGS`` on a terminal ``columns`` wide."""
    result = runner.invoke(app, list(args), env={"COLUMNS": str(columns)})
    assert result.exit_code == code, result.output
    return result.stdout, result.stderr


def _metric_lines(text: str) -> list[str]:
    return [line.strip(" │┃|") for line in text.splitlines()]


PAIRS = [("decode_loop", "dict_inputs"), ("decode_loop", "decode_loop"), ("long_kernels", "bucketed_decode")]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("base", "new"), PAIRS, ids=[f"{b}-{n}" for b, n in PAIRS])
def test_compare_keeps_every_figure_whole(base: str, new: str, width: int) -> None:
    args = ("compare", str(RUNS / f"{base}.lprun"), str(RUNS / f"{new}.lprun"))
    wide, _ = cli(args, WIDE)
    narrow, _ = cli(args, width)
    assert_fits(wide, narrow, width)
    result = compare(report_from(RUNS / f"{base}.lprun"), report_from(RUNS / f"{new}.lprun"))
    lines = _metric_lines(narrow)
    assert len(result.deltas) == len(METRICS)
    for d in result.deltas:  # each metric: its name starts a line that carries its base figure
        label, figure = METRICS[d.metric].label, value_text(d.metric, d.base)
        assert any(line.startswith(label.split()[0]) and figure in line for line in lines), (label, figure, narrow)
        if width == 40:  # one metric per block: the whole name on the line
            assert any(line.startswith(label) for line in lines), (label, narrow)
    assert any(line.startswith("Verdict") and result.base_verdict in line for line in lines)
    assert result.new_verdict in narrow
    assert f"Hazards added: {len(result.hazards_added)}" in narrow and f"Hazards removed: {len(result.hazards_removed)}" in narrow
    assert narrow.count("warning:") == len(result.warnings)


def test_compare_at_40_columns_is_one_block_per_metric() -> None:
    """The table cannot fit 40 columns without breaking a figure: one line per metric instead."""
    args = ("compare", str(RUNS / "decode_loop.lprun"), str(RUNS / "dict_inputs.lprun"))
    narrow, _ = cli(args, 40)
    assert "┃" not in narrow and "│" not in narrow
    assert "Eager step  1.86 ms → 85.7 µs  -95.4%" in narrow
    assert "significant (p < 0.001)" in narrow
    wide, _ = cli(args, 120)
    assert "┃ Metric" in wide  # wide enough: the table


def test_compare_note_and_gate_at_40_columns() -> None:
    """Reports without samples: the significance note under the table, the tripped rules on stderr."""
    args = (
        "compare", str(reports.DATA / "decode_loop.report.json"), str(reports.DATA / "long_kernels.report.json"),
        "--fail-on", "speedup:-10%", "--fail-on", "replay_step_us:+1%",
    )
    wide, _ = cli(args, WIDE, code=1)
    narrow, err = cli(args, 40, code=1)
    assert_fits(wide, narrow, 40)
    flat = " ".join(narrow.split())
    assert "Note: significance of eager_step_us, replay_step_us could not be tested" in flat
    assert "--fail-on speedup:-10%: speedup 8.1207 -> 1.0327 (-87.3%)" in err
    assert "--fail-on replay_step_us:+1%" in err


def test_compare_within_noise_at_40_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A threshold exceeded within noise: its line, its p-value whole, at 40 columns."""
    from test_compare_significance import noise_pair, recorded_samples, with_samples

    import launchprof.commands.compare as command

    report = reports.recorded_reports()["decode_loop.report.json"]
    eager, _ = recorded_samples("decode_loop")
    base_samples, new_samples, rule, _p = noise_pair(eager)
    loaded = {"base.json": with_samples(report, base_samples), "new.json": with_samples(report, new_samples)}
    monkeypatch.setattr(command, "load_any", lambda path: loaded[Path(path).name])
    args = ("compare", "base.json", "new.json", "--fail-on", rule)
    outputs = {w: runner.invoke(app, list(args), env={"COLUMNS": str(w)}) for w in (WIDE, 40)}
    assert all(r.exit_code == 0 for r in outputs.values()), outputs[40].output
    narrow = outputs[40].stdout
    assert_fits(outputs[WIDE].stdout, narrow, 40)
    assert "within noise:" in narrow and "not counted as a change" in " ".join(narrow.split())


REPORT_RUNS = ["decode_loop", "bucketed_decode", "numpy_rng", "pageable_copy", "frozen_scalar", "dynamic_shapes"]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("run", REPORT_RUNS)
def test_report_keeps_every_figure_whole(run: str, width: int) -> None:
    args = ("report", str(RUNS / f"{run}.lprun"), "--explain")  # every figure, the basis among them
    wide, _ = cli(args, WIDE)
    narrow, _ = cli(args, width)
    report = _analysed(run)
    code = code_lines(report)
    assert_fits(wide, narrow, width, code)
    assert "Eager step" in narrow and "Prediction basis" in narrow
    if report.buckets is not None:  # the plan to paste is there whole, and is Python
        snippet = report.buckets.snippet.rstrip()
        assert snippet in narrow, narrow
        ast.parse(snippet)


@lru_cache(maxsize=None)
def _analysed(run: str) -> object:
    from launchprof.analysis import analyse
    from launchprof.analysis.load import stored_profile
    from launchprof.run import load_run

    loaded = load_run(RUNS / f"{run}.lprun")
    return analyse(loaded, stored_profile(loaded.profile))


def test_report_at_40_columns_puts_each_label_above_its_value() -> None:
    narrow, _ = cli(("report", str(RUNS / "decode_loop.lprun"), "--explain"), 40)
    lines = narrow.splitlines()
    at = lines.index("Eager step")
    assert lines[at + 1] == "  1.86 ms (p10–p90 1.81–1.97 ms, n=60)"


def _profile_text(p: prof.DeviceProfile, width: int) -> str:
    out = io.StringIO()
    print_profile(p, Console(file=out, width=width, highlight=False, color_system=None))
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


def _profiles() -> dict[str, prof.DeviceProfile]:
    stored = prof.load_profile(reports.DATA / "crossover_h200.json").profile
    drifting = derive_profile(simulate_samples(QUICK_PLAN, noise=0.02, round_drift=(1.0, 1.45, 0.9)), reports.H200, quick=True)
    return {"h200": stored, "noisy": drifting}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["h200", "noisy"])
def test_crossover_profile_keeps_every_figure_whole(name: str, width: int) -> None:
    p = _profiles()[name]
    wide, narrow = _profile_text(p, WIDE), _profile_text(p, width)
    assert_fits(wide, narrow, width)
    assert ("Noisy profile:" in narrow) is p.noisy
    gains = [f"{c.gain_at_64_nodes:+.1%}" for c in p.crossover if c.gain_at_64_nodes is not None]
    assert gains and all(g in narrow for g in gains)


@pytest.mark.parametrize("width", WIDTHS)
def test_ranks_and_compile_sections_keep_every_figure_whole(width: int) -> None:
    from ranks_data import cut_after, rank_input, recorded
    from test_compile_report import _events, _ok

    from launchprof.analysis.compile import with_compile
    from launchprof.run.evidence import parse_events
    from launchprof.ranks.combine import combine
    from launchprof.render import RenderOptions, renderer_for

    died = rank_input(1, cut_after(recorded("decode_loop"), "trace"), exit_code=-11, signal="SIGSEGV")
    events = parse_events(_events(_ok("reduce-overhead", 12, True, 25.0), _ok("default", 12, False, 20.0), [1000.0] * 5, [1200.0] * 5))
    for report in (combine([rank_input(0, "decode_loop"), died]), with_compile(reports.graphs_help(), events, None)):
        wide = renderer_for("text", RenderOptions(width=WIDE)).render(report)
        assert_fits(wide, renderer_for("text", RenderOptions(width=width)).render(report), width, code_lines(report))


def test_the_figure_pattern_sees_a_split_figure() -> None:
    """The check itself: a figure broken over two lines is missing from the narrow text."""
    wide = "eager step median 1934.5 µs [1521.4, 1583.8] (p < 0.001)\n"
    assert figures(wide) == Counter({"1934.5 µs": 1, "[1521.4, 1583.8]": 1, "p < 0.001": 1})
    with pytest.raises(AssertionError, match="1934.5 µs"):
        assert_fits(wide, "eager step median 1934.\n5 µs [1521.4, 1583.8] (p < 0.001)\n", 40)
    with pytest.raises(AssertionError, match=r"\[1521.4, 1583.8\]"):
        assert_fits(wide, "eager step median 1934.5 µs [1521.4,\n1583.8] (p < 0.001)\n", 40)


def test_json_output_does_not_depend_on_the_terminal() -> None:
    args = ("compare", str(RUNS / "decode_loop.lprun"), str(RUNS / "dict_inputs.lprun"), "-f", "json")
    narrow, wide = json.loads(cli(args, 40)[0]), json.loads(cli(args, WIDE)[0])
    assert narrow == wide


@pytest.mark.parametrize("width", WIDTHS)
def test_the_capture_snippet_is_never_wrapped(width: int) -> None:
    """--snippet at any width: the snippet's lines as written, so what is pasted is Python
    (at 60 columns a wrapped string once read "unterminated string literal")."""
    narrow, _ = cli(("report", str(RUNS / "decode_loop.lprun"), "--snippet"), width)
    snippet = _analysed("decode_loop").capture_snippet.rstrip()
    assert snippet in narrow
    ast.parse(snippet)
