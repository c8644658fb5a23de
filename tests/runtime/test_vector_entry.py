"""The vector entry point (`emit.vector`): a thread runs W consecutive iterations with one 16-byte access
per slice, where the host finds the accesses aligned, and the general entry point runs otherwise. The
kernels (tests/runtime/data/vector_entry.rs, and those of examples/rajaperf that are exactly the loops a
test needs) run on an emulated device of this module's own (the generated CUDA compiled by g++,
`bench.emulate`) and their results are compared with rustc's build of the same kernels (the cpu backend),
bitwise: grouping iterations in a thread changes no arithmetic but the order of a reduction's additions,
and these add integers."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray
from rs2gpu.ir.abi import EntryKind
from tests.support.devices import EmulatedDevice, rustc_build
from tests.support.paths import RAJAPERF

SOURCE = Path(__file__).parent / "data" / "vector_entry.rs"


@pytest.fixture(scope="module")
def emulated_device(tmp_path_factory: pytest.TempPathFactory) -> EmulatedDevice:
    """This module's own emulated device, in place of the session's: the `emulated` fixture (tests/conftest.py)
    loads `SOURCE` on it and `rajaperf_kernels` RAJAPerf's, so that the entry points they run, and their
    launches, follow from this module's calls alone."""
    return EmulatedDevice(tmp_path_factory.mktemp("vector"))


@pytest.fixture(scope="module")
def rajaperf_kernels(emulated_device):
    """(rustc's build, the emulated device's) of RAJAPerf's kernels: COPY, REDUCE3_INT, FIRST_MIN,
    INIT_VIEW1D_OFFSET, FIRST_DIFF, FIRST_SUM and TRIDIAG_ELIM."""
    return rustc_build(RAJAPERF), emulated_device.load(RAJAPERF)


def values(n: int, seed: int, dtype=np.float64) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(dtype)


def test_a_copy_runs_two_iterations_per_thread_with_the_tail_in_the_general_loop(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    a = values(1001, 1)  # 500 whole pairs and one iteration after them
    expected, c = np.zeros(1001), np.full(1001, 7.0)
    rust.copy(expected, a)
    device.copy(c, a)
    assert device.copy.last_variants == ["rs2gpu_copy_0_vector"]
    assert c.tobytes() == expected.tobytes()
    _, grid, block = device.backend.launches[-1]
    assert grid[0] * block[0] >= 501  # a thread per pair, and one for the last iteration


def test_a_slice_at_an_address_off_the_16_byte_grid_runs_the_general_entry_point(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    storage = values(1001, 2)
    a = storage[1:]  # 8 bytes past an aligned allocation
    assert a.ctypes.data % 16 == 8
    expected, c = np.zeros(1000), np.zeros(1000)
    rust.copy(expected, a)
    device.copy(EmulatedDeviceArray(c), EmulatedDeviceArray(a))
    assert device.copy.last_variants == ["rs2gpu_copy_0"]
    assert c.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("first", "entry"), [(4, "rs2gpu_scale_from_0_vector"), (3, "rs2gpu_scale_from_0")])
def test_a_loop_starting_off_a_whole_group_runs_the_general_entry_point(rust, emulated, first: int, entry: str) -> None:
    a = values(999, 3)
    expected, c = np.full(999, -1.0), np.full(999, -1.0)
    rust.scale_from(expected, a, first)
    emulated.scale_from(c, a, first)
    assert emulated.scale_from.last_variants == [entry]
    assert c.tobytes() == expected.tobytes()  # the elements before `first` untouched on both


def test_an_integer_reduction_reads_four_elements_per_load(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    v = np.random.default_rng(4).integers(-1000, 1000, 40_003, dtype=np.int32)
    assert device.reduce3_int(v) == rust.reduce3_int(v)
    assert device.reduce3_int.last_variants == ["rs2gpu_reduce3_int_0_vector"]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 4096, 8192, 8194, 40_001])
