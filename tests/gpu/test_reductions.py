"""Reductions and the call epilogue, against rustc's build of the same kernels: the seeds passed by value,
the blocks' partials, the last block's combination, the result words read back, the cap on the grid (past
it each thread strides over several iterations), the panic record, and the guard that keeps later launches
from running after a panic.

Every reduction kind of tests/cases/semantics.rs (`+ * min max & | ^` of every 32- and 64-bit type,
min/max-location with ties to the first and to the last index) runs at sizes around one block and past
the capped grid, on values whose sums and products are exact in any order (every result must be rustc's,
bit for bit) and on values whose float sums and products round (within the bound of reordering n terms).

Tests that take `device` run on the emulated device, whose one multiprocessor caps a grid at 8 blocks and
whose blocks run one after another (so the order in which real blocks finish is exercised on the GPU
only), and under `-m gpu` on the GPU; the others read what only one of them shows.
"""
from __future__ import annotations

import gc
import struct

import numpy as np
import pytest

import rs2gpu
from rs2gpu.ir.abi import KernelABI
from rs2gpu.runtime.arguments import numpy_dtype
from rs2gpu.runtime.base import REDUCTION_BLOCKS_PER_MULTIPROCESSOR, DeviceKernel

from tests.support.devices import CUDA, EMULATED, device_word, on, rustc_build
from tests.support.paths import CASES

SEMANTICS = CASES / "semantics.rs"
REDUCTIONS = ["reduce_f32", "reduce_f64", "reduce_i32", "reduce_u32", "reduce_i64", "reduce_u64", "reduce_usize",
              "reduce_wrapping", "locate_extremes", "locate_extremes_i32"]
# sizes around one block, then past the capped grid ("grid": one iteration more than its threads); the
# rounding of float sums and products is left to the GPU, whose blocks finish in no fixed order
CASES = [(EMULATED, ("exact",), (1, 255, 256, 257, "grid", "3 grids")),
         (CUDA, ("exact", "rounded"), (1, 255, 256, 257, 1_000_003, "grid", "3 grids"))]

OWN = """\
use rs2gpu::kernel;

#[kernel]
pub fn seeded(a: &[i64], bias: i64, ceiling: i64) -> (i64, i64, i64, usize) {
    let mut total = bias;
    let mut low = ceiling;
    let mut best = a[0];
    let mut at = 0;
    for i in 1..a.len() {
        total += a[i];
        low = low.min(a[i]);
        if a[i] > best {
            best = a[i];
            at = i;
        }
    }
    (total, low, best, at)
}

#[kernel]
pub fn sum_rows(a: &[i64], cols: usize) -> i64 {
    let rows = a.len() / cols;
    let mut total = 0i64;
    for r in 0..rows {
        for c in 0..cols {
            total = total.wrapping_add(a[r * cols + c] * (c as i64 + 1));
        }
    }
    total
}

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
pub fn clip_then_fill(out: &mut [f64], a: &[f64], limit: f64, filled: &mut [f64]) {
    for i in 0..a.len() {
        if a[i] > limit {
            out[i] = limit;
        }
    }
    for j in 0..filled.len() {
        filled[j] = 2.0;
    }
}

#[kernel]
pub fn negative_zeros(a: &[f64]) -> f64 {
    let mut s = -0.0;
    for i in 0..a.len() {
        s += a[i];
    }
    s
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
def own_source(tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("own") / "own.rs"
    path.write_text(OWN)
    return path


@pytest.fixture(scope="module")
def own(device, own_source):
    return device.load(own_source)


@pytest.fixture(scope="module")
def emulated_own(emulated_device, own_source):
    return rustc_build(own_source), emulated_device.load(own_source)


def tickets_left(kernel: DeviceKernel) -> int:
    """The module's count of blocks that took a ticket: 0 between launches, as the last block leaves it."""
    return device_word(kernel, "rs2gpu_finished_blocks")


