"""Reductions and the call epilogue on the cuda backend, against rustc's build of the same kernels.

Every reduction kind of tests/cases/semantics.rs (`+ * min max & | ^` of every 32- and 64-bit type,
min/max-location with ties to the first and to the last index) at sizes around one block and at sizes
where the capped grid gives each thread several iterations. Integer results and min/max values and
locations must be exact; float sums and products within the bound of reordering n terms. Then the
protocol itself: results that do not change between calls, no device allocation per call, and a panic
in one launch that keeps the later launches of the call from running.
"""
from __future__ import annotations

import gc

from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu.ir.abi import KernelABI
from rs2gpu.runtime.arguments import numpy_dtype
from rs2gpu.runtime.base import REDUCTION_BLOCKS_PER_MULTIPROCESSOR

pytestmark = pytest.mark.gpu

SEMANTICS = Path(__file__).resolve().parents[1] / "cases" / "semantics.rs"
REDUCTIONS = ["reduce_f32", "reduce_f64", "reduce_i32", "reduce_u32", "reduce_i64", "reduce_u64", "reduce_usize",
              "reduce_wrapping", "locate_extremes", "locate_extremes_i32"]
BLOCK_SIZES = (1, 255, 256, 257, 1_000_003)


@pytest.fixture(scope="module")
def semantics():
    return rs2gpu.load(SEMANTICS, backend="cpu"), rs2gpu.load(SEMANTICS, backend="cuda")


def grid_threads() -> int:
    """Threads of a capped grid on this device: past this size each thread strides over several iterations."""
    import cupy as cp

    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    return sms * REDUCTION_BLOCKS_PER_MULTIPROCESSOR * 256


