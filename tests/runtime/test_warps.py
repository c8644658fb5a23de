"""The entry points that split a loop's inner loops (`emit.warps`): one block or one warp per row, and
8 columns per block whose groups of 8 threads split each column, compute what rustc's build of the same
kernels computes (tests/runtime/data/warps.rs): integer sums, bitwise operations, min and
max bit for bit; float sums within the bound of every reassociated float reduction, n·ε·Σ|aᵢ| over the n
terms (the value before the loop one of them); and they raise the panic Rust raises first. Rows shorter
than a warp, longer and not a multiple of it, no rows and empty rows.

Tests that take `device` run on the emulated device (the generated CUDA compiled by g++, each block's
threads real threads meeting at the warp shuffles) and, under `-m gpu`, on the GPU."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

SOURCE = Path(__file__).parent / "data" / "warps.rs"
# on the emulated device (one multiprocessor, 2048 threads) up to 63 rows run a block each, more a warp each
SHAPES = [(3, 7), (70, 45), (2, 64), (5, 0), (0, 9)]
SHAPE_IDS = ["rows shorter than a warp", "70 rows of 45", "rows of two warps", "empty rows", "no rows"]


# kernels whose inner loops read each row in turn: a block per row for any number of rows (emit.warps.split_kinds)
PASSES = {"softmax", "layer_norm"}


def ran_split(device, kernel, name: str, rows: int) -> bool:
    """Whether the call ran one block per row where a warp per row would leave the device partly idle or the
    row is read more than once, one warp per row elsewhere (a launch of no iteration runs neither)."""
    if not rows:
        return kernel.last_variants == [f"rs2gpu_{name}_0"]
    blocks = rows * 32 < device.grid_threads() or name in PASSES
    return kernel.last_variants == [f"rs2gpu_{name}_0_{'blocks' if blocks else 'warps'}"]


def integers(dtype, size: int, seed: int) -> np.ndarray:
    """Values over the type's whole range, whose sums wrap."""
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, size, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("rows, cols", SHAPES, ids=SHAPE_IDS)
@pytest.mark.parametrize("name, dtype", [("row_sum_i32", np.int32), ("row_sum_u64", np.uint64)])
def test_wrapping_row_sums_are_rusts_bit_for_bit(device, rust, kernels, name, dtype, rows, cols) -> None:
    a = integers(dtype, rows * cols, rows + cols)
    want, got = np.zeros(rows, dtype), device.to_device(np.zeros(rows, dtype))
    getattr(rust, name)(a, want, cols)
    getattr(kernels, name)(device.to_device(a), got, cols)
    assert ran_split(device, getattr(kernels, name), name, rows)
    assert device.to_host(got).tobytes() == want.tobytes()


@pytest.mark.parametrize("rows, cols", SHAPES[:3], ids=SHAPE_IDS[:3])
def test_bitwise_and_min_max_rows_are_rusts_bit_for_bit(device, rust, kernels, rows, cols) -> None:
    bits = integers(np.uint32, rows * cols, 1) | integers(np.uint32, rows * cols, 2)  # the & of a row stays nonzero
    results = [[np.zeros(rows, np.uint32) for _ in range(2)] for _ in range(2)]
    rust.row_bits(bits, *results[0], cols)
    kernels.row_bits(bits, *results[1], cols)
    assert ran_split(device, kernels.row_bits, "row_bits", rows)
    assert [r.tobytes() for r in results[0]] == [r.tobytes() for r in results[1]]
    values = (np.random.default_rng(3).standard_normal(rows * cols) * 1e3).astype(np.float32)
    extremes = [[np.zeros(rows, np.float32), np.zeros(rows, np.float32), np.zeros(rows, np.int64)] for _ in range(2)]
    rust.row_extremes(values, *extremes[0], cols)
    kernels.row_extremes(values, *extremes[1], cols)
    assert ran_split(device, kernels.row_extremes, "row_extremes", rows)
    assert [r.tobytes() for r in extremes[0]] == [r.tobytes() for r in extremes[1]]


# 48 bytes a row: every row on the 16-byte grid, read in groups, with one iteration past the last group of
# the 4-byte rows; 45: a row in 16 (or 4) on it; and all rows off it, the data one element past the grid
ROW_LAYOUTS = [(70, 48, 0), (70, 45, 0), (70, 48, 1), (3, 200, 0)]
ROW_LAYOUT_IDS = ["rows on the grid", "rows of 45", "rows off the grid", "long rows"]


@pytest.mark.parametrize("rows, cols, shift", ROW_LAYOUTS, ids=ROW_LAYOUT_IDS)
def test_rows_read_sixteen_bytes_at_a_time_sum_as_rusts_bit_for_bit(device, rust, kernels, rows, cols, shift) -> None:
    a = integers(np.uint8, rows * cols, 4)
    want, got = np.zeros(rows, np.uint32), device.to_device(np.zeros(rows, np.uint32))
    rust.byte_row_sum(a, want, cols)
    kernels.byte_row_sum(device.shifted(a, shift), got, cols)
    assert ran_split(device, kernels.byte_row_sum, "byte_row_sum", rows)
    assert device.to_host(got).tobytes() == want.tobytes()


