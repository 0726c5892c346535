"""Building a Hazard from an observation that carries a user site."""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from launchprof.events.record import Site
from launchprof.events.lifecycle_events import TargetEvent
from launchprof.model.findings import Param
from launchprof.model.hazard_codes import HazardCode
from launchprof.model.hazard_identity import without_comment
from launchprof.hazards.kinds import KINDS
from launchprof.common.source import around, definition_line, function_at, line_at
from launchprof.model.hazard_records import Hazard, LibrarySite
from launchprof.render.words.hazard_text import hazard_hint, hazard_message, placed_message


def code_text(site: Site | None) -> str:
    """The source line of a site without its trailing comment, for messages."""
    return without_comment(site.code if site is not None and site.code else "")


def hazard(kind: str, code: HazardCode, params: dict[str, Param], site: Site | None, severity: str | None = None, **details: Any) -> Hazard:
    """A runtime hazard: what it found (``code``, ``params``), its words written from them."""
    site = off_decorators(site or Site())
    extra = {k: v for k, v in details.items() if v is not None}
    for key in ("code", "function", "snippet"):
        if getattr(site, key):
            extra.setdefault(key, getattr(site, key))
    return Hazard(
        kind=kind,
        severity=severity or KINDS[kind].severity,
        message=hazard_message(code.value, params),
        file=site.file,
        line=int(site.line) if site.line else None,
        hint=hazard_hint(kind, code.value, params),
        source="runtime",
        details=extra,
        code=code.value,
        params=params,
        library_site=library_site(site),
    )


def off_decorators(site: Site) -> Site:
    """A site on a decorator line (``@torch.no_grad()``: the line a decorated function's code
    object starts at) moved to the function's ``def`` line, which names what it is about."""
    if not site.file or not site.line:
        return site
    at = definition_line(site.file, int(site.line))
    if at is None or at == int(site.line):
        return site
    moved = {"line": at, "code": line_at(site.file, at).strip()}
    if site.snippet:
        moved["snippet"] = around(site.file, at)
    return dataclasses.replace(site, **moved)


def library_site(site: Site) -> LibrarySite | None:
    """The library frame a probe entry carries, when it is filed at the user's calling line."""
    lib = getattr(site, "library_site", None)
    if lib is None or not lib.file:
        return None
    return LibrarySite(file=lib.file, line=int(lib.line) if lib.line else None, code=without_comment(lib.code or ""), function=lib.function or "")


def restated(h: Hazard, added: dict[str, Param]) -> Hazard:
    """``h`` placed in a wider view: ``added`` joins its params and its message is written
    again from them (launchprof.model.hazard_codes.Placed)."""
    message = placed_message(h.code, h.params, h.message, added)
    return dataclasses.replace(h, message=message, params={**h.params, **added})


def first_use(target: TargetEvent | None, name: str) -> Site | None:
    """The first line inside the target function that reads ``name`` (an argument or global).

    Runtime observations know *which* name is involved; this puts the finding on the
    line that uses it, where the fix goes."""
    if target is None or not target.file or not target.line:
        return None
    file, first = target.file, int(target.line)
    node = function_at(file, first)
    if node is None:
        return None
    root = name.split("[")[0].split(".")[0]
    inside = [sub for stmt in node.body for sub in ast.walk(stmt)]  # not its decorators, not its defaults
    for sub in sorted(inside, key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if isinstance(sub, ast.Name) and sub.id == root and isinstance(sub.ctx, ast.Load):
            return Site(file=file, line=sub.lineno, code=line_at(file, sub.lineno).strip(), snippet=around(file, sub.lineno))
    return None


_LIBRARY_MARKS = ("site-packages", "dist-packages", "/torch/", "\\torch\\")


def is_library_file(file: str | None) -> bool:
    """A file that is not the user's: a wrapper's (``torch/utils/_contextlib.py`` from
    ``@torch.no_grad()``), a package's, or a synthetic one (``<string>``)."""
    return bool(file) and (str(file).startswith("<") or any(m in str(file) for m in _LIBRARY_MARKS))


def user_target(target: TargetEvent | None, functions: list[Site]) -> TargetEvent | None:
    """The target's definition in the user's code.

    Runs recorded before the worker unwrapped decorators name the decorator's wrapper as the
    target's file; the probe call's list of user functions that ran names the real one (the
    same qualified name, else the first user function, which is the outermost one called)."""
    if target is None or not is_library_file(target.file):
        return target
    users = [f for f in functions if f.file and not is_library_file(f.file)]
    match = next((f for f in users if f.function == target.qualname), users[0] if users else None)
    if match is None:
        return target
    return dataclasses.replace(target, file=match.file, line=match.line)


def target_site(target: TargetEvent | None) -> Site | None:
    """The target's ``def`` line (its recorded line is its first decorator's, when it has any)."""
    if target is None or not target.file:
        return None
    line = target.line and (definition_line(target.file, int(target.line)) or target.line)
    return Site(file=target.file, line=line, code=line_at(target.file, int(line or 0)).strip())
