"""The one formatter: one unit rule per kind of figure, and the ASCII spelling of symbols."""

from __future__ import annotations

import pytest

from launchprof.render.words import format as fmt
from launchprof.model.step_timing import Stats


@pytest.mark.parametrize(
    ("us", "text"),
    [(0.84, "0.8 µs"), (712.509, "712.5 µs"), (999.94, "999.9 µs"), (1000.0, "1.00 ms"), (1934.5, "1.93 ms"), (5610.6, "5.61 ms"), (2_500_000.0, "2.50 s"), (None, "—"), (float("nan"), "—")],
)
def test_duration_one_rule(us: float | None, text: str) -> None:
    assert fmt.duration(us) == text


def test_stats_range_in_the_medians_unit() -> None:
    assert fmt.stats(Stats(median=5610.6, p10=892.5, p90=6037.9, n=37)) == "5.61 ms (p10–p90 0.89–6.04 ms, n=37)"
    assert fmt.stats(Stats(median=712.5, p10=676.2, p90=1754.0, n=25)) == "712.5 µs (p10–p90 676.2–1754.0 µs, n=25)"
    assert fmt.stats(None) == "—"


def test_ratios_intervals_and_speedups() -> None:
    assert fmt.ratio(8.1207) == "8.12×"
    assert fmt.interval(7.9007, 8.4107) == "7.90–8.41×"
    assert fmt.speedup(2.3156, 2.2741, 2.3522) == "2.32× (95% interval 2.27–2.35×)"
    assert fmt.speedup(2.3156) == "2.32×"
    assert fmt.speedup(None, 1.0, 2.0) == "—"


@pytest.mark.parametrize(("n", "text"), [(512, "512 B"), (2048, "2.0 KiB"), (35_651_584, "34.0 MiB"), (3 * 2**30, "3.0 GiB"), (None, "—")])
def test_sizes_in_binary_units(n: int | None, text: str) -> None:
    assert fmt.size(n) == text


def test_percent_count_replays_diff() -> None:
    assert fmt.percent(0.9431) == "94.3%"
    assert fmt.count(20000) == "20,000" and fmt.count(1.5) == "1.5" and fmt.count(3.0) == "3"
    assert fmt.replays(0.2754) == "0.3" and fmt.replays(1234.4) == "1,234"
    assert fmt.diff(0.3781585) == "0.378" and fmt.diff(0.0) == "0"


def test_to_ascii_spells_symbols_boxes_and_emoji() -> None:
    text = "✅ 2.32× · 712.5 µs → 1.93 ms — ╭─│╮ 🔴 error… 名"
    out = fmt.to_ascii(text)
    assert out.isascii()
    assert out == "[ok] 2.32x - 712.5 us -> 1.93 ms - +-|+ [E] error... ?"
