"""The device side of the checks: conditional accesses, launch variants, index-list verification and the
panic record. The kernels are tests/runtime/data/checks.rs; expected results and panics come from rustc
(the cpu backend runs the same Rust); a RaceError has no Rust counterpart (Rust runs the iterations one
after another), so its text is the runtime's documented one.

Tests that take `device` run on the emulated device and, under `-m gpu`, on the GPU, over enough
iterations to fill the device several times (`n_for`); the others read what only the emulated device
shows (its launch log, its waits, the marks in its memory).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from bench.emulate import EmulatedDeviceArray
from rs2gpu.ir.abi import EntryKind
from rs2gpu.runtime.base import DeviceKernel

from tests.support.devices import rustc_build
from tests.support.paths import RAJAPERF

SOURCE = Path(__file__).resolve().parent / "data" / "checks.rs"


def n_for(device) -> int:
    """Iterations that fill the device four times over: about a million on a GPU, thousands emulated."""
    return 4 * device.grid_threads()


def rust_panic(call) -> rs2gpu.KernelPanic:
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        call()
    return caught.value


def same_panic(a: rs2gpu.KernelPanic, b: rs2gpu.KernelPanic) -> bool:
    return (a.message, a.location, a.kernel) == (b.message, b.location, b.kernel)


# ---------------------------------------------------------------- conditional accesses


def roots_input(n: int, short: int, taken_past_end: list[int]) -> np.ndarray:
    """s < 0 (x2 not written) at every i >= short except `taken_past_end`."""
    s = np.random.default_rng(n).uniform(-1.0, 1.0, n)
    s[short:] = -1.0
    s[taken_past_end] = 4.0
    return s


def test_a_conditional_write_past_the_end_that_never_runs_does_not_panic(device, kernels, rust) -> None:
    n = n_for(device)
    short = n * 9 // 10
    s = roots_input(n, short, [])
    want, got = [np.zeros(n), np.zeros(short)], [np.zeros(n), np.zeros(short)]
    rust.roots(*want, s)
    kernels.roots(*got, s)
    assert kernels.roots.last_variants == ["rs2gpu_roots_0_checked"]
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))


def test_a_conditional_write_past_the_end_that_runs_panics_as_rust_does(device, kernels, rust) -> None:
    n = n_for(device)
    short, taken = n * 9 // 10, n * 19 // 20
    s = roots_input(n, short, [taken])
    expected = rust_panic(lambda: rust.roots(np.zeros(n), np.zeros(short), s))
    x1, x2 = np.full(n, 7.0), np.full(short, 7.0)
    raised = rust_panic(lambda: kernels.roots(x1, x2, s))
    assert same_panic(raised, expected)
    assert raised.message == f"index out of bounds: the len is {short} but the index is {taken}"
    assert np.all(x1 == 7.0) and np.all(x2 == 7.0)  # nothing was copied back
    kernels.roots(np.zeros(n), np.zeros(n), s)  # the record was reset: the next call runs
    assert kernels.roots.last_variants == ["rs2gpu_roots_0"]


def test_conditional_accesses_in_bounds_run_the_variant_without_checks_and_the_call_does_not_wait(emulated) -> None:
    n = 700
    s = roots_input(n, n, [])
    x1, x2 = EmulatedDeviceArray(np.zeros(n)), EmulatedDeviceArray(np.zeros(n))
    waits = emulated.backend.synchronizations
    emulated.roots(x1, x2, EmulatedDeviceArray(s))
    assert emulated.roots.last_variants == ["rs2gpu_roots_0"]
    assert emulated.backend.synchronizations == waits
    assert x1.array.tobytes() == s.tobytes()
    assert np.array_equal(x2.array[s >= 0], np.sqrt(s[s >= 0])) and np.all(x2.array[s < 0] == 0.0)


def test_the_checked_variant_waits_for_the_device_to_read_its_panics(emulated) -> None:
    n = 300
    x1, x2 = EmulatedDeviceArray(np.zeros(n)), EmulatedDeviceArray(np.zeros(n - 1))
    waits = emulated.backend.synchronizations
    emulated.roots(x1, x2, EmulatedDeviceArray(roots_input(n, n - 1, [])))
    assert emulated.roots.last_variants == ["rs2gpu_roots_0_checked"]
    assert emulated.backend.synchronizations == waits + 1


def test_the_right_side_of_a_short_circuit_runs_only_where_rust_runs_it(device, kernels, rust) -> None:
    a = np.random.default_rng(3).uniform(-1.0, 1.0, n_for(device))
    want, got = np.zeros(a.size), np.zeros(a.size)
    rust.next_positive(want, a)
    kernels.next_positive(got, a)
    assert got.tobytes() == want.tobytes()


def test_an_access_in_a_loop_that_runs_no_iteration_never_panics(device, kernels, rust) -> None:
    n = n_for(device)
    want, got = np.full(n, 1.0), np.full(n, 1.0)
    rust.repeat_sum(want, np.zeros(10), 0)
    kernels.repeat_sum(got, np.zeros(10), 0)
    assert got.tobytes() == want.tobytes()
    expected = rust_panic(lambda: rust.repeat_sum(np.zeros(n), np.zeros(10), 1))
    assert same_panic(rust_panic(lambda: kernels.repeat_sum(np.zeros(n), np.zeros(10), 1)), expected)


# ---------------------------------------------------------------- index lists


def zones_input(n: int, shift: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A permutation of 0..n as the zone list, `out` of n elements and `x` long enough for `i + shift`."""
    rng = np.random.default_rng(n)
    return np.zeros(n), rng.uniform(-1.0, 1.0, n + shift), rng.permutation(n).astype(np.uint64)