def inputs(entry: KernelABI, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """One array per slice parameter: small non-zero values with many repeats (ties for the location
    reductions, float products that stay finite), of both signs for the signed types."""
    out = []
    for p in entry.params:
        dtype = numpy_dtype(p.layout)
        if dtype.kind == "f":
            values = rng.choice([0.998, 0.999, 1.0, 1.001, 1.002, -0.999, -1.0, -1.001], n)
        elif dtype.kind == "i":
            values = rng.integers(1, 10, n) * rng.choice([-1, 1], n)  # no zero: the products wrap around
        else:
            values = rng.integers(1, 19, n)
        out.append(values.astype(dtype))
    return out


def reordered_results(entry: KernelABI) -> dict[int, str]:
    """The positions of the kernel's results that are float sums or products (the GPU combines their terms
    in another order than Rust), with the operator."""
    ops = {r.name: r.op for launch in entry.launches for r in launch.reductions
           if r.op in ("+", "*") and r.type in ("f32", "f64")}
    returned = entry.returns.expr
    items = returned["tuple"] if "tuple" in returned else [returned]
    return {i: ops[item["reduction"]] for i, item in enumerate(items) if item.get("reduction") in ops}


def assert_same_results(name: str, entry: KernelABI, args: list, got, want) -> None:
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    reordered = reordered_results(entry)
    n, eps = args[0].size, float(np.finfo(args[0].dtype).eps) if args[0].dtype.kind == "f" else 0.0
    for index, (g, w) in enumerate(zip(got, want)):
        if index in reordered:
            # n terms in another order: within n·ε·Σ|terms| for a sum, n·ε·|product| for a product
            scale = float(np.abs(args[0].astype(np.float64)).sum()) if reordered[index] == "+" else abs(w)
            bound = n * eps * scale + abs(w) * eps
            assert abs(g - w) <= bound, f"{name}: result {index} = {g}, rustc gives {w} (bound {bound})"
        else:
            assert g == w, f"{name}: result {index} = {g}, rustc gives {w}"


@pytest.mark.parametrize("size", [*BLOCK_SIZES, "grid", "3 grids"])
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_matches_rustc(semantics, name, size):
    cpu, cuda = semantics
    n = {"grid": grid_threads() + 1, "3 grids": 3 * grid_threads() + 17}.get(size, size)
    entry = cpu.abi.kernels[name]
    args = inputs(entry, n, np.random.default_rng([n, len(name)]))
    assert_same_results(name, entry, args, getattr(cuda, name)(*args), getattr(cpu, name)(*args))


@pytest.mark.parametrize("name", ["reduce_f64", "reduce_f32", "locate_extremes"])
def test_results_are_the_same_in_every_call(semantics, name):
    import cupy as cp

    _, cuda = semantics
    entry = cuda.abi.kernels[name]
    args = [cp.asarray(a) for a in inputs(entry, 3 * grid_threads() + 5, np.random.default_rng(3))]
    first = getattr(cuda, name)(*args)
    for _ in range(20):
        assert getattr(cuda, name)(*args) == first


def test_calls_on_device_arrays_allocate_nothing(semantics):
    import cupy as cp

    _, cuda = semantics
    a = cp.asarray(np.random.default_rng(5).uniform(-1, 1, 1_000_003))
    x = cp.asarray(np.random.default_rng(6).integers(-9, 10, 1_000_003, dtype=np.int32))
    cuda.reduce_f64(a)
    cuda.locate_extremes(a)
    cuda.reduce_i32(x)
    gc.collect()  # device arrays earlier tests left in reference cycles would be freed during the calls
    pool, pinned = cp.get_default_memory_pool(), cp.get_default_pinned_memory_pool()
    used, free_pinned = pool.used_bytes(), pinned.n_free_blocks()
    for _ in range(100):
        cuda.reduce_f64(a)
        cuda.locate_extremes(a)
        cuda.reduce_i32(x)
    assert pool.used_bytes() == used
    assert pinned.n_free_blocks() == free_pinned


def test_a_range_without_iterations_returns_the_seed(semantics):
    cpu, cuda = semantics
    one = np.array([7], dtype=np.uint64)  # reduce_usize loops over 1..len: no iteration
    assert cuda.reduce_usize(one) == cpu.reduce_usize(one) == 1


GUARDED = """\
use rs2gpu::kernel;

#[kernel]
pub fn gather_then_fill(out: &mut [f64], a: &[f64], idx: &[usize], filled: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = a[idx[i]];
    }
    for j in 0..filled.len() {
        filled[j] = 1.0;
    }
}

#[kernel]
pub fn gather_then_sum(dst: &mut [f64], a: &[f64], idx: &[usize]) -> f64 {
    for i in 0..dst.len() {
        dst[i] = a[idx[i]];
    }
    let mut s = 0.0;
    for j in 0..a.len() {
        s += a[j];
    }
    s
}
"""


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    path = tmp_path_factory.mktemp("guarded") / "guarded.rs"
    path.write_text(GUARDED)
    return rs2gpu.load(path, backend="cuda")


def test_a_panic_in_one_launch_keeps_the_later_launches_from_running(guarded):
    import cupy as cp

    n = 100_000
    a = cp.arange(n, dtype=cp.float64)
    idx = cp.arange(n, dtype=cp.uint64)
    idx[n // 2] = n + 3
    out, filled = cp.zeros(n), cp.zeros(n)
    with pytest.raises(rs2gpu.KernelPanic, match=f"index out of bounds: the len is {n} but the index is {n + 3}"):
        guarded.gather_then_fill(out, a, idx, filled)
    assert not cp.any(filled), "the second loop ran after the first one panicked"
    idx[n // 2] = 0
    guarded.gather_then_fill(out, a, idx, filled)  # the record was reset: the next call runs both loops
    guarded.synchronize()
    assert cp.all(filled == 1.0)


def test_a_reduction_launch_after_a_panic_runs_nothing_and_the_next_call_is_right(guarded):
    import cupy as cp

    n = 3 * grid_threads() + 1
    a = cp.ones(n, dtype=cp.float64)
    idx = cp.zeros(n, dtype=cp.uint64)
    idx[-1] = 2 * n
    out = cp.zeros(n)
    with pytest.raises(rs2gpu.KernelPanic, match="index out of bounds"):
        guarded.gather_then_sum(out, a, idx)
    idx[-1] = 0
    # every block of the skipped launch took its ticket, so the counter is back at 0 for this call
    assert guarded.gather_then_sum(out, a, idx) == float(n)
