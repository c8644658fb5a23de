"""rs2gpu's generated CUDA run on the CPU through the runtime's own launch path (`DeviceKernel` on
`bench.emulate.EmulatedBackend`), against rustc's build of the same kernels.

This checks without a GPU what the device and the host do together: the seeds passed by value, the
blocks' partials, the last block's combination, the result words read back, the cap on the grid (one
multiprocessor here: 8 blocks, so larger inputs give each thread several iterations), the panic record,
and the guard that keeps later launches from running after a panic. Blocks run one after another in the
emulation, so the order in which real blocks finish is not exercised here (the GPU tests do that).
"""
from __future__ import annotations

import ctypes
import struct
from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu import pipeline
from rs2gpu.runtime.arguments import numpy_dtype
from rs2gpu.runtime.base import REDUCTION_BLOCKS_PER_MULTIPROCESSOR, DeviceKernel

from bench import emulate
from tests.support.paths import CASES

SEMANTICS = CASES / "semantics.rs"
REDUCTIONS = ["reduce_f64", "reduce_f32", "reduce_i32", "reduce_u64", "reduce_usize", "locate_extremes",
              "locate_extremes_i32"]
CAPPED = REDUCTION_BLOCKS_PER_MULTIPROCESSOR * 256  # threads of the capped grid on one multiprocessor
SIZES = (1, 255, 256, 257, 3 * CAPPED + 17)

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


class RecordingBackend(emulate.EmulatedBackend):
    """The emulated device, keeping every allocation to look at device memory after a call."""

    def __init__(self, workdir: Path) -> None:
        super().__init__(workdir, multiprocessors=1)
        self.buffers = []

    def alloc(self, nbytes: int):
        self.buffers.append(super().alloc(nbytes))
        return self.buffers[-1]


@pytest.fixture(scope="module")
def backend(tmp_path_factory):
    if emulate.unavailable():
        pytest.fail(emulate.unavailable())
    return RecordingBackend(tmp_path_factory.mktemp("emulated"))


def device_kernels(translation: pipeline.Translation, backend, names) -> dict[str, DeviceKernel]:
    emitted = translation.emitted
    entries = emitted.manifest["kernels"]
    return {name: DeviceKernel(backend, name, entries[name], emitted.files[entries[name]["files"]["cuda"]],
                               entries[name]["files"]["cuda"]) for name in names}


@pytest.fixture(scope="module")
def semantics(backend):
    return rs2gpu.load(SEMANTICS, backend="cpu"), device_kernels(pipeline.translate(SEMANTICS), backend, REDUCTIONS)


@pytest.fixture(scope="module")
def own(backend, tmp_path_factory):
    path = tmp_path_factory.mktemp("own") / "own.rs"
    path.write_text(OWN)
    return (rs2gpu.load(path, backend="cpu"),
            device_kernels(pipeline.translate(path), backend,
                           ["seeded", "sum_rows", "gather_then_fill", "gather_then_sum", "clip_then_fill",
                            "negative_zeros"]))


def tickets_left(kernel: DeviceKernel) -> int:
    """The module's count of blocks that took a ticket: 0 between launches, as the last block leaves it."""
    return ctypes.c_uint32.in_dll(kernel._module.handle, "rs2gpu_finished_blocks").value


