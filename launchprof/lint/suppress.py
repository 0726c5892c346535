"""Inline suppression: ``# launchprof: ignore[kind, ...]`` or a bare ``# launchprof: ignore``.

The comment sits on the finding's line, as with ``# noqa`` and ``# type: ignore``, so
a reviewer sees the exception next to the code it excuses.
"""

from __future__ import annotations

import re

_IGNORE = re.compile(r"#\s*launchprof:\s*ignore(?![\w-])(?:\[([^\]]*)\])?")


def ignored_kinds(line: str) -> frozenset[str] | None:
    """Kinds ignored on this source line: None when none, an empty set when all are."""
    if "launchprof" not in line:
        return None
    match = _IGNORE.search(line)
    if match is None:
        return None
    listed = match.group(1)
    if listed is None:
        return frozenset()
    return frozenset(k.strip() for k in listed.split(",") if k.strip())


def is_suppressed(line: str, kind: str) -> bool:
    kinds = ignored_kinds(line)
    return kinds is not None and (not kinds or kind in kinds)


def suppression_kinds(data: bytes) -> list[tuple[int, str]]:
    """``(line, kind)`` for every kind named in an ignore comment of a file's source.

    The caller keeps those that are not hazard kinds: a misspelt kind (``ignore[hiden-sync]``)
    silences nothing, and saying so is the only way the user learns that the finding they
    meant to excuse is still reported.
    """
    if b"launchprof" not in data:
        return []
    named: list[tuple[int, str]] = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        kinds = ignored_kinds(line)
        if kinds:
            named.extend((number, kind) for kind in sorted(kinds))
    return named