@pytest.mark.parametrize("rows, cols, shift", ROW_LAYOUTS, ids=ROW_LAYOUT_IDS)
def test_rows_read_in_groups_beside_a_vector_read_element_by_element_are_rusts_bit_for_bit(
        device, rust, kernels, rows, cols, shift) -> None:
    a = integers(np.int32, rows * cols, 5)
    w = integers(np.uint8, cols, 6)
    w[::7] = 0  # the iterations the loop continues past
    want, got = np.zeros(rows, np.int64), device.to_device(np.zeros(rows, np.int64))
    rust.weighted_row_sum(a, w, want, cols)
    kernels.weighted_row_sum(device.shifted(a, shift), device.to_device(w), got, cols)
    assert ran_split(device, kernels.weighted_row_sum, "weighted_row_sum", rows)
    assert device.to_host(got).tobytes() == want.tobytes()


@pytest.mark.parametrize("rows, cols", SHAPES[:2], ids=SHAPE_IDS[:2])
def test_conditional_combinations_and_continue_are_rusts_bit_for_bit(device, rust, kernels, rows, cols) -> None:
    a = integers(np.int64, rows * cols, 6)
    results = [[np.zeros(rows, np.int64), np.zeros(rows, np.uint32)] for _ in range(2)]
    rust.row_filtered(a, *results[0], cols)
    kernels.row_filtered(a, *results[1], cols)
    assert ran_split(device, kernels.row_filtered, "row_filtered", rows)
    assert [r.tobytes() for r in results[0]] == [r.tobytes() for r in results[1]]


def test_float_min_and_max_skip_nans_as_rusts_do(device, rust, kernels) -> None:
    rows, cols = 4, 40
    a = np.random.default_rng(4).standard_normal(rows * cols).astype(np.float32)
    a[3] = a[50] = np.nan  # a NaN in row 0 and in row 1
    a[2 * cols:3 * cols] = np.nan  # row 2 all NaN: min and max stay the values before the loop
    results = [[np.zeros(rows, np.float32), np.zeros(rows, np.float32), np.zeros(rows, np.int64)] for _ in range(2)]
    rust.row_extremes(a, *results[0], cols)
    kernels.row_extremes(a, *results[1], cols)
    assert ran_split(device, kernels.row_extremes, "row_extremes", rows)
    assert [r.tobytes() for r in results[0]] == [r.tobytes() for r in results[1]]


def reassociated_sum_bound(terms: np.ndarray) -> np.ndarray:
    """Per row of `terms` (the value before the loop among them), n·ε·Σ|aᵢ|."""
    return terms.shape[1] * np.finfo(terms.dtype).eps * np.abs(terms.astype(np.float64)).sum(axis=1)


@pytest.mark.parametrize("rows, cols", SHAPES[:4] + [(70, 1000)], ids=SHAPE_IDS[:4] + ["long rows"])
def test_a_float_row_sum_is_within_the_reassociation_bound(device, rust, kernels, rows, cols) -> None:
    a = np.random.default_rng(rows * cols).uniform(-1, 1, rows * cols).astype(np.float32)
    want, got = np.zeros(rows, np.float32), device.to_device(np.zeros(rows, np.float32))
    rust.row_sum(a, want, cols)
    kernels.row_sum(device.to_device(a), got, cols)
    assert ran_split(device, kernels.row_sum, "row_sum", rows)
    terms = np.hstack([np.zeros((rows, 1), np.float32), a.reshape(rows, cols)])
    assert np.all(np.abs(device.to_host(got).astype(np.float64) - want) <= reassociated_sum_bound(terms))


@pytest.mark.parametrize("rows, n", [(3, 7), (70, 45), (9, 300)], ids=["short rows", "70 rows of 45", "long rows"])
def test_softmax_rows_are_within_the_bound_of_their_sums(device, rust, kernels, rows, n) -> None:
    """The max is exact, so every exponential is Rust's (within the math library's few ulps on a GPU) and
    positive: the sum is within n·ε of Rust's relative to itself, and so is each quotient, plus the ulps
    of the exponential and of the division."""
    x = np.random.default_rng(n).standard_normal(rows * n).astype(np.float32) * 4
    want, got = np.zeros(rows * n, np.float32), device.to_device(np.zeros(rows * n, np.float32))
    rust.softmax(x, want, rows, n)
    kernels.softmax(device.to_device(x), got, rows, n)
    assert ran_split(device, kernels.softmax, "softmax", rows)
    eps = float(np.finfo(np.float32).eps)
    assert np.all(np.abs(device.to_host(got) - want) <= (n + 8) * eps * want)