def test_a_location_reduction_keeps_the_first_of_equal_minima(rajaperf_kernels, n: int) -> None:
    rust, device = rajaperf_kernels
    # a few distinct values over many elements: the least occurs many times, in many threads' groups; on
    # the emulated device's grid of 2048 threads, 4096 elements make one group per thread, 8192 two (one
    # pass of two groups), 8194 a pass of two and a last group alone for the first thread
    x = np.random.default_rng(n).integers(0, 5, n).astype(np.float64)
    assert device.first_min(x) == rust.first_min(x)
    assert device.first_min.last_variants == ["rs2gpu_first_min_0_vector"]


@pytest.mark.parametrize("n", [0, 1, 3, 4, 7, 4099])
def test_an_update_of_f32_in_place_loads_and_stores_four_lanes(rust, emulated, n: int) -> None:
    y = values(n, 5, np.float32)
    expected, x = values(n, 6, np.float32), values(n, 6, np.float32)
    rust.accumulate(expected, y)
    emulated.accumulate(x, y)
    assert x.tobytes() == expected.tobytes()
    if n:  # (an empty range launches nothing)
        assert emulated.accumulate.last_variants == ["rs2gpu_accumulate_0_vector"]


def test_conditional_writes_after_a_write_of_the_whole_lane_need_no_load(rust, emulated) -> None:
    b, e = values(2050, 7), values(2050, 8)
    expected, p = np.zeros(2050), np.zeros(2050)
    rust.clamp_product(expected, b, e, -0.25)
    emulated.clamp_product(p, b, e, -0.25)
    assert emulated.clamp_product.last_variants == ["rs2gpu_clamp_product_0_vector"]
    assert p.tobytes() == expected.tobytes()


def test_a_slice_written_only_under_a_condition_has_no_vector_entry_point(rust, emulated) -> None:
    a = values(1000, 9)
    expected, out = np.full(1000, 3.0), np.full(1000, 3.0)
    rust.positive_part(expected, a)
    emulated.positive_part(out, a)
    assert emulated.positive_part.last_variants == ["rs2gpu_positive_part_0"]
    assert out.tobytes() == expected.tobytes()  # the elements it skips keep their values


@pytest.mark.parametrize("n", [1, 2, 999, 1000])
def test_a_slice_written_at_one_offset_from_the_loop_variable_is_stored_in_lanes(rajaperf_kernels, n: int) -> None:
    rust, device = rajaperf_kernels
    expected, a = np.zeros(n), np.zeros(n)
    rust.init_view1d_offset(expected, 0.25)
    device.init_view1d_offset(a, 0.25)
    # the loop starts at 1, and `a[i - 1]` puts the first lane at element 0: aligned
    assert device.init_view1d_offset.last_variants == ["rs2gpu_init_view1d_offset_0_vector"]
    assert a.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1001])
