"""Tables that fit the terminal or turn into one block per row; never a figure cut in two.

rich squeezes a table that is wider than the terminal by narrowing its widest columns,
whatever they hold: "1934.5 µs" becomes "1934." over "5 µs", and a cell that may not wrap
ends in "…". :class:`FittedTable` decides at render time, from the width it is given:
when every column can get at least its widest word or figure (and the ``least`` its
caller asks for), it is a rich table with the column widths set here; otherwise each row
becomes a block of lines (the first cell, then "header: value" lines), every line wrapped
by :class:`~launchprof.render.whole_text.Whole`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from rich import box as boxes
from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text

from launchprof.render.whole_text import Whole, longest_line, widest_atom


@dataclass(frozen=True)
class Col:
    """A column: its header, alignment, cell style and the least width it is worth showing at."""

    header: str
    justify: Literal["left", "right"] = "left"
    style: str = ""
    least: int = 0


def fit_widths(mins: Sequence[int], maxes: Sequence[int], room: int) -> list[int] | None:
    """Content widths that fit ``room`` with each column at least its minimum, the widest
    columns narrowed first (as rich does); None when the minimums alone do not fit."""
    if sum(mins) > room:
        return None
    if sum(maxes) <= room:
        return list(maxes)

    def at(level: int) -> list[int]:
        return [max(lo, min(hi, level)) for lo, hi in zip(mins, maxes)]

    low, high = 0, max(maxes)
    while low < high:  # the highest level whose widths fit
        mid = (low + high + 1) // 2
        low, high = (mid, high) if sum(at(mid)) <= room else (low, mid - 1)
    widths = at(low)
    spare = room - sum(widths)
    for i, (width, hi) in enumerate(zip(widths, maxes)):
        if spare and width < hi:
            widths[i], spare = width + 1, spare - 1
    return widths


Block = Callable[[Sequence[str], str], Any]


class FittedTable:
    """A table of strings: rich's table where it fits without breaking a word or a figure,
    one block per row where it does not. ``block`` renders a row's block (default: a
    heading made of the first cell, by ``heading`` or as "header cell", then one indented
    "header: value" line per other non-empty cell)."""

    def __init__(
        self,
        cols: Sequence[Col],
        rows: Sequence[Sequence[str]],
        title: str | None = None,
        styles: Sequence[str] | None = None,
        block: Block | None = None,
        heading: Callable[[str], str] | None = None,
        **table: Any,
    ) -> None:
        self.cols, self.rows, self.title = list(cols), [list(r) for r in rows], title
        self.styles = list(styles) if styles is not None else [""] * len(self.rows)
        self.block = block or self.default_block
        self.heading = heading
        self.table = table  # passed on to rich's Table: box, show_edge, pad_edge, show_header, title_justify

    def chrome(self) -> int:
        """Cells the table's borders and padding take, beside the columns' content."""
        n = len(self.cols)
        framed = self.table.get("box", boxes.HEAVY_HEAD) is not None
        edges = 2 if framed and self.table.get("show_edge", True) else 0
        padding = 2 * n - (0 if self.table.get("pad_edge", True) else 2)
        return edges + (n - 1 if framed else 0) + padding

    def widths(self, room: int) -> list[int] | None:
        show_header = self.table.get("show_header", True)
        mins, maxes = [], []
        for i, col in enumerate(self.cols):
            texts = [r[i] for r in self.rows] + ([col.header] if show_header else [])
            mins.append(max([col.least, *(widest_atom(t) for t in texts)]))
            maxes.append(max([mins[-1], *(longest_line(t) for t in texts)]))
        return fit_widths(mins, maxes, room - self.chrome())

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.widths(options.max_width)
        if widths is None:
            if self.title:
                yield Whole(Text(self.title, style="bold"))
            for row, style in zip(self.rows, self.styles):
                yield self.block(row, style)
            return
        table = Table(title=self.title, **self.table)
        for col, width in zip(self.cols, widths):
            table.add_column(Whole(col.header), justify=col.justify, style=col.style or None, width=width)
        for row, style in zip(self.rows, self.styles):
            table.add_row(*(Whole(cell) for cell in row), style=style or None)
        yield table

    def default_block(self, row: Sequence[str], style: str) -> Any:
        """The heading on its own line, then "header: value" (the value alone when the
        table has no header row), indented, for the other cells."""
        named = self.table.get("show_header", True)
        first = self.heading(row[0]) if self.heading else f"{self.cols[0].header} {row[0]}" if named else row[0]
        text = Text(first, style=f"bold {style}".strip())
        for col, cell in zip(self.cols[1:], row[1:]):
            if cell:
                text.append(f"\n  {col.header}: " if named and col.header else "\n  ", style=style or None)
                text.append(cell, style=style or None)
        return Whole(text, indent=4)
