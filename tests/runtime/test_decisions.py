"""What a kernel's host decides once per decision key (`CallPlan.decision_key`): the host checks, the
entry point and the grid of a call are kept for the next calls with the same lengths and the same integer
parameters that the launches' bounds name, and decided again for any other. A call whose checks failed
keeps nothing. The kernels run on an emulated device (the generated CUDA compiled by g++,
`bench.emulate`) and their results are compared with rustc's build of the same kernels (the cpu
backend), bitwise."""
from __future__ import annotations

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray, compiler, rust_and_emulated
from rs2gpu.runtime.callplan import CallPlan
from rs2gpu.runtime.errors import KernelPanic

SOURCE = """
use rs2gpu::kernel;

#[kernel]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) {
    for i in 0..a.len() {
        a[i] = b[i] + alpha * c[i];
    }
}

#[kernel]
pub fn scale_from(c: &mut [f64], a: &[f64], first: usize) {
    for i in first..c.len() {
        c[i] = 2.0 * a[i];
    }
}

#[kernel]
pub fn fill_first(a: &mut [f64], x: f64) {
    for i in 0..x as usize {
        a[i] = x;
    }
}

#[kernel]
pub fn fill_counted(a: &mut [f64], x: f64) {
    let n = x as usize;
    for i in 0..n {
        a[i] = x;
    }
}

#[kernel]
pub fn relax(a: &mut [f64], steps: usize) {
    for step in 0..steps {
        for i in 0..a.len() {
            a[i] = a[i] * 0.5 + step as f64;
        }
    }
}
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return rust_and_emulated(tmp_path_factory.mktemp("decisions"), "decisions", SOURCE)


def values(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)


def test_a_call_with_shorter_slices_is_checked_again_and_panics(kernels) -> None:
    rust, device = kernels
    b, c = values(100, 1), values(100, 2)
    expected, a = np.zeros(100), np.zeros(100)
    rust.triad(expected, b, c, 0.5)
    device.triad(a, b, c, 0.5)
    assert a.tobytes() == expected.tobytes()
    with pytest.raises(KernelPanic, match="the len is 99 but the index is 99"):
        device.triad(np.zeros(100), b[:99].copy(), c, 0.5)
    with pytest.raises(KernelPanic, match="the len is 99 but the index is 99"):
        device.triad(np.zeros(100), b[:99].copy(), c, 0.5)  # and again: the failed check kept nothing


def test_the_same_lengths_after_a_panic_run_as_before(kernels) -> None:
    rust, device = kernels
    b, c = values(64, 3), values(64, 4)
    with pytest.raises(KernelPanic):
        device.triad(np.zeros(64), b, c[:10].copy(), 2.0)
    expected, a = np.zeros(64), np.zeros(64)
    rust.triad(expected, b, c, 2.0)
    device.triad(a, b, c, 2.0)
    assert a.tobytes() == expected.tobytes()


def test_an_integer_parameter_of_the_loop_bounds_is_part_of_the_key(kernels) -> None:
    rust, device = kernels
    a = values(999, 5)
    for first, entry in ((4, "rs2gpu_scale_from_0_vector"), (3, "rs2gpu_scale_from_0"),
                         (4, "rs2gpu_scale_from_0_vector")):
        expected, c = np.full(999, -1.0), np.full(999, -1.0)
        rust.scale_from(expected, a, first)
        device.scale_from(c, a, first)
        assert device.scale_from.last_variants == [entry], first
        assert c.tobytes() == expected.tobytes()


def test_slices_at_other_addresses_with_the_same_lengths_choose_the_entry_point_again(kernels) -> None:
    rust, device = kernels
    storage = values(1001, 6)
    aligned, shifted = storage[:1000].copy(), storage[1:]  # shifted: 8 bytes off the 16-byte grid
    assert shifted.ctypes.data % 16 == 8
    for b, entry in ((aligned, "rs2gpu_triad_0_vector"), (shifted, "rs2gpu_triad_0"),
                     (aligned, "rs2gpu_triad_0_vector")):
        expected, a = np.zeros(1000), np.zeros(1000)
        rust.triad(expected, b, b, 1.5)
        device.triad(EmulatedDeviceArray(a), EmulatedDeviceArray(b), EmulatedDeviceArray(b), 1.5)
        assert device.triad.last_variants == [entry]
        assert a.tobytes() == expected.tobytes()


def fills_as_rust_does(rust, device, name: str, counts: tuple[float, ...]) -> None:
    """`name(a, x)` on 8 elements, in turn for each x of `counts`, gives rustc's result each time; with 9.0
    it panics where Rust does."""
    for x in counts:
        expected, a = np.zeros(8), np.zeros(8)
        getattr(rust, name)(expected, x)
        getattr(device, name)(a, x)
        assert a.tobytes() == expected.tobytes()
    with pytest.raises(KernelPanic, match="the len is 8 but the index is 8"):
        getattr(device, name)(np.zeros(8), 9.0)


def test_a_loop_bound_read_from_a_float_is_decided_in_every_call(kernels) -> None:
    rust, device = kernels
    # `0..x as usize`: a key of floats would not tell -0.0 from 0.0, so none is kept
    assert CallPlan("fill_first", device.fill_first.entry).decision_key is None
    fills_as_rust_does(rust, device, "fill_first", (3.5, 7.0, 0.0))


def test_an_integer_preamble_value_computed_from_a_float_is_part_of_the_key(kernels) -> None:
    rust, device = kernels
    # `let n = x as usize`: the key holds n itself, exactly
    plan = CallPlan("fill_counted", device.fill_counted.entry)
    assert plan.decision_key(plan.bind((np.zeros(8), 3.5), {}, True)) == (8, 3)
    fills_as_rust_does(rust, device, "fill_counted", (3.5, 3.9, 7.0, 3.5))


def test_a_kernel_with_a_host_loop_is_decided_in_every_call(kernels) -> None:
    rust, device = kernels
    assert CallPlan("relax", device.relax.entry).decision_key is None
    expected, a = values(50, 7), values(50, 7)
    rust.relax(expected, 3)
    device.relax(a, 3)
    assert a.tobytes() == expected.tobytes()


def test_the_key_holds_every_length_and_the_integer_parameters_the_bounds_name(kernels) -> None:
    _, device = kernels
    plan = CallPlan("scale_from", device.scale_from.entry)
    bound = plan.bind((np.zeros(10), np.zeros(12), 4), {}, True)
    assert plan.decision_key(bound) == (10, 12, 4)
    plan = CallPlan("triad", device.triad.entry)
    bound = plan.bind((np.zeros(3), np.zeros(4), np.zeros(5), 2.0), {}, True)
    assert plan.decision_key(bound) == (3, 4, 5)  # alpha names no bound
