"""Running the user's script exactly as ``python SCRIPT ARGS`` would.

The script executes in a fresh module object installed as ``sys.modules["__main__"]``
(``runpy.run_path`` leaves ``__main__`` pointing elsewhere, which breaks torch.compile on
the script's own globals), with its own argv and its folder first on ``sys.path``.
After every top-level statement a tiny call lets the target hook look for the target
name: line numbers, tracebacks and warnings stay those of the user's file.
"""

from __future__ import annotations

import ast
import builtins
import sys
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launchprof.events.lifecycle_events import ScriptException
from launchprof.common.source import python_text
from launchprof.worker.frames import traceback_site

BIND_NAME = "__launchprof_bind__"


class ScriptStopped(SystemExit):
    """Raised from a call of the target to end the script cleanly: launchprof's extra calls
    changed state it could not put back (worker/plan_state.py), and the script must not go
    on with it. A SystemExit, so the script's ``except Exception`` does not catch it and its
    ``finally`` blocks and context managers run; ``run_script`` reports it as ``stopped``."""

    def __init__(self) -> None:
        super().__init__(0)


class ScriptDone(ScriptStopped):
    """Raised from a call of the target once the measurement is complete (worker/early_stop.py):
    the rest of the script would measure nothing more. It ends the script as ``ScriptStopped``
    does, ``finally`` blocks and context managers included; ``run_script`` reports it as ``done``,
    so the report tells a finished measurement from state that could not be put back."""


@dataclass
class ScriptOutcome:
    status: str  # "ok", "exit", "exception", "stopped" (ScriptStopped), "done" (ScriptDone)
    exit_code: int
    exception: ScriptException = field(default_factory=ScriptException)  # empty when none was raised


def instrument(tree: ast.Module, filename: str) -> ast.Module:
    """Insert ``__launchprof_bind__()`` after each top-level statement."""
    body: list[ast.stmt] = []
    for i, stmt in enumerate(tree.body):
        body.append(stmt)
        is_docstring = i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
        is_future = isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"
        if is_docstring or is_future:  # both must stay ahead of any other statement
            continue
        call = ast.Expr(ast.Call(func=ast.Name(id=BIND_NAME, ctx=ast.Load()), args=[], keywords=[]))
        ast.copy_location(call, stmt)
        ast.fix_missing_locations(call)
        body.append(call)
    tree.body = body
    return tree


def run_script(path: Path, argv: list[str], on_statement: Callable[[dict[str, Any]], None]) -> ScriptOutcome:
    path = path.resolve()
    try:
        source = python_text(path)
        tree = instrument(ast.parse(source, filename=str(path)), str(path))
        code = compile(tree, str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:
        return ScriptOutcome("exception", 1, ScriptException(type="SyntaxError", message=str(exc.msg), file=str(path), line=exc.lineno))
    except UnicodeDecodeError as exc:  # as python FILE says it: a SyntaxError
        return ScriptOutcome("exception", 1, ScriptException(type="SyntaxError", message=str(exc), file=str(path), line=1))
    module = types.ModuleType("__main__")
    module.__file__ = str(path)
    module.__builtins__ = builtins  # type: ignore[attr-defined]
    namespace = module.__dict__
    namespace[BIND_NAME] = lambda: on_statement(namespace)
    sys.modules["__main__"] = module
    sys.argv = [str(path), *argv]
    sys.path.insert(0, str(path.parent))
    try:
        exec(code, namespace)
    except ScriptDone:
        return ScriptOutcome("done", 0)
    except ScriptStopped:
        return ScriptOutcome("stopped", 0)
    except SystemExit as exc:
        code_value = exc.code
        if code_value is None:
            return ScriptOutcome("ok", 0)
        if isinstance(code_value, int):
            return ScriptOutcome("ok" if code_value == 0 else "exit", code_value)
        return ScriptOutcome("exit", 1, ScriptException(type="SystemExit", message=str(code_value)))
    except BaseException as exc:  # the user's exception, reported, never re-raised into the CLI
        return ScriptOutcome("exception", 1, exception_record(exc))
    return ScriptOutcome("ok", 0)


def exception_record(exc: BaseException) -> ScriptException:
    """The ``script-end`` exception, pointing at the user's innermost frame."""
    site = traceback_site(exc.__traceback__)
    return ScriptException(
        type=type(exc).__name__,
        # The first line names the error (CUDA errors append advice lines after it).
        message=(str(exc).strip().splitlines() or [""])[0][:500],
        file=site.file if site else None,
        line=site.line if site else None,
        code=site.code if site else None,
        function=site.function if site else None,
        traceback="".join(traceback.format_exception(exc))[-4000:],
    )
