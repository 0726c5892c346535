"""``--compare compile`` on CPU: the worker's events -> the report's compile fields and
advice (launchprof.analysis.compile), the models in JSON, and every renderer's columns."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import reports
from launchprof.analysis.compile import advice, compile_result, hazards_caught, with_compile
from launchprof.model.compiled import CompileFinding, CompileResult
from launchprof.run.evidence import parse_events
from launchprof.render import RenderOptions, renderer_for
from launchprof.enums import Severity
from launchprof.model.hazard_records import Hazard
from launchprof.model.core import Report
from launchprof.model.step_timing import Stats

DATA = Path(__file__).resolve().parent / "data" / "compile"
ROOT = Path(__file__).resolve().parent.parent


def _recorded(name: str) -> dict:
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def _as_read(event: dict):
    """A ``compile`` event's fields as the run's reader gives them: its record."""
    return parse_events([{"type": "compile", **event}]).compiles[0]


def _events(ro: dict, plain: dict, ro_us: list[float], plain_us: list[float]) -> list[dict]:
    """The events a worker writes for --compare compile: bursts per mode, then its result."""
    return [
        {"type": "timing", "kind": "compile", "mode": "burst", "burst": 0, "wall_us": ro_us, "gpu_us": []},
        {"type": "compile", **ro},
        {"type": "timing", "kind": "compile-no-cudagraphs", "mode": "burst", "burst": 0, "wall_us": plain_us, "gpu_us": []},
        {"type": "compile", **plain},
    ]


def _ok(mode: str, kernels: int, graphs: bool, compile_s: float, logs: list | None = None, counters: dict | None = None) -> dict:
    return {
        "mode": mode, "field": "compile" if mode == "reduce-overhead" else "compile-no-cudagraphs", "status": "ok",
        "compile_s": compile_s, "kernels_per_step": kernels, "cudagraphs_used": graphs, "device": "cuda",
        "logs": logs or [], "counters": counters or {},
    }


def test_compile_fields_from_events_and_advice_numbers() -> None:
    """graphs_help: eager 1843 µs, 212 kernels; replay 796 µs. Compile: 1000 µs with graphs,
    1200 µs without, 12 kernels, 25 s to compile."""
    ev = parse_events(_events(_ok("reduce-overhead", 12, True, 25.0), _ok("default", 12, False, 20.0), [1000.0] * 5, [1200.0] * 5))
    report = with_compile(reports.graphs_help(), ev, None)
    ro, plain = report.compile, report.compile_no_cudagraphs
    assert ro is not None and plain is not None
    assert ro.step_us == Stats(median=1000.0, p10=1000.0, p90=1000.0, n=5) and ro.timing == "burst"
    assert plain.step_us is not None and plain.step_us.median == 1200.0
    assert (ro.kernels_per_step, ro.cudagraphs_used, ro.compile_s) == (12, True, 25.0)
    line = ro.advice or ""
    assert "hand capture is 1.3x faster than compile here" in line  # 1000 / 796
    assert "compile fuses 212 kernels into 12" in line
    assert "graphs then save a further 200.0 µs per call" in line  # the one formatter (render/format.py)
    # 25 s / (1843.2 - 1000) µs per call = 29,648.9 -> 29,649 calls
    assert "compile pays back its 25 s after 29,649 calls" in line
    assert plain.advice is None


def test_no_compile_events_leave_the_report_alone() -> None:
    report = reports.graphs_help()
    assert with_compile(report, parse_events([]), None) is report
    assert report.compile is None and report.compile_no_cudagraphs is None


def test_recorded_graph_break_becomes_a_finding_relative_to_the_root() -> None:
    rec = _recorded("item_graph_break")
    event = {**rec, "field": "compile", "device": "cuda"}
    result = compile_result(_as_read(event), parse_events([]), rec["root"])  # where it was recorded
    breaks = [f for f in result.graph_breaks if f.kind == "hidden-sync"]
    assert len(breaks) == 1 and breaks[0].file == "tests/data/compile/cases.py" and breaks[0].line == 9
    # On a CUDA device, skips torch counted but never logged stay unexplained (kind None).
    assert result.cudagraph_skips == rec["counters"]["inductor"]["cudagraph_skips"]
    assert [f.kind for f in result.skip_reasons] == [None]
    assert result.step_us is None and result.timing is None  # no bursts recorded


def test_advice_when_compile_is_faster_and_safer() -> None:
    eager = reports.graphs_help().eager
    replay = reports.graphs_help().replay
    hazard = CompileFinding(kind="frozen-scalar", reason="recompiled: n == 1", file="a.py", line=3)
    ro = CompileResult(mode="reduce-overhead", step_us=Stats(400.0, 390.0, 420.0, 20), compile_s=3.0, kernels_per_step=12,
                       cudagraphs_used=True, graph_breaks=[hazard, dataclasses.replace(hazard, line=4)])
    found = [Hazard(kind="frozen-scalar", severity=Severity.ERROR, message="", file="a.py", line=n, hint="") for n in (3, 4)]
    line = advice(eager, replay, True, ro, None, found) or ""
    assert "compile is 2.0x faster than hand capture here" in line  # 796 / 400
    assert "compile is safer: it caught 2 hazards" in line
    assert "compile pays back its 3.0 s after" in line  # a short compile keeps its tenths
    # Findings that match none of the report's own warnings or errors are not "caught".
    info = [dataclasses.replace(h, severity=Severity.INFO) for h in found]
    assert "compile is safer" not in (advice(eager, replay, True, ro, None, info) or "")
    assert "compile is safer" not in (advice(eager, replay, True, ro, None) or "")


def test_a_skip_for_a_mutated_input_is_not_a_hazard_caught() -> None:
    """Compile skips graphs for an input mutated in place; hand capture replays that correctly
    (the same tensor every call). Caught means the same kind as one of launchprof's own
    warnings or errors, in the same file: not another file's hazard of that kind, not another
    kind on the same line, not an info."""
    eager, replay = reports.graphs_help().eager, reports.graphs_help().replay
    skip = CompileFinding(kind="reallocated-input", reason="skipping cudagraphs due to mutated inputs (1 instances)", file="s.py", line=19)
    ro = CompileResult(mode="reduce-overhead", step_us=Stats(400.0, 390.0, 420.0, 20), compile_s=3.0, cudagraphs_used=False, skip_reasons=[skip])

    def hazard(kind: str, severity: Severity, file: str, line: int) -> Hazard:
        return Hazard(kind=kind, severity=severity, message="", file=file, line=line, hint="")

    not_caught = [
        hazard("reallocated-input", Severity.INFO, "s.py", 29),
        hazard("reallocated-input", Severity.ERROR, "other.py", 5),
        hazard("host-side-effect", Severity.WARNING, "s.py", 19),
    ]
    assert hazards_caught(ro, not_caught) == []
    assert "compile is safer" not in (advice(eager, replay, True, ro, None, not_caught) or "")
    elsewhere_in_file = hazard("reallocated-input", Severity.WARNING, "s.py", 25)  # a skip names its own line only
    assert hazards_caught(ro, [*not_caught, elsewhere_in_file]) == []
    same_line = hazard("reallocated-input", Severity.WARNING, "s.py", 19)
    assert hazards_caught(ro, [*not_caught, same_line]) == [same_line]
    assert "compile is safer: it caught 1 hazard;" in (advice(eager, replay, True, ro, None, [*not_caught, same_line]) or "")
    guard = CompileFinding(kind="frozen-scalar", reason="recompiled: lr == 0.1", file="s.py", line=40)
    by_guard = dataclasses.replace(ro, graph_breaks=[guard])
    frozen = hazard("frozen-scalar", Severity.ERROR, "s.py", 12)  # a guard names the kind in its file
    assert hazards_caught(by_guard, [frozen]) == [frozen]
    unplaced = dataclasses.replace(ro, skip_reasons=[dataclasses.replace(skip, file=None, line=None)])
    assert hazards_caught(unplaced, [same_line]) == []  # a finding with no file names no hazard


def test_a_sub_second_compile_is_not_zero_seconds() -> None:
    eager = reports.graphs_help().eager
    ro = CompileResult(mode="reduce-overhead", step_us=Stats(400.0, 390.0, 420.0, 20), compile_s=0.4, cudagraphs_used=True)
    assert "compile pays back its 0.4 s after" in (advice(eager, None, False, ro, None) or "")


def test_advice_when_compile_is_slower_than_eager_and_when_it_failed() -> None:
    eager, replay = reports.graphs_help().eager, reports.graphs_help().replay
    slow = CompileResult(mode="reduce-overhead", step_us=Stats(2000.0, 1990.0, 2100.0, 20), compile_s=12.0, cudagraphs_used=False,
                         skip_reasons=[CompileFinding(kind="host-side-effect", reason="cpu device (x)")])
    line = advice(eager, replay, False, slow, None) or ""
    assert "never pay back" in line and "reduce-overhead ran without CUDA graphs (1 distinct skip reason from torch)" in line
    assert "hand capture gives wrong results or failed here" in line
    failed = CompileResult(mode="reduce-overhead", status="timeout", error="no steady compiled call within --compile-timeout 5 s")
    assert advice(eager, replay, True, failed, None) == "torch.compile (reduce-overhead) timed out here; hand capture: 796.0 µs per call"


def _compared() -> Report:
    ev = parse_events(
        _events(
            _ok("reduce-overhead", 12, True, 25.0, _recorded("item_graph_break")["logs"], _recorded("item_graph_break")["counters"]),
            {"mode": "default", "field": "compile-no-cudagraphs", "status": "failed", "error": "RuntimeError: boom", "device": "cuda"},
            [1000.0] * 5,
            [],
        )
    )
    return with_compile(reports.graphs_help(), ev, None)


def test_every_format_shows_the_three_columns_and_the_advice() -> None:
    report = _compared()
    for fmt in ("text", "md", "html"):
        out = " ".join(renderer_for(fmt, RenderOptions()).render(report).split())  # the terminal wraps
        for column in ("eager", "hand capture", "torch.compile"):
            assert column in out, (fmt, column)
        assert "compile fuses 212 kernels into 12" in out, fmt
        assert "hidden-sync" in out and "cases.py:9" in out, fmt
        assert "RuntimeError: boom" in out, fmt
    md = renderer_for("md", RenderOptions()).render(report)
    row = next(line for line in md.splitlines() if line.startswith("| step time (median)"))
    assert [c.strip() for c in row.strip("|").split("|")] == ["step time (median)", "1.84 ms", "796.0 µs", "1.00 ms", "—"]
    data = json.loads(renderer_for("json", RenderOptions()).render(report))
    assert data["compile"]["step_us"]["median"] == 1000.0 and data["compile"]["kernels_per_step"] == 12
    assert data["compile_no_cudagraphs"]["status"] == "failed"
    assert {"step_us", "compile_s", "kernels_per_step", "cudagraphs_used", "skip_reasons", "graph_breaks"} <= set(data["compile"])


def test_without_compare_no_format_mentions_compile() -> None:
    report = reports.graphs_help()
    for fmt in ("text", "md", "html"):
        assert "torch.compile" not in renderer_for(fmt, RenderOptions()).render(report), fmt


def test_report_with_compile_round_trips_through_json() -> None:
    report = _compared()
    again = Report.from_dict(json.loads(report.to_json()))
    assert again.compile == report.compile and again.compile_no_cudagraphs == report.compile_no_cudagraphs


def test_compile_models_import_in_either_order() -> None:
    """models.py and compile_report.py import each other; both orders must work."""
    code = (
        "import launchprof.model.compiled as c; from launchprof.model.core import Report; from launchprof.model.records import adapter; "
        "print(adapter(c.CompileResult).validate_python({'mode': 'm', 'step_us': {'median': 1, 'p10': 1, 'p90': 1, 'n': 1}}).step_us.n)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT)})
    assert out.returncode == 0 and out.stdout.strip() == "1", out.stderr


def test_analyse_fills_compile_from_a_run_with_its_project_root() -> None:
    """Through the product's own path (run file -> analyse): the compile events of a run
    recorded on the H200 (frozen_scalar), with torch's messages naming absolute paths."""
    import recorded

    run = recorded.load("frozen_scalar")
    root = run.header.project_root
    logs = [
        {"logger": "torch._dynamo.guards.__recompiles", "level": "DEBUG", "message": (
            f"Recompiling function update in {root}/sample_models/frozen_scalar.py:16\n"
            "    triggered by the following guard failure(s):\n    - 0/0: lr == 0.1\n"
            f'    - User stack trace:\n    -   File "{root}/sample_models/frozen_scalar.py", line 17, in update\n'
            "    -     param.add_(grad, alpha=-lr)  # expect: frozen-scalar\n")},
        {"logger": "torch._inductor.cudagraph_utils.__cudagraphs", "level": "WARNING", "message": (
            "skipping cudagraphs due to mutated inputs (1 instances). Found from : \n "
            f'  File "{root}/sample_models/frozen_scalar.py", line 17, in update\n    param.add_(grad, alpha=-lr)\n')},
    ]
    extra = _events(
        _ok("reduce-overhead", 3, False, 4.0, logs, {"inductor": {"cudagraph_skips": 1}}),
        _ok("default", 3, False, 3.0), [60.0] * 4, [40.0] * 4,
    )
    report = recorded.analyse(dataclasses.replace(run, events=[*run.events[:-3], *extra, *run.events[-3:]]))
    ro = report.compile
    assert ro is not None and report.compile_no_cudagraphs is not None
    assert [(f.kind, f.file, f.line) for f in ro.skip_reasons] == [("reallocated-input", "sample_models/frozen_scalar.py", 17)]
    assert [(f.kind, f.file, f.line) for f in ro.graph_breaks] == [("frozen-scalar", "sample_models/frozen_scalar.py", 17)]
    assert ro.recompiles == 1 and ro.cudagraph_skips == 1
    assert "reduce-overhead ran without CUDA graphs (1 distinct skip reason from torch)" in (ro.advice or "")
    assert report.verdict == recorded.report_of("frozen_scalar").verdict  # the rest is unchanged


