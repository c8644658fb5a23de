"""The L2-adds entry point (`emit.l2_adds`): where the slice elements a loop touches fit in the device's
L2, its `y[i] += v` runs as atomic adds the L2 performs; otherwise the vector or the general entry point
runs. The kernels run on an emulated device (the generated CUDA compiled by g++, `bench.emulate`) that
reports an L2 of 16,000 bytes, and their results are compared with rustc's build of the same kernels,
bitwise: an f64 add in the L2 rounds as `+` does."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.emulate import EmulatedBackend, EmulatedDeviceArray, compiler, rust_and_emulated

SOURCE = (Path(__file__).parent / "data" / "l2_adds.rs").read_text()
L2_BYTES = 16_000


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    folder = tmp_path_factory.mktemp("l2_adds")
    (folder / "emulated").mkdir()
    return rust_and_emulated(folder, "l2_adds", SOURCE, EmulatedBackend(folder / "emulated", l2_bytes=L2_BYTES))


def awkward(n: int, seed: int) -> np.ndarray:
    """Values whose sums round, underflow to subnormals, cancel to +0.0 or keep -0.0."""
    rng = np.random.default_rng(seed)
    pool = np.array([1.0, -1.0, 1e-308, -3e-310, 5e-324, 0.0, -0.0, 1e308, np.pi, 1 / 3])
    return np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.standard_normal(n))


@pytest.mark.parametrize("kernel", ["daxpy", "drain"])
def test_a_loop_whose_data_fit_in_the_l2_adds_there_with_rusts_result(kernels, kernel: str) -> None:
    rust, device = kernels
    n = L2_BYTES // 16  # y and x: 16 bytes an iteration
    x = awkward(n, 1)
    expected, y = awkward(n, 2), awkward(n, 2)
    getattr(rust, kernel)(expected, x, 0.75)
    getattr(device, kernel)(y, x, 0.75)
    assert getattr(device, kernel).last_variants == [f"rs2gpu_{kernel}_0_l2_adds"]
    assert y.tobytes() == expected.tobytes()


def test_one_iteration_more_than_fits_runs_the_vector_entry_point(kernels) -> None:
    rust, device = kernels
    n = L2_BYTES // 16 + 1
    x = awkward(n, 3)
    expected, y = awkward(n, 4), awkward(n, 4)
    rust.daxpy(expected, x, 2.0)
    device.daxpy(y, x, 2.0)
    assert device.daxpy.last_variants == ["rs2gpu_daxpy_0_vector"]
    assert y.tobytes() == expected.tobytes()


def test_every_slice_the_loop_reads_counts_toward_what_must_fit(kernels) -> None:
    rust, device = kernels
    for n, entry in ((L2_BYTES // 32, "rs2gpu_energy_step_0_l2_adds"), (L2_BYTES // 16, "rs2gpu_energy_step_0_vector")):
        d, p, q = awkward(n, 5), awkward(n, 6), awkward(n, 7)
        expected, e = awkward(n, 8), awkward(n, 8)
        rust.energy_step(expected, d, p, q)
        device.energy_step(e, d, p, q)
        assert device.energy_step.last_variants == [entry]
        assert e.tobytes() == expected.tobytes()


def test_a_repeated_call_keeps_the_l2_adds(kernels) -> None:
    rust, device = kernels
    n = 600
    x = awkward(n, 9)
    expected, y = awkward(n, 10), awkward(n, 10)
    device_x, device_y = EmulatedDeviceArray(x), EmulatedDeviceArray(y)
    before = device.daxpy.repeats
    for _ in range(3):
        rust.daxpy(expected, x, -1.5)
        device.daxpy(device_y, device_x, -1.5)
    assert device.daxpy.repeats > before  # the second and third calls took the repeat path
    assert device.daxpy.last_variants == ["rs2gpu_daxpy_0_l2_adds"]
    assert y.tobytes() == expected.tobytes()


def test_a_device_that_reports_no_l2_for_them_never_runs_them(tmp_path) -> None:
    (tmp_path / "emulated").mkdir()
    rust, device = rust_and_emulated(tmp_path, "l2_adds", SOURCE, EmulatedBackend(tmp_path / "emulated"))
    x = awkward(8, 11)
    expected, y = awkward(8, 12), awkward(8, 12)
    rust.daxpy(expected, x, 0.5)
    device.daxpy(y, x, 0.5)
    assert device.daxpy.last_variants == ["rs2gpu_daxpy_0_vector"]
    assert y.tobytes() == expected.tobytes()
