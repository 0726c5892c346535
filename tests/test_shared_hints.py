""""How to fix, by kind": each kind's general rule once, however many lines add their own
advice to it (lint's "Here: ..."); each line's addition kept, after the lines it is for."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from launchprof.cli import app
from launchprof.render.words.hazard_hints import HINTS

SAMPLES = Path(__file__).resolve().parent.parent / "sample_models"


def _by_kind(tmp_path: Path, source: str) -> tuple[str, list[dict]]:
    script = tmp_path / "s.py"
    script.write_text(source, encoding="utf-8")
    out = tmp_path / "r.json"
    assert CliRunner().invoke(app, ["lint", str(script), "--all", "-f", "json", "-o", str(out)]).exit_code in (0, 1)
    return _rules(str(script)), json.loads(out.read_text())["hazards"]


def _rules(path: str) -> str:
    """The "How to fix, by kind" section of lint's text report, one unwrapped line per kind."""
    result = CliRunner().invoke(app, ["lint", path, "--all"], env={"COLUMNS": "2000"})
    assert result.exit_code in (0, 1), result.output
    return result.output.split("How to fix, by kind\n", 1)[1]


def test_a_rule_is_printed_once_with_each_lines_own_advice(tmp_path: Path) -> None:
    # two frozen numbers, each line with its own "Here:", and two plain hidden syncs
    source = (
        "import torch\n"
        "import launchprof\n\n"
        "@launchprof.target\n"
        "def step(x: torch.Tensor, lr: float, wd: float):\n"
        "    x.add_(lr)\n"
        "    x.mul_(wd)\n"
        "    print(x.sum().item())\n"
        "    return x.max().item()\n"
    )
    text, hazards = _by_kind(tmp_path, source)
    kinds = {h["kind"] for h in hazards}
    assert {"frozen-scalar", "hidden-sync"} <= kinds, kinds
    for kind in kinds:
        rule = HINTS[kind]
        assert text.count(rule) == 1, (kind, text)
    frozen = [h for h in hazards if h["kind"] == "frozen-scalar"]
    assert len(frozen) == 2
    for h in frozen:  # every line's own advice is still there, placed after its location
        own = h["hint"][len(HINTS["frozen-scalar"]) :].strip()
        assert own and re.sub(r"^Here:\s*", "", own) in text, own


def test_the_sample_models_print_each_rule_once() -> None:
    text = _rules(str(SAMPLES))
    for kind, rule in HINTS.items():
        assert text.count(rule) <= 1, kind