def test_the_recompile_limit_in_each_torch_wording() -> None:
    """torch 2.11 counts "Dynamo recompile limit exceeded"; older torch "cache_size_limit
    reached" or "recompile_limit reached". Each marks the result; any other reason does not."""
    eager = reports.graphs_help().eager
    for reason, hit in (
        ("Dynamo recompile limit exceeded\n  Explanation: ...", True),
        ("cache_size_limit reached", True),
        ("recompile_limit reached with one_graph=False", True),
        ("Unsupported: call_function print", False),
    ):
        event = {**_ok("reduce-overhead", 2, False, 3.0, counters={"unimplemented": {reason: 1}}), "logs": [
            {"logger": "torch._dynamo.guards.__recompiles", "level": "DEBUG", "message": "Recompiling function step in a.py:3"}]}
        result = compile_result(_as_read(event), parse_events([]), None)
        assert bool(result.details.get("recompile_limit_hit")) is hit, reason
        line = advice(eager, None, False, dataclasses.replace(result, step_us=Stats(50.0, 50.0, 50.0, 20)), None) or ""
        assert ("dynamo's recompile limit was hit" in line) is hit, line
        assert "it recompiled 1 time" in line


def test_the_advice_opens_with_which_of_the_three_to_use() -> None:
    """The fastest by measured step time; among those within 10% of it, eager before compile
    before hand capture (the least to get wrong first)."""
    from launchprof.model.step_timing import EagerProfile, ReplayProfile

    def first(eager_us: float, hand_us: float | None, compile_us: float, hazards: list | None = None) -> str:
        eager = dataclasses.replace(reports.graphs_help().eager, step_us=Stats(eager_us, eager_us, eager_us, 20))
        replay = dataclasses.replace(reports.graphs_help().replay, step_us=Stats(hand_us or 1.0, hand_us or 1.0, hand_us or 1.0, 20))
        ro = CompileResult(mode="reduce-overhead", step_us=Stats(compile_us, compile_us, compile_us, 20), compile_s=2.0, cudagraphs_used=True)
        line = advice(eager, replay, hand_us is not None, ro, None, hazards or [], predicted=3.0) or ""
        assert isinstance(eager, EagerProfile) and isinstance(replay, ReplayProfile)
        return line.split(";")[0]

    assert first(100.0, 50.0, 80.0) == "use hand capture"
    assert first(100.0, 50.0, 54.0) == 'use torch.compile (mode="reduce-overhead")'  # within 10% of hand capture
    assert first(100.0, 95.0, 97.0) == "stay eager"  # all within 10%
    assert first(100.0, None, 60.0) == 'use torch.compile (mode="reduce-overhead")'  # hand capture wrong here
    warn = Hazard(kind="host-side-effect", severity=Severity.WARNING, message="", file="a.py", line=3, hint="")
    assert first(100.0, 50.0, 80.0, [warn]) == "use hand capture, after fixing its 1 warning"
    err = dataclasses.replace(warn, kind="frozen-scalar", severity=Severity.ERROR)
    info = dataclasses.replace(warn, severity=Severity.INFO)
    assert first(100.0, 50.0, 80.0, [err, warn, warn, info]) == "use hand capture, after fixing its 1 error and 2 warnings"


