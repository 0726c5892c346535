"""pytest plugin (entry point ``pytest11``): keep a step capturable and its kernel count flat.

Two ways to use it:

* the fixture ``launchprof_check(fn, *args, max_kernels=None, capturable=True, **kwargs)``
  measures ``fn`` in the test's process and fails the test, listing each hazard (kind,
  file:line, fix), when the step is not capture-safe, or when its kernels per step exceed
  ``max_kernels``; it returns the Report for further asserts;
* the marker ``@pytest.mark.launchprof(target="step", max_kernels=40, capturable=True)``
  names the step (a function of the test's module: ``step``, ``model.forward``, or
  ``pkg.mod:fn``). The marked test builds the arguments and **returns** them: a tuple of
  positional arguments, a single argument, or a list of ``(args, kwargs)`` pairs used as the
  observed calls. Returning keeps the test body plain Python that can be run and read alone;
  the plugin runs the test, takes what it returned and checks the step on it.

Both skip (``pytest.skip``) where no CUDA device is present, before the test body runs.
Both run ``launchprof.check``'s stream-race check, whose CUDA-sanitizer hooks stay on for
the rest of the pytest process: CUDA tests after them run slower (not wrong).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from launchprof.api.safety import blocking_hazards, format_hazards, is_capture_safe
from launchprof.model.core import Report

MARKER = "launchprof"
MARKER_HELP = (
    "launchprof(target, max_kernels=None, capturable=True): check that the module's function "
    "`target` stays capturable (and under max_kernels kernels per step) on the arguments the test returns"
)
NO_CUDA = "launchprof: no CUDA device (torch.cuda.is_available() is False)"


def cuda_available() -> bool:
    try:
        import torch
    except Exception:
        return False
    return bool(torch.cuda.is_available())


def measure_step(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], calls: list[Any] | None) -> Report:
    """The quick plan of ``launchprof.check`` (same hazard rules). A step that raises fails
    the test with launchprof's one-line cause, not a traceback through launchprof."""
    from launchprof.api import quick_report
    from launchprof.errors import ScriptFailed

    try:
        return quick_report(fn, *args, calls=calls, **kwargs)
    except ScriptFailed as exc:
        pytest.fail(f"launchprof check failed: {exc}", pytrace=False)


def problems(report: Report, max_kernels: int | None, capturable: bool) -> list[str]:
    """Every reason the step fails the check, each a short paragraph; empty when it passes."""
    out: list[str] = []
    if capturable and not is_capture_safe(report):
        hazards = blocking_hazards(report)
        head = f"{report.target or 'the step'} is not capture-safe (verdict {report.verdict}):"
        cause = report.run.cause if report.run is not None and report.run.cause else "no hazard was named"
        out.append(f"{head}\n{format_hazards(hazards) if hazards else '  - ' + cause}")
    if max_kernels is not None:
        kernels = report.eager.kernels_per_step if report.eager is not None else None
        if kernels is None:
            out.append(f"kernels per step could not be measured (limit {max_kernels})")
        elif kernels > max_kernels:
            out.append(f"kernels per step grew: {kernels} > max_kernels={max_kernels}")
    return out


def judge(report: Report, max_kernels: int | None, capturable: bool) -> Report:
    """``pytest.fail`` with every problem listed, else the report."""
    found = problems(report, max_kernels, capturable)
    if found:
        pytest.fail("launchprof check failed:\n" + "\n".join(found), pytrace=False)
    return report


@pytest.fixture
def launchprof_check() -> Callable[..., Report]:
    """``launchprof_check(fn, *args, max_kernels=None, capturable=True, **kwargs) -> Report``."""
    if not cuda_available():
        pytest.skip(NO_CUDA)

    def check(fn: Callable[..., Any], *args: Any, max_kernels: int | None = None, capturable: bool = True, **kwargs: Any) -> Report:
        return judge(measure_step(fn, args, kwargs, None), max_kernels, capturable)

    return check


def resolve_target(module: Any, raw: str) -> Callable[..., Any]:
    """``step``, ``model.forward`` (from the test module) or ``pkg.mod:fn``."""
    from launchprof.errors import UsageError
    from launchprof.common.targets import parse_target

    try:
        spec = parse_target(raw)
    except UsageError as exc:
        raise pytest.UsageError(f"@pytest.mark.launchprof: {exc}") from None
    obj: Any = importlib.import_module(spec.module) if spec.module else module
    for part in spec.parts:
        if not hasattr(obj, part):
            raise pytest.UsageError(f"@pytest.mark.launchprof(target={raw!r}): {getattr(obj, '__name__', obj)!r} has no {part!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise pytest.UsageError(f"@pytest.mark.launchprof(target={raw!r}) is a {type(obj).__name__}, not a function")
    return obj


def returned_call(value: Any) -> tuple[tuple[Any, ...], list[Any] | None]:
    """What the marked test returned -> (positional args, calls or None)."""
    if isinstance(value, list):
        return (), value
    if isinstance(value, tuple):
        return value, None
    if value is None:
        return (), None
    return (value,), None


def marker_options(item: pytest.Item) -> dict[str, Any] | None:
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    options = dict(marker.kwargs)
    if marker.args:
        options.setdefault("target", marker.args[0])
    if not options.get("target"):
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.launchprof needs target='function name'")
    unknown = set(options) - {"target", "max_kernels", "capturable"}
    if unknown:
        raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.launchprof got unknown options {sorted(unknown)}")
    return options


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a marked test, then check its step on the arguments it returned."""
    options = marker_options(pyfuncitem)
    if options is None:
        return None
    if not cuda_available():
        pytest.skip(NO_CUDA)
    fn = resolve_target(pyfuncitem.module, str(options["target"]))
    names = pyfuncitem._fixtureinfo.argnames
    value = pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names})
    args, calls = returned_call(value)
    judge(measure_step(fn, args, {}, calls), options.get("max_kernels"), bool(options.get("capturable", True)))
    return True
