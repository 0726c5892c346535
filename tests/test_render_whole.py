"""launchprof.render.whole_text and launchprof.render.fitted: wrapping that keeps figures whole,
and tables that become blocks where they would have to break one."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

from launchprof.render.fitted import Col, FittedTable, fit_widths
from launchprof.render.whole_text import Whole, atoms, breaks, whole_parts, widest_atom

PROSE = (
    "a replay of 147 kernels should take about 441 µs (8.3 µs to launch the graph), eager step "
    "median 1552.6 µs [1521.4, 1583.8]; significant (p < 0.001); interval 10.16 – 10.38; "
    "p10–p90 1.50–1.76 ms; -33.7 pp; new allocations each call (32,768 bytes) at "
    "sample_models/decode_loop.py:78"
)
FIGURES = ["441 µs", "8.3 µs", "1552.6 µs", "[1521.4, 1583.8]", "p < 0.001", "10.16 – 10.38", "1.50–1.76 ms", "-33.7 pp", "32,768 bytes"]


def _render(renderable: object, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width, color_system=None).print(renderable)
    return [line.rstrip() for line in out.getvalue().splitlines()]


def test_figures_are_atoms_and_words_are_not_glued() -> None:
    words = [PROSE[s:e] for s, e in atoms(PROSE)]
    for figure in FIGURES:
        assert any(figure in w for w in words), figure
    assert "147" in words and "kernels" in words  # a count and its noun may part
    assert widest_atom(PROSE) == len("sample_models/decode_loop.py:78")


@pytest.mark.parametrize("width", range(33, 90, 3))  # from the widest atom (31) plus the indent
@pytest.mark.parametrize("indent", [0, 2])
def test_wrapped_lines_fit_and_keep_each_figure_on_one_line(width: int, indent: int) -> None:
    lines = _render(Whole(PROSE, indent=indent), width)
    assert all(len(line) <= width for line in lines)
    assert all(line.startswith(" " * indent) for line in lines[1:])
    for figure in FIGURES:
        assert sum(figure in line for line in lines) == 1, (figure, lines)
    assert " ".join(" ".join(lines).split()) == " ".join(PROSE.split())  # nothing lost or added


def test_a_word_longer_than_the_line_folds_after_a_slash_and_never_inside_a_number() -> None:
    assert _render(Whole("see sample_models/decode_loop.py:78"), 20) == ["see", "sample_models/", "decode_loop.py:78"]
    lines = _render(Whole("cached at nvidia-h200_driver-580.159.04_torch-2.11.0-cu130.json"), 24)
    assert all(len(line) <= 24 for line in lines)
    assert any("580.159.04" in line for line in lines) and any("2.11.0" in line for line in lines)
    assert breaks("x" * 50, 20) == [20, 40]  # nothing soft to cut at: cut where the width runs out


def test_whole_keeps_styles_and_follows_the_columns_alignment() -> None:
    text = Text("Eager step", style="bold")
    text.append("  1.55 ms")
    out = io.StringIO()
    Console(file=out, width=12, force_terminal=True, color_system="standard").print(Whole(text))
    assert "\x1b[1mEager step" in out.getvalue()
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(justify="right", width=12)
    table.add_row(Whole("1.2 ms"))
    assert _render(table, 40) == ["      1.2 ms"]


def test_whole_parts_wraps_prose_only() -> None:
    code, prose, table = Text("x = [1, 2]", overflow="fold"), Text("8.3 µs"), Table()
    out = list(whole_parts([code, prose, table]))
    assert out[0] is code and out[2] is table and isinstance(out[1], Whole)


def test_fit_widths() -> None:
    assert fit_widths([5, 5], [10, 20], 30) == [10, 20]  # room for everything
    assert fit_widths([5, 5], [10, 20], 9) is None  # not even the minimums
    widths = fit_widths([4, 8, 3], [30, 10, 40], 40)
    assert widths is not None and sum(widths) == 40 and widths[1] == 10  # the widest give way first
    assert all(w >= lo for w, lo in zip(widths, [4, 8, 3]))
    assert fit_widths([12, 3], [12, 60], 20) == [12, 8]  # a minimum is kept even when rich would squeeze it


def test_fitted_table_is_a_table_where_it_fits_and_blocks_where_it_does_not() -> None:
    cols = [Col("Size", "right"), Col("Replay", "right"), Col("Padding")]
    rows = [["1", "107.5 µs", "same as eager"], ["24", "1934.5 µs", "DIFFERS"]]
    table = FittedTable(cols, rows, title="buckets", styles=["", "red"])
    wide = _render(table, 60)
    assert any("┃ Size ┃" in line for line in wide)
    assert any(line.startswith("│   24 │ 1934.5 µs │") for line in wide)  # right-justified, one line
    narrow = _render(table, 20)
    assert "┃" not in "".join(narrow)
    assert narrow[:5] == ["buckets", "Size 1", "  Replay: 107.5 µs", "  Padding: same as", "    eager"]
    assert "  Replay: 1934.5 µs" in narrow


def test_fitted_table_blocks_without_a_header_row_show_values_alone() -> None:
    value = "1.55 ms (p10–p90 1.50–1.76 ms, n=60)"
    table = FittedTable([Col("figure", least=20), Col("value")], [["Eager step", value]], show_header=False, box=None)
    # 20 (the label's least) + 13 ("1.50–1.76 ms,") + 4 of padding: a table from 37 columns
    assert _render(table, 36) == ["Eager step", "  1.55 ms (p10–p90 1.50–1.76 ms,", "    n=60)"]
    at_37 = _render(table, 37)
    assert at_37 == [" Eager step" + " " * 12 + "1.55 ms", " " * 23 + "(p10–p90", " " * 23 + "1.50–1.76 ms,", " " * 23 + "n=60)"]
    assert _render(table, 80) == [" Eager step" + " " * 12 + value]  # the label column keeps its least width


def test_wide_characters_in_a_one_cell_room_still_fold():
    """A CJK character is two cells wide: in a one-cell room no prefix fits, and the fold
    must still move on (it looped for ever)."""
    from launchprof.render.whole_text import _fold

    cuts = _fold("漢字漢字", 1, 1)
    assert cuts and all(b > a for a, b in zip([0, *cuts], cuts)) and cuts[-1] <= 4
