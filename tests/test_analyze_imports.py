"""analyze's wall time is judged against `python script.py` (issue: analyze within 2.5x of
it on the H200). The analysis modules (pandas, numpy and the report models) take about
0.7 s to import on the CI machine: the parent imports them in a thread while its worker
runs, so nothing before the worker's start may import them."""

from __future__ import annotations

import subprocess
import sys
import time
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


def test_nothing_that_reads_the_run_is_imported_before_the_worker_starts():
    """The worker starts as soon as the CLI has checked its arguments: pydantic, the run file's
    reader, the evidence and the renderers load in the thread, beside the worker."""
    loaded = _modules_after("import launchprof.cli, launchprof.commands.analyze")
    early = {"pydantic", "numpy", "launchprof.run.file", "launchprof.run.evidence", "launchprof.commands.emit", "launchprof.render.console", "launchprof.model.core"}
    assert not early & loaded, early & loaded


def test_the_thread_also_loads_the_run_reader_the_renderers_asked_for_and_every_event_validator():
    code = (
        "import launchprof.commands.analyze as a\n"
        "t = a.import_analysis_meanwhile(['json', 'md', 'json'])\n"
        "t.join(120)\n"
        "from launchprof.events import RECORDS\n"
        "from launchprof.run import event_log\n"
        "assert set(event_log._ADAPTERS) == set(RECORDS), set(RECORDS) - set(event_log._ADAPTERS)\n"
    )
    loaded = _modules_after(code)
    assert {"launchprof.run.file", "launchprof.run.evidence", "launchprof.render.console", "launchprof.render.json", "launchprof.render.markdown"} <= loaded
    assert "launchprof.render.html" not in loaded  # only what -o asked for


def test_a_run_without_traces_is_reported_without_pandas(tmp_path):
    """The trace tables (pandas) load with the first trace read; a run that holds none never
    pays for them, and one that does still gets them."""
    code = (
        "import sys, json\n"
        "from launchprof.run import load_run, write_run\n"
        "from launchprof.analysis import analyse\n"
        f"run = load_run({str(ROOT / 'tests/data/runs/decode_loop.lprun')!r})\n"
        "import dataclasses\n"
        "header = dataclasses.replace(run.header, traces={})\n"
        f"out = write_run(header, [e for e in run.events if e['type'] != 'trace'], {{}}, __import__('pathlib').Path({str(tmp_path / 'bare.lprun')!r}), sources={{}})\n"
        "report = analyse(load_run(out))\n"
        "assert report.eager is not None and report.eager.step_us is not None\n"
        "assert 'pandas' not in sys.modules\n"
        "analyse(run)\n"
        "assert 'pandas' in sys.modules\n"
    )
    _modules_after(code)


def test_the_poll_ends_when_the_worker_exits_not_at_the_end_of_its_interval():
    from launchprof.commands.worker_runner import _wait

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    t0 = time.perf_counter()
    _wait(proc, 30.0)
    assert proc.returncode == 0 and time.perf_counter() - t0 < 15
    still = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        _wait(still, 0.2)  # a worker still running: the wait ends with the interval
        assert still.poll() is None
    finally:
        still.kill()
        still.wait()


def test_the_workers_measurement_modules_leave_pydantic_out():
    """pydantic and the profile models took 0.2 s to import in the H200's worker, first in the
    calibration's cache check, then in the bursts' host-speed sampler (crossover.gpu); the
    worker needs them only where it writes the fixes it tries (worker/fix_trials.py)."""
    loaded = _modules_after(
        "import launchprof.worker.__main__, launchprof.worker.plan, launchprof.worker.host_speed, launchprof.crossover.gpu\n"
        "import launchprof.worker.calibration, launchprof.crossover.calibrate, launchprof.crossover.cache_files\n"
    )
    assert "launchprof.worker.plan" in loaded and "launchprof.crossover.gpu" in loaded
    assert "pydantic" not in loaded and "launchprof.crossover.profile" not in loaded
