"""The grid and block of a covering entry point: a grid that covers every count, blocks with the fewest idle
threads, and no covering launch where the counts or the grid limits forbid one (the general entry point runs)."""
from __future__ import annotations

from rs2gpu.ir.abi import CoveringGrid
from rs2gpu.runtime.base import MAX_GRID_X, MAX_GRID_YZ, covering_launch
from rs2gpu.runtime.covering import covering_geometry

LIMITS = (MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ)
LIMIT = 2**31


def geometry(counts, dims, block=None):
    return covering_geometry(counts, dims, block, LIMIT, LIMITS)


def test_a_100_wide_cube_takes_warp_wide_rows_that_divide_its_other_extents() -> None:
    # 100 = 4 warps minus 28 lanes whatever the width; 4 rows and 2 planes divide 100, 8 rows would not
    assert geometry((100, 100, 100), 3) == ((4, 25, 50), (32, 4, 2))


def test_a_464_wide_cube_is_covered_by_15_warps_per_row() -> None:
    # 15 x 32 = 480 lanes for 464, where 256-wide blocks would launch 512
    assert geometry((464, 464, 464), 3) == ((15, 58, 464), (32, 8, 1))


def test_a_long_row_of_three_takes_whole_blocks_along_x() -> None:
    assert geometry((1_000_000, 3, 1), 2) == ((3907, 3, 1), (256, 1, 1))


def test_a_y_extent_beyond_65535_is_covered_by_taller_blocks() -> None:
    assert geometry((1, 70_000, 1), 2) == ((1, 8750, 1), (32, 8, 1))


def test_no_block_covers_a_y_extent_beyond_65535_times_8() -> None:
    assert geometry((2, 600_000, 1), 2) is None


def test_a_count_of_2_to_the_31_has_no_covering_launch() -> None:
    assert geometry((LIMIT, 4, 1), 2) is None
    assert geometry((LIMIT - 1, 4, 1), 2) is not None


def test_an_entry_points_own_block_is_kept() -> None:
    assert geometry((17, 15, 1), 2, (16, 16, 1)) == ((2, 1, 1), (16, 16, 1))
    assert geometry((16, 16 * MAX_GRID_YZ + 1, 1), 2, (16, 16, 1)) is None


def test_small_extents_take_small_blocks() -> None:
    assert geometry((1, 1, 1), 2) == ((1, 1, 1), (32, 1, 1))
    # 32 x 1 x 4 launches 32 * 5 * 4 = 640 threads; any 256-thread block at least 32 * 6 * 4 = 768
    assert geometry((7, 5, 3), 3) == ((1, 5, 1), (32, 1, 4))


def test_idle_threads_before_the_first_iteration_are_covered_too() -> None:
    # a single loop's rows of 256 threads: 255 iterations after one idle thread fill one block, 256 need two
    row = (256, 1, 1)
    assert covering_launch(CoveringGrid(row, LIMIT, 1), {"x": 255}) == ((1, 1, 1), row)
    assert covering_launch(CoveringGrid(row, LIMIT, 1), {"x": 256}) == ((2, 1, 1), row)
    assert covering_launch(CoveringGrid(row, LIMIT, 0), {"x": 256}) == ((1, 1, 1), row)
    # 3906 blocks hold 999936 threads: 999906 iterations and 30 idle threads, but not 31
    assert covering_launch(CoveringGrid(row, LIMIT, 30), {"x": 999_906}) == ((3906, 1, 1), row)
    assert covering_launch(CoveringGrid(row, LIMIT, 31), {"x": 999_906}) == ((3907, 1, 1), row)
