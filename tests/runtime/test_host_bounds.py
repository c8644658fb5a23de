"""The host's search for the first failing iteration of an access (runtime/bounds.py) against the plain
definition: walk the loop offsets in Rust's order (the first dimension slowest), compute the index as
Rust does (usize arithmetic, modulo 2^64), stop at the first one out of bounds."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from rs2gpu.runtime.bounds import U64, first_failing_offsets

SEEDS = range(300)


def first_by_walking(base: int, coefficients: list[int], extents: list[int], length: int):
    for offsets in itertools.product(*(range(n) for n in extents)):
        if (base + sum(c * x for c, x in zip(coefficients, offsets))) % U64 >= length:
            return list(offsets)
    return None


@pytest.mark.parametrize("seed", SEEDS)
def test_the_first_failing_offsets_are_those_a_walk_in_rusts_order_meets_first(seed: int) -> None:
    rng = np.random.default_rng(seed)
    dims = int(rng.integers(1, 4))
    extents = [int(n) for n in rng.integers(1, 7, dims)]
    coefficients = [int(c) for c in rng.integers(-6, 7, dims)]
    length = int(rng.integers(0, 40))
    base = int(rng.integers(-10, 40))
    expected = first_by_walking(base, coefficients, extents, length)
    assert first_failing_offsets(base, coefficients, extents, length) == expected


@pytest.mark.parametrize("seed", range(60))
def test_indices_that_cross_a_multiple_of_2_64_are_found_as_rust_wraps_them(seed: int) -> None:
    rng = np.random.default_rng([seed, 64])
    dims = int(rng.integers(1, 3))
    extents = [int(n) for n in rng.integers(1, 6, dims)]
    # strides near 2^62 and 2^63: some wrapped indices land back inside the slice
    coefficients = [int(rng.choice([1 << 62, 1 << 63, (1 << 64) - 1, 3])) for _ in range(dims)]
    length, base = int(rng.integers(1, 10)), int(rng.integers(0, 4))
    expected = first_by_walking(base, coefficients, extents, length)
    assert first_failing_offsets(base, coefficients, extents, length) == expected


def test_an_access_in_bounds_everywhere_has_no_failure() -> None:
    assert first_failing_offsets(0, [1, 10], [10, 3], 30) is None
    assert first_failing_offsets(4 << 62, [1 << 62], [1], 1) is None  # 2^64 wraps to 0


def test_a_scan_longer_than_one_chunk_stops_at_the_first_failure() -> None:
    # the first coefficient is -1 modulo 2^64, so the range crosses 2^64 and the indices are computed one by one
    coefficients, extents, length = [U64 - 1, 3], [2, 400_000], 1_000_000
    assert first_failing_offsets(0, coefficients, extents, length) == [0, 333_334]
    assert first_by_walking(0, coefficients, extents, length) == [0, 333_334]
