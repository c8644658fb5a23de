"""The windows of list values whose reads through an index list are all in bounds (runtime/listwindows.py).

The reference is the definition: a base b is in the window exactly when every read (b + offset) mod 2^64
is below the slice's length, as Rust's wrapping usize arithmetic computes the reads' indices.
"""
from __future__ import annotations

import random

import pytest

from rs2gpu.runtime.listwindows import WORD, read_window


def all_in_bounds(base: int, offsets: list[int], length: int) -> bool:
    return all((base + offset) % WORD < length for offset in offsets)


def in_window(base: int, window: tuple[int, int]) -> bool:
    low, width = window
    return (base - low) % WORD < width  # `rs2gpu_in_window`


def candidates(offsets: list[int], length: int, rng: random.Random) -> list[int]:
    """The bases where the answer can change (each read's first and last valid base, and their
    neighbours), and random ones."""
    edges = [(-offset + d) % WORD for offset in offsets for d in (-1, 0, 1, length - 1, length, length + 1)]
    return edges + [rng.randrange(WORD) for _ in range(50)]


CASES = {
    "zonal corners": ([0, 1, 10, 11, 100, 101, 110, 111], 1000),
    "stencil below and above": ([-111, -110, -1, 0, 1, 110, 111], 2000),
    "one read": ([5], 10),
    "wrapping below zero": ([-1], 10),  # x[i - 1]: base 0 reads the largest index
    "huge offset": ([WORD - 3, 2], 10),  # x[i + usize::MAX - 2] is x[i - 3]
    "spread wider than the slice": ([0, 20], 10),
    "spread equal to the slice": ([0, 10], 10),
    "empty slice": ([0, 1], 0),
    "offsets around the top": ([2**63, 2**63 + 4], 100),
}


@pytest.mark.parametrize("offsets, length", CASES.values(), ids=CASES.keys())
def test_a_base_is_in_the_window_exactly_when_every_read_is_in_bounds(offsets, length) -> None:
    window = read_window(offsets, length)
    rng = random.Random(length)
    for base in candidates(offsets, length, rng):
        assert in_window(base, window) == all_in_bounds(base, offsets, length), base


def test_random_offsets_and_lengths_agree_with_the_definition() -> None:
    rng = random.Random(1)
    for _ in range(300):
        length = rng.choice([1, 2, 7, 1000, 2**40, 2**63])
        offsets = [rng.choice([rng.randrange(-50, 50), rng.randrange(WORD)]) for _ in range(rng.randrange(1, 6))]
        window = read_window(offsets, length)
        for base in candidates(offsets, length, rng):
            assert in_window(base, window) == all_in_bounds(base, offsets, length), (offsets, length, base)


def test_reads_that_can_never_all_be_in_bounds_have_an_empty_window() -> None:
    assert read_window([0, 20], 10)[1] == 0