def test_reads_at_two_offsets_load_the_lanes_and_the_element_after_them(rajaperf_kernels, n: int) -> None:
    rust, device = rajaperf_kernels
    y = values(n + 1, 10)
    expected, x = np.zeros(n), np.zeros(n)
    rust.first_diff(expected, y)
    device.first_diff(x, y)
    assert device.first_diff.last_variants == ["rs2gpu_first_diff_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 4, 4097])
def test_reads_more_than_a_group_apart_load_the_lanes_and_the_elements_the_last_lanes_read(rust, emulated,
                                                                                           n: int) -> None:
    # four f32 lanes at z[i + 4], in step with x's; z[i + 2] of the first two lanes and z[i + 11] of every
    # lane read on its own; z exactly as long as the last iteration needs, so a read past what some lane
    # reads would be out of bounds
    y, z = values(n, 11, np.float32), values(n + 11, 12, np.float32)
    assert z.ctypes.data % 16 == 0
    expected, x = np.zeros(n, np.float32), np.zeros(n, np.float32)
    rust.spread_reads(expected, y, z)
    emulated.spread_reads(EmulatedDeviceArray(x), EmulatedDeviceArray(y), EmulatedDeviceArray(z))  # used in place
    assert emulated.spread_reads.last_variants == ["rs2gpu_spread_reads_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("first", "entry"), [(2, "rs2gpu_smooth_from_0_vector"), (1, "rs2gpu_smooth_from_0_covering")])
def test_the_lanes_of_a_slice_read_at_two_offsets_keep_in_step_with_the_stored_ones(rust, emulated, first: int,
                                                                                   entry: str) -> None:
    # x's lanes at x[i] and y's at y[i] (y[i - 1] of the first lane read on its own): aligned together where
    # `first` is even, and neither where it is odd (a start the kernel cannot know, so no head)
    y = values(1000, 13)
    expected, x = np.full(1000, -1.0), np.full(1000, -1.0)
    rust.smooth_from(expected, y, first)
    emulated.smooth_from(x, y, first)
    assert emulated.smooth_from.last_variants == [entry]
    assert x.tobytes() == expected.tobytes()


def test_pointers_off_the_grid_by_the_same_bytes_are_made_good_by_the_start(rust, emulated) -> None:
    # both slices 8 bytes past an aligned address: from first = 1 on, x[1] and y[1] are on the 16-byte grid
    xs, ys = np.full(1001, -1.0), values(1001, 14)
    x, y = xs[1:], ys[1:]
    assert x.ctypes.data % 16 == 8 and y.ctypes.data % 16 == 8
    expected = np.full(1000, -1.0)
    rust.smooth_from(expected, y, 1)
    emulated.smooth_from(EmulatedDeviceArray(x), EmulatedDeviceArray(y), 1)
    assert emulated.smooth_from.last_variants == ["rs2gpu_smooth_from_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [2, 3, 4, 63, 64, 65, 66, 67, 1000, 1001])
def test_a_loop_from_a_literal_start_runs_the_iterations_before_the_first_aligned_group_alone(rajaperf_kernels,
                                                                                              n: int) -> None:
    rust, device = rajaperf_kernels
    # `for i in 1..n`: x[1..64] one by one (x[64] starts a 512-byte line of an allocation), then x[64..66],
    # x[66..68], ... in groups; up to n = 64 only the head
    y = values(n, 15)
    expected, x = np.full(n, -1.0), np.full(n, -1.0)
    rust.first_sum(expected, y)
    device.first_sum(x, y)
    assert device.first_sum.last_variants == ["rs2gpu_first_sum_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [2, 3, 4, 5, 127, 128, 129, 130, 133, 4099])
def test_a_head_of_127_f32_iterations_covers_loops_shorter_than_it(rust, emulated, n: int) -> None:
    # four f32 lanes: x[1..128] run alone, then groups from x[128] (512 bytes in); 1 to 127 iterations run
    # only the head
    y = values(n, 16, np.float32)
    expected, x = np.full(n, -1.0, np.float32), np.full(n, -1.0, np.float32)
    rust.halve_from_one(expected, y)
    emulated.halve_from_one(x, y)
    assert emulated.halve_from_one.last_variants == ["rs2gpu_halve_from_one_0_vector"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 1001])
def test_a_loop_reading_a_slice_out_of_step_with_its_stores_runs_one_thread_per_iteration(rust, emulated,
                                                                                          n: int) -> None:
    # y[i + 1] only, y exactly n + 1 long: lanes in step with x's would load y[n + 1] in the last group, and
    # a group would read each lane's y[i + 1] on its own; the covering entry point reads one per thread
    assert emulated.next_of.entry.launches[0].entry(EntryKind.VECTOR) is None
    ys = values(n + 2, 17)
    y = ys[1:]
    expected, x = np.zeros(n), np.zeros(n)
    rust.next_of(expected, y)
    emulated.next_of(EmulatedDeviceArray(x), EmulatedDeviceArray(y))
    assert emulated.next_of.last_variants == ["rs2gpu_next_of_0_covering"]
    assert x.tobytes() == expected.tobytes()


@pytest.mark.parametrize("n", [2, 3, 4, 255, 256, 257, 1000, 1001])
def test_a_loop_from_one_storing_at_its_variable_starts_its_warps_at_multiples_of_32(rajaperf_kernels, n: int) -> None:
    rust, device = rajaperf_kernels
    # TRIDIAG_ELIM: xin[i - 1] only, xin exactly as long as the loop reads (n - 1 elements). Its
    # covering grid starts with one idle thread, so thread t runs i = t; n = 256 fills one block, 257 takes two
    launch = device.tridiag_elim.entry.launches[0]
    assert launch.entry(EntryKind.VECTOR) is None and launch.entry(EntryKind.COVERING).grid.lead == 1
    z, y, xin = values(n, 18), values(n, 19), values(n - 1, 20)
    expected, xout = np.full(n, -1.0), np.full(n, -1.0)
    rust.tridiag_elim(expected, xin, y, z)
    device.tridiag_elim(xout, xin, y, z)
    assert device.tridiag_elim.last_variants == ["rs2gpu_tridiag_elim_0_covering"]
    assert xout.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("ni", "nj", "nk"), [(8, 3, 2), (2, 1, 1), (1, 4, 3), (101, 5, 3)])
def test_a_nest_stores_each_row_in_groups_where_it_lies_on_the_16_byte_grid(rust, emulated, ni: int, nj: int,
                                                                          nk: int) -> None:
    # rows of ni doubles: all on the grid for an even ni; for ni = 101 every other row is 8 bytes off it,
    # and that row's threads run its iterations two each; ni = 1: no whole group anywhere
    expected, a = np.full(ni * nj * nk, 7.0), np.full(ni * nj * nk, 7.0)
    rust.fill_cube(expected, ni, nj, nk)
    emulated.fill_cube(a, ni, nj, nk)
    assert emulated.fill_cube.last_variants == ["rs2gpu_fill_cube_0_vector"]
    assert a.tobytes() == expected.tobytes()


def test_a_nest_over_a_slice_off_the_grid_stores_its_rows_element_by_element(rust, emulated) -> None:
    storage = np.full(8 * 3 * 2 + 1, 7.0)
    a = storage[1:]  # every row 8 bytes off the grid
    assert a.ctypes.data % 16 == 8
    expected = np.full(8 * 3 * 2, 7.0)
    rust.fill_cube(expected, 8, 3, 2)
    emulated.fill_cube(EmulatedDeviceArray(a), 8, 3, 2)
    assert emulated.fill_cube.last_variants == ["rs2gpu_fill_cube_0_vector"]
    assert a.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("n", "m"), [(10, 6), (11, 6), (1, 3)])
def test_a_stored_slice_whose_row_is_spelled_two_ways_is_one_stream(rust, emulated, n: int, m: int) -> None:
    # `n * k` and `k * n` are one row: the slice is loaded and stored in the same groups
    expected, b = values(n * m, 23), values(n * m, 23)
    rust.rescale_rows(expected, n, m)
    emulated.rescale_rows(b, n, m)
    assert emulated.rescale_rows.last_variants == ["rs2gpu_rescale_rows_0_vector"]
    assert b.tobytes() == expected.tobytes()


@pytest.mark.parametrize(("n", "m"), [(10, 6), (11, 6), (3, 3), (4, 5), (5, 4), (64, 9)])
def test_a_stencil_nest_reads_rows_above_and_below_as_streams_of_their_own(rust, emulated, n: int, m: int) -> None:
    # HYDRO_2D's shape through `let kj = k * n + j`: rows k - 1, k and k + 1 of a; j from 1, so each row
    # runs j = 1 alone and its groups from j = 2; an odd n puts every other row's stores off the grid,
    # and a's rows above and below then off the grid in the groups of the rows on it
    a, b = values(n * m, 21), values(n * m, 22)
    expected, out = np.full(n * m, -1.0), np.full(n * m, -1.0)
    rust.cross(expected, a, b, n, m)
    emulated.cross(out, a, b, n, m)
    assert emulated.cross.last_variants == ["rs2gpu_cross_0_vector"]
    assert out.tobytes() == expected.tobytes()


def test_a_nest_with_a_reduction_has_no_vector_entry_point(rust, emulated) -> None:
    # a nest's vector form runs one thread per group on a grid that covers them; a reduction's grid is
    # capped at a few blocks per multiprocessor, its threads striding over the iterations
    assert emulated.plane_total.entry.launches[0].entry(EntryKind.VECTOR) is None
    v = np.random.default_rng(5).integers(-1000, 1000, 1000 * 3, dtype=np.int32)
    assert emulated.plane_total(v, 1000, 3) == rust.plane_total(v, 1000, 3)
    assert emulated.plane_total.last_variants == ["rs2gpu_plane_total_0"]
