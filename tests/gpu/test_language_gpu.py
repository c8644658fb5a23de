"""Host loops and generic kernels on the cuda backend, beyond the differential test: what stays on the
device across the steps of a host loop, and generic dispatch on device arrays. Expected values come
from the cpu backend (rustc's build of tests/gpu/kernels/language.rs)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

pytestmark = pytest.mark.gpu

LANGUAGE = Path(__file__).resolve().parent / "kernels" / "language.rs"


@pytest.fixture(scope="module")
def cuda():
    return rs2gpu.load(LANGUAGE, backend="cuda")


@pytest.fixture(scope="module")
def cpu():
    return rs2gpu.load(LANGUAGE, backend="cpu")


def test_host_loop_copies_each_host_array_once_whatever_the_number_of_steps(cuda, cpu):
    rng = np.random.default_rng(1)
    a, b = rng.random(100_003), rng.random(100_003)
    want_a, want_b = a.copy(), b.copy()
    cpu.jacobi(want_a, want_b, 200)
    cuda.jacobi(a, b, 200)
    assert sorted((t.param, t.direction) for t in cuda.jacobi.last_transfers) == [
        ("a", "d2h"), ("a", "h2d"), ("b", "d2h"), ("b", "h2d")]
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


def test_host_loop_on_device_arrays_copies_nothing(cuda, cpu):
    import cupy as cp

    rng = np.random.default_rng(2)
    a, b = rng.random(4099), rng.random(4099)
    want_a, want_b = a.copy(), b.copy()
    cpu.jacobi(want_a, want_b, 9)
    a_dev, b_dev = cp.asarray(a), cp.asarray(b)
    cuda.jacobi(a_dev, b_dev, 9)
    cuda.synchronize()
    assert cuda.jacobi.last_transfers == []
    assert cp.asnumpy(a_dev).tobytes() == want_a.tobytes() and cp.asnumpy(b_dev).tobytes() == want_b.tobytes()


def test_check_failing_in_a_later_step_leaves_device_arrays_as_the_earlier_steps_made_them(cuda, cpu):
    import cupy as cp

    b, a = np.ones(20), np.arange(36.0)  # a[i + 2 * s] leaves `a` at s = 9
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        cpu.drifting_read(b.copy(), a, 12)
    b_dev = cp.asarray(b)
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        cuda.drifting_read(b_dev, cp.asarray(a), 12)
    assert raised.value.message == expected.value.message
    nine_steps = b.copy()
    cpu.drifting_read(nine_steps, a, 9)  # what the steps before the panic computed, as Rust's run did
    assert cp.asnumpy(b_dev).tobytes() == nine_steps.tobytes()


def test_generic_kernel_dispatches_on_the_dtype_of_device_arrays(cuda, cpu):
    import cupy as cp

    y, x = np.ones(1000, dtype=np.float32), np.arange(1000, dtype=np.float32)
    want = y.copy()
    cpu.axpy_generic(want, x, 0.5)
    y_dev = cp.asarray(y)
    cuda.axpy_generic(y_dev, cp.asarray(x), 0.5)
    assert cuda.axpy_generic.last is cuda.axpy_generic_f32
    assert cp.asnumpy(y_dev).tobytes() == want.tobytes()