def marked(kernel: DeviceKernel, target: str) -> tuple[np.ndarray, bool]:
    """The elements of `target` that the last call's verification marked (read from the device), and
    whether the loop flagged its indices as out of order (its flag, as the call read it back)."""
    marks = kernel._marks[target]
    words = np.empty(marks.capacity, dtype=np.uint32)
    kernel.backend.download(words, marks.buffer.ptr)
    return np.flatnonzero(words == marks.stamp), kernel._readback.flag(0, target) == marks.stamp


def race_message(kernels, kernel: str, positions: str, written: str) -> str:
    """The RaceError text the runtime documents for a repeated index (no Rust counterpart)."""
    source = kernels.abi.kernels[kernel].launches[0].index_lists[0].source
    return (f"kernel `{kernel}`: index list `zones` holds the same value at positions {positions}, so two "
            f"iterations of the loop at {source} may write `{written}`; nothing was copied back to the host, "
            f"and what the loop wrote to device arrays is unspecified")


@pytest.mark.parametrize("order", ["increasing", "decreasing"])
def test_a_monotone_list_is_verified_by_the_loop_alone_and_no_verification_is_launched(device, kernels, rust,
                                                                                        order) -> None:
    n = n_for(device)
    out, x, _ = zones_input(2 * n, 5)
    zones = np.arange(0, 2 * n, 2, dtype=np.uint64)  # every other element of `out`
    zones = zones if order == "increasing" else zones[::-1].copy()
    want = out.copy()
    rust.scatter(want, x, zones, 5)
    before = device.activity(kernels.scatter)
    kernels.scatter(out, x, zones, 5)
    # the loop is the call's last launch: the host reads its order flag after the wait, and it is clear
    assert device.activity(kernels.scatter).launches - before.launches == 1
    assert kernels.scatter.last_variants == ["rs2gpu_scatter_0"]
    assert out.tobytes() == want.tobytes()
    elements, flagged = marked(kernels.scatter, "out")
    assert not flagged and elements.size == 0


def test_a_list_of_one_value_is_in_order(emulated, rust) -> None:
    out, x = np.zeros(10), np.arange(20.0)
    want = out.copy()
    rust.scatter(want, x, np.array([7], dtype=np.uint64), 3)
    emulated.scatter(out, x, np.array([7], dtype=np.uint64), 3)
    assert out.tobytes() == want.tobytes()
    assert marked(emulated.scatter, "out")[1] is False