def test_compile_rounds_report_the_median_round_and_say_when_they_disagree() -> None:
    """--compile-rounds 3: each round's bursts under its own kind. The median round (85 µs,
    the third) stands for reduce-overhead; the rounds' medians are
    kept in order; compile time is the first round's (later ones reuse the process's
    caches); the advice names the spread, which here is more than 15%. The default
    mode's rounds agree within 15%: nothing is said of them."""
    def round_events(mode: str, field: str, us: float, n: int, compile_s: float) -> list[dict]:
        kind = field if n == 1 else f"{field}@{n}"
        ok = _ok(mode, 4, mode == "reduce-overhead", compile_s)
        return [
            {"type": "timing", "kind": kind, "mode": "burst", "burst": 0, "wall_us": [us] * 5, "gpu_us": []},
            {"type": "compile", **ok, "field": kind, "round": n},
        ]

    events: list[dict] = []
    for n, (ro_us, plain_us) in enumerate(((80.0, 100.0), (130.0, 104.0), (85.0, 110.0)), 1):
        events += round_events("reduce-overhead", "compile", ro_us, n, 2.0 + n)
        events += round_events("default", "compile-no-cudagraphs", plain_us, n, 0.5)
    report = with_compile(reports.graphs_help(), parse_events(events), None)
    ro, plain = report.compile, report.compile_no_cudagraphs
    assert ro is not None and plain is not None
    assert ro.step_us is not None and ro.step_us.median == 85.0 and ro.compile_s == 3.0
    assert (ro.rounds_us, ro.rounds_compile_s) == ([80.0, 130.0, 85.0], [3.0, 4.0, 5.0])
    assert (ro.details["round"], ro.details["rounds"]) == (3, 3)
    assert plain.step_us is not None and plain.step_us.median == 104.0 and plain.rounds_us == [100.0, 104.0, 110.0]
    line = ro.advice or ""
    assert "compiled afresh, the step ran 80.0 µs to 130.0 µs (torch.compile) per call; the median compile is shown" in line
    assert "(no graphs)" not in line  # 110 / 100: within 15%
    assert json.loads(report.to_json())["compile"]["rounds_us"] == [80.0, 130.0, 85.0]
    assert Report.from_dict(json.loads(report.to_json())).compile == ro


