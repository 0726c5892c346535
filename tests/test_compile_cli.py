"""``--compare``, ``--compile-timeout`` and ``--compile-rounds`` on the command line, and on to
the worker's config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from launchprof.commands.analyze import AnalyzeOptions, check_usage
from launchprof.worker.config import WorkerConfig

ROOT = Path(__file__).resolve().parent.parent


def lp(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "launchprof", *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def test_unknown_compare_value_is_a_usage_error_before_the_environment() -> None:
    """No CUDA here: exit 2 (not 4) proves the check comes first."""
    proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", "--compare", "jit")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown --compare value 'jit' (choose from: compile)" in proc.stderr


def test_compile_timeout_below_one_second_is_refused() -> None:
    proc = lp("analyze", "sample_models/decode_loop.py", "--compare", "compile", "--compile-timeout", "0")
    assert proc.returncode == 2 and "--compile-timeout" in proc.stderr


def test_compile_rounds_out_of_range_or_without_compare_are_refused() -> None:
    """Exit 2 in one line, before the environment (no CUDA here would be 4)."""
    for args, said in (
        (("--compare", "compile", "--compile-rounds", "0"), "--compile-rounds"),
        (("--compare", "compile", "--compile-rounds", "11"), "--compile-rounds"),
        (("--compile-rounds", "3"), "--compile-rounds 3 needs --compare compile"),
        (("--compile-timeout", "5"), "--compile-timeout 5 needs --compare compile"),
    ):
        proc = lp("analyze", "sample_models/decode_loop.py", "--target", "step", *args)
        assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)


class _Seen(Exception):
    pass


def test_options_reach_the_worker_config(tmp_path: Path, monkeypatch) -> None:
    """analyze.measure hands --compare, --compile-timeout and --compile-rounds to the worker,
    through its file."""
    from rich.console import Console

    from launchprof.commands import analyze

    seen: list[WorkerConfig] = []

    def fake_worker(config: WorkerConfig, rundir: Path, *args, **kwargs):
        config.to_file(tmp_path / "c.json")
        seen.append(WorkerConfig.from_file(tmp_path / "c.json"))
        raise _Seen()

    monkeypatch.setattr(analyze, "run_worker", fake_worker)
    options = AnalyzeOptions(script=ROOT / "sample_models" / "decode_loop.py", target="step", compare=("compile",), compile_timeout=42.0, compile_rounds=3)
    check_usage(options)  # accepted
    try:
        analyze.measure(options, Console(file=open(os.devnull, "w")))
    except _Seen:
        pass
    assert seen and "compile" in seen[0].compare and (seen[0].compile_timeout, seen[0].compile_rounds) == (42.0, 3)
    assert WorkerConfig("s.py", [], None, "e", "t").compare == ()  # off unless asked
    assert WorkerConfig("s.py", [], None, "e", "t").compile_rounds == 1  # one fresh compile unless asked