def test_a_distinct_list_out_of_order_is_verified_after_the_loop_by_marking_its_values(device, kernels, rust) -> None:
    out, x, zones = zones_input(n_for(device), 5)
    want = out.copy()
    rust.scatter(want, x, zones, 5)
    before = device.activity(kernels.scatter)
    kernels.scatter(out, x, zones, 5)
    assert device.activity(kernels.scatter).launches - before.launches == 2  # the loop, then its verification
    assert out.tobytes() == want.tobytes()
    elements, flagged = marked(kernels.scatter, "out")
    assert flagged and np.array_equal(elements, np.sort(zones))


@pytest.mark.parametrize("positions", ["apart", "neighbours", "ends"])
def test_a_repeated_value_is_a_race_error_naming_both_positions(device, kernels, positions) -> None:
    n = n_for(device)
    first, second = {"apart": (12, 2 * n // 3), "neighbours": (n // 2, n // 2 + 1), "ends": (0, n - 1)}[positions]
    out, x, zones = zones_input(n, 5)
    zones[second] = zones[first]
    with pytest.raises(rs2gpu.RaceError) as caught:
        kernels.scatter(out, x, zones, 5)
    assert str(caught.value) == race_message(kernels, "scatter", f"{first} and {second}", f"out[{zones[first]}]")
    assert np.all(out == 0.0)  # nothing was copied back
    in_order = np.arange(n, dtype=np.uint64)  # a repeat in a list otherwise in order
    in_order[second] = in_order[first]
    with pytest.raises(rs2gpu.RaceError) as caught:
        kernels.scatter(out, x, in_order, 5)
    assert str(caught.value) == race_message(kernels, "scatter", f"{first} and {second}", f"out[{first}]")
    assert np.all(out == 0.0)


def test_a_race_error_leaves_the_elements_of_device_arrays_the_loop_does_not_write(device, kernels) -> None:
    n = n_for(device)
    out, x, zones = zones_input(n, 5)
    zones = zones[:n * 9 // 10].copy()
    zones[-1] = zones[3]
    target = device.to_device(np.full(n, 3.0))
    with pytest.raises(rs2gpu.RaceError):
        kernels.scatter(target, device.to_device(x), device.to_device(zones), 5)
    untouched = np.setdiff1d(np.arange(n), zones)
    assert untouched.size == n - zones.size + 1 and np.all(device.to_host(target)[untouched] == 3.0)


def test_the_order_is_that_of_the_written_indices_from_the_loop_s_first_position(emulated, rust) -> None:
    # `out[2 * zones[ii - 1] + 1]` for ii in 1..len: positions 0..len - 1, odd elements
    n = 800
    x = np.random.default_rng(6).uniform(-1.0, 1.0, n)
    for zones in (np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64)[::-1].copy()):
        want, got = np.zeros(2 * n), np.zeros(2 * n)
        rust.interleave(want, zones, x)
        emulated.interleave(got, zones, x)
        assert got.tobytes() == want.tobytes()
        assert marked(emulated.interleave, "out")[1] is False
    zones = np.arange(n, dtype=np.uint64)
    zones[798] = zones[400]  # position 798 is read by the last iteration, ii = 799
    with pytest.raises(rs2gpu.RaceError) as caught:
        emulated.interleave(np.zeros(2 * n), zones, x)
    assert str(caught.value) == race_message(emulated, "interleave", "400 and 798", "out[801]")


def test_a_slice_written_twice_at_the_list_value_of_its_iteration_is_no_repeat(emulated, rust) -> None:
    n = 500
    zones = np.random.default_rng(7).permutation(n).astype(np.uint64)
    x = np.random.default_rng(7).uniform(-1.0, 1.0, n)
    want, got = np.zeros(n), np.zeros(n)
    rust.twice(want, zones, x)
    emulated.twice(got, zones, x)
    assert got.tobytes() == want.tobytes()


def test_each_slice_written_through_a_list_has_its_own_order(emulated, rust) -> None:
    n = 600
    zones = np.arange(n, dtype=np.uint64)
    others = np.random.default_rng(8).permutation(n).astype(np.uint64)
    want, got = [np.zeros(n), np.zeros(n)], [np.zeros(n), np.zeros(n)]
    rust.split(*want, zones, others)
    emulated.split(*got, zones, others)
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))
    assert marked(emulated.split, "a")[1] is False and marked(emulated.split, "b")[1] is True
    others[5] = others[250]
    with pytest.raises(rs2gpu.RaceError) as caught:
        emulated.split(np.zeros(n), np.zeros(n), zones, others)
    assert "index list `others` holds the same value at positions 5 and 250" in str(caught.value)


