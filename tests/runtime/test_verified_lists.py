"""Verified index lists (`rs2gpu.IndexList`): the facts a list is verified for once, and the calls that
prove their loops' list checks from them on the host. The kernels run on an emulated device (the
generated CUDA compiled by g++, `bench.emulate`) and their results are compared with rustc's build of the
same kernels (the cpu backend); a list the facts do not clear must give what a plain array gives: the
loop that checks on the device, and Rust's panic."""
from __future__ import annotations

import numpy as np
import pytest

from bench.emulate import EmulatedBackend, EmulatedDeviceArray, compiler, rust_and_emulated
from rs2gpu import IndexList, KernelPanic, RaceError

SOURCE = """
use rs2gpu::kernel;

#[kernel]
pub fn corners(vol: &mut [f64], x: &[f64], zones: &[usize], jp: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        vol[i] = x[i] + x[i + 1] + x[i + jp] + x[i + 1 + jp];
    }
}

#[kernel]
pub fn spread(x: &mut [f64], vol: &[f64], zones: &[usize], jp: usize) {
    for ii in 0..zones.len() {
        let i = zones[ii];
        let v = 0.25 * vol[i];
        x[i] += v;
        x[i + jp] += v;
    }
}

#[kernel]
pub fn first_gathers(out: &mut [f64], a: &[f64], idx: &[usize]) {
    for i in 0..out.len() {
        out[i] = a[idx[i]];
    }
}
"""


class CountingBackend(EmulatedBackend):
    """The emulated device, counting the copies into device memory too (it counts the waits for it)."""

    def __init__(self, workdir) -> None:
        super().__init__(workdir)
        self.uploads = 0

    def upload(self, dst_ptr: int, host) -> None:
        self.uploads += 1
        super().upload(dst_ptr, host)


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    folder = tmp_path_factory.mktemp("verified")
    (folder / "emulated").mkdir()
    return rust_and_emulated(folder, "verified", SOURCE, CountingBackend(folder / "emulated"))


