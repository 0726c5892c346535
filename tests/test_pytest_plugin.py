"""The pytest plugin on CPU, through pytester: registration, the clean skip without CUDA,
and the failure message from a recorded report (the measurement replaced by a fake)."""

from __future__ import annotations

import importlib.metadata

import pytest

from launchprof.api import pytest_plugin
from recorded import recorded, report_of

pytest_plugins = ["pytester"]

# Once installed, the pytest11 entry point loads the plugin; before that, -p does.
_INSTALLED = any(ep.value == "launchprof.api.pytest_plugin" for ep in importlib.metadata.entry_points(group="pytest11"))
PLUGIN = [] if _INSTALLED else ["-p", "launchprof.api.pytest_plugin"]

FAKE_CONFTEST = """
import sys
sys.path.insert(0, {tests!r})
from launchprof.api import pytest_plugin
from recorded import report_of

pytest_plugin.cuda_available = lambda: True
SEEN = []

def fake_measure(fn, args, kwargs, calls):
    SEEN.append((fn.__name__, args, calls))
    return report_of({name!r})

pytest_plugin.measure_step = fake_measure
"""


@pytest.fixture(autouse=True)
def _restore_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs patch the plugin module; put it back after each test."""
    monkeypatch.setattr(pytest_plugin, "cuda_available", pytest_plugin.cuda_available)
    monkeypatch.setattr(pytest_plugin, "measure_step", pytest_plugin.measure_step)


def fake_conftest(pytester: pytest.Pytester, name: str) -> None:
    from pathlib import Path

    pytester.makeconftest(FAKE_CONFTEST.format(tests=str(Path(__file__).parent), name=recorded([name])[0]))


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(*PLUGIN, "--markers")
    result.stdout.fnmatch_lines(["*@pytest.mark.launchprof(target, max_kernels=None, capturable=True)*"])


def test_skips_cleanly_without_cuda(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("import torch\ntorch.cuda.is_available = lambda: False\n")
    pytester.makepyfile(
        """
        import pytest

        def step(x):
            return x.item()

        def test_fixture(launchprof_check):
            launchprof_check(step, 1)

        @pytest.mark.launchprof(target="step")
        def test_marker():
            raise AssertionError("the body must not run without CUDA")
        """
    )
    result = pytester.runpytest_subprocess(*PLUGIN, "-rs", "-p", "no:cacheprovider")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(["*no CUDA device*"])


def test_failure_lists_the_hazards(pytester: pytest.Pytester) -> None:
    fake_conftest(pytester, "hidden_sync")
    pytester.makepyfile(
        """
        import pytest

        def step(x):
            return x

        def test_fixture(launchprof_check):
            launchprof_check(step, 1)

        @pytest.mark.launchprof(target="step")
        def test_marker():
            return (1, 2)
        """
    )
    result = pytester.runpytest_inprocess(*PLUGIN, "-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*launchprof check failed:*",
            "*is not capture-safe (verdict not-capturable):*",
            "*- hidden-sync (error) at sample_models/hidden_sync.py:15: *; fix: *",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_marker_passes_returned_arguments_and_checks_kernels(pytester: pytest.Pytester) -> None:
    fake_conftest(pytester, "decode_loop")  # graphs-help, 147 kernels per step, no hazards
    pytester.makepyfile(
        """
        import pytest
        import conftest

        def step(x, y):
            return x

        @pytest.mark.launchprof(target="step", max_kernels=200)
        def test_ok():
            return (1, 2)

        @pytest.mark.launchprof(target="step", max_kernels=100)
        def test_grew():
            return [((3, 4), {})]

        def test_seen():
            assert conftest.SEEN == [("step", (1, 2), None), ("step", (), [((3, 4), {})])]

        def test_fixture_returns_the_report(launchprof_check):
            report = launchprof_check(step, 1, 2, max_kernels=147)
            assert report.eager.kernels_per_step == 147
        """
    )
    result = pytester.runpytest_inprocess(*PLUGIN, "-p", "no:cacheprovider", "-p", "no:randomly")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*kernels per step grew: 147 > max_kernels=100*"])


def test_unknown_target_is_a_usage_error(pytester: pytest.Pytester) -> None:
    fake_conftest(pytester, "decode_loop")
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.launchprof(target="nope")
        def test_marker():
            return ()
        """
    )
    result = pytester.runpytest_inprocess(*PLUGIN, "-p", "no:cacheprovider")
    assert "has no 'nope'" in result.stdout.str() + result.stderr.str()
    assert result.ret != 0


def test_problems_without_capturable_only_checks_kernels() -> None:
    report = report_of(recorded(["hidden_sync"])[0])
    assert pytest_plugin.problems(report, None, capturable=False) == []
    assert pytest_plugin.problems(report, 18, capturable=False) == []
    assert pytest_plugin.problems(report, 17, capturable=False) == ["kernels per step grew: 18 > max_kernels=17"]
    assert pytest_plugin.returned_call(5) == ((5,), None)
    assert pytest_plugin.returned_call(None) == ((), None)
