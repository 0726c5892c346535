"""analyze's wall time is judged against `python script.py` (issue: analyze within 2.5x of
it on the H200). The analysis modules (pandas, numpy and the report models) take about
0.7 s to import on the CI machine: the parent imports them in a thread while its worker
runs, so nothing before the worker's start may import them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys\nprint('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120, check=True).stdout
    return set(out.split())


def test_the_analyze_command_starts_without_the_analysis_modules():
    loaded = _modules_after("import launchprof.commands.analyze")
    assert "pandas" not in loaded and "launchprof.analysis" not in loaded and "launchprof.ranks.combine" not in loaded


def test_the_analysis_modules_are_imported_in_a_thread_while_the_worker_runs():
    code = (
        "import sys, launchprof.commands.analyze as a\n"
        "t = a.import_analysis_meanwhile()\n"
        "assert t.daemon and t.name == 'launchprof-import-analysis'\n"
        "t.join(120)\n"
    )
    loaded = _modules_after(code)
    assert {"pandas", "launchprof.analysis", "launchprof.analysis.failure", "launchprof.analysis.runinfo"} <= loaded