def grid(jp: int, rows: int, seed: int):
    """Nodal values of a `jp`-wide grid of `rows` rows, and the zones below its last row and column."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(jp * rows)
    zones = np.array([r * jp + c for r in range(rows - 1) for c in range(jp - 1)], dtype=np.uint64)
    return x, zones


def panic_of(call) -> tuple[str, str]:
    with pytest.raises(KernelPanic) as caught:
        call()
    return caught.value.message, caught.value.location


# ---------------------------------------------------------------- the facts


def test_a_rising_list_knows_its_least_and_greatest_value():
    zones = IndexList(np.array([3, 4, 9, 12], dtype=np.uint64))
    assert (zones.low, zones.high, zones.order, zones.distinct, len(zones)) == (3, 12, "rising", True, 4)


def test_a_strictly_falling_list_falls():
    assert IndexList(np.array([9, 4, 3], dtype=np.uint32)).order == "falling"


@pytest.mark.parametrize("values", [[1, 1, 2], [1, 3, 2], [5, 5]], ids=["repeat", "zigzag", "equal"])
def test_a_list_that_does_not_rise_or_fall_strictly_has_no_order(values):
    assert IndexList(np.array(values, dtype=np.uint64)).order is None


@pytest.mark.parametrize("values, distinct", [
    ([3, 4, 9, 12], True), ([9, 4, 3], True), ([2, 0, 3, 1], True), ([1, 3, 2, 3], False),
    ([0, 2**40, 7, 2**63], True), ([2**40, 5, 2**40], False), ([-3, 2, -1], True)],
    ids=["rising", "falling", "a permutation", "a repeat", "spread over a wide range",
         "a repeat in a wide range", "negative values"])
def test_a_list_knows_whether_its_values_are_distinct(values, distinct):
    dtype = np.int64 if min(values) < 0 else np.uint64
    assert IndexList(np.array(values, dtype=dtype)).distinct is distinct


def test_an_empty_list_has_no_values():
    empty = IndexList(np.array([], dtype=np.uint64))
    assert len(empty) == 0 and empty.high < empty.low


def test_the_list_is_a_copy_that_later_changes_of_the_source_do_not_reach():
    source = np.array([0, 1, 2], dtype=np.uint64)
    zones = IndexList(source)
    source[1] = 99
    assert zones.numpy().tolist() == [0, 1, 2] and zones.high == 2


def test_a_python_sequence_needs_its_element_type():
    with pytest.raises(TypeError, match="dtype"):
        IndexList([1, 2, 3])
    assert IndexList([1, 2, 3], dtype=np.uint64).dtype == np.uint64


@pytest.mark.parametrize("values,error", [(np.zeros((2, 2), dtype=np.uint64), ValueError),
                                          (np.array([0.5, 1.5]), TypeError)], ids=["2-d", "floats"])
def test_only_a_one_dimensional_list_of_integers_is_an_index_list(values, error):
    with pytest.raises(error):
        IndexList(values)


# ---------------------------------------------------------------- calls


def test_a_verified_list_is_refused_for_a_mut_slice(kernels):
    _, device = kernels
    with pytest.raises(TypeError, match="read-only"):
        device.corners(IndexList(np.zeros(8, dtype=np.uint64)), np.zeros(8), np.zeros(4, dtype=np.uint64), 2)


def test_a_verified_list_of_another_element_type_is_refused(kernels):
    _, device = kernels
    with pytest.raises(TypeError, match="dtype"):
        device.corners(np.zeros(8), np.zeros(8), IndexList(np.zeros(4, dtype=np.uint32)), 2)


@pytest.mark.parametrize("falling", [False, True], ids=["rising", "falling"])
def test_a_list_in_range_and_in_order_runs_the_loop_without_list_checks_and_gives_rustcs_result(kernels, falling):
    rust, device = kernels
    x, zones = grid(40, 30, 1)
    zones = zones[::-1].copy() if falling else zones
    want, got = np.full(x.size, -1.0), np.full(x.size, -1.0)
    rust.corners(want, x, zones, 40)
    device.corners(got, x, IndexList(zones), 40)
    assert device.corners.last_variants == ["rs2gpu_corners_0_proven"]
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_a_list_in_range_of_distinct_values_in_no_order_runs_the_loop_without_list_checks(kernels):
    rust, device = kernels
    x, zones = grid(40, 30, 4)
    zones = np.random.default_rng(4).permutation(zones)
    want, got = np.full(x.size, -1.0), np.full(x.size, -1.0)
    rust.corners(want, x, zones, 40)
    device.corners(got, x, IndexList(zones), 40)
    assert device.corners.last_variants == ["rs2gpu_corners_0_proven"]
    assert got.view(np.uint64).tolist() == want.view(np.uint64).tolist()


def test_a_call_on_device_arrays_through_a_verified_list_does_not_wait_for_the_device(kernels):
    rust, device = kernels
    x, zones = grid(16, 16, 2)
    verified = IndexList(zones)
    out = EmulatedDeviceArray(np.zeros(x.size))
    device.corners(out, EmulatedDeviceArray(x), verified, 16)  # the first call uploads the list
    waits, uploads = device.backend.synchronizations, device.backend.uploads
    device.corners(out, EmulatedDeviceArray(x), verified, 16)
    assert (device.backend.synchronizations, device.backend.uploads) == (waits, uploads)
    want = np.zeros(x.size)
    rust.corners(want, x, zones, 16)
    assert np.array_equal(out.array, want)


def test_the_same_list_as_a_plain_device_array_makes_the_call_wait_for_the_loop_s_checks(kernels):
    _, device = kernels
    x, zones = grid(16, 16, 2)
    waits = device.backend.synchronizations
    device.corners(EmulatedDeviceArray(np.zeros(x.size)), EmulatedDeviceArray(x), EmulatedDeviceArray(zones), 16)
    assert device.backend.synchronizations > waits
    assert device.corners.last_variants == ["rs2gpu_corners_0"]


def test_a_verified_list_with_a_repeat_is_a_race_as_with_a_plain_array(kernels):
    _, device = kernels
    x, zones = grid(16, 16, 3)
    zones[7] = zones[3]
    with pytest.raises(RaceError, match="positions 3 and 7"):
        device.corners(np.zeros(x.size), x, IndexList(zones), 16)
    assert device.corners.last_variants == ["rs2gpu_corners_0"]


def test_a_verified_list_with_a_value_out_of_range_panics_as_rust_does(kernels):
    rust, device = kernels
    x, zones = grid(16, 16, 4)
    zones[100] = x.size - 16  # `x[i + jp]` reads one past the end
    want = panic_of(lambda: rust.corners(np.zeros(x.size), x, zones, 16))
    assert panic_of(lambda: device.corners(np.zeros(x.size), x, IndexList(zones), 16)) == want
    assert device.corners.last_variants == ["rs2gpu_corners_0"]


def test_a_scatter_through_a_verified_list_in_range_runs_without_bounds_checks(kernels):
    rust, device = kernels
    x, zones = grid(64, 48, 5)  # longer than a block's private copy of `x`
    vol = np.arange(x.size, dtype=np.float64)  # integers plus quarters: every order of the additions is exact
    want, got = np.round(64 * x), np.round(64 * x)
    rust.spread(want, vol, zones, 64)
    device.spread(got, vol, IndexList(zones), 64)
    assert device.spread.last_variants == ["rs2gpu_spread_0_proven"]
    assert np.array_equal(got, want)


def test_a_scatter_through_a_verified_list_out_of_range_panics_as_rust_does(kernels):
    rust, device = kernels
    x, zones = grid(64, 48, 6)
    zones[-1] = x.size - 1  # `x[i + jp]` is past the end
    want = panic_of(lambda: rust.spread(x.copy(), np.ones(x.size), zones, 64))
    assert panic_of(lambda: device.spread(x.copy(), np.ones(x.size), IndexList(zones), 64)) == want
    assert device.spread.last_variants == ["rs2gpu_spread_0_covering"]  # with its device checks


def test_the_facts_cover_the_whole_list_so_a_value_the_loop_never_reaches_makes_it_check(kernels):
    rust, device = kernels
    a = np.arange(10, dtype=np.float64)
    idx = np.array([9, 0, 4, 1000], dtype=np.uint64)  # the loop reads positions 0..3 only
    want, got = np.zeros(3), np.zeros(3)
    rust.first_gathers(want, a, idx)
    device.first_gathers(got, a, IndexList(idx))
    assert device.first_gathers.last_variants == ["rs2gpu_first_gathers_0_covering"]  # with its device checks
    assert np.array_equal(got, want)


def test_a_host_call_does_not_copy_a_verified_list_again(kernels):
    _, device = kernels
    a = np.arange(10, dtype=np.float64)
    idx = IndexList(np.array([9, 0, 4], dtype=np.uint64))
    device.first_gathers(np.zeros(3), a, idx)
    device.first_gathers(np.zeros(3), a, idx)
    assert [t.param for t in device.first_gathers.last_transfers] == ["a", "out"]
    assert device.first_gathers.last_variants == ["rs2gpu_first_gathers_0_proven"]


# ---------------------------------------------------------------- repeat calls


def device_grid(jp: int, rows: int, seed: int):
    """`grid`'s nodal values as a device array, the zones, and a device array for the zonal results."""
    x, zones = grid(jp, rows, seed)
    return EmulatedDeviceArray(x), zones, EmulatedDeviceArray(np.full(x.size, -1.0))


