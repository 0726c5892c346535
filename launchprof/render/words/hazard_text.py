"""A hazard's ``message`` and ``hint`` from its record (launchprof.model.hazard_codes): the one place
that turns a hazard code and its params into words.

The rules (launchprof.hazards, launchprof.lint) name what they found; the one place that
builds each hazard calls :func:`hazard_message` and :func:`hazard_hint` to fill the
report's strings, so every format and the JSON say the same. What places a hazard in a
wider view afterwards (no line in the user's code, whole-script mode, the ranks it was
found on, lint's call chain and host driver code) adds params (:class:`Placed`'s keys)
and asks :func:`placed_message` for the new sentence.

Imports only the records and the formatter: lint builds its hazards with it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from launchprof.model.hazard_codes import HazardCode, Placed
from launchprof.render.words.hazard_capture_text import CAPTURE
from launchprof.render.words.hazard_hints import HINTS
from launchprof.render.words.hazard_lint_text import LINT, LINT_HINTS
from launchprof.render.words.hazard_runtime_text import RUNTIME

Params = Mapping[str, Any]

SENTENCES: dict[str, Callable[[Params], str]] = {HazardCode.TEXT.value: lambda p: str(p["text"]), **RUNTIME, **CAPTURE, **LINT}

WOULD_BREAK = "would break capture if this ran inside a target: "


def _outside_user_code(p: Params) -> str:
    file, line = p.get(Placed.LIBRARY_FILE), p.get(Placed.LIBRARY_LINE)
    where = f"it surfaced in library code ({file}{':' + str(line) if line else ''})" if file else "no frame of the user's code was on the stack"
    return f" (no line in your code: {where})"


def _driver(p: Params) -> str:
    driver = p[Placed.DRIVER]
    caller = f"`{driver}`, outside its loops" if driver else 'the `if __name__ == "__main__":` block'
    return f" (host driver code, which no graph captures: `{p[Placed.DRIVER_FUNCTION]}` runs only from {caller})"


def placed(sentence: str, p: Params) -> str:
    """``sentence`` with what the placing params in ``p`` add to it."""
    ranks = p.get(Placed.ON_RANKS)
    if p.get(Placed.OUTSIDE_USER_CODE):
        sentence += _outside_user_code(p)
    if p.get(Placed.CALL_CHAIN):
        sentence += f" (reached from the target: {' → '.join(p[Placed.CALL_CHAIN])})"
    if p.get(Placed.DRIVER) is not None:
        sentence += _driver(p)
    if p.get(Placed.WHOLE_SCRIPT):
        sentence = WOULD_BREAK + sentence
    if ranks:
        label = f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))
        sentence = f"{label}: {sentence}"
    return sentence


def hazard_message(code: str, params: Params) -> str:
    """The hazard's sentence, with what placed it. Raises ``KeyError`` for a code this
    launchprof does not know (see :func:`placed_message`). A stored message (``text``) is
    placed by what was added to it since."""
    return placed(SENTENCES[code](params), params)


def without_diff(code: str, params: Params) -> str | None:
    """The sentence less its max |diff| (a renderer states the report's own figure once),
    or None when the hazard's code names no max |diff|."""
    if code not in (HazardCode.REPLAY_MISMATCH, HazardCode.FROZEN_SCALAR) or params.get("max_abs_diff") is None:
        return None
    if code == HazardCode.FROZEN_SCALAR and params.get("outcome") != "differed":
        return None
    return hazard_message(code, {**params, "diff_shown": False})


def placed_message(code: str, params: Params, stored: str, added: Params) -> str:
    """The sentence of a hazard once ``added`` joins its params. A hazard whose code this
    launchprof cannot write (a newer one's) keeps its stored sentence, placed by what
    ``added`` says."""
    try:
        return hazard_message(code, {**params, **added})
    except (KeyError, TypeError, ValueError):
        return placed(stored, added)


def hazard_hint(kind: str, code: str, params: Params) -> str:
    """The kind's fix hint, and the line's own where the code adds one (lint's ``Here: ...``)."""
    extra = LINT_HINTS.get(code)
    return f"{HINTS.get(kind, '')} {extra(params) if extra is not None else ''}".strip()
