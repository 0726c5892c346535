"""One exception hierarchy; each class carries the process exit code.

Only the CLI turns these into a message and an exit status (memray's ``_errors.py``
pattern), so library code can raise them without knowing how they are shown.
The codes are a documented, stable contract (README "Exit codes").
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAIL_ON = 1  # a --fail-on condition was met
    USAGE = 2  # bad option, missing file, unknown target, unreadable session
    SCRIPT = 3  # the user's script failed: exception, non-zero exit, crash, timeout
    ENVIRONMENT = 4  # no CUDA device, unusable torch
    INTERNAL = 70  # a bug in launchprof itself; the traceback is saved to a file
    INTERRUPTED = 130  # Ctrl-C; a partial report is still written


class LaunchprofError(Exception):
    """Base class. ``str(error)`` is the one line shown to the user."""

    exit_code: ExitCode = ExitCode.FAIL_ON


class UsageError(LaunchprofError):
    """The user asked for something that cannot be done as asked."""

    exit_code = ExitCode.USAGE


class ScriptFailed(LaunchprofError):
    """The user's script or target failed; what was measured before is still reported."""

    exit_code = ExitCode.SCRIPT


class EnvironmentProblem(LaunchprofError):
    """The machine cannot run the measurement (no CUDA device, broken torch)."""

    exit_code = ExitCode.ENVIRONMENT


class FailOnTriggered(LaunchprofError):
    """A ``--fail-on`` rule tripped; the report itself was produced normally."""

    exit_code = ExitCode.FAIL_ON


class Interrupted(LaunchprofError):
    """The user pressed Ctrl-C; a partial report was written."""

    exit_code = ExitCode.INTERRUPTED


class InternalError(LaunchprofError):
    """A bug in launchprof itself; the report of what was measured is still written."""

    exit_code = ExitCode.INTERNAL
