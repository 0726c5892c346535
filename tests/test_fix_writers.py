"""Fix writers for issue 34's "fixes that break code" and "generic text": each fix is written
from a source file in tmp_path (or a sample / recorded run) and, where it is Python the
user runs, executed on CPU tensors against the original."""

from __future__ import annotations

from pathlib import Path

import dataclasses
import textwrap

import pytest
import torch
from recorded import SAMPLES, recorded, report_of

from launchprof.events.record import Site
from launchprof.hazards.fixes import FixContext, write_fix
from launchprof.hazards.fixes.effect_groups import grouped_effects
from launchprof.hazards.fixes.state_fixes import rebinding_fix, rebinding_site
from launchprof.model.hazard_records import Hazard
from launchprof.render.console import ConsoleRenderer
from launchprof.render.markdown import MarkdownRenderer
from launchprof.render.renderer import RenderOptions


def _file(tmp_path, text: str, name: str = "user_step.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return str(path)


def _line(file: str, piece: str) -> int:
    return next(i for i, ln in enumerate(open(file, encoding="utf-8").read().splitlines(), 1) if piece in ln)


def _hazard(file: str, line: int, kind: str = "hidden-sync", **details) -> Hazard:
    return Hazard(kind=kind, severity="error", message="m", file=file, line=line, hint="", details=details)


def _run(fn_text: str, name: str, *args):
    ns: dict = {"torch": torch}
    exec(textwrap.dedent(fn_text), ns)
    return ns[name](*args)


# --- a host read whose later use is a Python number ----------------------------------------


STEP = """
import torch


def step(x, peak):
    m = peak.item()
    return x / max(m, 1e-6)
"""


def test_read_and_its_later_max_are_rewritten_together(tmp_path) -> None:
    file = _file(tmp_path, STEP)
    fix = write_fix(_hazard(file, 5, op="_local_scalar_dense"), FixContext())
    assert fix.code == "keep-on-device-later-use"
    assert fix.before.splitlines() == ["m = peak.item()", "return x / max(m, 1e-6)"]
    assert fix.after == "return x / peak.clamp_min(1e-06)"  # no `max` left to call bool() on a tensor
    assert fix.params["use_lines"] == [6] and fix.params["value"] == "peak"
    assert "Line 6 used it as a Python number" in fix.note and "clamp_min" in fix.note
    x = torch.randn(8)
    for peak in (torch.tensor(3.0), torch.tensor(0.0)):
        fixed = _run(f"def step(x, peak):\n    {fix.after}\n", "step", x, peak)
        assert torch.equal(fixed, x / max(peak.item(), 1e-6))


def test_a_kept_name_stays_and_its_use_is_clamped(tmp_path) -> None:
    file = _file(tmp_path, """
        import torch


        def step(x, peak):
            m = peak.abs().amax().item()
            y = x * 2
            return y / min(m, 4.0) + m
        """)
    fix = write_fix(_hazard(file, 5, op="_local_scalar_dense"), FixContext())
    assert fix.after.splitlines() == ["m = peak.abs().amax()", "return y / m.clamp_max(4.0) + m"]
    assert fix.before.splitlines()[1] == "return y / min(m, 4.0) + m"  # the unchanged `y = x * 2` is not shown
    x, peak = torch.randn(4), torch.tensor([-7.0, 2.0])
    fixed = _run("def step(x, peak):\n    y = x * 2\n" + textwrap.indent(fix.after, "    ") + "\n", "step", x, peak)
    m = peak.abs().amax().item()
    assert torch.allclose(fixed, x * 2 / min(m, 4.0) + m)


def test_no_fix_when_a_later_line_needs_a_python_number(tmp_path) -> None:
    file = _file(tmp_path, """
        import torch


        def step(x, peak):
            m = float(peak)
            if m > 0:
                x = x + 1
            return x
        """)
    fix = write_fix(_hazard(file, 5, op="_local_scalar_dense"), FixContext())
    assert fix.after == "" and fix.params["reason"] == "host-value-used" and fix.params["use_line"] == 6
    assert fix.note.startswith("No fix is written for this line: line 6 uses `m` as a Python number")


def test_later_uses_in_tensor_arithmetic_keep_the_one_line_fix(tmp_path) -> None:
    file = _file(tmp_path, "import torch\n\n\ndef step(x, peak):\n    s = peak.item()\n    return x / (s + 1)\n")
    fix = write_fix(_hazard(file, 5, op="_local_scalar_dense"), FixContext())
    assert (fix.code, fix.after) == ("keep-on-device", "s = peak")


# --- a branch whose both sides return --------------------------------------------------------


@pytest.mark.parametrize("tail", ["    else:\n        return h - 1.0\n", "    return h - 1.0\n"], ids=["else", "after-if"])
def test_branches_that_return_become_one_where(tmp_path, tail: str) -> None:
    file = _file(tmp_path, "import torch\n\n\ndef step(h):\n    if h.mean() > 0:\n        return h * 2.0\n" + tail)
    fix = write_fix(_hazard(file, 5, kind="data-dependent-control-flow"), FixContext())
    assert fix.code == "where-return"
    assert fix.after == "return torch.where(h.mean() > 0, h * 2.0, h - 1.0)"
    assert fix.before.splitlines()[0] == "if h.mean() > 0:" and fix.before.splitlines()[-1].strip() == "return h - 1.0"
    for h in (torch.ones(3), -torch.ones(3)):
        original = h * 2.0 if h.mean() > 0 else h - 1.0
        assert torch.equal(_run(f"def step(h):\n    {fix.after}\n", "step", h), original)


# --- host bookkeeping that reads itself -------------------------------------------------------


BOOKKEEPING = """
import torch

n_calls = 0
history = []


def step(x):
    global n_calls
    n_calls += 1
    y = x * 2
    history.append(n_calls)
    log.append(y)
    return y


def main():
    x = torch.ones(2)
    for _ in range(3):
        step(x)
"""


def test_host_effects_that_depend_on_each_other_are_one_fix(tmp_path) -> None:
    file = _file(tmp_path, BOOKKEEPING)
    lines = [_line(file, "n_calls += 1"), _line(file, "history.append"), _line(file, "log.append")]
    hazards = [_hazard(file, ln, kind="host-side-effect") for ln in lines]
    hazards = [dataclasses.replace(h, fix=write_fix(h, FixContext())) for h in hazards]
    call = Site(file=file, line=_line(file, "        step(x)"))
    counter, append, log = grouped_effects(hazards, call)
    assert counter.fix == append.fix and counter.fix.code == "moved-together"
    assert log.fix.code == "moved-to-caller"  # `log` depends on neither
    fix = counter.fix
    assert fix.params["lines"] == lines[:2] and fix.params["names"] == ["n_calls"] and fix.params["call_line"] == call.line
    assert fix.before.splitlines() == ["n_calls += 1", "history.append(n_calls)"]
    body = fix.after.splitlines()
    assert body[0].startswith("# (moved) in the caller") and body[1:] == ["global n_calls", "n_calls += 1", "history.append(n_calls)"]
    # the moved lines, run by the caller after each call, append the count, not a constant
    ns: dict = {"n_calls": 0, "history": []}
    caller = "def main():\n" + textwrap.indent("\n".join(body[1:2]) + "\nfor _ in range(3):\n" + textwrap.indent("\n".join(body[2:]), "    "), "    ")
    exec(caller + "\nmain()\n", ns)
    assert ns["history"] == [1, 2, 3]
    assert "lines 9 and 11" in fix.note and "`n_calls`" in fix.note


def test_effects_that_read_a_value_of_the_step_say_why_no_fix(tmp_path) -> None:
    file = _file(tmp_path, "total = []\n\n\ndef step(x):\n    y = x * 2\n    total.append(y)\n    print(total)\n    return y\n")
    hazards = [_hazard(file, ln, kind="host-side-effect") for ln in (6, 7)]
    grouped = grouped_effects(hazards, None)
    assert grouped[0].fix == grouped[1].fix and grouped[0].fix.params["reason"] == "effects-read-locals"
    assert grouped[0].fix.params["names"] == ["y"] and "return those from the step" in grouped[0].fix.note


def test_recorded_counter_and_its_print_move_together() -> None:
    report = report_of(recorded(["side_effects"])[0])
    effects = {h.line: h for h in report.hazards if h.kind == "host-side-effect"}
    assert effects[16].fix == effects[20].fix and effects[16].fix.code == "moved-together"
    assert "if calls % 50 == 0:" in effects[16].fix.after  # the print moves with the `if` that guards it
    kept = next(h for h in report.hazards if h.kind == "kept-output")
    assert kept.fix == effects[18].fix and "history.append(y.clone())" in kept.fix.after
    out = ConsoleRenderer(RenderOptions(width=80)).render(report)
    assert "fix: the same as for sample_models/side_effects.py:16" in out
    assert "calls_t" not in out  # no device counter beside the move


# --- the diff at the file's indentation -----------------------------------------------------


def test_inserted_join_is_printed_at_the_with_statements_indentation() -> None:
    report = report_of(recorded(["unjoined_stream"])[0])
    out = ConsoleRenderer(RenderOptions(width=80)).render(report).splitlines()
    minus = next(ln for ln in out if "- " in ln and "stats.copy_" in ln)
    join = next(ln for ln in out if "+ " in ln and "wait_stream(side)" in ln)
    col = lambda ln, mark: len(ln.split(mark, 1)[1]) - len(ln.split(mark, 1)[1].lstrip())  # noqa: E731
    assert col(minus, "- ") == 8 and col(join, "+ ") == 4  # as in the file: inside `with`, then after it
    md = MarkdownRenderer().render(report)
    assert "+     torch.cuda.current_stream().wait_stream(side)" in md


# --- a stream race as a diff --------------------------------------------------------------------


def _race(file: str, later: int, write: int) -> Hazard:
    params = {"write_line": write, "other_line": later, "other_type": "read"}
    return Hazard(kind="stream-race", severity="error", message="m", file=file, line=later, hint="", code="stream-race", params=params)


def test_race_with_a_late_join_swaps_the_two_lines() -> None:
    path = str(SAMPLES / "stream_race.py")
    fix = write_fix(_race(path, _line(path, "y = staging * 2.0"), _line(path, "staging.copy_(x)")), FixContext())
    assert fix.code == "race-join-first"
    assert fix.before.splitlines() == ["y = staging * 2.0", "main.wait_stream(side)"]
    assert fix.after.splitlines() == ["main.wait_stream(side)", "y = staging * 2.0"]
    fixed = (SAMPLES / "stream_race_fixed.py").read_text(encoding="utf-8")
    assert "    main.wait_stream(side)  # join before the read: the copy is ordered first\n    y = staging * 2.0" in fixed


def test_race_without_a_join_gets_a_wait_before_the_access(tmp_path) -> None:
    file = _file(tmp_path, """
        import torch


        def step(x, buf, side):
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                buf.copy_(x)
            return buf * 2.0
        """)
    fix = write_fix(_race(file, 8, 7), FixContext())
    assert fix.code == "race-wait" and fix.indent == "    "
    assert fix.after.splitlines() == ["torch.cuda.current_stream().wait_stream(side)", "return buf * 2.0"]
    assert "before line 8" in fix.note and "line 7" in fix.note
    assert write_fix(_race(file, 8, 5), FixContext()).params["reason"] == "race-streams-unnamed"  # line 5 is on no side stream


def test_race_fix_reaches_the_terminal_and_markdown() -> None:
    from test_race import _race_events, _access
    from launchprof.run.evidence import parse_events
    from launchprof.hazards.rules import find_hazards
    from launchprof.worker.race_check import AccessLog

    path = SAMPLES / "stream_race.py"
    read, write = _line(str(path), "y = staging * 2.0"), _line(str(path), "staging.copy_(x)")

    class Err:
        data_ptr = 1
        current_access = _access("READ", 7, read, "aten::mul.Tensor")
        previous_access = _access("WRITE", 11, write, "aten::copy_")

    log = AccessLog()
    log.add_errors([Err()])
    race = next(h for h in find_hazards(parse_events(_race_events(log.races))) if h.kind == "stream-race")
    assert race.fix.after.splitlines()[0] == "main.wait_stream(side)" and race.details["fix"]  # the JSON's sentence stays
    report = dataclasses.replace(report_of(recorded(["two_streams_ok"])[0]), hazards=[race])
    out = ConsoleRenderer(RenderOptions(width=100)).render(report)
    assert "-     y = staging * 2.0" in out and "+     main.wait_stream(side)" in out
    md = MarkdownRenderer().render(report)
    assert "```diff\n-     y = staging * 2.0\n-     main.wait_stream(side)\n+     main.wait_stream(side)\n+     y = staging * 2.0\n```" in md


# --- a tensor the caller rebinds ----------------------------------------------------------------


REBOUND = """
import torch

bias = torch.zeros(4)


def step(x):
    return x + bias


x = torch.ones(4)
history = []
for i in range(10):
    out = step(x)
    history.append(bias)
    bias = bias + 1.0
"""


def test_rebinding_in_a_top_level_loop_is_found_and_the_alias_caution_said(tmp_path) -> None:
    file = _file(tmp_path, REBOUND)
    line = _line(file, "bias = bias + 1.0")
    assert rebinding_site([file], "bias") == (file, line)  # not the definition at line 3
    fix = rebinding_fix(file, line, "bias")
    assert (fix.line, fix.before, fix.after) == (line, "bias = bias + 1.0", "bias.add_(1.0)")
    assert fix.params["kept_by"] == "history" and fix.params["kept_line"] == line - 1
    assert "Caution: `history` keeps `bias`" in fix.note and "bias.clone()" in fix.note
    plain = _file(tmp_path, REBOUND.replace("    history.append(bias)\n", ""), "plain.py")
    quiet = rebinding_fix(plain, _line(plain, "bias = bias + 1.0"), "bias")
    assert "kept_by" not in quiet.params and "Caution" not in quiet.note


# --- no "cannot" where launchprof handles it, one reason where no fix is written ---------------


def test_inputs_launchprof_copies_get_no_fix_line() -> None:
    report = report_of(recorded(["decode_loop"])[0])
    handled = [h for h in report.hazards if h.code == "reallocated-arguments"]
    assert handled and all(h.fix is None for h in handled)
    out = ConsoleRenderer(RenderOptions(width=80)).render(report)
    assert "cannot write" not in out and "No fix is written" not in out


def test_varying_shapes_say_one_reason_without_the_pointer() -> None:
    report = report_of(recorded(["dynamic_shapes"])[0])
    out = ConsoleRenderer(RenderOptions(width=200)).render(report)
    assert "No fix is written for this line: the shapes vary between calls, so the fix is a graph per shape bucket" in out
    assert "the general rule is below" not in out and "cannot write the fix" not in out


def test_kept_output_in_the_caller_is_written_with_its_clone() -> None:
    report = report_of(recorded(["hf_static_decode"])[0])
    kept = next(h for h in report.hazards if h.kind == "kept-output")
    assert (kept.fix.code, kept.fix.before, kept.fix.after) == ("clone-kept", "generated.append(tokens)", "generated.append(tokens.clone())")


def test_sarif_leaves_out_a_fix_whose_lines_are_apart() -> None:
    import json

    from launchprof.render.sarif import SarifRenderer

    from launchprof.render.sarif import fix_change

    report = report_of(recorded(["side_effects"])[0])
    doc = json.loads(SarifRenderer().render(report))
    results = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "host-side-effect"]
    assert results and not any("fixes" in r for r in results)  # none verified in this recorded run: no tool applies them
    changes = {h.line: fix_change(h, Path(".")) is not None for h in report.hazards if h.kind == "host-side-effect"}
    assert changes == {16: False, 18: True, 20: False}  # lines 16, 19-20 are no one region to replace
