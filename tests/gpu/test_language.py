"""Host loops, per-iteration checks and generic dispatch through the real `DeviceKernel`: what is launched
in each step, what stays on the device across the steps, what is copied, when a call panics, and which
instantiation of a generic kernel a call runs. The kernels are tests/gpu/kernels/language.rs; expected
values come from the cpu backend (rustc's build of the same file).

Tests that take `device` run on the emulated device and, under `-m gpu`, on the GPU; the others read what
only one of them shows (the emulated device's launch log, the GPU's device arrays)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

from tests.support.devices import CUDA

SOURCE = Path(__file__).resolve().parent / "kernels" / "language.rs"


def random(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def launched(kernel) -> list[str]:
    """The symbols the emulated device has launched, in order."""
    return [symbol for symbol, _, _ in kernel.backend.launches]


def test_a_host_loop_launches_its_loops_every_step_and_copies_each_host_array_once(device, kernels, rust):
    a, b = random(4099, 1), random(4099, 2)
    want_a, want_b = a.copy(), b.copy()
    rust.jacobi(want_a, want_b, 20)
    before = device.activity(kernels.jacobi)
    kernels.jacobi(a, b, 20)
    # both loops run their vector entry points (`for i in 1..`: one iteration alone, then pairs)
    assert kernels.jacobi.last_variants == ["rs2gpu_jacobi_0_vector", "rs2gpu_jacobi_1_vector"] * 20
    assert device.activity(kernels.jacobi).launches - before.launches == 40
    assert sorted((t.param, t.direction) for t in kernels.jacobi.last_transfers) == [
        ("a", "d2h"), ("a", "h2d"), ("b", "d2h"), ("b", "h2d")]
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


def test_host_loop_of_no_steps_launches_nothing_and_keeps_the_data(emulated):
    jacobi = emulated.jacobi
    a, b = random(50, 3), random(50, 4)
    before = (a.copy(), b.copy())
    first = len(launched(jacobi))
    jacobi(a, b, 0)
    assert launched(jacobi)[first:] == []
    assert a.tobytes() == before[0].tobytes() and b.tobytes() == before[1].tobytes()


@pytest.mark.parametrize("device", [CUDA], indirect=True)
def test_host_loop_on_device_arrays_copies_nothing(device, kernels, rust):
    a, b = random(4099, 5), random(4099, 6)
    want_a, want_b = a.copy(), b.copy()
    rust.jacobi(want_a, want_b, 9)
    a_dev, b_dev = device.to_device(a), device.to_device(b)
    kernels.jacobi(a_dev, b_dev, 9)
    assert kernels.jacobi.last_transfers == []
    assert device.to_host(a_dev).tobytes() == want_a.tobytes() and device.to_host(b_dev).tobytes() == want_b.tobytes()


def test_bound_that_depends_on_the_step_is_evaluated_in_every_step(rust, emulated):
    kernel = emulated.shrinking_then_sum
    a = random(40, 5)
    want = a.copy()
    total = rust.shrinking_then_sum(want, 7)
    first = len(launched(kernel))
    assert kernel(a, 7) == pytest.approx(total, rel=1e-12)
    assert a.tobytes() == want.tobytes()
    # (both run their vector entry points: `a` is aligned and the loops start at 0)
    assert launched(kernel)[first:] == ["rs2gpu_shrinking_then_sum_0_vector"] * 7 \
        + ["rs2gpu_shrinking_then_sum_1_vector"]


def test_a_check_failing_in_a_later_step_panics_before_that_step(device, kernels, rust):
    b, a = random(20, 6), random(36, 7)  # a[i + 2 * s] leaves `a` once 2 * s > 16, at s = 9
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        rust.drifting_read(b.copy(), a, 12)
    assert expected.value.message == "index out of bounds: the len is 36 but the index is 36"
    # host arrays: steps 0..=8 ran, and nothing was copied back
    before, activity = b.copy(), device.activity(kernels.drifting_read)
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernels.drifting_read(b, a, 12)
    assert raised.value.message == expected.value.message
    assert device.activity(kernels.drifting_read).launches - activity.launches == 9
    assert b.tobytes() == before.tobytes()
    # device arrays: they hold what the steps before the panic made of them, as Rust's run left them
    b_dev = device.to_device(b)
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernels.drifting_read(b_dev, device.to_device(a), 12)
    assert raised.value.message == expected.value.message
    nine_steps = b.copy()
    rust.drifting_read(nine_steps, a, 9)
    assert device.to_host(b_dev).tobytes() == nine_steps.tobytes()


def test_negative_signed_index_panics_with_the_wrapped_usize_before_any_launch(rust, emulated):
    kernel = emulated.signed_from
    out, inp = np.zeros(8, dtype=np.float32), np.ones(24, dtype=np.float32)
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        rust.signed_from(out.copy(), inp, 0)
    first = len(launched(kernel))
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernel(out, inp, 0)
    assert raised.value.message == expected.value.message
    assert raised.value.message == f"index out of bounds: the len is 24 but the index is {2**64 - 1}"  # the read comes first
    assert len(launched(kernel)) == first


def test_a_generic_kernel_runs_the_instantiation_of_its_arguments_element_type(device, kernels, rust):
    y, x = random(1000, 8).astype(np.float32), random(1000, 9).astype(np.float32)
    want = y.copy()
    rust.axpy_generic(want, x, 1.5)
    kernels.axpy_generic(y, x, 1.5)
    assert kernels.axpy_generic.last is kernels.axpy_generic_f32
    assert y.tobytes() == want.tobytes()
    y_dev = device.to_device(y)  # on device arrays, from the arrays' own element type
    rust.axpy_generic(want, x, 0.5)
    kernels.axpy_generic(y_dev, device.to_device(x), 0.5)
    assert kernels.axpy_generic.last is kernels.axpy_generic_f32
    assert device.to_host(y_dev).tobytes() == want.tobytes()


def test_let_of_a_host_loop_that_panics_stops_the_call_in_its_iteration(rust, emulated):
    kernel = emulated.step_divisor
    a = np.arange(6, dtype=np.int32)
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        rust.step_divisor(a.copy(), 3)
    first = len(launched(kernel))
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernel(a, 3)
    assert raised.value.message == expected.value.message == "attempt to divide by zero"
    assert launched(kernel)[first:] == ["rs2gpu_step_divisor_0_vector"]  # step 0 ran, step 1 panicked
    assert a.tolist() == list(range(6))