def rust_corners(rust, x: EmulatedDeviceArray, zones: np.ndarray, jp: int) -> np.ndarray:
    want = np.full(x.size, -1.0)
    rust.corners(want, x.array, zones, jp)
    return want


def test_a_call_like_an_earlier_one_through_a_verified_list_repeats_it_and_gives_rustcs_result(kernels):
    rust, device = kernels
    x, zones, out = device_grid(24, 20, 7)
    verified = IndexList(zones)
    device.corners(out, x, verified, 24)
    repeats = device.corners.repeats
    x, _, out = device_grid(24, 20, 8)  # other values, the same lengths
    device.corners(out, x, verified, 24)
    assert device.corners.repeats == repeats + 1
    assert device.corners.last_variants == ["rs2gpu_corners_0_proven"]
    assert out.array.view(np.uint64).tolist() == rust_corners(rust, x, zones, 24).view(np.uint64).tolist()


def test_another_list_of_the_same_facts_repeats_the_call_of_the_first(kernels):
    rust, device = kernels
    x, zones, out = device_grid(24, 20, 9)
    device.corners(out, x, IndexList(zones), 24)
    repeats = device.corners.repeats
    other = zones.copy()
    other[22] = other[21] + 1  # zone 22 starts row 1; the last column of row 0 keeps the list rising
    assert (IndexList(other).low, IndexList(other).high) == (zones[0], zones[-1])
    device.corners(out, x, IndexList(other), 24)
    assert device.corners.repeats == repeats + 1
    assert np.array_equal(out.array, rust_corners(rust, x, other, 24))


def test_a_list_with_a_repeat_after_one_without_is_a_race(kernels):
    _, device = kernels
    x, zones, out = device_grid(24, 20, 10)
    device.corners(out, x, IndexList(zones), 24)
    zones[9] = zones[2]
    with pytest.raises(RaceError, match="positions 2 and 9"):
        device.corners(out, x, IndexList(zones), 24)


def test_a_list_with_a_value_out_of_range_after_one_in_range_panics_as_rust_does(kernels):
    rust, device = kernels
    x, zones, out = device_grid(24, 20, 11)
    device.corners(out, x, IndexList(zones), 24)
    zones[-1] = x.size - 24  # `x[i + jp]` reads one past the end
    want = panic_of(lambda: rust.corners(np.zeros(x.size), x.array, zones, 24))
    assert panic_of(lambda: device.corners(out, x, IndexList(zones), 24)) == want


def test_a_plain_device_array_after_a_verified_list_is_checked_on_the_device(kernels):
    rust, device = kernels
    x, zones, out = device_grid(24, 20, 12)
    device.corners(out, x, IndexList(zones), 24)
    repeats, waits = device.corners.repeats, device.backend.synchronizations
    device.corners(out, x, EmulatedDeviceArray(zones), 24)
    assert device.corners.repeats == repeats
    assert device.backend.synchronizations > waits  # for the verdict of the loop's checks
    assert device.corners.last_variants == ["rs2gpu_corners_0"]
    assert np.array_equal(out.array, rust_corners(rust, x, zones, 24))


def test_the_decision_key_holds_a_verified_list_s_facts_and_none_for_a_plain_array(kernels):
    _, device = kernels
    plan = device.corners.plan
    x, zones = grid(8, 6, 13)
    verified = IndexList(zones)
    assert plan.decision_key(plan.bind((np.zeros(x.size), x, verified, 8), {}, True)) \
        == (x.size, x.size, zones.size, 8, verified.facts)
    assert plan.decision_key(plan.bind((np.zeros(x.size), x, zones, 8), {}, True)) \
        == (x.size, x.size, zones.size, 8, None)
