"""bench/ab.py's table: each side's passes in run order, the earlier commit first."""
from __future__ import annotations

from bench.ab import ab_table


def row(kernel: str, size: str, hand: float | None, gen: float | None, rep: float | None = None) -> dict:
    return {"kernel": kernel, "size_label": size, "hand_us": hand, "gen_us": gen, "gen_rep_us": rep}


def table_rows(text: str) -> dict[tuple[str, str], list[str]]:
    cells = [line.strip("|").split(" | ") for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    return {(c[0].strip(), c[1].strip()): [x.strip() for x in c[2:]] for c in cells[1:]}


def test_each_column_lists_the_base_passes_then_the_new_ones_in_run_order():
    passes = [("old", 1, [row("COPY", "100x", 412.0, 376.0, 375.3)]),
              ("new", 1, [row("COPY", "100x", 400.5, 362.0, 374.1)]),
              ("old", 2, [row("COPY", "100x", 411.5, 377.2, 375.0)]),
              ("new", 2, [row("COPY", "100x", 401.0, 361.5, 373.9)])]
    got = table_rows(ab_table("old", "new", passes))
    assert got[("COPY", "100x")] == ["412.0, 411.5 → 400.5, 401.0", "376.0, 377.2 → 362.0, 361.5",
                                     "375.3, 375.0 → 374.1, 373.9"]


def test_a_figure_a_run_did_not_measure_shows_as_a_dash():
    passes = [("old", 1, [row("TRIAD", "default", None, None)]), ("new", 1, [row("TRIAD", "default", 10.5, 10.4)])]
    got = table_rows(ab_table("old", "new", passes))
    assert got[("TRIAD", "default")][:2] == ["– → 10.5", "– → 10.4"]


def test_a_row_only_one_side_ran_keeps_the_other_side_empty():
    passes = [("old", 1, [row("DOT", "default", 32.9, 26.2)]),
              ("new", 1, [row("DOT", "default", 32.0, 25.0), row("VOL3D", "100x", 1311.0, 1395.0)])]
    got = table_rows(ab_table("old", "new", passes))
    assert got[("VOL3D", "100x")][:2] == ["– → 1,311.0", "– → 1,395.0"]
    assert list(got) == [("DOT", "default"), ("VOL3D", "100x")]