def test_a_failed_first_round_is_the_result_and_an_even_count_shows_the_slower_middle() -> None:
    """A first round that timed out is the mode's result even when warm rounds after it
    ran (their compiles reused its caches); with two rounds, the slower one stands."""
    timeout = {"mode": "reduce-overhead", "field": "compile", "round": 1, "status": "timeout", "error": "no steady compiled call", "compile_s": 300.0, "logs": [], "counters": {}}
    later = [{"type": "timing", "kind": "compile@2", "mode": "burst", "burst": 0, "wall_us": [90.0] * 5, "gpu_us": []},
             {"type": "compile", **_ok("reduce-overhead", 4, True, 0.1), "field": "compile@2", "round": 2}]
    report = with_compile(reports.graphs_help(), parse_events([{"type": "compile", **timeout}, *later]), None)
    assert report.compile is not None and report.compile.status == "timeout" and report.compile.rounds_us == []
    assert "timed out" in (report.compile.advice or "")
    two = []
    for n, us in ((1, 80.0), (2, 120.0)):
        kind = "compile" if n == 1 else "compile@2"
        two += [{"type": "timing", "kind": kind, "mode": "burst", "burst": 0, "wall_us": [us] * 5, "gpu_us": []},
                {"type": "compile", **_ok("reduce-overhead", 4, True, 3.0 / n), "field": kind, "round": n}]
    ro = with_compile(reports.graphs_help(), parse_events(two), None).compile
    assert ro is not None and ro.step_us.median == 120.0 and ro.details["round"] == 2 and ro.compile_s == 3.0


