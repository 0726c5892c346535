"""--explain: the legend of terms in text and Markdown on request, in HTML always."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from launchprof.render.legend import TERMS

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "tests" / "data" / "runs" / "decode_loop.lprun"


def report(*args: str) -> str:
    assert RUN.is_file(), "recorded run missing"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "80"}
    proc = subprocess.run([sys.executable, "-m", "launchprof", "report", str(RUN), *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    return " ".join(proc.stdout.split())


def test_terms_cover_what_the_issue_names():
    assert [t for t, _ in TERMS] == ["GPU span", "launch gap", "p10 / p90", "payback", "pool vs workspace"]


@pytest.mark.parametrize("fmt", ["text", "md"])
def test_legend_only_with_explain(fmt):
    plain, explained = report("-f", fmt), report("-f", fmt, "--explain")
    for term, meaning in TERMS:
        assert meaning.split(";")[0][:40] not in plain
        assert term in explained and " ".join(meaning.split())[:40] in explained


def test_html_always_has_the_legend(tmp_path):
    out = tmp_path / "r.html"
    report("-o", str(out))
    html = out.read_text()
    assert "<h2>Terms</h2>" in html
    for term, _ in TERMS:
        assert f"<dt>{term}</dt>" in html
