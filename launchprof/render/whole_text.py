"""Text that wraps between words but never inside a figure: "8.3 µs", "[1521.4, 1583.8]",
"10.16 – 10.38", "p < 0.001" and "32,768 bytes" always stay on one line.

rich wraps at every space, so on a narrow terminal a number lands on one line and its
unit (or the second half of its interval) on the next, and a word longer than its column
is cut anywhere, a number included. :class:`Whole` wraps a text itself, treating each
figure as one word; a word still longer than the width (a long path) is folded after a
``/`` where it can be, and only cut where it cannot. Renderers wrap prose that carries
figures in :class:`Whole` instead of handing rich a bare string.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from rich.cells import cell_len, chop_cells
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

_NUM = r"\d+(?:[.,]\d+)*"
_VALUE = rf"[-+±]?{_NUM}[%×x]?"
_UNIT = r"(?:ns|µs|us|ms|s|KiB|MiB|GiB|TiB|B|bytes|pp)"
# Each match is one unbreakable figure; spaces inside a match never become line breaks.
GLUE = re.compile(
    "|".join(
        (
            rf"(?<![\w.]){_VALUE}(?: ?[–-] ?{_VALUE})? {_UNIT}(?!\w)",  # 8.3 µs, 1.50–1.76 ms, -33.7 pp
            rf"(?<![\w.]){_VALUE} – {_VALUE}",  # 10.16 – 10.38
            r"\[[-+±]?\d[^\[\]\n]{0,40}?\]",  # [1521.4, 1583.8]
            rf"\bp [<=>≤≥] {_NUM}",  # p < 0.001
        )
    )
)


def atoms(plain: str) -> list[tuple[int, int]]:
    """(start, end) of each unbreakable run: a word, or words joined by a figure."""
    glued = bytearray(len(plain))
    for m in GLUE.finditer(plain):
        glued[m.start() : m.end()] = b"\x01" * (m.end() - m.start())
    spans: list[tuple[int, int]] = []
    start = None
    for i, ch in enumerate(plain):
        breakable = ch.isspace() and not glued[i]
        if breakable and start is not None:
            spans.append((start, i))
            start = None
        elif not breakable and start is None:
            start = i
    if start is not None:
        spans.append((start, len(plain)))
    return spans


def longest_line(text: str) -> int:
    """The width of ``text``'s longest line, unwrapped."""
    return max((cell_len(line) for line in text.split("\n")), default=0)


def widest_atom(text: str) -> int:
    """The narrowest width ``text`` can wrap to without splitting a word or a figure."""
    return max((cell_len(line[s:e]) for line in text.split("\n") for s, e in atoms(line)), default=0)


_SOFT = "/ _-.,(=:"  # a long word is cut after one of these (a path's "/", a call's "(")


def _soft(word: str, cut: int) -> bool:
    """Whether ``word`` may be cut before index ``cut``: after a soft character, and never
    between two digits ("1024", "2.11.0"), inside a number's "." or ",", or after its sign."""
    before, after = word[cut - 1], word[cut] if cut < len(word) else ""
    if before not in _SOFT:
        return False
    return not (after.isdigit() and (before in ".,-" or word[cut - 2 : cut - 1].isdigit()))


def _fold(word: str, first: int, width: int) -> list[int]:
    """Offsets that cut ``word`` (too long for any line) into pieces: after the last soft
    character that fits (:func:`_soft`), else where the width runs out. ``first`` is the
    room on the current line."""
    cuts: list[int] = []
    start, room = 0, first
    while cell_len(word[start:]) > room:
        piece = chop_cells(word[start:], max(room, 1))[0] or word[start]  # a wide character in one cell still moves on
        soft = [i for i in range(1, len(piece)) if _soft(word, start + i)]
        best = [i for i in soft if word[start + i - 1] in "/ "] or soft  # a path's "/" first
        cut = start + (best[-1] if best else len(piece))
        cuts.append(cut)
        start, room = cut, width
    return cuts


def breaks(plain: str, width: int, indent: int = 0) -> list[int]:
    """Offsets to start new lines at, so each line fits ``width`` cells (continuation
    lines carry ``indent`` more); greedy, between atoms, folding only an atom too long."""
    width = max(width, indent + 1)
    cuts: list[int] = []
    line_start, placed = 0, False
    for start, end in atoms(plain):
        room = width - (indent if cuts else 0)
        if cell_len(plain[line_start:end]) <= room:
            placed = True
            continue
        if placed:  # the atom starts the next line
            cuts.append(start)
            line_start, room = start, width - indent
            if cell_len(plain[start:end]) <= room:
                continue
        left = room - cell_len(plain[line_start:start])
        if left < 1:
            cuts.append(start)
            line_start, left = start, width - indent
        cuts += [start + f for f in _fold(plain[start:end], left, width - indent)]
        line_start, placed = cuts[-1], True
    return cuts


def wrap(text: Text, width: int, indent: int = 0) -> list[Text]:
    """``text`` as lines of at most ``width`` cells, styles kept, explicit newlines honoured."""
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        pieces = line.divide(breaks(line.plain, width, indent)) if line.plain else [line]
        for i, piece in enumerate(pieces):
            piece.rstrip()
            out.append(Text(" " * indent) + piece if i and indent else piece)
    return out


class Whole:
    """A rich renderable: ``text`` wrapped to the width it is given, figures kept whole.

    ``indent`` is the hanging indent of continuation lines. Alignment comes from the
    container (a right-justified table column right-justifies each line)."""

    def __init__(self, text: Text | str, style: str = "", indent: int = 0) -> None:
        self.text = text if isinstance(text, Text) else Text(text, style=style)
        self.indent = indent

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        plain = self.text.plain
        longest = longest_line(plain)
        return Measurement(min(widest_atom(plain) + self.indent, longest), longest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = wrap(self.text, options.max_width, self.indent)
        joined = Text("\n").join(lines)
        joined.justify, joined.end = self.text.justify, self.text.end
        joined.no_wrap = True  # already wrapped: rich must not wrap it again
        joined.overflow = "crop"  # never needed: each line fits (not "ignore", which skips justification)
        yield joined


def whole_parts(parts: Iterable[object]) -> Iterator[object]:
    """Each bare :class:`~rich.text.Text` of a list of renderables made :class:`Whole`;
    tables, panels and the rest pass unchanged."""
    for part in parts:
        prose = isinstance(part, Text) and not part.no_wrap and part.overflow is None  # code (code_text), left as is
        yield Whole(part) if prose else part


def code_text(code: str) -> Text:
    """Code to paste, never wrapped: a folded line is broken Python (a comment's end
    lands on a line of its own). Printed with ``crop=False``, a line longer than the
    console runs past it; a terminal shows it soft-wrapped and copies it whole."""
    return Text(code.rstrip(), no_wrap=True, overflow="ignore")
