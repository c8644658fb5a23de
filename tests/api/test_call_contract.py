"""The call contract (docs/call-contract.md), case by case, on every backend: the cpu backend (the Rust
itself, built by rustc), the emulated device (the generated CUDA behind the GPU backends' runtime) and,
under `-m gpu`, the cuda backend. A call succeeds or fails the same way on each, with the same error and
message, and a call that fails leaves every host argument as it was.

The kernels are tests/api/data/contract.rs. Expected panics are Rust's: its message, at the place rustc
names; a RaceError has no Rust counterpart (Rust runs the iterations one after another), so its text is
the one the contract documents.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

from tests.support.devices import CUDA, EMULATED, CudaDevice, rustc_build

CONTRACT = Path(__file__).resolve().parent / "data" / "contract.rs"


@pytest.fixture(scope="module", params=(pytest.param("cpu", id="cpu"), EMULATED, CUDA))
def kernels(request):
    if request.param == "cpu":
        return rustc_build(CONTRACT)
    device = request.getfixturevalue("emulated_device") if request.param == "emulated" else CudaDevice()
    return device.load(CONTRACT)


def place(line_text: str, access: str) -> str:
    """file:line:column of `access` on the line of contract.rs that holds `line_text`."""
    for number, line in enumerate(CONTRACT.read_text().splitlines(), 1):
        if line_text in line:
            return f"{CONTRACT.name}:{number}:{line.index(access) + 1}"
    raise AssertionError(line_text)


def refused(call, error: type, *arrays: np.ndarray) -> Exception:
    """The `error` the call raises; the host arrays it was given are unchanged."""
    before = [a.tobytes() for a in arrays]
    with pytest.raises(error) as caught:
        call()
    assert [a.tobytes() for a in arrays] == before, "the failed call changed a host array"
    return caught.value


def out_of_bounds(length: int, index: int) -> str:
    return f"index out of bounds: the len is {length} but the index is {index}"


def test_a_row_stride_shorter_than_the_row_is_a_race_error(kernels) -> None:
    out = np.zeros(20)
    raised = refused(lambda: kernels.overlapping_rows(out, 3, 5, 4), rs2gpu.RaceError, out)
    loop = place("out[r * stride + c] =", "out[r * stride + c]")
    assert str(raised) == (f"kernel `overlapping_rows`: with these arguments, two iterations of the loop at {loop} "
                           f"would write the same element (the row stride is shorter than the row); nothing was "
                           f"launched")


def test_a_row_stride_as_long_as_the_row_runs(kernels) -> None:
    out = np.full(16, -1.0)
    kernels.overlapping_rows(out, 3, 5, 5)
    assert out.tolist() == [float(k) for k in range(15)] + [-1.0]


def test_a_row_stride_longer_than_the_row_runs_as_rust_runs_it(kernels) -> None:
    out, want = np.full(20, -1.0), np.full(20, -1.0)
    rustc_build(CONTRACT).overlapping_rows(want, 3, 4, 6)
    kernels.overlapping_rows(out, 3, 4, 6)
    assert out.tobytes() == want.tobytes()


def test_a_repeated_index_list_value_is_a_race_error_naming_both_positions(kernels) -> None:
    out, x, idx = np.zeros(6), np.arange(5.0), np.array([3, 1, 4, 1, 5], dtype=np.uint64)
    raised = refused(lambda: kernels.scatter(out, x, idx), rs2gpu.RaceError, out, x, idx)
    loop = place("out[idx[i]] = x[i];", "out[idx[i]]")
    assert str(raised) == (f"kernel `scatter`: index list `idx` holds the same value at positions 1 and 3, so two "
                           f"iterations of the loop at {loop} may write `out[1]`; nothing was copied back to the "
                           f"host, and what the loop wrote to device arrays is unspecified")


def test_a_loop_that_panics_reports_its_panic_rather_than_its_repeated_index(kernels) -> None:
    out, x, idx = np.zeros(4), np.arange(3.0), np.array([1, 1, 7], dtype=np.uint64)
    raised = refused(lambda: kernels.scatter(out, x, idx), rs2gpu.KernelPanic, out, x, idx)
    assert (raised.message, raised.location) == (out_of_bounds(4, 7), place("out[idx[i]] = x[i];", "out[idx[i]]"))


def test_an_index_list_of_distinct_values_scatters(kernels) -> None:
    out = np.zeros(6)
    kernels.scatter(out, np.arange(1.0, 6.0), np.array([4, 0, 5, 2, 1], dtype=np.uint64))
    assert out.tolist() == [2.0, 5.0, 4.0, 0.0, 1.0, 3.0]


def test_an_affine_read_past_the_end_panics_with_rusts_message_and_place(kernels) -> None:
    out, x = np.zeros(8), np.arange(8.0) ** 2
    raised = refused(lambda: kernels.differences(out, x), rs2gpu.KernelPanic, out, x)
    assert (raised.message, raised.location, raised.kernel) == (
        out_of_bounds(8, 8), place("x[i + 1] - x[i]", "x[i + 1]"), "differences")


def test_a_read_past_the_end_that_the_data_decides_leaves_the_host_arrays_as_they_were(kernels) -> None:
    # the iterations before the one that fails run first: on the cpu backend they write into `out`
    out, x, idx = np.zeros(4), np.arange(4.0), np.array([0, 1, 2, 9], dtype=np.uint64)
    raised = refused(lambda: kernels.gather(out, x, idx), rs2gpu.KernelPanic, out, x, idx)
    assert (raised.message, raised.location) == (out_of_bounds(4, 9), place("2.0 * x[idx[i]]", "x[idx[i]]"))


def test_a_division_by_zero_before_the_loop_panics_at_the_division(kernels) -> None:
    out = np.zeros(4)
    raised = refused(lambda: kernels.first_part(out, 0), rs2gpu.KernelPanic, out)
    assert (raised.message, raised.location) == ("attempt to divide by zero",
                                                 place("let width", "out.len() / parts"))


def test_a_step_of_a_host_loop_that_panics_leaves_the_host_arrays_as_they_were(kernels) -> None:
    # steps 0 to 2 add into `out`; step 3 reads a[n - 1 + 3], one past the end
    n = 6
    out, a = np.zeros(n), np.ones(n + 2)
    raised = refused(lambda: kernels.sweeps(out, a, 5), rs2gpu.KernelPanic, out, a)
    assert (raised.message, raised.location) == (out_of_bounds(n + 2, n + 2), place("out[i] += a[i + s]", "a[i + s]"))


def test_a_host_loop_whose_steps_stay_in_bounds_runs_every_step(kernels) -> None:
    out, a = np.zeros(4), np.arange(7.0)
    kernels.sweeps(out, a, 3)
    assert out.tolist() == [a[i] + a[i + 1] + a[i + 2] for i in range(4)]


def test_a_mutable_argument_overlapping_another_is_an_alias_error(kernels) -> None:
    data = np.arange(9.0)
    raised = refused(lambda: kernels.differences(data[:8], data[1:]), rs2gpu.AliasError, data)
    assert str(raised).startswith("arguments `out` and `x` overlap in memory, but `out` is a `&mut` borrow")


def test_a_generic_kernel_is_instantiated_for_the_types_of_its_arguments(kernels) -> None:
    y, x = np.full(3, 0.5, dtype=np.float32), np.arange(3, dtype=np.float32)
    want = np.float32(0.1) * x + y  # 0.1 rounded to f32 first, as the f32 parameter is
    kernels.axpy(y, x, 0.1)
    assert y.tobytes() == want.tobytes()
    assert "axpy::<f32>" in kernels.axpy.instantiations


def test_a_generic_kernel_s_panic_is_the_same_as_any_kernel_s(kernels) -> None:
    y, x = np.zeros(3, dtype=np.int32), np.ones(2, dtype=np.int32)
    raised = refused(lambda: kernels.axpy(y, x, 2), rs2gpu.KernelPanic, y, x)
    assert (raised.message, raised.location, raised.kernel) == (
        out_of_bounds(2, 2), place("y[i] = a * x[i] + y[i];", "x[i]"), "axpy_i32")
