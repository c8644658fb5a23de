"""The L2-adds entry point (`emit.l2_adds`): where the slice elements a loop touches fit in the device's
L2, its `y[i] += v` runs as atomic adds the L2 performs; otherwise the vector or the general entry point
runs. Results are compared with rustc's build of the same kernels (tests/runtime/data/l2_adds.rs),
bitwise: an f64 add in the L2 rounds to nearest and keeps subnormals, as `+` does.

Tests that take `device` run on an emulated device that reports an L2 of 16,000 bytes and, under
`-m gpu`, on the GPU with its own L2."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(__file__).parent / "data" / "l2_adds.rs"


@pytest.fixture(scope="module")
def l2_device(device):
    return device.with_l2()


@pytest.fixture(scope="module")
def kernels(l2_device):
    return l2_device.load(SOURCE)


def awkward(n: int, seed: int) -> np.ndarray:
    """Values whose sums round, underflow to subnormals, cancel to +0.0 or keep -0.0."""
    rng = np.random.default_rng(seed)
    pool = np.array([1.0, -1.0, 1e-308, -3e-310, 5e-324, 0.0, -0.0, 1e308, np.pi, 1 / 3])
    return np.where(rng.random(n) < 0.5, rng.choice(pool, n), rng.standard_normal(n))


@pytest.mark.parametrize("share", [4, 1], ids=["a quarter of the L2", "the whole L2"])
@pytest.mark.parametrize("kernel", ["daxpy", "drain"])
def test_a_loop_whose_data_fit_in_the_l2_adds_there_with_rusts_result(l2_device, rust, kernels, kernel: str,
                                                                      share: int) -> None:
    n = l2_device.l2_bytes() // 16 // share  # y and x: 16 bytes an iteration
    x = awkward(n, 1)
    expected, y = awkward(n, 2), l2_device.to_device(awkward(n, 2))
    getattr(rust, kernel)(expected, x, 0.75)
    getattr(kernels, kernel)(y, l2_device.to_device(x), 0.75)
    assert getattr(kernels, kernel).last_variants == [f"rs2gpu_{kernel}_0_l2_adds"]
    assert l2_device.to_host(y).tobytes() == expected.tobytes()


def test_one_iteration_more_than_fits_runs_the_vector_entry_point(l2_device, rust, kernels) -> None:
    n = l2_device.l2_bytes() // 16 + 1
    x = awkward(n, 3)
    expected, y = awkward(n, 4), awkward(n, 4)
    rust.daxpy(expected, x, 2.0)
    kernels.daxpy(y, x, 2.0)
    assert kernels.daxpy.last_variants == ["rs2gpu_daxpy_0_vector"]
    assert y.tobytes() == expected.tobytes()


def test_every_slice_the_loop_reads_counts_toward_what_must_fit(emulated_device, rust) -> None:
    device = emulated_device.with_l2()
    kernel = device.load(SOURCE).energy_step
    for n, entry in ((device.l2_bytes() // 32, "rs2gpu_energy_step_0_l2_adds"),
                     (device.l2_bytes() // 16, "rs2gpu_energy_step_0_vector")):
        d, p, q = awkward(n, 5), awkward(n, 6), awkward(n, 7)
        expected, e = awkward(n, 8), awkward(n, 8)
        rust.energy_step(expected, d, p, q)
        kernel(e, d, p, q)
        assert kernel.last_variants == [entry]
        assert e.tobytes() == expected.tobytes()


def test_a_repeated_call_keeps_the_l2_adds(l2_device, rust, kernels) -> None:
    n = l2_device.l2_bytes() // 32
    x = awkward(n, 9)
    expected, y = awkward(n, 10), l2_device.to_device(awkward(n, 10))
    device_x = l2_device.to_device(x)
    before = kernels.daxpy.repeats
    for a in (-1.25, 0.5, 3.0):
        rust.daxpy(expected, x, a)
        kernels.daxpy(y, device_x, a)
    assert kernels.daxpy.repeats > before  # the later calls took the repeat path
    assert kernels.daxpy.last_variants == ["rs2gpu_daxpy_0_l2_adds"]
    assert l2_device.to_host(y).tobytes() == expected.tobytes()


def test_a_device_that_reports_no_l2_for_them_never_runs_them(emulated_device, rust) -> None:
    assert emulated_device.l2_bytes() == 0
    daxpy = emulated_device.load(SOURCE).daxpy
    x = awkward(8, 11)
    expected, y = awkward(8, 12), awkward(8, 12)
    rust.daxpy(expected, x, 0.5)
    daxpy(y, x, 0.5)
    assert daxpy.last_variants == ["rs2gpu_daxpy_0_vector"]
    assert y.tobytes() == expected.tobytes()
