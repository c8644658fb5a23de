"""Ordinary Rust that rustc accepts, run on the device: coercions, `use` declarations, the integer
methods of std, stepped and reversed ranges. The kernels are tests/gpu/kernels/ordinary_rust.rs; the
expected values come from the cpu backend (rustc's build of the same file)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(__file__).resolve().parent / "kernels" / "ordinary_rust.rs"


def random(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def test_a_mut_slice_passed_to_a_helper_taking_a_shared_slice_is_reborrowed(kernels, rust):
    a, b = random(1000, 1), random(1000, 2)
    want_a, want_b = a.copy(), b.copy()
    rust.heat_steps(want_a, want_b, 3)
    kernels.heat_steps(a, b, 3)
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


def test_arrays_passed_where_a_helper_takes_a_slice_are_unsized(kernels, rust):
    x, c, d = random(300, 7), random(4, 8), random(3, 9)
    want, got = np.zeros(300), np.zeros(300)
    rust.polynomials(want, x, c, d)
    kernels.polynomials(got, x, c, d)
    assert got.tobytes() == want.tobytes()


INT_TYPES = ["u8", "i8", "i16", "u32", "i32", "u64", "i64"]


def edge_values(dtype: np.dtype, n: int, seed: int) -> np.ndarray:
    """Random values of `dtype` with its extremes, zero, one and minus one among them."""
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    edges = np.array([info.min, info.max, 0, 1, info.max // 2, info.min // 2] + ([-1] if info.min < 0 else []),
                     dtype=dtype)
    values[rng.integers(0, n, 3 * n // 4)] = rng.choice(edges, 3 * n // 4)
    return values


@pytest.mark.parametrize("ty", INT_TYPES)
def test_saturating_rotating_and_checked_methods_compute_what_rustc_does(kernels, rust, ty):
    dtype = np.dtype(ty.replace("u", "uint") if ty.startswith("u") else ty.replace("i", "int"))
    a, b = edge_values(dtype, 600, 1), edge_values(dtype, 600, 2)
    want, got = np.zeros(11 * 600, dtype), np.zeros(11 * 600, dtype)
    getattr(rust, f"int_methods_{ty}")(want, a, b)
    getattr(kernels, f"int_methods_{ty}")(got, a, b)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("step", [1, 2, 5])
def test_stepped_and_reversed_parallel_loops_run_as_rustc_runs_them(kernels, rust, step):
    a, b = random(1000, 3), random(997, 4)
    want = a.copy()
    rust.stepped_and_reversed(want, b, step)
    kernels.stepped_and_reversed(a, b, step)
    assert a.tobytes() == want.tobytes()


@pytest.mark.parametrize("step", [1, 3, 64])
def test_stepped_and_reversed_inner_loops_visit_what_rustc_visits_in_its_order(kernels, rust, step):
    b = np.random.default_rng(5).integers(-1000, 1000, 200, dtype=np.int64)
    want, got = np.zeros(200, np.int64), np.zeros(200, np.int64)
    rust.prefix_walks(want, b, step)
    kernels.prefix_walks(got, b, step)
    assert got.tobytes() == want.tobytes()


def test_names_brought_in_by_use_resolve_as_rustc_resolves_them(kernels, rust):
    r = random(500, 6)
    disc = np.array((1.5, 0.25), dtype=np.dtype([("scale", "f8"), ("offset", "f8")], align=True))
    want, got = np.zeros(500), np.zeros(500)
    rust.ring_areas(want, r, disc)
    kernels.ring_areas(got, r, disc)
    assert got.tobytes() == want.tobytes()