def exact_values(entry: KernelABI, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Values whose sums and products are exact in any order, so every result must equal rustc's bit for
    bit: small non-zero integers (with many repeats: ties for the location reductions; wrapping integer
    products), and for floats ±1 with at most 32 each of ±2 and ±0.5 (every partial sum is a multiple of
    0.5 below 2^22, every partial product a power of two within 2^±64: both exact in f32)."""
    out = []
    for p in entry.params:
        dtype = numpy_dtype(p.layout)
        if dtype.kind == "f":
            values = rng.choice([1.0, -1.0], n)
            for scale in (2.0, 0.5):
                spots = rng.choice(n, min(32, n), replace=False)
                values[spots] *= scale
        else:
            values = rng.integers(1, 10, n) * (rng.choice([-1, 1], n) if dtype.kind == "i" else 1)
        out.append(values.astype(dtype))
    return out


def rounded_values(entry: KernelABI, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Small non-zero values with many repeats (ties for the location reductions), of both signs for the
    signed types, whose float sums and products round (and stay finite)."""
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
    """The positions of the kernel's results that are float sums or products (the device combines their
    terms in another order than Rust), with the operator."""
    ops = {r.name: r.op for launch in entry.launches for r in launch.reductions
           if r.op in ("+", "*") and r.type in ("f32", "f64")}
    returned = entry.returns.expr
    items = returned["tuple"] if "tuple" in returned else [returned]
    return {i: ops[item["reduction"]] for i, item in enumerate(items) if item.get("reduction") in ops}


def assert_within_reordering(name: str, entry: KernelABI, args: list, got, want) -> None:
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


@pytest.mark.parametrize("device,name,size,values", [on(device, name, size, kind, id=f"{name}-{size}-{kind}")
                                                     for device, kinds, sizes in CASES for name in REDUCTIONS
                                                     for size in sizes for kind in kinds], indirect=["device"])
def test_reduction_matches_rustc(device, name, size, values):
    cpu, kernels = rustc_build(SEMANTICS), device.load(SEMANTICS)
    n = {"grid": device.grid_threads() + 1, "3 grids": 3 * device.grid_threads() + 17}.get(size, size)
    entry = cpu.abi.kernels[name]
    kernel = getattr(kernels, name)
    rng = np.random.default_rng([n, len(name)])
    args = exact_values(entry, n, rng) if values == "exact" else rounded_values(entry, n, rng)
    before = device.activity(kernel)
    got, want = kernel(*args), getattr(cpu, name)(*args)
    if values == "exact":
        assert got == want
    else:
        assert_within_reordering(name, entry, args, got, want)
    for grid, _ in device.launch_shapes(kernel, since=before):
        assert np.prod(grid) <= device.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR
    assert tickets_left(kernel) == 0


@pytest.mark.parametrize("device", [CUDA], indirect=True)
@pytest.mark.parametrize("name", ["reduce_f64", "reduce_f32", "locate_extremes"])
def test_results_are_the_same_in_every_call(device, name):
    kernels = device.load(SEMANTICS)
    entry = kernels.abi.kernels[name]
    args = [device.to_device(a) for a in rounded_values(entry, 3 * device.grid_threads() + 5, np.random.default_rng(3))]
    first = getattr(kernels, name)(*args)
    for _ in range(20):
        assert getattr(kernels, name)(*args) == first


@pytest.mark.parametrize("device", [CUDA], indirect=True)
def test_calls_on_device_arrays_allocate_nothing(device):
    import cupy as cp

    kernels = device.load(SEMANTICS)
    a = cp.asarray(np.random.default_rng(5).uniform(-1, 1, 1_000_003))
    x = cp.asarray(np.random.default_rng(6).integers(-9, 10, 1_000_003, dtype=np.int32))
    kernels.reduce_f64(a)
    kernels.locate_extremes(a)
    kernels.reduce_i32(x)
    gc.collect()  # device arrays earlier tests left in reference cycles would be freed during the calls
    pool, pinned = cp.get_default_memory_pool(), cp.get_default_pinned_memory_pool()
    used, free_pinned = pool.used_bytes(), pinned.n_free_blocks()
    for _ in range(100):
        kernels.reduce_f64(a)
        kernels.locate_extremes(a)
        kernels.reduce_i32(x)
    assert pool.used_bytes() == used
    assert pinned.n_free_blocks() == free_pinned


@pytest.mark.parametrize("device", [CUDA], indirect=True)
def test_a_range_without_iterations_returns_the_seed(device):
    one = np.array([7], dtype=np.uint64)  # reduce_usize loops over 1..len: no iteration
    assert device.load(SEMANTICS).reduce_usize(one) == rustc_build(SEMANTICS).reduce_usize(one) == 1


@pytest.mark.parametrize("n", [1, 257, "3 grids"])
@pytest.mark.parametrize(("bias", "ceiling", "top"), [(1000, -100, False), (-5, 100, False), (0, 0, True)])
def test_the_seed_comes_first_in_the_combination(emulated_device, emulated_own, n, bias, ceiling, top):
    """Seeds that are not the identity: `total` starts at `bias`, `low` at `ceiling` (below every element,
    or above), and the location reduction at element 0, before the loop (the largest of all, then it keeps
    its tie with a later element); n = 1 runs no iteration."""
    cpu, kernels = emulated_own
    n = 3 * emulated_device.grid_threads() + 17 if n == "3 grids" else n
    a = np.random.default_rng(n).integers(-9, 10, n).astype(np.int64)
    if top:
        a[0] = 50
        a[n // 2] = 50
    assert kernels.seeded(a, bias, ceiling) == cpu.seeded(a, bias, ceiling)


@pytest.mark.parametrize("cols", [1, 5, 40, 300])
def test_a_two_dimensional_reduction_on_a_capped_grid_matches_rustc(emulated_device, emulated_own, cols):
    cpu, kernels = emulated_own
    a = np.random.default_rng(cols).integers(-9, 10, 6000).astype(np.int64)
    before = emulated_device.activity(kernels.sum_rows)
    assert kernels.sum_rows(a, cols) == cpu.sum_rows(a, cols)
    grid, block = emulated_device.launch_shapes(kernels.sum_rows, since=before)[-1]
    assert np.prod(grid) <= REDUCTION_BLOCKS_PER_MULTIPROCESSOR and np.prod(block) == 256


def test_a_panic_in_one_launch_keeps_the_later_launches_from_running(device, own):
    n = 100_000
    a, idx = np.arange(n, dtype=np.float64), np.arange(n, dtype=np.uint64)
    idx[n // 2] = n + 3
    message = f"index out of bounds: the len is {n} but the index is {n + 3}"
    # on device arrays, the second loop leaves `filled` as it was
    out, filled = device.to_device(np.zeros(n)), device.to_device(np.zeros(n))
    with pytest.raises(rs2gpu.KernelPanic, match=message):
        own.gather_then_fill(out, device.to_device(a), device.to_device(idx), filled)
    assert not device.to_host(filled).any(), "the second loop ran after the first one panicked"
    # on host arrays, nothing is copied back either
    host_filled = np.zeros(n)
    with pytest.raises(rs2gpu.KernelPanic, match=message):
        own.gather_then_fill(np.zeros(n), a, idx, host_filled)
    assert not host_filled.any()
    idx[n // 2] = 0
    own.gather_then_fill(out, device.to_device(a), device.to_device(idx), filled)  # the record was reset
    assert np.all(device.to_host(filled) == 1.0) and device.to_host(out)[n // 2] == 0.0


def packed_stop_flag(kernel: DeviceKernel, launch: int) -> bool:
    """The `rs2gpu_may_stop` argument the last call packed for a launch."""
    lp = kernel.plan.launches[launch]
    (at,) = [k for k, (kind, *_) in enumerate(lp.fields) if kind == "stop"]
    return struct.unpack(lp.format, lp.buffer.raw[:struct.calcsize(lp.format)])[at]


def test_a_launch_reads_the_panic_record_only_after_code_that_can_panic(emulated_own):
    # the first loop's conditional write is checked on the device only when `out` may be too short (its
    # checked variant); only then must the second loop look at the record before it fills
    kernel = emulated_own[1].clip_then_fill
    a, filled = np.linspace(-1.0, 1.0, 300), np.zeros(50)
    kernel(np.zeros(300), a, 0.5, filled)
    assert kernel.last_variants[0] == "rs2gpu_clip_then_fill_0" and packed_stop_flag(kernel, 1) is False
    kernel(np.zeros(300), a, 2.0, filled)  # `out` as long as `a`, no element above the limit
    assert packed_stop_flag(kernel, 1) is False
    with pytest.raises(rs2gpu.KernelPanic, match="the len is 100 but the index is 100"):
        kernel(np.zeros(100), a, -2.0, filled)  # too short: the checked variant runs, and panics at 100 first
    assert kernel.last_variants[0] == "rs2gpu_clip_then_fill_0_checked" and packed_stop_flag(kernel, 1) is True


def test_a_reduction_launch_after_a_panic_takes_its_tickets_and_the_next_call_is_right(device, own):
    n = 3 * device.grid_threads() + 1
    a, out = device.to_device(np.ones(n)), device.to_device(np.zeros(n))
    idx = np.zeros(n, dtype=np.uint64)
    idx[-1] = 2 * n
    with pytest.raises(rs2gpu.KernelPanic, match="index out of bounds"):
        own.gather_then_sum(out, a, device.to_device(idx))
    # every block of the skipped launch took its ticket, so the counter is back at 0 for the next call
    assert tickets_left(own.gather_then_sum) == 0
    idx[-1] = 0
    assert own.gather_then_sum(out, a, device.to_device(idx)) == float(n)


@pytest.mark.parametrize("n", [1, "3 grids"])
def test_a_sum_of_negative_zeros_seeded_with_one_is_negative_zero_as_in_rust(emulated_device, emulated_own, n):
    cpu, kernels = emulated_own
    n = 3 * emulated_device.grid_threads() + 17 if n == "3 grids" else n
    a = np.full(n, -0.0)
    want, got = cpu.negative_zeros(a), kernels.negative_zeros(a)
    assert np.signbit(want)  # rustc: -0.0 + -0.0 == -0.0
    assert struct.pack("<d", got) == struct.pack("<d", want)
