"""The grid and block of a launch (`launch_geometry`): one thread per iteration up to the hardware limits,
and for a launch with reductions a grid of at most `max_blocks` blocks, over which the kernel's threads
stride (so a capped grid still covers every iteration)."""
from __future__ import annotations

import math

import pytest

from rs2gpu.runtime.base import MAX_GRID_X, MAX_GRID_YZ, launch_geometry


def test_one_thread_per_iteration_without_a_cap() -> None:
    assert launch_geometry({"x": 1_000_000}) == ((3907, 1, 1), (256, 1, 1))


def test_the_hardware_limit_caps_each_axis() -> None:
    grid, _ = launch_geometry({"x": 2**40, "y": 2**20, "z": 2**20})
    assert grid[0] <= MAX_GRID_X and grid[1] <= MAX_GRID_YZ and grid[2] <= MAX_GRID_YZ


def test_a_reduction_grid_is_capped_at_max_blocks() -> None:
    assert launch_geometry({"x": 1_000_000}, max_blocks=1056) == ((1056, 1, 1), (256, 1, 1))


def test_a_grid_below_the_cap_keeps_one_thread_per_iteration() -> None:
    assert launch_geometry({"x": 257}, max_blocks=1056) == ((2, 1, 1), (256, 1, 1))


def test_the_cap_does_not_change_the_block() -> None:
    # the block reductions are written for blocks of exactly 256 threads
    for counts in ({"x": 10**8}, {"y": 5000, "x": 5000}, {"z": 300, "y": 300, "x": 300}):
        _, uncapped = launch_geometry(counts)
        _, capped = launch_geometry(counts, max_blocks=100)
        assert capped == uncapped and math.prod(capped) == 256


@pytest.mark.parametrize("counts", [{"y": 5000, "x": 5000}, {"y": 3, "x": 10**7}, {"y": 10**6, "x": 7},
                                    {"z": 300, "y": 300, "x": 300}, {"z": 10**5, "y": 2, "x": 2}])
@pytest.mark.parametrize("max_blocks", [1, 7, 1056])
def test_a_capped_grid_of_several_axes_holds_at_most_max_blocks(counts, max_blocks) -> None:
    grid, _ = launch_geometry(counts, max_blocks=max_blocks)
    assert math.prod(grid) <= max_blocks
    assert min(grid) >= 1  # every axis has a block, whose threads stride over that axis


def test_the_outer_axes_give_way_first() -> None:
    # x keeps all 4 of its blocks, y shrinks to what is left of the cap
    grid, block = launch_geometry({"y": 10**6, "x": 1000}, max_blocks=100)
    assert block == (256, 1, 1)
    assert grid == (4, 25, 1)