def test_in_a_host_loop_the_steps_after_a_race_error_do_not_run(device, kernels, rust) -> None:
    n = n_for(device)
    zones = np.random.default_rng(9).permutation(n).astype(np.uint64)
    x = np.random.default_rng(9).uniform(0.0, 1.0, n + 2)
    want, got = np.zeros(n), np.zeros(n)
    rust.steps(want, zones, x, 3)
    kernels.steps(got, zones, x, 3)
    assert got.tobytes() == want.tobytes()
    zones[1] = zones[0]
    out = device.to_device(np.zeros(n))
    with pytest.raises(rs2gpu.RaceError):
        kernels.steps(out, device.to_device(zones), device.to_device(x), 3)
    assert np.all(device.to_host(out) < 1.0)  # only the first step wrote (x < 1, plus the step)


def test_a_read_through_the_list_past_its_slice_in_a_later_host_loop_step_panics_as_rust_does(emulated, rust) -> None:
    n = 300
    zones = np.random.default_rng(10).permutation(n).astype(np.uint64)
    x = np.random.default_rng(10).uniform(0.0, 1.0, n + 1)  # x[zones[ii] + 2] leaves it in the third step
    expected = rust_panic(lambda: rust.steps(np.zeros(n), zones, x, 3))
    assert expected.message == f"index out of bounds: the len is {n + 1} but the index is {n + 1}"
    assert same_panic(rust_panic(lambda: emulated.steps(np.zeros(n), zones, x, 3)), expected)


def two_slices(n: int, x_len: int, y_len: int):
    rng = np.random.default_rng(n + x_len + y_len)
    return rng.uniform(-1.0, 1.0, x_len), rng.uniform(-1.0, 1.0, y_len), rng.permutation(n).astype(np.uint64)


def test_reads_of_two_slices_at_two_scales_through_one_list_run_as_in_rust(emulated, rust) -> None:
    n = 500
    x, y, zones = two_slices(n, 2 * n, n + 3)  # every read in bounds, the last ones at the ends
    want, got = np.zeros(n), np.zeros(n)
    rust.gather_two(want, x, y, zones)
    emulated.gather_two(got, x, y, zones)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("x_short, y_short", [(1, 0), (0, 1), (1, 1)], ids=["x-only", "y-only", "both"])
def test_the_first_read_through_the_list_rust_fails_at_is_the_panic(device, kernels, rust, x_short, y_short) -> None:
    # zone n - 1 reads y[n + 2], x[2n - 1], y[n - 1] in this order
    n = n_for(device)
    x, y, zones = two_slices(n, 2 * n - x_short, n + 3 - y_short)
    expected = rust_panic(lambda: rust.gather_two(np.zeros(n), x, y, zones))
    out = np.full(n, 5.0)
    assert same_panic(rust_panic(lambda: kernels.gather_two(out, x, y, zones)), expected)
    assert np.all(out == 5.0)


