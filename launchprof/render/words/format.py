"""The one formatter: every number a report shows goes through one of these functions.

One rule per kind of figure, so that a duration is never "1934.5 µs" in one format and
"1.93 ms" in another, a ratio never "2.32x" here and "2.3×" there. The rules:

- durations: below 1 ms in µs with one decimal, below 1 s in ms with two decimals,
  otherwise in s with two decimals; a range (p10–p90) is written in its median's unit;
- bytes: binary units (B, KiB, MiB, GiB), one decimal;
- fractions: percent with one decimal;
- ratios (speedups): two decimals and "×";
- counts: thousands separated.

Text is written with Unicode symbols (µ, ×, –, ·); :func:`to_ascii` maps them, and the
emoji of verdict badges, to ASCII for streams that cannot encode them.
"""

from __future__ import annotations

import math
from typing import Any

NA = "—"

_US_PER = {"µs": 1.0, "ms": 1_000.0, "s": 1_000_000.0}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def duration_unit(us: float) -> str:
    """The unit a duration of ``us`` microseconds is written in."""
    magnitude = abs(us)
    if magnitude < 1_000:
        return "µs"
    if magnitude < 1_000_000:
        return "ms"
    return "s"


def duration(us: float | None, unit: str | None = None) -> str:
    """A duration given in µs, in its own unit (or ``unit``): "712.5 µs", "5.61 ms", "1.20 s"."""
    if not _finite(us):
        return NA
    unit = unit or duration_unit(us)  # type: ignore[arg-type]
    value = us / _US_PER[unit]  # type: ignore[operator]
    return f"{value:.1f} {unit}" if unit == "µs" else f"{value:.2f} {unit}"


def _number_in(us: float, unit: str) -> str:
    value = us / _US_PER[unit]
    return f"{value:.1f}" if unit == "µs" else f"{value:.2f}"


def stats(s: Any) -> str:
    """A Stats (median, p10, p90, n): "5.61 ms (p10–p90 3.89–6.04 ms, n=37)"."""
    if s is None or not _finite(getattr(s, "median", None)):
        return NA
    unit = duration_unit(s.median)
    spread = ""
    if _finite(s.p10) and _finite(s.p90):
        spread = f"p10–p90 {_number_in(s.p10, unit)}–{_number_in(s.p90, unit)} {unit}, "
    return f"{duration(s.median, unit)} ({spread}n={s.n})"


def ratio(value: float | None) -> str:
    """A ratio such as a speedup: "2.32×"."""
    return f"{value:.2f}×" if _finite(value) else NA


def interval(low: float | None, high: float | None) -> str:
    """A ratio interval: "2.27–2.35×"."""
    if not (_finite(low) and _finite(high)):
        return NA
    return f"{low:.2f}–{high:.2f}×"


def speedup(median: float | None, low: float | None = None, high: float | None = None, label: str = "95% interval") -> str:
    """A speedup with its interval: "2.32× (95% interval 2.27–2.35×)"."""
    if not _finite(median):
        return NA
    if _finite(low) and _finite(high):
        return f"{ratio(median)} ({label} {interval(low, high)})"
    return ratio(median)


def percent(fraction: float | None, digits: int = 1, sign: bool = False) -> str:
    """A fraction as percent: 0.619 -> "61.9%"; with ``sign``, a change: "+4.2%"."""
    return f"{fraction * 100:{'+' if sign else ''}.{digits}f}%" if _finite(fraction) else NA


def size(n: int | float | None) -> str:
    """Bytes in binary units: "34.0 MiB"."""
    if not _finite(n):
        return NA
    value = float(n)  # type: ignore[arg-type]
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(value) < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"  # pragma: no cover - the loop always returns


def memory_text(n: int) -> str:
    """Bytes as the bucket plan's lines say them, in the units --bucket-memory takes: 2 GiB, 512 MiB."""
    return f"{n / 2**30:.3g} GiB" if n >= 2**30 else f"{n / 2**20:.3g} MiB"


def count(value: float | None) -> str:
    """A count: "1,234", or "1.5" for a non-integral mean."""
    if not _finite(value):
        return NA
    if isinstance(value, int) or float(value).is_integer():  # type: ignore[arg-type]
        return f"{int(value):,}"  # type: ignore[arg-type]
    return f"{value:,.1f}"


def number(value: float | None, digits: int = 0) -> str:
    """A plain figure with fixed decimals and no separator, for a figure inside a sentence
    whose unit the sentence names: "1019", "2.6"."""
    return f"{value:.{digits}f}" if _finite(value) else NA


def significant(value: float | None, digits: int = 1) -> str:
    """A figure to ``digits`` significant digits, such as a p-value: "1e-08", "0.4"."""
    return f"{value:.{digits}g}" if _finite(value) else NA


def seconds(value: float | None, digits: int = 1) -> str:
    """A wall time given in seconds, in seconds: "1.8 s"."""
    return f"{number(value, digits)} s" if _finite(value) else NA


def replays(value: float | None) -> str:
    """A number of replays (a payback count): "1.9", "about 12"."""
    if not _finite(value):
        return NA
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"  # type: ignore[operator]


def diff(value: float | None) -> str:
    """A max |diff| between replay and eager outputs: three significant digits."""
    return f"{value:.3g}" if _finite(value) else NA


# --- ASCII fallback ------------------------------------------------------------------------

ASCII = {
    "µ": "u",
    "×": "x",
    "–": "-",
    "—": "-",
    "·": "-",
    "→": "->",
    "←": "<-",
    "…": "...",
    "≥": ">=",
    "≤": "<=",
    "±": "+/-",
    "≈": "~",
    "✅": "[ok]",
    "✓": "ok",
    "✗": "x",
    "❌": "[no]",
    "🟡": "[~]",
    "⚖️": "[~]",
    "⚖": "[~]",
    "🚫": "[x]",
    "ℹ️": "[i]",
    "ℹ": "[i]",
    "💥": "[!]",
    "🔎": "[?]",
    "🔍": "[?]",
    "🔴": "[E]",
    "🟠": "[W]",
    "🔵": "[I]",
    "⚠️": "[!]",
    "⚠": "[!]",
    "\ufe0f": "",
    "‘": "'",
    "’": "'",
    "“": '"',
    "”": '"',
}
_BOX = "─│┌┐└┘├┤┬┴┼━┃┏┓┗┛┣┫┳┻╋═║╔╗╚╝╠╣╦╩╬╭╮╯╰╴╵╶╷╸╹╺╻"
_BOX_ASCII = {ch: ("-" if ch in "─━═╴╶╸╺" else "|" if ch in "│┃║╵╷╹╻" else "+") for ch in _BOX}


def to_ascii(text: str) -> str:
    """``text`` with every non-ASCII symbol replaced: known symbols by their ASCII spelling,
    box drawing by ``-|+``, anything else (user text in other scripts) by ``?``."""
    if text.isascii():
        return text
    for symbol, plain in ASCII.items():
        if symbol in text:
            text = text.replace(symbol, plain)
    text = text.translate(str.maketrans(_BOX_ASCII))
    return text.encode("ascii", "replace").decode("ascii")
