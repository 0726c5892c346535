"""``--quiet``: nothing on the terminal but errors.

Done once, around the whole command, rather than in every print: launchprof's progress,
"wrote …" lines, warnings and the terminal report all go to ``sys.stdout``/``sys.stderr``
(rich consoles look them up when they print), so pointing both at ``os.devnull`` silences
every one of them, including any added later. A report the user sent to standard output
(``-f json`` with no ``-o``) is data, not chatter: stdout is then left alone. Errors are
raised as exceptions and printed by the CLI after the streams are restored, so they
always show. GitHub annotations (``--github``) are findings a CI log must show, so they
are written to the real standard error (:func:`annotation_stream`).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

# The standard error that --quiet set aside, while it is quiet: annotations still go there.
_set_aside: list[TextIO] = []


def annotation_stream() -> TextIO:
    """Where GitHub annotations go: standard error, also under --quiet."""
    return _set_aside[-1] if _set_aside else sys.stderr


def report_to_stdout(formats: tuple[str, ...] | list[str], outputs: tuple[object, ...] | list[object]) -> bool:
    """True when a non-text report goes to standard output: a format left over (``-f json``
    without ``-o``), or paired with an ``-o`` that is standard output (``-o -``, ``/dev/stdout``)."""
    from launchprof.fileio.output_files import ALIASES, is_stdout

    for i, fmt in enumerate(formats):
        if i >= len(outputs) or is_stdout(str(outputs[i])):
            return ALIASES.get(fmt, fmt) != "text"
    return False


@contextlib.contextmanager
def quiet_streams(quiet: bool, keep_stdout: bool = False) -> Iterator[None]:
    """While active, launchprof's own stdout (unless kept) and stderr go nowhere."""
    if not quiet:
        yield
        return
    saved = sys.stdout, sys.stderr
    with open(os.devnull, "w", encoding="utf-8") as null:
        if not keep_stdout:
            sys.stdout = null
        sys.stderr = null
        _set_aside.append(saved[1])
        try:
            yield
        finally:
            _set_aside.pop()
            sys.stdout, sys.stderr = saved