@pytest.mark.parametrize("rows, n", [(3, 6), (70, 40), (5, 100)], ids=["short rows", "70 rows of 40", "long rows"])
def test_layer_norm_of_exactly_summed_rows_is_rusts_bit_for_bit(device, rust, kernels, rows, n) -> None:
    """Rows of small integers around an integer mean: every sum is exact in any order, so the result is
    Rust's bit for bit, the mean, the variance, the square root and the divisions included."""
    rng = np.random.default_rng(n)
    half = rng.integers(-8, 9, (rows, n // 2))
    x = rng.permuted(np.hstack([half, -half]), axis=1) + rng.integers(-4, 5, (rows, 1))
    x = x.astype(np.float32).ravel()
    gamma = rng.uniform(0.5, 2, n).astype(np.float32)
    want, got = np.zeros(rows * n, np.float32), device.to_device(np.zeros(rows * n, np.float32))
    rust.layer_norm(x, gamma, want, rows, n, 1e-5)
    kernels.layer_norm(device.to_device(x), device.to_device(gamma), got, rows, n, 1e-5)
    assert ran_split(device, kernels.layer_norm, "layer_norm", rows)
    assert device.to_host(got).tobytes() == want.tobytes()


def panic_of(call) -> rs2gpu.KernelPanic:
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        call()
    return caught.value


def test_a_row_past_the_end_of_the_input_panics_as_rust_does(rust, kernels) -> None:
    rows, cols = 10, 33
    a = np.ones(rows * cols - 5, np.float32)  # row 9 ends 5 elements past the input
    out = np.full(rows, 2.0, np.float32)
    expected = panic_of(lambda: rust.row_sum(a, out.copy(), cols))
    raised = panic_of(lambda: kernels.row_sum(a, out, cols))
    assert (raised.message, raised.location) == (expected.message, expected.location)
    assert raised.message == f"index out of bounds: the len is {a.size} but the index is {a.size}"
    assert np.all(out == 2.0)  # the host's arrays as they were


@pytest.mark.parametrize("rows, past", [(80, (5, 9)), (80, (40,)), (80, (70, 9, 5)), (20, (17, 3))],
                         ids=["rows 5 and 9", "row 40", "rows 70, 9 and 5", "a block per row: rows 17 and 3"])
def test_a_lookup_past_the_table_after_the_inner_loop_panics_in_the_first_row_that_has_one(device, rust, kernels,
                                                                                         rows, past) -> None:
    cols = 37
    a = np.random.default_rng(5).integers(0, 4, rows * cols, dtype=np.uint32)
    table = np.zeros(cols * 3 + 1, np.float32)  # every row sums to at most cols * 3
    for row in past:  # a sum past the table, a different one in each row
        a[row * cols] = 1000 + row
    out = np.full(rows, 3.0, np.float32)
    expected = panic_of(lambda: rust.row_lookup(a, table, out.copy(), cols))
    raised = panic_of(lambda: kernels.row_lookup(a, table, out, cols))
    assert ran_split(device, kernels.row_lookup, "row_lookup", rows)
    assert (raised.message, raised.location) == (expected.message, expected.location)
    first = min(past)
    assert raised.message.endswith(f"but the index is {int(a[first * cols:(first + 1) * cols].sum())}")
    assert np.all(out == 3.0)


def ran_columns(device, kernel, name: str, cols: int) -> bool:
    """Whether the call ran the columns entry point where the columns are fewer than the device holds
    threads, and one thread per column elsewhere."""
    expected = "_columns" if 0 < cols < device.grid_threads() else "_covering" if cols else ""
    return kernel.last_variants == [f"rs2gpu_{name}_0{expected}"]


@pytest.mark.parametrize("rows, cols", [(9, 7), (45, 37), (0, 5), (3, 0), (20, None)],
                         ids=["few columns", "columns of 45", "empty columns", "no columns", "enough columns"])
def test_column_sums_and_maxima_are_rusts(device, rust, kernels, rows, cols) -> None:
    cols = device.grid_threads() if cols is None else cols  # as many as the device holds threads
    a = integers(np.int32, rows * cols, rows)
    want = [np.zeros(cols, np.int32) for _ in range(2)]
    got = [device.to_device(np.zeros(cols, np.int32)) for _ in range(2)]
    rust.column_stats(a, *want, rows)
    kernels.column_stats(device.to_device(a), *got, rows)
    assert ran_columns(device, kernels.column_stats, "column_stats", cols)
    assert [device.to_host(g).tobytes() for g in got] == [w.tobytes() for w in want]
    floats = np.random.default_rng(rows).uniform(-1, 1, rows * cols).astype(np.float32)
    sums, got_sums = np.zeros(cols, np.float32), device.to_device(np.zeros(cols, np.float32))
    rust.column_sum(floats, sums, rows)
    kernels.column_sum(device.to_device(floats), got_sums, rows)
    assert ran_columns(device, kernels.column_sum, "column_sum", cols)
    terms = np.vstack([np.zeros((1, cols), np.float32), floats.reshape(rows, cols)]).T
    assert np.all(np.abs(device.to_host(got_sums).astype(np.float64) - sums) <= reassociated_sum_bound(terms))
