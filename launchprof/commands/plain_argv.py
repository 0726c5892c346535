"""A plain command line for ``launchprof lint``, read without typer's parser.

typer (0.29) builds a pydantic ``TypeAdapter`` for every parameter on every run, which
imports pydantic first: about a tenth of a second before the command starts, on a
command that lints a whole project in a few tenths (docs/lint-speed.md). Here the
command line is matched against the very parameters typer builds for the command
(names, flags, repeatable options, from the same signature in ``launchprof/cli.py``),
and the command function is called with what typer would have passed it. Anything
this reader is not sure of falls back to typer, so help, errors and every unusual
spelling stay typer's: ``--help``, an unknown or repeated option, ``--``, ``-fjson``,
``-qa``, a value that looks like an option, a parameter that is not a flag, a string,
a path or a list of them, or a typer whose internals differ from what this expects.
``tests/test_plain_argv.py`` checks that both readers give the same options.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Commands read here; every other one goes through typer.
PLAIN_COMMANDS = frozenset({"lint"})
_CONVERT: dict[Any, Callable[[str], Any]] = {str: str, Path: Path}


def call_plainly(app: Any, argv: list[str]) -> int | None:
    """Run the command ``argv`` names and return its exit code; None when typer should read ``argv``."""
    if not argv or argv[0] not in PLAIN_COMMANDS:
        return None
    plan = _plan(app, argv[0])
    if plan is None:
        return None
    callback, params = plan
    kwargs = parse(params, argv[1:])
    if kwargs is None:
        return None
    import typer

    try:
        callback(**kwargs)
    except typer.Exit as exc:  # the command's wrapper (cli.handles_errors) ends with its exit code
        return int(exc.exit_code)
    return 0


class Param(typing.NamedTuple):
    """One parameter as typer declares it: its name, its spellings, and how to read a value."""

    name: str
    opts: tuple[str, ...]  # empty for the positional argument
    flag: bool
    many: bool
    convert: Callable[[str], Any] | None  # None for a flag
    default: Any


def _plan(app: Any, command: str) -> tuple[Callable[..., Any], list[Param]] | None:
    """The command's callback and parameters as typer builds them; None when anything is unusual."""
    try:
        import typer.main

        info = next(c for c in app.registered_commands if c.callback is not None and (c.name or c.callback.__name__) == command)
        click_command = typer.main.get_command_from_info(info, pretty_exceptions_short=True, rich_markup_mode=None)
        hints = typing.get_type_hints(info.callback)
        params = [_param(p, hints.get(p.name)) for p in click_command.params]
    except Exception:  # a typer that builds commands differently: let it parse
        return None
    if any(p is None for p in params) or sum(1 for p in params if not p.opts) > 1:  # type: ignore[union-attr]
        return None
    return info.callback, params  # type: ignore[return-value]


def _param(p: Any, hint: Any) -> Param | None:
    """One click parameter, or None when it needs more than this reader does."""
    unusual = (
        p.envvar is not None
        or p.callback is not None
        or p.is_eager
        or not p.expose_value
        or getattr(p, "count", False)
        or getattr(p, "prompt", None)
        or getattr(p, "secondary_opts", [])
    )
    if unusual or hint is None:
        return None
    base = _without_none(hint)
    many = typing.get_origin(base) is list
    item = typing.get_args(base)[0] if many else base
    positional = p.param_type_name == "argument"
    if positional:
        if not (many and p.nargs == -1 and item in _CONVERT and p.required):
            return None
        return Param(p.name, (), False, True, _CONVERT[item], None)
    flag = bool(getattr(p, "is_flag", False))
    if flag:
        if item is not bool or many or p.default is not False:
            return None
        return Param(p.name, tuple(p.opts), True, False, None, False)
    if item not in _CONVERT or p.nargs != 1 or many != bool(p.multiple) or (many and p.default is not None):
        return None
    return Param(p.name, tuple(p.opts), False, many, _CONVERT[item], p.default)


def _without_none(hint: Any) -> Any:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0] if len(args) == 1 else hint
    return hint


def parse(params: list[Param], args: list[str]) -> dict[str, Any] | None:
    """The keyword arguments typer would pass for ``args``; None to let typer read them instead."""
    by_opt = {o: p for p in params for o in p.opts}
    positional = next(p for p in params if not p.opts)
    values: dict[str, Any] = {p.name: ([] if p.many else p.default) for p in params}
    given: set[str] = set()
    i = 0
    while i < len(args):
        token = args[i]
        i += 1
        if not token.startswith("-"):
            values[positional.name].append(positional.convert(token))  # type: ignore[misc]
            continue
        opt, eq, inline = token.partition("=")
        p = by_opt.get(opt)
        if p is None or (eq and (p.flag or not opt.startswith("--"))) or (not p.many and p.name in given):
            return None  # unknown, `-x=v`, `--flag=v`, or repeated: typer knows the rules
        given.add(p.name)
        if p.flag:
            values[p.name] = True
            continue
        if not eq:
            if i >= len(args) or args[i].startswith("-"):
                return None  # a missing value, or a value that looks like an option
            inline = args[i]
            i += 1
        value = p.convert(inline)  # type: ignore[misc]
        if p.many:
            values[p.name].append(value)
        else:
            values[p.name] = value
    if not values[positional.name]:
        return None  # typer's "missing argument" error
    for p in params:
        if p.opts and p.many and not values[p.name]:
            values[p.name] = None  # what typer passes for a repeatable option never given
    return values
