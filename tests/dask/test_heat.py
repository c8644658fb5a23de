"""The heat example: a Python time loop of `heat_step` calls over a grid in chunks of rows agrees bitwise
with one plain call of `heat_steps` (the whole time loop in one kernel, the Rust built by rustc)."""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu.dask

from tests.dask.conftest import HEAT

pytest.importorskip("distributed")


def plate(rows: int, width: int) -> np.ndarray:
    """Random interior temperatures, the top edge held at 1.0."""
    grid = np.random.default_rng(3).uniform(0.0, 1.0, (rows, width))
    grid[0, :] = 1.0
    return grid


def one_plain_call(heat, grid: np.ndarray, steps: int, alpha: float) -> np.ndarray:
    a = grid.reshape(-1).copy()
    heat.heat_steps(a, a.copy(), grid.shape[1], alpha, steps // 2)
    return a.reshape(grid.shape)


def time_loop(heat, grid, steps: int, alpha: float):
    for _ in range(steps):
        (grid,) = rs2gpu.dask.call(heat.heat_step, grid, grid, grid.shape[1], alpha)
    return grid


@pytest.mark.parametrize("row_chunks", [(5, 7, 1, 9, 8), (15, 15), (1,) * 30], ids=["uneven", "halves", "rows"])
def test_time_loop_over_row_chunks_agrees_bitwise_with_one_plain_call(heat, client, row_chunks) -> None:
    import dask.array as da

    grid = plate(30, 12)
    result = time_loop(heat, da.from_array(grid, chunks=(row_chunks, 12)), 6, 0.2).compute()
    assert result.tobytes() == one_plain_call(heat, grid, 6, 0.2).tobytes()


def test_a_grid_chunked_along_both_axes_is_taken_in_whole_rows(heat, client) -> None:
    import dask.array as da

    grid = plate(24, 10)
    result = time_loop(heat, da.from_array(grid, chunks=(5, 3)), 4, 0.25).compute()
    assert result.tobytes() == one_plain_call(heat, grid, 4, 0.25).tobytes()


def test_the_driver_runs_the_example(heat, client) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("heat_driver", HEAT / "heat.py")
    driver = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(driver)
    result = driver.run(heat, driver.initial(40, 16, 6), 4, 0.2).compute()
    start = driver.initial(40, 16, 40).compute()
    assert result.tobytes() == one_plain_call(heat, start, 4, 0.2).tobytes()


def test_the_time_loop_kernel_is_refused_with_rg0203(heat) -> None:
    import dask.array as da

    grid = da.from_array(plate(8, 8).reshape(-1), chunks=16)
    with pytest.raises(rs2gpu.dask.ChunkingError) as refused:
        rs2gpu.dask.call(heat.heat_steps, grid, grid, 8, 0.2, 1)
    assert refused.value.code == "RG0203"
    assert "`heat_steps`" in str(refused.value) and "src/lib.rs:" in str(refused.value)
