"""The repeat call (`DeviceKernel._repeat`): a call with the decision key of an earlier one, all of whose
arguments are device arrays and plain scalars (numpy arrays for those passed by value), launches what the
earlier call decided without the general path's steps, and waits for its reductions' results where it has
any. It must compute and return what rustc computes, and it must leave to the general path every call that
could differ from the decided one: another key, host arrays, an argument the general path converts or
rejects, a written slice overlapping another, code that can record a panic, a preamble that can panic, a
reduction seeded with an element outside its slice, a result computed from the preamble.
The kernels run on an emulated device (the generated CUDA compiled by g++, `bench.emulate`, whose device
arrays read as cupy's) and their results are compared with rustc's build of the same kernels, bitwise."""
from __future__ import annotations

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray, compiler, rust_and_emulated
from rs2gpu.ir.abi import Transfer
from rs2gpu.runtime.callplan import CallPlan
from rs2gpu.runtime.errors import AliasError, KernelPanic

SOURCE = """
use rs2gpu::kernel;

#[kernel]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) {
    for i in 0..a.len() {
        a[i] = b[i] + alpha * c[i];
    }
}

#[kernel]
pub fn shift(out: &mut [i64], a: &[i64], by: i64, n: usize) {
    for i in 0..n {
        out[i] = a[i] + by;
    }
}

#[kernel]
pub fn plane(out: &mut [f64], a: &[f64], cols: usize, rows: usize) {
    for r in 0..rows {
        for c in 0..cols {
            out[r * cols + c] = 2.0 * a[r * cols + c];
        }
    }
}

#[kernel]
pub fn halve(out: &mut [f64], a: &[f64]) {
    let m = a.len();
    for i in 0..m {
        out[i] = 0.5 * a[i];
    }
}

#[kernel]
pub fn halve_first(out: &mut [f64], a: &[f64]) {
    let n = a.len() / 2;
    let m = a.len();
    for i in 0..m - n {
        out[i] = 0.5 * a[i];
    }
}

#[kernel]
pub fn divide(out: &mut [i64], a: &[i64], d: i64) {
    for i in 0..out.len() {
        out[i] = a[i] / d;
    }
}

#[kernel]
pub fn copy_parted(out: &mut [f64], a: &[f64], d: usize) {
    let _parts = 64 / d;
    for i in 0..out.len() {
        out[i] = a[i];
    }
}

#[kernel]
pub fn total(a: &[f64]) -> f64 {
    let mut sum = 0.0;
    for i in 0..a.len() {
        sum += a[i];
    }
    sum
}

#[kernel]
pub fn extremes(a: &[i64]) -> (i64, i64, i64) {
    let mut sum = 0;
    let mut low = i64::MAX;
    let mut high = i64::MIN;
    for i in 0..a.len() {
        sum += a[i];
        low = low.min(a[i]);
        high = high.max(a[i]);
    }
    (sum, low, high)
}

#[kernel]
pub fn high_low_high(a: &[i64]) -> (i64, i64, i64) {
    let mut low = i64::MAX;
    let mut high = i64::MIN;
    for i in 0..a.len() {
        low = low.min(a[i]);
        high = high.max(a[i]);
    }
    (high, low, high)
}

#[kernel]
pub fn first_smallest(x: &[i64]) -> (i64, usize) {
    let mut min = x[0];
    let mut loc = 0;
    for i in 0..x.len() {
        if x[i] < min {
            min = x[i];
            loc = i;
        }
    }
    (min, loc)
}

#[kernel]
pub fn smallest_from(x: &[i64], n: usize) -> i64 {
    let mut min = x[5];
    for i in 0..n {
        min = min.min(x[i]);
    }
    min
}

#[kernel]
pub fn scaled_sum(a: &[i64], by: i64) -> i64 {
    let mut sum = 0;
    for i in 0..a.len() {
        sum += a[i];
    }
    sum * by
}

#[kernel]
pub fn filter4(out: &mut [f64], input: &[f64], taps: &[f64; 4]) {
    for i in 0..out.len() {
        let mut sum = 0.0;
        for j in 0..4 {
            sum += taps[j] * input[i + j];
        }
        out[i] = sum;
    }
}

#[kernel]
pub fn sum_past(a: &[i64]) -> i64 {
    let n = a.len() as i64;
    let mut sum = 0;
    for i in 0..a.len() {
        sum += a[i];
    }
    sum + n
}
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return rust_and_emulated(tmp_path_factory.mktemp("repeat"), "repeat", SOURCE)


def values(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)


def device_arrays(*arrays: np.ndarray) -> list[EmulatedDeviceArray]:
    return [EmulatedDeviceArray(a) for a in arrays]


def test_a_call_with_the_key_of_an_earlier_one_repeats_its_launches_with_new_data(kernels) -> None:
    rust, device = kernels
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


def test_a_call_with_other_lengths_decides_again(kernels) -> None:
    rust, device = kernels
    b, c = values(77, 4), values(77, 5)
    a = device_arrays(np.zeros(77), b, c)
    before = device.triad.repeats
    device.triad(*a, 2.0)
    assert device.triad.repeats == before
    device.triad(*a, 2.0)
    assert device.triad.repeats == before + 1


def test_an_integer_parameter_of_the_bounds_is_part_of_the_key(kernels) -> None:
    rust, device = kernels
    a = np.arange(100, dtype=np.int64)
    repeated = []
    for n in (10, 60, 10, 60):
        expected, out = np.full(100, -1, np.int64), EmulatedDeviceArray(np.full(100, -1, np.int64))
        rust.shift(expected, a, 7, n)
        before = device.shift.repeats
        device.shift(out, EmulatedDeviceArray(a), 7, n)
        repeated.append(device.shift.repeats - before)
        assert out.array.tobytes() == expected.tobytes()
    assert repeated == [0, 0, 1, 1]  # each n decides once, and its second call repeats it


def test_a_length_the_preamble_names_is_part_of_the_key(kernels) -> None:
    rust, device = kernels
    # `let m = a.len()`: the key holds a's length, which the binding has
    before = device.halve.repeats
    for n in (40, 41, 40, 41):
        a = values(n, n)
        expected, out = np.full(n, 9.0), EmulatedDeviceArray(np.full(n, 9.0))
        rust.halve(expected, a)
        device.halve(out, EmulatedDeviceArray(a))
        assert out.array.tobytes() == expected.tobytes()
    assert device.halve.repeats == before + 2


def test_a_preamble_value_computed_for_the_key_keeps_the_general_path(kernels) -> None:
    rust, device = kernels
    # `let n = a.len() / 2` is in the key, and only the preamble computes it
    for n in (40, 41, 40):
        a = values(n, n)
        expected, out = np.full(n, 9.0), EmulatedDeviceArray(np.full(n, 9.0))
        rust.halve_first(expected, a)
        device.halve_first(out, EmulatedDeviceArray(a))
        assert out.array.tobytes() == expected.tobytes()
    assert device.halve_first.repeats == 0


def test_an_integer_out_of_range_is_refused_by_the_general_path(kernels) -> None:
    rust, device = kernels
    a = np.arange(100, dtype=np.int64)
    out = EmulatedDeviceArray(np.zeros(100, np.int64))
    device.shift(out, EmulatedDeviceArray(a), 1, 50)
    device.shift(out, EmulatedDeviceArray(a), 1, 50)
    with pytest.raises(ValueError, match="does not fit in i64"):
        device.shift(out, EmulatedDeviceArray(a), 1 << 63, 50)


def test_a_scalar_the_general_path_converts_is_converted(kernels) -> None:
    rust, device = kernels
    b, c = values(64, 6), values(64, 7)
    expected = np.zeros(64)
    rust.triad(expected, b, c, 3)
    a = device_arrays(np.zeros(64), b, c)
    device.triad(*a, 0.5)
    before = device.triad.repeats
    device.triad(*a, 3)  # an int for an f64: the general path makes it 3.0
    assert device.triad.repeats == before
    assert a[0].array.tobytes() == expected.tobytes()


def test_host_arrays_take_the_general_path(kernels) -> None:
    rust, device = kernels
    b, c = values(64, 8), values(64, 9)
    expected, a = np.zeros(64), np.zeros(64)
    rust.triad(expected, b, c, 0.25)
    before = device.triad.repeats
    device.triad(a, b, c, 0.25)
    device.triad(a, b, c, 0.25)
    assert device.triad.repeats == before
    assert a.tobytes() == expected.tobytes()


def test_a_written_slice_overlapping_another_is_refused_as_in_the_first_call(kernels) -> None:
    rust, device = kernels
    storage = EmulatedDeviceArray(values(200, 10))
    b = EmulatedDeviceArray(values(100, 11))
    whole = EmulatedDeviceArray(np.zeros(100))
    device.triad(whole, b, b, 1.0)
    device.triad(whole, b, b, 1.0)  # b read twice: no aliasing
    front = storage.array[:100]
    with pytest.raises(AliasError):
        device.triad(EmulatedDeviceArray(front), EmulatedDeviceArray(front), b, 1.0)


def test_a_nest_repeats_on_its_grid(kernels) -> None:
    rust, device = kernels
    before = device.plane.repeats
    for seed in (12, 13):
        a = values(30 * 7, seed)
        expected = np.zeros(30 * 7)
        rust.plane(expected, a, 30, 7)
        out = EmulatedDeviceArray(np.zeros(30 * 7))
        device.plane(out, EmulatedDeviceArray(a), 30, 7)
        assert out.array.tobytes() == expected.tobytes()
        assert device.plane.last_variants == ["rs2gpu_plane_0_vector"]
    assert device.plane.repeats == before + 1


def test_a_launch_that_can_record_a_panic_takes_the_general_path_and_raises_it(kernels) -> None:
    rust, device = kernels
    a = np.arange(-20, 20, dtype=np.int64)
    out = EmulatedDeviceArray(np.zeros(40, np.int64))
    device.divide(out, EmulatedDeviceArray(a), 3)
    device.divide(out, EmulatedDeviceArray(a), 3)
    assert device.divide.repeats == 0  # the division checks its divisor on the device
    with pytest.raises(KernelPanic, match="attempt to divide by zero"):
        device.divide(out, EmulatedDeviceArray(a), 0)


def test_a_preamble_that_can_panic_on_a_parameter_outside_the_key_never_repeats(kernels) -> None:
    rust, device = kernels
    # `64 / d` is the host's alone (the loop does not read it), and d is in no bound: a call with d = 0
    # has the key of one with d = 4, and must still panic as Rust does
    a = EmulatedDeviceArray(values(16, 15))
    out = EmulatedDeviceArray(np.zeros(16))
    assert not any(entry.records_panics for entry in device.copy_parted.entry.launches[0].entry_points)
    device.copy_parted(out, a, 4)
    device.copy_parted(out, a, 4)
    with pytest.raises(KernelPanic, match="attempt to divide by zero"):
        device.copy_parted(out, a, 0)
    assert device.copy_parted.repeats == 0


def integers(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-10**6, 10**6, n, dtype=np.int64)


@pytest.mark.parametrize(("name", "n"), [("extremes", 5000), ("high_low_high", 4000), ("first_smallest", 3000)])
def test_a_reduction_repeats_and_returns_rustcs_results(kernels, name: str, n: int) -> None:
    rust, device = kernels
    # extremes: literal seeds; high_low_high: its results returned in another order, one twice;
    # first_smallest: a minimum seeded with `x[0]`, and its location
    kernel = getattr(device, name)
    before = kernel.repeats
    for seed in (16, 17, 18):
        a = integers(n, seed)
        assert kernel(EmulatedDeviceArray(a)) == getattr(rust, name)(a)
    assert kernel.repeats == before + 2  # the first call of the key decides


def test_a_float_reduction_repeats_within_the_reordering_bound(kernels) -> None:
    rust, device = kernels
    before = device.total.repeats
    for seed in (19, 20, 21):
        a = values(256, seed)
        # the device adds in another order: within n·ε·Σ|a| of rustc's sum
        bound = a.size * np.finfo(np.float64).eps * np.abs(a).sum()
        assert abs(device.total(EmulatedDeviceArray(a)) - rust.total(a)) <= bound
    assert device.total.repeats == before + 2


def test_an_element_seed_outside_its_slice_still_panics_in_every_call(kernels) -> None:
    rust, device = kernels
    x = integers(4, 25)
    with pytest.raises(KernelPanic, match="index out of bounds: the len is 4 but the index is 5"):
        rust.smallest_from(x, 4)  # `let mut min = x[5];` panics before the loop
    x = EmulatedDeviceArray(x)
    for _ in range(2):  # the first call panicked before its launch, so it left nothing to repeat
        with pytest.raises(KernelPanic, match="index out of bounds: the len is 4 but the index is 5"):
            device.smallest_from(x, 4)
    assert device.smallest_from.repeats == 0


def test_a_repeat_call_takes_an_element_seed_only_inside_its_slice(kernels) -> None:
    _, device = kernels
    seeds = CallPlan("smallest_from", device.smallest_from.entry).launches[0].repeat_seeds
    # `x[5]` of i64s: the address 5 * 8 bytes past x's, where x holds 6 elements or more
    assert seeds({"x": 4096}, {"x": 6}) == {"min": 4096 + 40}
    assert seeds({"x": 4096}, {"x": 5}) is None


def test_a_result_that_reads_a_parameter_repeats(kernels) -> None:
    rust, device = kernels
    a = integers(700, 26)
    before = device.scaled_sum.repeats
    for by in (3, -2, 3):
        assert device.scaled_sum(EmulatedDeviceArray(a), by) == rust.scaled_sum(a, by)
    assert device.scaled_sum.repeats == before + 2  # `by` is not in the key: every call after the first


def test_a_result_that_reads_a_preamble_value_keeps_the_general_path(kernels) -> None:
    rust, device = kernels
    for seed in (27, 28):
        a = integers(300, seed)
        assert device.sum_past(EmulatedDeviceArray(a)) == rust.sum_past(a)
    assert device.sum_past.repeats == 0


def filter_call(kernels, taps) -> tuple[np.ndarray, np.ndarray]:
    """filter4 over 300 outputs from the device (repeat or general path) and from rustc."""
    rust, device = kernels
    data = values(303, 30)
    expected = np.zeros(300)
    rust.filter4(expected, data, np.ascontiguousarray(taps, dtype=np.float64).reshape(-1))
    out = EmulatedDeviceArray(np.zeros(300))
    device.filter4(out, EmulatedDeviceArray(data), taps)
    return out.array, expected


def test_an_array_passed_by_value_repeats_with_each_calls_elements(kernels) -> None:
    _, device = kernels
    assert device.filter4.entry.params[2].transfer == Transfer.VALUE  # its elements travel in the arguments
    before = device.filter4.repeats
    for taps in ([0.25, 0.5, 0.125, 1.0], [-1.0, 3.0, 0.0, 2.5], [1e-300, 1e300, -7.0, 0.5]):
        got, expected = filter_call(kernels, np.array(taps))
        assert got.tobytes() == expected.tobytes()
    assert device.filter4.repeats - before == 2  # the first call of the key decides


def test_an_array_by_value_of_any_c_contiguous_shape_repeats_as_its_flat_elements(kernels) -> None:
    _, device = kernels
    filter_call(kernels, np.array([1.0, 2.0, 3.0, 4.0]))
    before = device.filter4.repeats
    got, expected = filter_call(kernels, np.array([[0.5, -0.5], [2.0, 0.25]]))  # the general path flattens it
    assert got.tobytes() == expected.tobytes()
    assert device.filter4.repeats == before + 1


@pytest.mark.parametrize("taps, error, message", [
    (np.ones(3), ValueError, "must have exactly 4 elements"),
    (np.ones(4, dtype=np.float32), TypeError, "needs elements of dtype float64"),
    (np.ones(8)[::2], ValueError, "must be C-contiguous"),
    (np.frombuffer(np.zeros(40, np.uint8), np.float64, 4, offset=4), ValueError, "must be aligned to 8 bytes"),
    ([1.0, 2.0, 3.0, 4.0], TypeError, "must be an array"),
])
def test_an_array_by_value_the_general_path_refuses_is_refused_after_repeats(kernels, taps, error, message) -> None:
    rust, device = kernels
    good = np.array([1.0, 0.5, 0.25, 0.125])
    filter_call(kernels, good)
    filter_call(kernels, good)
    out = EmulatedDeviceArray(np.zeros(300))
    with pytest.raises(error, match=message):
        device.filter4(out, EmulatedDeviceArray(values(303, 31)), taps)

