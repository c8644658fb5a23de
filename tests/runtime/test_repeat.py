"""The repeat call (`DeviceKernel._repeat`): a call with the decision key of an earlier one, all of whose
arguments are device arrays and plain scalars (numpy arrays for those passed by value), launches what the
earlier call decided without the general path's steps, and waits for its reductions' results where it has
any. It must compute and return what rustc computes, and it must leave to the general path every call that
could differ from the decided one: another key, host arrays, an argument the general path converts or
rejects, a written slice overlapping another, code that can record a panic, a preamble that can panic, a
reduction seeded with an element outside its slice, a result computed from the preamble.
The kernels (tests/runtime/data/repeat.rs, and RAJAPerf's TRIAD and FIRST_MIN from examples/rajaperf) run
on an emulated device of this module's own (the generated CUDA compiled by g++, `bench.emulate`, whose
device arrays read as cupy's) and their results are compared with rustc's build of the same kernels,
bitwise."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray
from rs2gpu.ir.abi import Transfer
from rs2gpu.runtime.callplan import CallPlan
from rs2gpu.runtime.errors import AliasError, KernelPanic
from tests.support.devices import EmulatedDevice, rustc_build
from tests.support.paths import RAJAPERF

SOURCE = Path(__file__).parent / "data" / "repeat.rs"


@pytest.fixture(scope="module")
def emulated_device(tmp_path_factory: pytest.TempPathFactory) -> EmulatedDevice:
    """This module's own emulated device, in place of the session's: the `emulated` fixture (tests/conftest.py)
    loads `SOURCE` on it and `rajaperf_kernels` RAJAPerf's, so that their decisions and repeat counts come
    from this module's calls alone."""
    return EmulatedDevice(tmp_path_factory.mktemp("repeat"))


@pytest.fixture(scope="module")
def rajaperf_kernels(emulated_device):
    """(rustc's build, the emulated device's) of RAJAPerf's kernels, for TRIAD and FIRST_MIN."""
    return rustc_build(RAJAPERF), emulated_device.load(RAJAPERF)


def values(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)


def device_arrays(*arrays: np.ndarray) -> list[EmulatedDeviceArray]:
    return [EmulatedDeviceArray(a) for a in arrays]


