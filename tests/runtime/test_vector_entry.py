"""The vector entry point (`emit.vector`): a thread runs W consecutive iterations with one 16-byte access
per slice, where the host finds the accesses aligned, and the general entry point runs otherwise. The
kernels run on an emulated device (the generated CUDA compiled by g++, `bench.emulate`) and their results
are compared with rustc's build of the same kernels (the cpu backend), bitwise: grouping iterations in a
thread changes no arithmetic but the order of a reduction's additions, and these add integers."""
from __future__ import annotations

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray, compiler, rust_and_emulated
from rs2gpu.ir.abi import EntryKind

SOURCE = """
use rs2gpu::kernel;

#[kernel]
pub fn copy(c: &mut [f64], a: &[f64]) {
    for i in 0..c.len() {
        c[i] = a[i];
    }
}

#[kernel]
pub fn scale_from(c: &mut [f64], a: &[f64], first: usize) {
    for i in first..c.len() {
        c[i] = 2.0 * a[i];
    }
}

#[kernel]
pub fn sum_min_max(v: &[i32]) -> (i32, i32, i32) {
    let mut sum = 0;
    let mut lo = i32::MAX;
    let mut hi = i32::MIN;
    for i in 0..v.len() {
        sum += v[i];
        lo = lo.min(v[i]);
        hi = hi.max(v[i]);
    }
    (sum, lo, hi)
}

#[kernel]
pub fn first_min(x: &[f64]) -> (f64, usize) {
    let mut min = x[0];
    let mut loc = 0;
    for i in 0..x.len() {
        if x[i] < min {
            min = x[i];
            loc = i;
        }
    }
    (min, loc)
}

#[kernel]
pub fn accumulate(x: &mut [f32], y: &[f32]) {
    for i in 0..x.len() {
        x[i] += 0.5 * y[i];
    }
}

#[kernel]
pub fn clamp_product(p: &mut [f64], b: &[f64], e: &[f64], cut: f64) {
    for i in 0..p.len() {
        p[i] = b[i] * e[i];
        if p[i] < cut {
            p[i] = cut;
        }
    }
}

#[kernel]
pub fn positive_part(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        if a[i] > 0.0 {
            out[i] = a[i];
        }
    }
}

#[kernel]
pub fn ramp_before(a: &mut [f64], v: f64) {
    for i in 1..a.len() + 1 {
        a[i - 1] = i as f64 * v;
    }
}

#[kernel]
pub fn differences(x: &mut [f64], y: &[f64]) {
    for i in 0..x.len() {
        x[i] = y[i + 1] - y[i];
    }
}

#[kernel]
pub fn spread_reads(x: &mut [f32], y: &[f32], z: &[f32]) {
    for i in 0..x.len() {
        x[i] = y[i] * (z[i + 2] + 0.5 * z[i + 11]);
    }
}

#[kernel]
pub fn next_of(x: &mut [f64], y: &[f64]) {
    for i in 0..x.len() {
        x[i] = y[i + 1];
    }
}

#[kernel]
pub fn eliminate(xout: &mut [f64], xin: &[f64], y: &[f64], z: &[f64]) {
    for i in 1..xout.len() {
        xout[i] = z[i] * (y[i] - xin[i - 1]);
    }
}

#[kernel]
pub fn sum_from_one(x: &mut [f64], y: &[f64]) {
    for i in 1..x.len() {
        x[i] = y[i - 1] + y[i];
    }
}

#[kernel]
pub fn halve_from_one(x: &mut [f32], y: &[f32]) {
    for i in 1..x.len() {
        x[i] = 0.5 * y[i];
    }
}

#[kernel]
pub fn smooth_from(x: &mut [f64], y: &[f64], first: usize) {
    for i in first..x.len() {
        x[i] = y[i - 1] + y[i];
    }
}

#[kernel]
pub fn fill_cube(a: &mut [f64], ni: usize, nj: usize, nk: usize) {
    for k in 0..nk {
        for j in 0..nj {
            for i in 0..ni {
                a[i + ni * (j + nj * k)] = 0.25 * i as f64 - j as f64 * k as f64;
            }
        }
    }
}

#[kernel]
pub fn rescale_rows(b: &mut [f64], n: usize, m: usize) {
    for k in 0..m {
        for j in 0..n {
            b[j + n * k] = 2.0 * b[j + k * n] + 1.0;
        }
    }
}

#[kernel]
pub fn cross(out: &mut [f64], a: &[f64], b: &[f64], n: usize, m: usize) {
    for k in 1..m - 1 {
        for j in 1..n - 1 {
            let kj = k * n + j;
            out[kj] = a[kj - n] + a[kj - 1] * b[kj] - a[kj + 1] * b[kj + n - 1] + a[kj + n];
        }
    }
}

#[kernel]
pub fn plane_total(v: &[i32], n: usize, m: usize) -> i32 {
    let mut sum = 0;
    for k in 0..m {
        for j in 0..n {
            sum += v[k * n + j];
        }
    }
    sum
}
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return rust_and_emulated(tmp_path_factory.mktemp("vector"), "vector", SOURCE)


def values(n: int, seed: int, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def test_a_copy_runs_two_iterations_per_thread_with_the_tail_in_the_general_loop(kernels) -> None:
    rust, device = kernels
    a = values(1001, 1)  # 500 whole pairs and one iteration after them
    expected, c = np.zeros(1001), np.full(1001, 7.0)
    rust.copy(expected, a)
    device.copy(c, a)
    assert device.copy.last_variants == ["rs2gpu_copy_0_vector"]
    assert c.tobytes() == expected.tobytes()
    _, grid, block = device.backend.launches[-1]
    assert grid[0] * block[0] >= 501  # a thread per pair, and one for the last iteration


def test_a_slice_at_an_address_off_the_16_byte_grid_runs_the_general_entry_point(kernels) -> None:
    rust, device = kernels
    storage = values(1001, 2)
    a = storage[1:]  # 8 bytes past an aligned allocation
    assert a.ctypes.data % 16 == 8
    expected, c = np.zeros(1000), np.zeros(1000)
    rust.copy(expected, a)
    device.copy(EmulatedDeviceArray(c), EmulatedDeviceArray(a))
    assert device.copy.last_variants == ["rs2gpu_copy_0"]
    assert c.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("first", "entry"), [(4, "rs2gpu_scale_from_0_vector"), (3, "rs2gpu_scale_from_0")])
def test_a_loop_starting_off_a_whole_group_runs_the_general_entry_point(kernels, first: int, entry: str) -> None:
    rust, device = kernels
    a = values(999, 3)
    expected, c = np.full(999, -1.0), np.full(999, -1.0)
    rust.scale_from(expected, a, first)
    device.scale_from(c, a, first)
    assert device.scale_from.last_variants == [entry]
    assert c.tobytes() == expected.tobytes()  # the elements before `first` untouched on both


def test_an_integer_reduction_reads_four_elements_per_load(kernels) -> None:
    rust, device = kernels
    v = np.random.default_rng(4).integers(-1000, 1000, 40_003, dtype=np.int32)
    assert device.sum_min_max(v) == rust.sum_min_max(v)
    assert device.sum_min_max.last_variants == ["rs2gpu_sum_min_max_0_vector"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 4096, 8192, 8194, 40_001])
def test_a_location_reduction_keeps_the_first_of_equal_minima(kernels, n: int) -> None:
    rust, device = kernels
    # a few distinct values over many elements: the least occurs many times, in many threads' groups; on
    # the emulated device's grid of 2048 threads, 4096 elements make one group per thread, 8192 two (one
    # pass of two groups), 8194 a pass of two and a last group alone for the first thread
    x = np.random.default_rng(n).integers(0, 5, n).astype(np.float64)
    assert device.first_min(x) == rust.first_min(x)
    assert device.first_min.last_variants == ["rs2gpu_first_min_0_vector"]


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 4099])
def test_an_update_of_f32_in_place_loads_and_stores_four_lanes(kernels, n: int) -> None:
    rust, device = kernels
    y = values(n, 5, np.float32)
    expected, x = values(n, 6, np.float32), values(n, 6, np.float32)
    rust.accumulate(expected, y)
    device.accumulate(x, y)
    assert x.tobytes() == expected.tobytes()
    if n:  # (an empty range launches nothing)
        assert device.accumulate.last_variants == ["rs2gpu_accumulate_0_vector"]


def test_conditional_writes_after_a_write_of_the_whole_lane_need_no_load(kernels) -> None:
    rust, device = kernels
    b, e = values(2050, 7), values(2050, 8)
    expected, p = np.zeros(2050), np.zeros(2050)
    rust.clamp_product(expected, b, e, -0.25)
    device.clamp_product(p, b, e, -0.25)
    assert device.clamp_product.last_variants == ["rs2gpu_clamp_product_0_vector"]
    assert p.tobytes() == expected.tobytes()


def test_a_slice_written_only_under_a_condition_has_no_vector_entry_point(kernels) -> None:
    rust, device = kernels
    a = values(1000, 9)
    expected, out = np.full(1000, 3.0), np.full(1000, 3.0)
    rust.positive_part(expected, a)
    device.positive_part(out, a)
    assert device.positive_part.last_variants == ["rs2gpu_positive_part_0"]
    assert out.tobytes() == expected.tobytes()  # the elements it skips keep their values


@pytest.mark.parametrize("n", [1, 2, 999, 1000])
def test_a_slice_written_at_one_offset_from_the_loop_variable_is_stored_in_lanes(kernels, n: int) -> None:
    rust, device = kernels
    expected, a = np.zeros(n), np.zeros(n)
    rust.ramp_before(expected, 0.25)
    device.ramp_before(a, 0.25)
    # the loop starts at 1, and `a[i - 1]` puts the first lane at element 0: aligned
    assert device.ramp_before.last_variants == ["rs2gpu_ramp_before_0_vector"]
    assert a.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1001])
def test_reads_at_two_offsets_load_the_lanes_and_the_element_after_them(kernels, n: int) -> None:
    rust, device = kernels
    y = values(n + 1, 10)
    expected, x = np.zeros(n), np.zeros(n)
    rust.differences(expected, y)
    device.differences(x, y)
    assert device.differences.last_variants == ["rs2gpu_differences_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 4, 4097])
def test_reads_more_than_a_group_apart_load_the_lanes_and_the_elements_the_last_lanes_read(kernels, n: int) -> None:
    rust, device = kernels
    # four f32 lanes at z[i + 4], in step with x's; z[i + 2] of the first two lanes and z[i + 11] of every
    # lane read on its own; z exactly as long as the last iteration needs, so a read past what some lane
    # reads would be out of bounds
    y, z = values(n, 11, np.float32), values(n + 11, 12, np.float32)
    assert z.ctypes.data % 16 == 0
    expected, x = np.zeros(n, np.float32), np.zeros(n, np.float32)
    rust.spread_reads(expected, y, z)
    device.spread_reads(EmulatedDeviceArray(x), EmulatedDeviceArray(y), EmulatedDeviceArray(z))  # used in place
    assert device.spread_reads.last_variants == ["rs2gpu_spread_reads_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("first", "entry"), [(2, "rs2gpu_smooth_from_0_vector"), (1, "rs2gpu_smooth_from_0_covering")])
def test_the_lanes_of_a_slice_read_at_two_offsets_keep_in_step_with_the_stored_ones(kernels, first: int,
                                                                                   entry: str) -> None:
    rust, device = kernels
    # x's lanes at x[i] and y's at y[i] (y[i - 1] of the first lane read on its own): aligned together where
    # `first` is even, and neither where it is odd (a start the kernel cannot know, so no head)
    y = values(1000, 13)
    expected, x = np.full(1000, -1.0), np.full(1000, -1.0)
    rust.smooth_from(expected, y, first)
    device.smooth_from(x, y, first)
    assert device.smooth_from.last_variants == [entry]
    assert x.tobytes() == expected.tobytes()


def test_pointers_off_the_grid_by_the_same_bytes_are_made_good_by_the_start(kernels) -> None:
    rust, device = kernels
    # both slices 8 bytes past an aligned address: from first = 1 on, x[1] and y[1] are on the 16-byte grid
    xs, ys = np.full(1001, -1.0), values(1001, 14)
    x, y = xs[1:], ys[1:]
    assert x.ctypes.data % 16 == 8 and y.ctypes.data % 16 == 8
    expected = np.full(1000, -1.0)
    rust.smooth_from(expected, y, 1)
    device.smooth_from(EmulatedDeviceArray(x), EmulatedDeviceArray(y), 1)
    assert device.smooth_from.last_variants == ["rs2gpu_smooth_from_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [2, 3, 4, 63, 64, 65, 66, 67, 1000, 1001])
def test_a_loop_from_a_literal_start_runs_the_iterations_before_the_first_aligned_group_alone(kernels,
                                                                                              n: int) -> None:
    rust, device = kernels
    # `for i in 1..n`: x[1..64] one by one (x[64] starts a 512-byte line of an allocation), then x[64..66],
    # x[66..68], ... in groups; up to n = 64 only the head
    y = values(n, 15)
    expected, x = np.full(n, -1.0), np.full(n, -1.0)
    rust.sum_from_one(expected, y)
    device.sum_from_one(x, y)
    assert device.sum_from_one.last_variants == ["rs2gpu_sum_from_one_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [2, 3, 4, 5, 127, 128, 129, 130, 133, 4099])
def test_a_head_of_127_f32_iterations_covers_loops_shorter_than_it(kernels, n: int) -> None:
    rust, device = kernels
    # four f32 lanes: x[1..128] run alone, then groups from x[128] (512 bytes in); 1 to 127 iterations run
    # only the head
    y = values(n, 16, np.float32)
    expected, x = np.full(n, -1.0, np.float32), np.full(n, -1.0, np.float32)
    rust.halve_from_one(expected, y)
    device.halve_from_one(x, y)
    assert device.halve_from_one.last_variants == ["rs2gpu_halve_from_one_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1001])
def test_a_loop_reading_a_slice_out_of_step_with_its_stores_runs_one_thread_per_iteration(kernels, n: int) -> None:
    rust, device = kernels
    # y[i + 1] only, y exactly n + 1 long: lanes in step with x's would load y[n + 1] in the last group, and
    # a group would read each lane's y[i + 1] on its own; the covering entry point reads one per thread
    assert device.next_of.entry.launches[0].entry(EntryKind.VECTOR) is None
    ys = values(n + 2, 17)
    y = ys[1:]
    expected, x = np.zeros(n), np.zeros(n)
    rust.next_of(expected, y)
    device.next_of(EmulatedDeviceArray(x), EmulatedDeviceArray(y))
    assert device.next_of.last_variants == ["rs2gpu_next_of_0_covering"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [2, 3, 4, 255, 256, 257, 1000, 1001])
def test_a_loop_from_one_storing_at_its_variable_starts_its_warps_at_multiples_of_32(kernels, n: int) -> None:
    rust, device = kernels
    # TRIDIAG_ELIM's shape: xin[i - 1] only, xin exactly as long as the loop reads (n - 1 elements). Its
    # covering grid starts with one idle thread, so thread t runs i = t; n = 256 fills one block, 257 takes two
    launch = device.eliminate.entry.launches[0]
    assert launch.entry(EntryKind.VECTOR) is None and launch.entry(EntryKind.COVERING).grid.lead == 1
    z, y, xin = values(n, 18), values(n, 19), values(n - 1, 20)
    expected, xout = np.full(n, -1.0), np.full(n, -1.0)
    rust.eliminate(expected, xin, y, z)
    device.eliminate(xout, xin, y, z)
    assert device.eliminate.last_variants == ["rs2gpu_eliminate_0_covering"]
    assert xout.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("ni", "nj", "nk"), [(8, 3, 2), (2, 1, 1), (1, 4, 3), (101, 5, 3)])
def test_a_nest_stores_each_row_in_groups_where_it_lies_on_the_16_byte_grid(kernels, ni: int, nj: int,
                                                                          nk: int) -> None:
    rust, device = kernels
    # rows of ni doubles: all on the grid for an even ni; for ni = 101 every other row is 8 bytes off it,
    # and that row's threads run its iterations two each; ni = 1: no whole group anywhere
    expected, a = np.full(ni * nj * nk, 7.0), np.full(ni * nj * nk, 7.0)
    rust.fill_cube(expected, ni, nj, nk)
    device.fill_cube(a, ni, nj, nk)
    assert device.fill_cube.last_variants == ["rs2gpu_fill_cube_0_vector"]
    assert a.tobytes() == expected.tobytes()


def test_a_nest_over_a_slice_off_the_grid_stores_its_rows_element_by_element(kernels) -> None:
    rust, device = kernels
    storage = np.full(8 * 3 * 2 + 1, 7.0)
    a = storage[1:]  # every row 8 bytes off the grid
    assert a.ctypes.data % 16 == 8
    expected = np.full(8 * 3 * 2, 7.0)
    rust.fill_cube(expected, 8, 3, 2)
    device.fill_cube(EmulatedDeviceArray(a), 8, 3, 2)
    assert device.fill_cube.last_variants == ["rs2gpu_fill_cube_0_vector"]
    assert a.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("n", "m"), [(10, 6), (11, 6), (1, 3)])
def test_a_stored_slice_whose_row_is_spelled_two_ways_is_one_stream(kernels, n: int, m: int) -> None:
    rust, device = kernels
    # `n * k` and `k * n` are one row: the slice is loaded and stored in the same groups
    expected, b = values(n * m, 23), values(n * m, 23)
    rust.rescale_rows(expected, n, m)
    device.rescale_rows(b, n, m)
    assert device.rescale_rows.last_variants == ["rs2gpu_rescale_rows_0_vector"]
    assert b.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("n", "m"), [(10, 6), (11, 6), (3, 3), (4, 5), (5, 4), (64, 9)])
def test_a_stencil_nest_reads_rows_above_and_below_as_streams_of_their_own(kernels, n: int, m: int) -> None:
    rust, device = kernels
    # HYDRO_2D's shape through `let kj = k * n + j`: rows k - 1, k and k + 1 of a; j from 1, so each row
    # runs j = 1 alone and its groups from j = 2; an odd n puts every other row's stores off the grid,
    # and a's rows above and below then off the grid in the groups of the rows on it
    a, b = values(n * m, 21), values(n * m, 22)
    expected, out = np.full(n * m, -1.0), np.full(n * m, -1.0)
    rust.cross(expected, a, b, n, m)
    device.cross(out, a, b, n, m)
    assert device.cross.last_variants == ["rs2gpu_cross_0_vector"]
    assert out.tobytes() == expected.tobytes()


def test_a_nest_with_a_reduction_has_no_vector_entry_point(kernels) -> None:
    rust, device = kernels
    # a nest's vector form runs one thread per group on a grid that covers them; a reduction's grid is
    # capped at a few blocks per multiprocessor, its threads striding over the iterations
    assert device.plane_total.entry.launches[0].entry(EntryKind.VECTOR) is None
    v = np.random.default_rng(5).integers(-1000, 1000, 1000 * 3, dtype=np.int32)
    assert device.plane_total(v, 1000, 3) == rust.plane_total(v, 1000, 3)
    assert device.plane_total.last_variants == ["rs2gpu_plane_total_0"]
