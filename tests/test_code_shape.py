"""The team's code-shape rule for ``launchprof/``: no module over 500 lines, no function
(methods and nested functions included) over 80 lines.

A function's length runs from its ``def`` line to its last line (decorators not counted),
as ``ast`` reports them; a module's length is its number of lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "launchprof"
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def shape_offenders(
    source: str, name: str, max_module: int = MAX_MODULE_LINES, max_function: int = MAX_FUNCTION_LINES
) -> list[str]:
    """One line per violation in ``source`` (shown as ``name``); empty when it keeps the rule."""
    offenders = []
    module_lines = len(source.splitlines())
    if module_lines > max_module:
        offenders.append(f"{name}: module has {module_lines} lines (max {max_module})")
    for node in ast.walk(ast.parse(source, filename=name)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            length = node.end_lineno - node.lineno + 1
            if length > max_function:
                offenders.append(f"{name}:{node.lineno}: function {node.name} has {length} lines (max {max_function})")
    return offenders


def test_launchprof_keeps_the_code_shape_rule():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10  # the walk found the package
    offenders = []
    for path in files:
        offenders += shape_offenders(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    assert not offenders, "code-shape rule broken:\n" + "\n".join(offenders)


def _function(name: str, body_lines: int, indent: str = "") -> str:
    """A function of exactly ``body_lines + 1`` lines."""
    return f"{indent}def {name}():\n" + "".join(f"{indent}    x{i} = {i}\n" for i in range(body_lines))


def test_checker_reports_a_long_function_and_passes_one_at_the_limit():
    assert shape_offenders(_function("ok", 79), "ok.py") == []  # 80 lines
    offenders = shape_offenders(_function("too_long", 80), "bad.py")  # 81 lines
    assert offenders == ["bad.py:1: function too_long has 81 lines (max 80)"]


def test_checker_reports_long_methods_and_nested_functions():
    method = "class C:\n" + _function("method", 85, indent="    ")
    assert any("function method has 86 lines" in o for o in shape_offenders(method, "m.py"))
    nested = "def outer():\n" + _function("inner", 90, indent="    ") + "    return inner\n"
    offenders = shape_offenders(nested, "n.py")
    names = {o.split("function ")[1].split(" ")[0] for o in offenders}
    assert names == {"outer", "inner"}
    async_fn = "async " + _function("coro", 81)
    assert shape_offenders(async_fn, "a.py") == ["a.py:1: function coro has 82 lines (max 80)"]


def test_checker_reports_a_long_module():
    assert shape_offenders("x = 1\n" * 500, "ok.py") == []
    assert shape_offenders("x = 1\n" * 501, "big.py") == ["big.py: module has 501 lines (max 500)"]


def test_the_root_help_lists_every_command_without_cutting_its_summary() -> None:
    """click cuts a command's summary with an ellipsis unless the command gives a short help."""
    from typer.testing import CliRunner

    from launchprof.cli import app

    out = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "100"}).output
    assert "…" not in out and "..." not in out.split("Commands:")[1]
    for name in ("analyze", "crossover", "lint", "report", "compare"):
        assert f"  {name} " in out