def test_a_call_with_the_key_of_an_earlier_one_repeats_its_launches_with_new_data(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    before = device.triad.repeats
    for seed, alpha in ((1, 0.5), (2, -3.25), (3, 1e300)):
        b, c = values(1001, seed), values(1001, seed + 10)
        expected = np.zeros(1001)
        rust.triad(expected, b, c, alpha)
        a, db, dc = device_arrays(np.zeros(1001), b, c)
        device.triad(a, db, dc, alpha)
        assert a.array.tobytes() == expected.tobytes()
        assert device.triad.last_variants == ["rs2gpu_triad_0_vector"]
    assert device.triad.repeats - before == 2  # the first call of the key decides


def test_a_call_with_other_lengths_decides_again(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    b, c = values(77, 4), values(77, 5)
    a = device_arrays(np.zeros(77), b, c)
    before = device.triad.repeats
    device.triad(*a, 2.0)
    assert device.triad.repeats == before
    device.triad(*a, 2.0)
    assert device.triad.repeats == before + 1


def test_an_integer_parameter_of_the_bounds_is_part_of_the_key(rust, emulated) -> None:
    a = np.arange(100, dtype=np.int64)
    repeated = []
    for n in (10, 60, 10, 60):
        expected, out = np.full(100, -1, np.int64), EmulatedDeviceArray(np.full(100, -1, np.int64))
        rust.shift(expected, a, 7, n)
        before = emulated.shift.repeats
        emulated.shift(out, EmulatedDeviceArray(a), 7, n)
        repeated.append(emulated.shift.repeats - before)
        assert out.array.tobytes() == expected.tobytes()
    assert repeated == [0, 0, 1, 1]  # each n decides once, and its second call repeats it


def test_a_length_the_preamble_names_is_part_of_the_key(rust, emulated) -> None:
    # `let m = a.len()`: the key holds a's length, which the binding has
    before = emulated.halve.repeats
    for n in (40, 41, 40, 41):
        a = values(n, n)
        expected, out = np.full(n, 9.0), EmulatedDeviceArray(np.full(n, 9.0))
        rust.halve(expected, a)
        emulated.halve(out, EmulatedDeviceArray(a))
        assert out.array.tobytes() == expected.tobytes()
    assert emulated.halve.repeats == before + 2


def test_a_preamble_value_computed_for_the_key_keeps_the_general_path(rust, emulated) -> None:
    # `let n = a.len() / 2` is in the key, and only the preamble computes it
    for n in (40, 41, 40):
        a = values(n, n)
        expected, out = np.full(n, 9.0), EmulatedDeviceArray(np.full(n, 9.0))
        rust.halve_first(expected, a)
        emulated.halve_first(out, EmulatedDeviceArray(a))
        assert out.array.tobytes() == expected.tobytes()
    assert emulated.halve_first.repeats == 0


def test_an_integer_out_of_range_is_refused_by_the_general_path(emulated) -> None:
    a = np.arange(100, dtype=np.int64)
    out = EmulatedDeviceArray(np.zeros(100, np.int64))
    emulated.shift(out, EmulatedDeviceArray(a), 1, 50)
    emulated.shift(out, EmulatedDeviceArray(a), 1, 50)
    with pytest.raises(ValueError, match="does not fit in i64"):
        emulated.shift(out, EmulatedDeviceArray(a), 1 << 63, 50)


def test_a_scalar_the_general_path_converts_is_converted(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    b, c = values(64, 6), values(64, 7)
    expected = np.zeros(64)
    rust.triad(expected, b, c, 3)
    a = device_arrays(np.zeros(64), b, c)
    device.triad(*a, 0.5)
    before = device.triad.repeats
    device.triad(*a, 3)  # an int for an f64: the general path makes it 3.0
    assert device.triad.repeats == before
    assert a[0].array.tobytes() == expected.tobytes()


def test_host_arrays_take_the_general_path(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    b, c = values(64, 8), values(64, 9)
    expected, a = np.zeros(64), np.zeros(64)
    rust.triad(expected, b, c, 0.25)
    before = device.triad.repeats
    device.triad(a, b, c, 0.25)
    device.triad(a, b, c, 0.25)
    assert device.triad.repeats == before
    assert a.tobytes() == expected.tobytes()


def test_a_written_slice_overlapping_another_is_refused_as_in_the_first_call(rajaperf_kernels) -> None:
    rust, device = rajaperf_kernels
    storage = EmulatedDeviceArray(values(200, 10))
    b = EmulatedDeviceArray(values(100, 11))
    whole = EmulatedDeviceArray(np.zeros(100))
    device.triad(whole, b, b, 1.0)
    device.triad(whole, b, b, 1.0)  # b read twice: no aliasing
    front = storage.array[:100]
    with pytest.raises(AliasError):
        device.triad(EmulatedDeviceArray(front), EmulatedDeviceArray(front), b, 1.0)


def test_a_nest_repeats_on_its_grid(rust, emulated) -> None:
    before = emulated.plane.repeats
    for seed in (12, 13):
        a = values(30 * 7, seed)
        expected = np.zeros(30 * 7)
        rust.plane(expected, a, 30, 7)
        out = EmulatedDeviceArray(np.zeros(30 * 7))
        emulated.plane(out, EmulatedDeviceArray(a), 30, 7)
        assert out.array.tobytes() == expected.tobytes()
        assert emulated.plane.last_variants == ["rs2gpu_plane_0_vector"]
    assert emulated.plane.repeats == before + 1


def test_a_launch_that_can_record_a_panic_takes_the_general_path_and_raises_it(emulated) -> None:
    a = np.arange(-20, 20, dtype=np.int64)
    out = EmulatedDeviceArray(np.zeros(40, np.int64))
    emulated.divide(out, EmulatedDeviceArray(a), 3)
    emulated.divide(out, EmulatedDeviceArray(a), 3)
    assert emulated.divide.repeats == 0  # the division checks its divisor on the device
    with pytest.raises(KernelPanic, match="attempt to divide by zero"):
        emulated.divide(out, EmulatedDeviceArray(a), 0)


def test_a_preamble_that_can_panic_on_a_parameter_outside_the_key_never_repeats(emulated) -> None:
    # `64 / d` is the host's alone (the loop does not read it), and d is in no bound: a call with d = 0
    # has the key of one with d = 4, and must still panic as Rust does
    a = EmulatedDeviceArray(values(16, 15))
    out = EmulatedDeviceArray(np.zeros(16))
    assert not any(entry.records_panics for entry in emulated.copy_parted.entry.launches[0].entry_points)
    emulated.copy_parted(out, a, 4)
    emulated.copy_parted(out, a, 4)
    with pytest.raises(KernelPanic, match="attempt to divide by zero"):
        emulated.copy_parted(out, a, 0)
    assert emulated.copy_parted.repeats == 0


def integers(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-10**6, 10**6, n, dtype=np.int64)


@pytest.mark.parametrize(("source", "name", "n", "dtype"), [
    pytest.param(SOURCE, "extremes", 5000, np.int64, id="extremes-5000"),
    pytest.param(SOURCE, "high_low_high", 4000, np.int64, id="high_low_high-4000"),
    pytest.param(RAJAPERF, "first_min", 3000, np.float64, id="first_min-3000"),
])
def test_a_reduction_repeats_and_returns_rustcs_results(emulated_device, source, name: str, n: int, dtype) -> None:
    # extremes: literal seeds; high_low_high: its results returned in another order, one twice;
    # first_min (RAJAPerf's FIRST_MIN, of whole numbers here): a minimum seeded with `x[0]`, and its location
    kernel, reference = getattr(emulated_device.load(source), name), getattr(rustc_build(source), name)
    before = kernel.repeats
    for seed in (16, 17, 18):
        a = integers(n, seed).astype(dtype)
        assert kernel(EmulatedDeviceArray(a)) == reference(a)
    assert kernel.repeats == before + 2  # the first call of the key decides


def test_a_float_reduction_repeats_within_the_reordering_bound(rust, emulated) -> None:
    before = emulated.total.repeats
    for seed in (19, 20, 21):
        a = values(256, seed)
        # the device adds in another order: within n·ε·Σ|a| of rustc's sum
        bound = a.size * np.finfo(np.float64).eps * np.abs(a).sum()
        assert abs(emulated.total(EmulatedDeviceArray(a)) - rust.total(a)) <= bound
    assert emulated.total.repeats == before + 2


def test_an_element_seed_outside_its_slice_still_panics_in_every_call(rust, emulated) -> None:
    x = integers(4, 25)
    with pytest.raises(KernelPanic, match="index out of bounds: the len is 4 but the index is 5"):
        rust.smallest_from(x, 4)  # `let mut min = x[5];` panics before the loop
    x = EmulatedDeviceArray(x)
    for _ in range(2):  # the first call panicked before its launch, so it left nothing to repeat
        with pytest.raises(KernelPanic, match="index out of bounds: the len is 4 but the index is 5"):
            emulated.smallest_from(x, 4)
    assert emulated.smallest_from.repeats == 0


def test_a_repeat_call_takes_an_element_seed_only_inside_its_slice(emulated) -> None:
    seeds = CallPlan("smallest_from", emulated.smallest_from.entry).launches[0].repeat_seeds
    # `x[5]` of i64s: the address 5 * 8 bytes past x's, where x holds 6 elements or more
    assert seeds({"x": 4096}, {"x": 6}) == {"min": 4096 + 40}
    assert seeds({"x": 4096}, {"x": 5}) is None


def test_a_result_that_reads_a_parameter_repeats(rust, emulated) -> None:
    a = integers(700, 26)
    before = emulated.scaled_sum.repeats
    for by in (3, -2, 3):
        assert emulated.scaled_sum(EmulatedDeviceArray(a), by) == rust.scaled_sum(a, by)
    assert emulated.scaled_sum.repeats == before + 2  # `by` is not in the key: every call after the first


def test_a_result_that_reads_a_preamble_value_keeps_the_general_path(rust, emulated) -> None:
    for seed in (27, 28):
        a = integers(300, seed)
        assert emulated.sum_past(EmulatedDeviceArray(a)) == rust.sum_past(a)
    assert emulated.sum_past.repeats == 0


def filter_call(rust, emulated, taps) -> tuple[np.ndarray, np.ndarray]:
    """filter4 over 300 outputs from the device (repeat or general path) and from rustc."""
    data = values(303, 30)
    expected = np.zeros(300)
    rust.filter4(expected, data, np.ascontiguousarray(taps, dtype=np.float64).reshape(-1))
    out = EmulatedDeviceArray(np.zeros(300))
    emulated.filter4(out, EmulatedDeviceArray(data), taps)
    return out.array, expected


def test_an_array_passed_by_value_repeats_with_each_calls_elements(rust, emulated) -> None:
    assert emulated.filter4.entry.params[2].transfer == Transfer.VALUE  # its elements travel in the arguments
    before = emulated.filter4.repeats
    for taps in ([0.25, 0.5, 0.125, 1.0], [-1.0, 3.0, 0.0, 2.5], [1e-300, 1e300, -7.0, 0.5]):
        got, expected = filter_call(rust, emulated, np.array(taps))
        assert got.tobytes() == expected.tobytes()
    assert emulated.filter4.repeats - before == 2  # the first call of the key decides


def test_an_array_by_value_of_any_c_contiguous_shape_repeats_as_its_flat_elements(rust, emulated) -> None:
    filter_call(rust, emulated, np.array([1.0, 2.0, 3.0, 4.0]))
    before = emulated.filter4.repeats
    got, expected = filter_call(rust, emulated, np.array([[0.5, -0.5], [2.0, 0.25]]))  # the general path flattens it
    assert got.tobytes() == expected.tobytes()
    assert emulated.filter4.repeats == before + 1


@pytest.mark.parametrize("taps, error, message", [
    (np.ones(3), ValueError, "must have exactly 4 elements"),
    (np.ones(4, dtype=np.float32), TypeError, "needs elements of dtype float64"),
    (np.ones(8)[::2], ValueError, "must be C-contiguous"),
    (np.frombuffer(np.zeros(40, np.uint8), np.float64, 4, offset=4), ValueError, "must be aligned to 8 bytes"),
    ([1.0, 2.0, 3.0, 4.0], TypeError, "must be an array"),
])
def test_an_array_by_value_the_general_path_refuses_is_refused_after_repeats(rust, emulated, taps, error,
                                                                             message) -> None:
    good = np.array([1.0, 0.5, 0.25, 0.125])
    filter_call(rust, emulated, good)
    filter_call(rust, emulated, good)
    out = EmulatedDeviceArray(np.zeros(300))
    with pytest.raises(error, match=message):
        emulated.filter4(out, EmulatedDeviceArray(values(303, 31)), taps)