def test_one_round_and_failed_rounds() -> None:
    """One round (the default) adds nothing; a failed later round is left out of the rounds
    and counted, and a mode whose every round failed reports its first failure."""
    one = with_compile(reports.graphs_help(), parse_events(_events(_ok("reduce-overhead", 4, True, 2.0), _ok("default", 4, False, 1.0), [90.0] * 5, [95.0] * 5)), None)
    assert one.compile is not None and one.compile.rounds_us == [] and "fresh compiles" not in (one.compile.advice or "")
    failed = {"mode": "reduce-overhead", "field": "compile@2", "round": 2, "status": "timeout", "error": "no steady compiled call", "logs": [], "counters": {}}
    events = _events(_ok("reduce-overhead", 4, True, 2.0), _ok("default", 4, False, 1.0), [90.0] * 5, [95.0] * 5) + [{"type": "compile", **failed}]
    report = with_compile(reports.graphs_help(), parse_events(events), None)
    assert report.compile is not None and report.compile.ok and report.compile.rounds_us == [90.0]
    assert report.compile.details["rounds_failed"] == 1
    only_failed = with_compile(reports.graphs_help(), parse_events([{"type": "compile", **failed}, {"type": "compile", **failed, "round": 3, "field": "compile@3"}]), None)
    assert only_failed.compile is not None and only_failed.compile.status == "timeout"


