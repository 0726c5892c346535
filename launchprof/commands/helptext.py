"""Plain ``--help`` pages and one-line parser errors, the way ``git`` or ``python`` print them.

typer's default help shows Python annotations (``<bool>``, ``<list[Path]>``) and wraps
required arguments in braces (``{script}``); its parser errors are framed boxes that
break one-line log parsing. This command class writes the usage line with upper-case
argument names, each option with its metavar (``--target NAME``) and no type column.
click formats help at least 50 columns wide whatever ``COLUMNS`` says; on a narrower
terminal these pages (and the top-level one, :class:`PlainGroup`) fit its width instead.
"""

from __future__ import annotations

import shutil
from typing import Any

import typer
import typer.core

# A value's placeholder when an option declares no metavar: by the option's bare type.
_BY_TYPE = {"int": "N", "float": "SECONDS", "Path": "PATH", "str": "TEXT"}
# click's floor: at this width or below, each option's text goes on the lines below its
# name (a 16-column text column beside 32 columns of option names wraps a word a line).
CLICK_MIN_WIDTH = 50
# Narrower than this, a page of words a line helps nobody: it wraps at this width.
NARROWEST = 20


def _bare(param: Any) -> str:
    try:
        name = param.bare_type()
    except Exception:
        return "VALUE"
    if name.startswith("list[") and name.endswith("]"):
        name = name[5:-1]
    return _BY_TYPE.get(name, "VALUE")


def _argument_name(param: Any) -> str:
    return (param.metavar or param.name or "ARG").upper()


def _option_record(param: Any) -> tuple[str, str]:
    names = ", ".join(sorted(param.opts, key=lambda o: (o.startswith("--"), o)))
    if param.secondary_opts:
        names += " / " + ", ".join(param.secondary_opts)
    if not getattr(param, "is_flag", False):
        names += f" {param.metavar or _bare(param)}"
    extra = []
    default = param.default
    if param.show_default and default not in (None, False, (), []) and not callable(default):
        extra.append(f"default: {default}")
    if getattr(param, "min", None) is not None or getattr(param, "max", None) is not None:
        low, high = getattr(param, "min", None), getattr(param, "max", None)
        extra.append(f"{low} to {high}" if low is not None and high is not None else (f">= {low}" if low is not None else f"<= {high}"))
    help_text = " ".join((param.help or "").split())
    return names, help_text + (f" [{'; '.join(extra)}]" if extra else "")


class PlainCommand(typer.core.TyperCommand):
    """A typer command whose help has no Python type names (see the module docstring)."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = ["[OPTIONS]"]
        for param in self.get_params(ctx):
            if param.param_type_name != "argument":
                continue
            name = _argument_name(param)
            if param.nargs != 1:
                name += "..."
            pieces.append(name if param.required else f"[{name}]")
        return pieces

    def format_usage(self, ctx: Any, formatter: Any) -> None:
        formatter.write_usage(ctx.command_path, " ".join(self.collect_usage_pieces(ctx)))

    def format_help(self, ctx: Any, formatter: Any) -> None:
        fit_narrow_terminal(ctx, formatter)
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        self.format_options(ctx, formatter)
        self.format_epilog(ctx, formatter)

    def format_options(self, ctx: Any, formatter: Any) -> None:
        args, opts = [], []
        for param in self.get_params(ctx):
            if getattr(param, "hidden", False):
                continue
            if param.param_type_name == "argument":
                args.append((_argument_name(param), " ".join((param.help or "").split())))
            else:
                opts.append(_option_record(param))
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
        if opts:
            with formatter.section("Options"):
                formatter.write_dl(opts, col_max=30 if formatter.width > CLICK_MIN_WIDTH else 0)


class PlainGroup(typer.core.TyperGroup):
    """The top-level command: typer's plain help, fitted to a narrow terminal too."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # A bare `launchprof` prints the help on stderr and exits 2 (a usage error). typer
        # signals it with an exception class it does not export, so the group says it itself.
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            typer.echo(ctx.get_help(), err=True, color=ctx.color)
            raise typer.Exit(2)
        return super().parse_args(ctx, args)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        fit_narrow_terminal(ctx, formatter)
        super().format_help(ctx, formatter)


def fit_narrow_terminal(ctx: Any, formatter: Any) -> None:
    """Narrow ``formatter`` to a terminal under click's 50-column floor (COLUMNS or the tty)."""
    if ctx.terminal_width is None:
        columns = shutil.get_terminal_size().columns - 2
        if columns < formatter.width:
            formatter.width = max(columns, NARROWEST)