def test_a_list_value_past_the_written_slice_panics_as_rust_does(device, kernels, rust) -> None:
    n = n_for(device)
    out, _, zones = zones_input(n, 5)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 2 * n)
    zones[n // 25] = n + n // 5  # x[n + n / 5] and 5 past it exist, out's element does not
    expected = rust_panic(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert same_panic(rust_panic(lambda: kernels.scatter(out, x, zones, 5)), expected)
    assert np.all(out == 0.0)


def test_a_gather_through_the_list_past_its_slice_panics_as_rust_does(device, kernels, rust) -> None:
    n = n_for(device)
    out, x = np.zeros(n), np.random.default_rng(2).uniform(-1.0, 1.0, n + 3)
    zones = np.random.default_rng(2).permutation(n - 1).astype(np.uint64)  # only zone n - 2 reads x[n - 2 + 5]
    expected = rust_panic(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert expected.message == f"index out of bounds: the len is {n + 3} but the index is {n + 3}"
    assert same_panic(rust_panic(lambda: kernels.scatter(out, x, zones, 5)), expected)
    assert np.all(out == 0.0)


def test_gathers_at_offsets_that_wrap_below_zero_are_checked_as_rust_wraps_them(emulated, rust) -> None:
    minus_one = (1 << 64) - 1  # x[i + shift] is x[i - 1]
    out, x = np.zeros(1000), np.random.default_rng(4).uniform(-1.0, 1.0, 1000)
    zones = np.random.default_rng(4).permutation(999).astype(np.uint64) + 1
    want = out.copy()
    rust.scatter(want, x, zones, minus_one)
    emulated.scatter(out, x, zones, minus_one)
    assert out.tobytes() == want.tobytes()
    zones[500] = 0  # x[0 - 1] wraps to the largest index
    expected = rust_panic(lambda: rust.scatter(np.zeros(1000), x, zones, minus_one))
    assert expected.message.endswith(f"the index is {minus_one}")
    assert same_panic(rust_panic(lambda: emulated.scatter(np.zeros(1000), x, zones, minus_one)), expected)


def test_a_huge_list_value_fails_at_the_first_access_rust_makes(emulated, rust) -> None:
    out, x, zones = zones_input(1000, 5)
    zones[300] = 1 << 63
    expected = rust_panic(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert expected.message.endswith(f"the index is {1 << 63}")
    assert same_panic(rust_panic(lambda: emulated.scatter(out, x, zones, 5)), expected)


def test_every_call_verifies_the_list_again_with_the_same_marks_and_a_new_stamp(emulated) -> None:
    out, x, zones = zones_input(800, 5)
    emulated.scatter(out, x, zones, 5)
    marks = emulated.scatter._marks["out"]
    buffer, stamp = marks.buffer, marks.stamp
    zones[5] = zones[6]  # changed in place, same array: no cached verdict may let it through
    with pytest.raises(rs2gpu.RaceError):
        emulated.scatter(out, x, zones, 5)
    assert marks.buffer is buffer and marks.stamp == stamp + 1


def test_marks_are_zeroed_when_the_stamp_wraps(device, kernels) -> None:
    out, x, zones = zones_input(n_for(device), 5)
    kernels.scatter(out, x, zones, 5)
    marks = kernels.scatter._marks["out"]
    marks.stamp = 0xFFFFFFFF  # the next stamp would be 1 again, which earlier marks may hold
    kernels.scatter(out, x, zones, 5)
    assert marks.stamp == 1
    kernels.scatter(out, x, zones, 5)
    assert marks.stamp == 2


def test_after_the_stamp_wraps_an_earlier_call_s_order_flag_does_not_count(emulated) -> None:
    out, x, zones = zones_input(800, 5)
    marks = emulated.scatter._marks["out"]
    marks.stamp = 0xFFFFFFFF
    emulated.scatter(out, x, zones, 5)  # stamp 1, out of order: the flag holds 1
    assert marks.stamp == 1 and marked(emulated.scatter, "out")[1]
    marks.stamp = 0xFFFFFFFF
    emulated.scatter(out, x, np.arange(800, dtype=np.uint64), 5)  # stamp 1 again, in order
    assert marked(emulated.scatter, "out")[1] is False and marked(emulated.scatter, "out")[0].size == 0


def test_the_marks_grow_with_the_written_slice(emulated) -> None:
    small = zones_input(100, 5)
    emulated.scatter(*small, 5)
    large = zones_input(5000, 5)
    emulated.scatter(*large, 5)
    assert emulated.scatter._marks["out"].capacity >= 5000


def test_an_empty_list_launches_nothing(emulated_device, emulated) -> None:
    before = emulated_device.activity(emulated.scatter)
    emulated.scatter(np.zeros(10), np.zeros(10), np.zeros(0, dtype=np.uint64), 5)
    assert emulated_device.activity(emulated.scatter).launches == before.launches


def test_a_conditional_list_write_ignores_values_it_never_writes_at(device, kernels, rust) -> None:
    n = n_for(device)
    zones = np.arange(n, dtype=np.uint64)
    keep = np.ones(n, dtype=np.uint8)
    zones[[10, 20, 30]] = 10**9  # out of bounds, twice the same value, but never written at
    keep[[10, 20, 30]] = 0
    want, got = np.zeros(n), np.zeros(n)
    rust.scatter_where(want, zones, keep)
    kernels.scatter_where(got, zones, keep)
    assert got.tobytes() == want.tobytes()


def test_a_conditional_list_write_past_the_end_that_runs_panics_as_rust_does(emulated, rust) -> None:
    n = 600
    zones = np.arange(n, dtype=np.uint64)
    keep = np.zeros(n, dtype=np.uint8)
    zones[77], keep[77] = n + 3, 1
    expected = rust_panic(lambda: rust.scatter_where(np.zeros(n), zones, keep))
    assert same_panic(rust_panic(lambda: emulated.scatter_where(np.zeros(n), zones, keep)), expected)


def test_reads_at_an_offset_from_a_struct_field_get_the_window_of_each_call_s_value(emulated, rust) -> None:
    n = 400
    zones = np.random.default_rng(11).permutation(n).astype(np.uint64)
    x = np.random.default_rng(11).uniform(-1.0, 1.0, n + 2)
    for by in (2, 0, 1):
        want, got = np.zeros(n), np.zeros(n)
        rust.gather_shifted(want, x, zones, {"by": by})
        emulated.gather_shifted(got, x, zones, {"by": by})
        assert got.tobytes() == want.tobytes()
    # the windows of the calls before would let zone n - 1 read x[n + 2]
    expected = rust_panic(lambda: rust.gather_shifted(np.zeros(n), x, zones, {"by": 3}))
    assert same_panic(rust_panic(lambda: emulated.gather_shifted(np.zeros(n), x, zones, {"by": 3})), expected)


# ---------------------------------------------------------------- the benchmark's kernels


@pytest.fixture(scope="module")
def rajaperf(emulated_device):
    return emulated_device.load(RAJAPERF)


def test_if_quad_on_device_arrays_returns_without_waiting(rajaperf) -> None:
    n = 2000
    rng = np.random.default_rng(5)
    a, b, c = (EmulatedDeviceArray(rng.uniform(0.5, 1.5, n)) for _ in range(3))
    x1, x2 = EmulatedDeviceArray(np.zeros(n)), EmulatedDeviceArray(np.zeros(n))
    waits = rajaperf.backend.synchronizations
    rajaperf.if_quad(a, b, c, x1, x2)
    assert rajaperf.if_quad.last_variants == ["rs2gpu_if_quad_0"]
    assert rajaperf.backend.synchronizations == waits


def test_pressure_has_no_device_checks_at_all(rajaperf) -> None:
    kernel = rajaperf.translation.emitted.abi.kernels["pressure"]
    assert [launch.entry(EntryKind.CHECKED) for launch in kernel.launches] == [None, None]
    assert not any(entry.records_panics for launch in kernel.launches for entry in launch.entry_points)


def test_the_benchmark_s_zone_list_needs_no_marks(device) -> None:
    from bench.data import domain3d

    mesh = domain3d(n_for(device))  # RAJAPerf's mesh: about its default size on a GPU
    zones = mesh.real_zones(np).astype(np.uint64)
    x = np.random.default_rng(12).uniform(0.5, 1.5, mesh.nnalls)
    want = np.zeros(mesh.nnalls)
    rustc_build(RAJAPERF).zonal_accumulation_3d(want, x, zones, mesh.jp, mesh.kp)
    kernel = device.load(RAJAPERF).zonal_accumulation_3d
    vol = device.to_device(np.zeros(mesh.nnalls))
    kernel(vol, device.to_device(x), device.to_device(zones), mesh.jp, mesh.kp)
    assert device.to_host(vol).tobytes() == want.tobytes()
    elements, flagged = marked(kernel, "vol")
    assert not flagged and elements.size == 0
