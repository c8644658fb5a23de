"""What `rs2gpu.dask.call` returns and when it runs: lazily, Dask arrays of the arguments' shapes, 0-d Dask
arrays for returned values; kernel panics surface at compute()."""
from __future__ import annotations

from types import SimpleNamespace

import dask
import numpy as np
import pytest

import rs2gpu
import rs2gpu.dask
from rs2gpu.dask.graph import one_run


COMPUTED: list = []  # the chunks `ones_block` made, in this process (the cluster's worker runs in it)


def ones_block(block_info=None):
    COMPUTED.append(block_info[None]["chunk-location"])
    return np.ones(block_info[None]["chunk-shape"])


def test_nothing_runs_before_compute(rajaperf, client) -> None:
    import dask.array as da

    COMPUTED.clear()
    a = da.map_blocks(ones_block, chunks=((10, 10),), dtype=np.float64, meta=np.empty(0))
    (c,) = rs2gpu.dask.call(rajaperf.add, np.zeros(20), a, a)
    assert COMPUTED == []
    assert c.compute().tolist() == [2.0] * 20
    assert sorted(set(COMPUTED)) == [(0,), (1,)]


def test_a_panic_is_raised_at_compute_not_at_call(rajaperf, client) -> None:
    import dask.array as da

    # first_diff reads y[i + 1] for every i of x: y one element short panics in the last chunk, as in Rust
    x, y = da.zeros(12, chunks=4), da.ones(12, chunks=4)
    (result,) = rs2gpu.dask.call(rajaperf.first_diff, x, y)
    with pytest.raises(rs2gpu.KernelPanic, match="index out of bounds"):
        result.compute()


def test_written_arguments_come_back_as_dask_arrays_of_their_shape(rajaperf, client) -> None:
    import dask.array as da

    x = da.from_array(np.arange(10.0), chunks=3)
    out = rs2gpu.dask.call(rajaperf.init3, da.zeros(10, chunks=3), da.zeros(10, chunks=3), da.zeros(10, chunks=3),
                           x, x)
    assert len(out) == 3 and all(isinstance(o, da.Array) and o.shape == (10,) for o in out)
    assert [o.compute().tolist() for o in out] == [(-2.0 * np.arange(10.0)).tolist()] * 3


def test_a_returned_value_is_a_0d_dask_array(rajaperf, client) -> None:
    import dask.array as da

    a = da.from_array(np.arange(8.0), chunks=3)
    (dot,) = rs2gpu.dask.call(rajaperf.dot, a, a)
    assert isinstance(dot, da.Array) and dot.shape == () and dot.dtype == np.float64
    assert float(dot.compute()) == 140.0  # Σ k² for k < 8, exact in any order


def test_a_returned_tuple_is_a_tuple_of_0d_dask_arrays(rajaperf, client) -> None:
    import dask.array as da

    vec = da.from_array(np.array([5, -3, 9, 0, 2, -7, 4], dtype=np.int32), chunks=2)
    (values,) = rs2gpu.dask.call(rajaperf.reduce3_int, vec)
    assert all(v.shape == () and v.dtype == np.int32 for v in values)
    assert [int(v) for v in dask.compute(*values)] == [10, -7, 9]


def test_an_integer_sum_wraps_as_in_rust_across_chunks(rajaperf, client) -> None:
    import dask.array as da

    vec = da.from_array(np.full(6, 2**30, dtype=np.int32), chunks=2)
    (values,) = rs2gpu.dask.call(rajaperf.reduce3_int, vec)
    assert int(values[0].compute()) == np.int32(6 * 2**30 - 2**33)  # wrapping_add six times


def test_a_dask_array_for_a_scalar_parameter_is_a_type_error(rajaperf) -> None:
    import dask.array as da

    a = da.zeros(4, chunks=2)
    with pytest.raises(TypeError, match="`alpha` is a f64"):
        rs2gpu.dask.call(rajaperf.mul, a, a, da.ones((), chunks=()))


def test_a_function_that_is_no_loaded_kernel_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="rs2gpu.load"):
        rs2gpu.dask.call(lambda a: a, np.zeros(2))


def rs2gpu_tasks(array) -> int:
    """The tasks of the graph that `rs2gpu.dask.call` made (the arguments' own tasks left out)."""
    names = (key[0] if isinstance(key, tuple) else key for key in array.__dask_graph__())
    return sum(1 for name in names if str(name).startswith("rs2gpu-"))


def test_a_stencil_step_is_a_task_per_chunk_and_one_for_its_edges(heat) -> None:
    import dask.array as da

    grid = da.from_array(np.zeros((64, 16)), chunks=(16, 16))
    (stepped,) = rs2gpu.dask.call(heat.heat_step, grid, grid, 16, 0.2)  # both arguments share their edges
    assert rs2gpu_tasks(stepped) == 2 * 4
    (twice,) = rs2gpu.dask.call(heat.heat_step, stepped, stepped, 16, 0.2)
    assert rs2gpu_tasks(twice) == 2 * 2 * 4


def test_an_element_wise_loop_is_a_task_per_chunk(rajaperf) -> None:
    import dask.array as da

    a = da.from_array(np.arange(20.0), chunks=5)
    (c,) = rs2gpu.dask.call(rajaperf.add, da.zeros(20, chunks=5), a, a)
    assert rs2gpu_tasks(c) == 4


@pytest.mark.parametrize("value, passed_as_it_is", [
    (np.zeros(4), True), (np.broadcast_to(np.float64(1.0), (4,)), False), (np.zeros(8)[::2], False),
    (np.float64(2.0), True), ({"scale": 2.0}, True),
    (SimpleNamespace(flags=SimpleNamespace(c_contiguous=True)), True)],
    ids=["a contiguous array", "dask's zero-stride chunk", "a strided view", "a numpy scalar", "a struct as a dict",
         "an array whose flags say nothing of alignment (cupy's)"])
def test_a_chunk_task_copies_only_the_arrays_that_are_not_one_aligned_run(value, passed_as_it_is) -> None:
    assert one_run(value) is passed_as_it_is