def exact_values(entry: dict, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Values whose sums and products are exact in any order, so every result must equal rustc's bit for
    bit: small non-zero integers (with many repeats: ties for the location reductions; wrapping integer
    products), and for floats ±1 with a few ±2 and ±0.5 (the products are powers of two that stay in range)."""
    out = []
    for p in entry["params"]:
        dtype = numpy_dtype(p["elem"])
        if dtype.kind == "f":
            values = rng.choice([1.0, -1.0, 2.0, -2.0, 0.5, -0.5], n, p=[0.45, 0.45, 0.025, 0.025, 0.025, 0.025])
        else:
            values = rng.integers(1, 10, n) * (rng.choice([-1, 1], n) if dtype.kind == "i" else 1)
        out.append(values.astype(dtype))
    return out


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_matches_rustc(semantics, backend, name, n):
    cpu, kernels = semantics
    entry = cpu.manifest["kernels"][name]
    args = exact_values(entry, n, np.random.default_rng([n, len(name)]))
    launched = len(backend.launches)
    assert kernels[name](*args) == getattr(cpu, name)(*args)
    for symbol, grid, _ in backend.launches[launched:]:
        assert np.prod(grid) <= REDUCTION_BLOCKS_PER_MULTIPROCESSOR, symbol
    assert tickets_left(kernels[name]) == 0


@pytest.mark.parametrize("n", [1, 257, 3 * CAPPED + 17])
@pytest.mark.parametrize(("bias", "ceiling", "top"), [(1000, -100, False), (-5, 100, False), (0, 0, True)])
def test_the_seed_comes_first_in_the_combination(own, n, bias, ceiling, top):
    """Seeds that are not the identity: `total` starts at `bias`, `low` at `ceiling` (below every element,
    or above), and the location reduction at element 0, before the loop (the largest of all, then it keeps
    its tie with a later element); n = 1 runs no iteration."""
    cpu, kernels = own
    a = np.random.default_rng(n).integers(-9, 10, n).astype(np.int64)
    if top:
        a[0] = 50
        a[n // 2] = 50
    assert kernels["seeded"](a, bias, ceiling) == cpu.seeded(a, bias, ceiling)


@pytest.mark.parametrize("cols", [1, 5, 40, 300])
def test_a_two_dimensional_reduction_on_a_capped_grid_matches_rustc(own, backend, cols):
    cpu, kernels = own
    a = np.random.default_rng(cols).integers(-9, 10, 6000).astype(np.int64)
    assert kernels["sum_rows"](a, cols) == cpu.sum_rows(a, cols)
    _, grid, block = backend.launches[-1]
    assert np.prod(grid) <= REDUCTION_BLOCKS_PER_MULTIPROCESSOR and np.prod(block) == 256


def test_a_panic_keeps_the_later_launch_from_writing_device_memory(own, backend):
    kernel = own[1]["gather_then_fill"]
    n = 600
    a, idx = np.arange(n, dtype=np.float64), np.arange(n, dtype=np.uint64)
    idx[n // 2] = n + 3
    out, filled = np.zeros(n), np.zeros(n)
    first = len(backend.buffers)
    with pytest.raises(rs2gpu.KernelPanic, match=f"index out of bounds: the len is {n} but the index is {n + 3}"):
        kernel(out, a, idx, filled)
    filled_on_device = backend.buffers[first + 3].array.view(np.float64)  # out, a, idx, then filled
    assert not filled_on_device.any(), "the second loop ran after the first one panicked"
    assert not filled.any()  # and nothing was copied back
    idx[n // 2] = 0
    kernel(out, a, idx, filled)  # the record was reset: this call runs both loops
    assert np.all(filled == 1.0) and out[n // 2] == 0.0


def packed_stop_flag(kernel: DeviceKernel, launch: int) -> bool:
    """The `rs2gpu_may_stop` argument the last call packed for a launch."""
    lp = kernel.plan.launches[launch]
    (at,) = [k for k, (kind, *_) in enumerate(lp.fields) if kind == "stop"]
    return struct.unpack(lp.format, lp.buffer.raw[:struct.calcsize(lp.format)])[at]


def test_a_launch_reads_the_panic_record_only_after_code_that_can_panic(own):
    # the first loop's conditional write is checked on the device only when `out` may be too short (its
    # checked variant); only then must the second loop look at the record before it fills
    kernel = own[1]["clip_then_fill"]
    a, filled = np.linspace(-1.0, 1.0, 300), np.zeros(50)
    kernel(np.zeros(300), a, 0.5, filled)
    assert kernel.last_variants[0] == "rs2gpu_clip_then_fill_0" and packed_stop_flag(kernel, 1) is False
    kernel(np.zeros(300), a, 2.0, filled)  # `out` as long as `a`, no element above the limit
    assert packed_stop_flag(kernel, 1) is False
    with pytest.raises(rs2gpu.KernelPanic, match="the len is 100 but the index is 100"):
        kernel(np.zeros(100), a, -2.0, filled)  # too short: the checked variant runs, and panics at 100 first
    assert kernel.last_variants[0] == "rs2gpu_clip_then_fill_0_checked" and packed_stop_flag(kernel, 1) is True


def test_a_reduction_launch_after_a_panic_takes_its_tickets_and_the_next_call_is_right(own):
    kernel = own[1]["gather_then_sum"]
    n = 3 * CAPPED + 1
    a, idx, out = np.ones(n), np.zeros(n, dtype=np.uint64), np.zeros(n)
    idx[-1] = 2 * n
    with pytest.raises(rs2gpu.KernelPanic, match="index out of bounds"):
        kernel(out, a, idx)
    assert tickets_left(kernel) == 0
    idx[-1] = 0
    assert kernel(out, a, idx) == float(n)


@pytest.mark.parametrize("n", [1, 3 * CAPPED + 17])
def test_a_sum_of_negative_zeros_seeded_with_one_is_negative_zero_as_in_rust(own, n: int) -> None:
    cpu, device = own
    a = np.full(n, -0.0)
    want, got = cpu.negative_zeros(a), device["negative_zeros"](a)
    assert np.signbit(want)  # rustc: -0.0 + -0.0 == -0.0
    assert struct.pack("<d", got) == struct.pack("<d", want)
