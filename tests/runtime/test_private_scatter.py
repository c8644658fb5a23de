"""Histograms through the private entry point (each block adds into a shared-memory copy of the target,
then adds what it changed to the slice) and through the global atomics, on an emulated device (the
generated CUDA compiled by g++, `bench.emulate`) against rustc's build of the same kernels (the cpu
backend). The sums are of integers, or of floats that are small integers, so every order of the
additions gives rustc's bits."""
from __future__ import annotations

import numpy as np
import pytest

import rs2gpu
from rs2gpu import pipeline
from rs2gpu.runtime.base import DeviceKernel
from bench.emulate import EmulatedBackend, compiler

SOURCE = """
use rs2gpu::kernel;

#[kernel]
pub fn histogram(counts: &mut [i64], bins: &[usize], weights: &[i64]) {
    for i in 0..bins.len() {
        counts[bins[i]] += weights[i];
    }
}

#[kernel]
pub fn withdraw(sums: &mut [f64], bins: &[usize], v: &[f64]) {
    for i in 0..bins.len() {
        sums[bins[i]] -= v[i];
    }
}
"""
CAPACITY_I64 = 16 * 1024 // 8  # the copy is 16 KiB


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    folder = tmp_path_factory.mktemp("private")
    path = folder / "private.rs"
    path.write_text(SOURCE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RS2GPU_CACHE_DIR", str(folder / "cpu-cache"))
        rust = rs2gpu.load(path, backend="cpu")
    emitted = pipeline.translate(path).emitted
    (folder / "emulated").mkdir()
    backend = EmulatedBackend(folder / "emulated")

    def device(name: str) -> DeviceKernel:
        entry = emitted.manifest["kernels"][name]
        file = entry["files"]["cuda"]
        return DeviceKernel(backend, name, entry, emitted.files[file], file)

    return rust, {name: device(name) for name in ("histogram", "withdraw")}


def histogram_inputs(bins: int, n: int, seed: int):
    rng = np.random.default_rng(seed)
    return (rng.integers(-50, 50, bins).astype(np.int64), rng.integers(0, bins, n).astype(np.uint64),
            rng.integers(-1000, 1000, n).astype(np.int64))


def test_a_short_target_runs_the_private_entry_point_and_gives_rustcs_result(kernels) -> None:
    rust, device = kernels
    start, bins, weights = histogram_inputs(10, 20_000, 1)
    want, got = start.copy(), start.copy()
    rust.histogram(want, bins, weights)
    device["histogram"](got, bins, weights)
    assert device["histogram"].last_variants == ["rs2gpu_histogram_0_private"]
    assert np.array_equal(got, want)


def test_a_target_as_long_as_the_copy_still_runs_the_private_entry_point(kernels) -> None:
    rust, device = kernels
    start, bins, weights = histogram_inputs(CAPACITY_I64, 20_000, 2)
    want, got = start.copy(), start.copy()
    rust.histogram(want, bins, weights)
    device["histogram"](got, bins, weights)
    assert device["histogram"].last_variants == ["rs2gpu_histogram_0_private"]
    assert np.array_equal(got, want)


def test_a_longer_target_runs_the_global_atomics_and_gives_rustcs_result(kernels) -> None:
    rust, device = kernels
    start, bins, weights = histogram_inputs(CAPACITY_I64 + 1, 20_000, 3)
    want, got = start.copy(), start.copy()
    rust.histogram(want, bins, weights)
    device["histogram"](got, bins, weights)
    assert device["histogram"].last_variants == ["rs2gpu_histogram_0"]
    assert np.array_equal(got, want)


def test_elements_no_update_reaches_keep_their_bits(kernels) -> None:
    rust, device = kernels
    rng = np.random.default_rng(4)
    start = np.array([-0.0, np.nan, 0.0, 5.0, -0.0, np.inf, 2.5, -0.0])
    bins = rng.choice([2, 3, 6], 5_000).astype(np.uint64)  # elements 0, 1, 4, 5 and 7 are never updated
    v = rng.integers(-8, 8, 5_000).astype(np.float64)
    want, got = start.copy(), start.copy()
    rust.withdraw(want, bins, v)
    device["withdraw"](got, bins, v)
    assert device["withdraw"].last_variants == ["rs2gpu_withdraw_0_private"]
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_a_bin_past_the_end_raises_rusts_panic_and_leaves_the_host_data(kernels) -> None:
    rust, device = kernels
    start, bins, weights = histogram_inputs(10, 20_000, 5)
    bins[12_345] = 10
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        rust.histogram(start.copy(), bins, weights)
    got = start.copy()
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        device["histogram"](got, bins, weights)
    assert (raised.value.message, raised.value.location) == (expected.value.message, expected.value.location)
    assert np.array_equal(got, start)
