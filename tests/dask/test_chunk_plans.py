"""What the chunk plan reads from the checker's facts: halos exactly as deep as the affine offsets reach,
rows of a nest's stride, and refusals of kernels whose chunks would compute something else."""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu
import rs2gpu.dask

from tests.support.paths import REPO

CASES = REPO / "tests" / "dask" / "data" / "chunking.rs"


@pytest.fixture(scope="module")
def cases(kernel_cache):
    return rs2gpu.load(CASES, backend="cpu")


def test_the_halo_is_the_depth_of_the_reads_on_each_side(cases) -> None:
    resolved = rs2gpu.dask.chunk_plan(cases.lopsided).resolve({})
    assert resolved.stride == 1 and resolved.halos == ((2, 3),)


def test_a_row_major_nest_chunks_in_rows_with_a_halo_of_one_row(heat) -> None:
    resolved = rs2gpu.dask.chunk_plan(heat.heat_step).resolve({"width": 12, "alpha": 0.2})
    assert resolved.stride == 12 and resolved.halos == ((1, 1),)


def test_chunks_thinner_than_the_halo_agree_with_the_whole_call(cases, client) -> None:
    import dask.array as da

    x = np.random.default_rng(1).uniform(-1.0, 1.0, 40)
    want = np.zeros(40)
    cases.lopsided(want, x)
    (got,) = rs2gpu.dask.call(cases.lopsided, da.zeros(40, chunks=2), da.from_array(x, chunks=3))
    assert got.compute().tobytes() == want.tobytes()


@pytest.mark.parametrize("name,args,code", [
    ("scale_by_length", 2, "RG0203"),
    ("add_first", 2, "RG0202"),
    ("sum_from_one", 1, "RG0204"),
    ("total_rise", 1, "RG0204"),
    ("shift_left", 2, "RG0202"),
])
def test_a_chunk_that_would_compute_something_else_is_refused(cases, name: str, args: int, code: str) -> None:
    import dask.array as da

    x = da.ones(30, chunks=10)
    with pytest.raises(rs2gpu.dask.ChunkingError) as refused:
        rs2gpu.dask.call(getattr(cases, name), *[x] * args)
    assert refused.value.code == code
    assert f"`{name}`" in str(refused.value) and "chunking.rs:" in str(refused.value)


def test_the_refused_kernels_run_on_whole_arrays(cases) -> None:
    # the reasons above are the chunks' alone: each kernel is a valid kernel on whole arrays
    x = np.arange(6.0)
    assert cases.sum_from_one(x) == 16.0 and cases.total_rise(x) == 5.0
    out = np.zeros(6)
    cases.scale_by_length(out, x)
    assert out.tolist() == (6 * x).tolist()


def test_an_instantiation_of_a_generic_kernel_chunks(cases, client) -> None:
    import dask.array as da

    x = np.linspace(-1.0, 1.0, 17, dtype=np.float32)
    want = np.ones(17, dtype=np.float32)
    cases.axpy_f32(want, x, np.float32(0.5))
    (got,) = rs2gpu.dask.call(cases.axpy_f32, da.ones(17, chunks=5, dtype=np.float32), da.from_array(x, chunks=4),
                              np.float32(0.5))
    assert got.dtype == np.float32 and got.compute().tobytes() == want.tobytes()


def test_a_generic_kernel_by_its_rust_name_asks_for_an_instantiation(cases) -> None:
    with pytest.raises(TypeError, match="name an instantiation"):
        rs2gpu.dask.call(cases.axpy, np.zeros(2), np.zeros(2), 1.0)
