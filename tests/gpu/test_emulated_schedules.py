"""Host loops, per-iteration checks and generic dispatch through the real `DeviceKernel`, on the emulated
device (no GPU needed): what is launched, with which step values, what is copied, and when a call panics.
Expected values come from the cpu backend (the rustc build of the same kernels)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu import pipeline
from rs2gpu.runtime.dispatch import group_instances

from tests.support.emulated_device import emulated_kernels, launched

LANGUAGE = Path(__file__).resolve().parent / "kernels" / "language.rs"


@pytest.fixture(scope="module")
def cpu():
    return rs2gpu.load(LANGUAGE, backend="cpu")


@pytest.fixture(scope="module")
def translation():
    return pipeline.translate(LANGUAGE, ("cuda",))


@pytest.fixture(scope="module")
def device(translation, tmp_path_factory):
    return emulated_kernels(translation, tmp_path_factory.mktemp("emulated"))


def random(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def test_host_loop_launches_its_loops_every_step_with_the_data_left_on_the_device(cpu, device):
    jacobi = device["jacobi"]
    a, b = random(100, 1), random(100, 2)
    want_a, want_b = a.copy(), b.copy()
    cpu.jacobi(want_a, want_b, 5)
    first = len(launched(jacobi))
    jacobi(a, b, 5)
    # both loops run their vector entry points (`for i in 1..`: one iteration alone, then pairs)
    assert launched(jacobi)[first:] == ["rs2gpu_jacobi_0_vector", "rs2gpu_jacobi_1_vector"] * 5
    assert sorted((t.param, t.direction) for t in jacobi.last_transfers) == [
        ("a", "d2h"), ("a", "h2d"), ("b", "d2h"), ("b", "h2d")]
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


def test_host_loop_of_no_steps_launches_nothing_and_keeps_the_data(device):
    jacobi = device["jacobi"]
    a, b = random(50, 3), random(50, 4)
    before = (a.copy(), b.copy())
    first = len(launched(jacobi))
    jacobi(a, b, 0)
    assert launched(jacobi)[first:] == []
    assert a.tobytes() == before[0].tobytes() and b.tobytes() == before[1].tobytes()


def test_bound_that_depends_on_the_step_is_evaluated_in_every_step(cpu, device):
    kernel = device["shrinking_then_sum"]
    a = random(40, 5)
    want = a.copy()
    total = cpu.shrinking_then_sum(want, 7)
    first = len(launched(kernel))
    assert kernel(a, 7) == pytest.approx(total, rel=1e-12)
    assert a.tobytes() == want.tobytes()
    # (both run their vector entry points: `a` is aligned and the loops start at 0)
    assert launched(kernel)[first:] == ["rs2gpu_shrinking_then_sum_0_vector"] * 7 \
        + ["rs2gpu_shrinking_then_sum_1_vector"]


def test_check_that_fails_in_a_later_step_panics_before_that_step_and_copies_nothing_back(cpu, device):
    kernel = device["drifting_read"]
    b, a = random(20, 6), random(36, 7)  # a[i + 2 * s] leaves `a` once 2 * s > 16, at s = 9
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        cpu.drifting_read(b.copy(), a, 12)
    before = b.copy()
    first = len(launched(kernel))
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernel(b, a, 12)
    assert raised.value.message == expected.value.message == "index out of bounds: the len is 36 but the index is 36"
    assert len(launched(kernel)) - first == 9  # steps 0..=8 ran
    assert b.tobytes() == before.tobytes()


def test_negative_signed_index_panics_with_the_wrapped_usize_before_any_launch(cpu, device):
    kernel = device["signed_from"]
    out, inp = np.zeros(8, dtype=np.float32), np.ones(24, dtype=np.float32)
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        cpu.signed_from(out.copy(), inp, 0)
    first = len(launched(kernel))
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernel(out, inp, 0)
    assert raised.value.message == expected.value.message
    assert raised.value.message == f"index out of bounds: the len is 24 but the index is {2**64 - 1}"  # the read comes first
    assert len(launched(kernel)) == first


def test_generic_kernel_on_a_device_picks_the_instantiation_of_the_arguments(cpu, device, translation):
    axpy = group_instances(device, translation.emitted.manifest)["axpy_generic"]
    y, x = random(30, 8).astype(np.float32), random(30, 9).astype(np.float32)
    want = y.copy()
    cpu.axpy_generic(want, x, 1.5)
    axpy(y, x, 1.5)
    assert axpy.last is device["axpy_generic_f32"]
    assert y.tobytes() == want.tobytes()


def test_let_of_a_host_loop_that_panics_stops_the_call_in_its_iteration(cpu, device):
    kernel = device["step_divisor"]
    a = np.arange(6, dtype=np.int32)
    with pytest.raises(rs2gpu.KernelPanic) as expected:
        cpu.step_divisor(a.copy(), 3)
    first = len(launched(kernel))
    with pytest.raises(rs2gpu.KernelPanic) as raised:
        kernel(a, 3)
    assert raised.value.message == expected.value.message == "attempt to divide by zero"
    assert launched(kernel)[first:] == ["rs2gpu_step_divisor_0_vector"]  # step 0 ran, step 1 panicked
    assert a.tolist() == list(range(6))
