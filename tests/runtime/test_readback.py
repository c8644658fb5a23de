"""What a call brings back from the device after its launches (`runtime/readback.py`): the reductions'
results are written by the device into host memory, so a call copies nothing for them; only a kernel
that checks something on the device copies its panic record. A seed that is an element of a slice the
kernel only reads is read on the device too, so the host reads nothing before the launch, except for a
loop that runs no iteration, whose result is that seed. The kernels (tests/runtime/data/readback.rs,
RAJAPerf's FIRST_MIN from examples/rajaperf and the gathered sum of tests/runtime/data/first_panics.rs)
run on an emulated device of this module's own (the generated CUDA compiled by g++, `bench.emulate`) and
their results are compared with rustc's build of the same kernels (the cpu backend), bitwise: these
reductions take minima and add integers (whole numbers, in f64)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray
from rs2gpu.runtime.errors import KernelPanic
from tests.support.devices import EmulatedDevice, rustc_build
from tests.support.paths import RAJAPERF

SOURCE = Path(__file__).parent / "data" / "readback.rs"
FIRST_PANICS = Path(__file__).parent / "data" / "first_panics.rs"


@pytest.fixture(scope="module")
def emulated_device(tmp_path_factory: pytest.TempPathFactory) -> EmulatedDevice:
    """This module's own emulated device, in place of the session's: the `emulated` fixture (tests/conftest.py)
    loads `SOURCE` on it and `rajaperf_kernels` RAJAPerf's, so that the copies and launches on it are this
    module's alone."""
    return EmulatedDevice(tmp_path_factory.mktemp("readback"))


@pytest.fixture(scope="module")
def rajaperf_kernels(emulated_device):
    """(rustc's build, the emulated device's) of RAJAPerf's kernels, for FIRST_MIN."""
    return rustc_build(RAJAPERF), emulated_device.load(RAJAPERF)


@pytest.fixture(scope="module")
def gathers(emulated_device):
    """(rustc's build, the emulated device's) of first_panics.rs, for its sum through an index list."""
    return rustc_build(FIRST_PANICS), emulated_device.load(FIRST_PANICS)


@pytest.fixture()
def copies(emulated_device, monkeypatch) -> list[tuple[int, int]]:
    """(source address, bytes) of every device → host copy the emulated device makes."""
    seen: list[tuple[int, int]] = []
    backend = emulated_device.backend
    real_copy, real_download = backend.copy_to_host_async, backend.download

    def copy_to_host_async(dst_address: int, src_ptr: int, nbytes: int) -> None:
        seen.append((src_ptr, nbytes))
        real_copy(dst_address, src_ptr, nbytes)

    def download(host, src_ptr: int) -> None:
        seen.append((src_ptr, host.nbytes))
        real_download(host, src_ptr)

    monkeypatch.setattr(backend, "copy_to_host_async", copy_to_host_async)
    monkeypatch.setattr(backend, "download", download)
    return seen


def test_a_reduction_result_comes_back_without_a_copy(rust, emulated, copies) -> None:
    v = EmulatedDeviceArray(np.random.default_rng(1).integers(-10**12, 10**12, 10_007))
    for _ in range(2):  # the second call's result replaces the first's in the same host memory
        assert emulated.total(v) == rust.total(v.array)
    assert copies == []


def test_a_kernel_that_checks_on_the_device_copies_only_its_panic_record(gathers, copies) -> None:
    rust, emulated = gathers
    rng = np.random.default_rng(2)
    v = EmulatedDeviceArray(rng.integers(-1000, 1000, 500).astype(np.float64))
    idx = EmulatedDeviceArray(rng.integers(0, 500, 2000).astype(np.uint64))
    assert emulated.gathered_sum(v, idx) == rust.gathered_sum(v.array, idx.array)
    assert [nbytes for _, nbytes in copies] == [emulated.gathered_sum._readback.end]


def test_an_index_out_of_bounds_found_on_the_device_still_panics_as_rust_does(gathers) -> None:
    rust, emulated = gathers
    v, idx = np.arange(500.0), np.array([3, 500, 7], dtype=np.uint64)
    with pytest.raises(KernelPanic) as on_device:
        emulated.gathered_sum(v, idx)
    with pytest.raises(KernelPanic) as in_rust:
        rust.gathered_sum(v, idx)
    assert "the len is 500 but the index is 500" in str(on_device.value)
    assert str(on_device.value).splitlines()[0] == str(in_rust.value).splitlines()[0]
    assert emulated.gathered_sum(v, np.array([499], dtype=np.uint64)) == 499.0  # the record was reset


@pytest.mark.parametrize("n", [1, 2, 4099])
def test_a_seed_read_from_the_slice_is_read_on_the_device(rajaperf_kernels, copies, n: int) -> None:
    rust, device = rajaperf_kernels
    x = EmulatedDeviceArray(np.random.default_rng(n).standard_normal(n))
    assert device.first_min(x) == rust.first_min(x.array)
    assert copies == []  # neither x[0] before the launch nor the results after it


def test_a_seed_that_no_element_beats_keeps_its_value_and_location(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    x = np.full(3000, 0.5)
    x[0] = -1.0
    x[1700] = -1.0  # a tie with the seed: Rust keeps the first
    assert device.first_min(x) == rust.first_min(x) == (-1.0, 0)


@pytest.mark.parametrize(("k", "first"), [(7, 0), (0, 3), (4095, 100)])
def test_a_seed_at_an_index_the_host_computes(rust, emulated, k: int, first: int) -> None:
    x = np.random.default_rng(k).standard_normal(4096)
    assert emulated.least_from(x, k, first) == rust.least_from(x, k, first)


def test_a_loop_that_runs_no_iteration_returns_the_element_seed(rust, emulated, copies) -> None:
    x = EmulatedDeviceArray(np.array([3.5, -2.0, 1.0]))
    assert emulated.least_from(x, 2, 3) == rust.least_from(x.array, 2, 3) == 1.0
    assert [nbytes for _, nbytes in copies] == [8]  # the host reads the one element


def test_a_seed_index_out_of_bounds_panics_before_any_launch(rust, emulated) -> None:
    x = np.zeros(5)
    launched = len(emulated.backend.launches)
    with pytest.raises(KernelPanic) as on_device:
        emulated.least_from(x, 9, 0)
    assert len(emulated.backend.launches) == launched
    with pytest.raises(KernelPanic) as in_rust:
        rust.least_from(x, 9, 0)
    assert "index out of bounds: the len is 5 but the index is 9" in str(on_device.value)
    assert str(on_device.value).splitlines()[0] == str(in_rust.value).splitlines()[0]


def test_an_empty_slice_panics_at_the_seed(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    with pytest.raises(KernelPanic) as on_device:
        device.first_min(np.zeros(0))
    with pytest.raises(KernelPanic) as in_rust:
        rust.first_min(np.zeros(0))
    assert str(on_device.value).splitlines()[0] == str(in_rust.value).splitlines()[0]
    assert "the len is 0 but the index is 0" in str(on_device.value)