def test_every_table_shows_the_fresh_compiles_range_only_with_rounds() -> None:
    """The range row appears in the text, Markdown and HTML tables when a mode has rounds."""
    def rendered(report: Report, fmt_name: str) -> str:
        return " ".join(renderer_for(fmt_name, RenderOptions()).render(report).split())  # the terminal wraps

    base = _compared()
    assert base.compile is not None and "over compiles" not in rendered(base, "text")
    ro = dataclasses.replace(base.compile, rounds_us=[80.0, 130.0, 85.0], rounds_compile_s=[3.0, 4.0, 5.0])
    report = dataclasses.replace(base, compile=ro)
    for fmt_name in ("text", "md", "html"):
        out = rendered(report, fmt_name)
        assert "step time over compiles" in out and "80.0 µs to 130.0 µs (3)" in out, fmt_name
    partly = dataclasses.replace(ro, rounds_us=[80.0, 130.0], details={**ro.details, "rounds": 3, "rounds_failed": 1})
    assert "80.0 µs to 130.0 µs (2 of 3)" in rendered(dataclasses.replace(base, compile=partly), "text")


def test_a_capped_compile_round_is_named_in_words() -> None:
    from launchprof.analysis.timing import stopped_early_notes
    from launchprof.render.words.notes_text import note_texts

    ev = parse_events([{"type": "timing-end", "kind": "compile-no-cudagraphs@3", "samples": 12, "seconds": 5.0, "stopped_early": True, "why": ""}])
    assert note_texts(stopped_early_notes(ev)) == ["torch.compile (no graphs), compile 3, timing stopped early after 12 samples in 5.0 s; its interval is wider"]
