"""The device side of the checks, run on the CPU: conditional accesses, entry points, index-list
verification and the panic record, with the generated kernels compiled by g++ (`bench.emulate`).

Expected results and panics come from rustc (the cpu backend runs the same Rust); a RaceError has no Rust
counterpart (Rust runs the iterations one after another), so its text is the runtime's documented one.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu import pipeline
from rs2gpu.ir.abi import EntryKind
from rs2gpu.runtime.base import DeviceKernel

from bench.emulate import EmulatedBackend, EmulatedDeviceArray, EmulatedKernels, compiler

REPO = Path(__file__).resolve().parents[2]

CHECKS = Path(__file__).resolve().parent / "data" / "checks.rs"


@pytest.fixture(scope="module")
def rust(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RS2GPU_CACHE_DIR", str(tmp_path_factory.mktemp("cpu-cache")))
        return rs2gpu.load(CHECKS, backend="cpu")


def emulated(source: Path, workdir: Path) -> EmulatedKernels:
    """The crate's kernels on one emulated device."""
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return EmulatedKernels(pipeline.translate(source), EmulatedBackend(workdir))


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> EmulatedKernels:
    return emulated(CHECKS, tmp_path_factory.mktemp("emulated"))


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


def test_a_conditional_write_past_the_end_that_never_runs_does_not_panic(device, rust) -> None:
    n, short = 600, 500
    s = roots_input(n, short, [])
    want = [np.zeros(n), np.zeros(short)]
    rust.roots(*want, s)
    got = [np.zeros(n), np.zeros(short)]
    device.roots(*got, s)
    assert device.roots.last_variants == ["rs2gpu_roots_0_checked"]
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))


def test_a_conditional_write_past_the_end_that_runs_panics_as_rust_does(device, rust) -> None:
    n, short = 600, 500
    s = roots_input(n, short, [550])
    expected = rust_panic(lambda: rust.roots(np.zeros(n), np.zeros(short), s))
    x1, x2 = np.full(n, 7.0), np.full(short, 7.0)
    raised = rust_panic(lambda: device.roots(x1, x2, s))
    assert same_panic(raised, expected)
    assert raised.message == f"index out of bounds: the len is {short} but the index is 550"
    assert np.all(x1 == 7.0) and np.all(x2 == 7.0)  # nothing was copied back


def test_conditional_accesses_in_bounds_run_the_entry_point_without_checks_and_the_call_does_not_wait(device) -> None:
    n = 700
    s = roots_input(n, n, [])
    x1, x2 = EmulatedDeviceArray(np.zeros(n)), EmulatedDeviceArray(np.zeros(n))
    waits = device.backend.synchronizations
    device.roots(x1, x2, EmulatedDeviceArray(s))
    assert device.roots.last_variants == ["rs2gpu_roots_0"]
    assert device.backend.synchronizations == waits
    assert x1.array.tobytes() == s.tobytes()
    assert np.array_equal(x2.array[s >= 0], np.sqrt(s[s >= 0])) and np.all(x2.array[s < 0] == 0.0)


def test_the_checked_entry_point_waits_for_the_device_to_read_its_panics(device) -> None:
    n = 300
    x1, x2 = EmulatedDeviceArray(np.zeros(n)), EmulatedDeviceArray(np.zeros(n - 1))
    waits = device.backend.synchronizations
    device.roots(x1, x2, EmulatedDeviceArray(roots_input(n, n - 1, [])))
    assert device.roots.last_variants == ["rs2gpu_roots_0_checked"]
    assert device.backend.synchronizations == waits + 1


def test_the_right_side_of_a_short_circuit_runs_only_where_rust_runs_it(device, rust) -> None:
    a = np.random.default_rng(3).uniform(-1.0, 1.0, 500)
    want, got = np.zeros(500), np.zeros(500)
    rust.next_positive(want, a)
    device.next_positive(got, a)
    assert got.tobytes() == want.tobytes()


def test_an_access_in_a_loop_that_runs_no_iteration_never_panics(device, rust) -> None:
    want, got = np.full(50, 1.0), np.full(50, 1.0)
    rust.repeat_sum(want, np.zeros(10), 0)
    device.repeat_sum(got, np.zeros(10), 0)
    assert got.tobytes() == want.tobytes()
    expected = rust_panic(lambda: rust.repeat_sum(np.zeros(50), np.zeros(10), 1))
    assert same_panic(rust_panic(lambda: device.repeat_sum(np.zeros(50), np.zeros(10), 1)), expected)


# ---------------------------------------------------------------- index lists


def zones_input(n: int, shift: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A permutation of 0..n as the zone list, `out` of n elements and `x` long enough for `i + shift`."""
    rng = np.random.default_rng(n)
    return np.zeros(n), rng.uniform(-1.0, 1.0, n + shift), rng.permutation(n).astype(np.uint64)


def marked(kernel: DeviceKernel, target: str) -> np.ndarray:
    """The elements of `target` that the last call's verification marked (the emulated device's memory is
    the host's), and whether the loop flagged its indices as out of order."""
    marks = kernel._marks[target]
    words = marks.buffer.array.view(np.uint32)
    return np.flatnonzero(words[:marks.capacity] == marks.stamp), kernel._readback.flag(0, target) == marks.stamp


def race_message(device: EmulatedKernels, kernel: str, positions: str, written: str) -> str:
    """The RaceError text the runtime documents for a repeated index (no Rust counterpart)."""
    source = device.translation.emitted.abi.kernels[kernel].launches[0].index_lists[0].source
    return (f"kernel `{kernel}`: index list `zones` holds the same value at positions {positions}, so two "
            f"iterations of the loop at {source} may write `{written}`; nothing was copied back to the host, "
            f"and what the loop wrote to device arrays is unspecified")


@pytest.mark.parametrize("order", ["increasing", "decreasing"])
def test_a_monotone_list_is_verified_by_the_loop_alone_and_no_verification_is_launched(device, rust, order) -> None:
    n = 1000
    out, x, _ = zones_input(n, 5)
    zones = np.arange(0, 2 * n, 2, dtype=np.uint64)[:n // 2]  # every other element of `out`
    zones = zones if order == "increasing" else zones[::-1].copy()
    want = out.copy()
    rust.scatter(want, x, zones, 5)
    device.backend.launches.clear()
    device.scatter(out, x, zones, 5)
    # the loop is the call's last launch: the host reads its order flag after the wait, and it is clear
    assert [symbol for symbol, _, _ in device.backend.launches] == ["rs2gpu_scatter_0"]
    assert out.tobytes() == want.tobytes()
    elements, flagged = marked(device.scatter, "out")
    assert not flagged and elements.size == 0


def test_a_list_of_one_value_is_in_order(device, rust) -> None:
    out, x = np.zeros(10), np.arange(20.0)
    want = out.copy()
    rust.scatter(want, x, np.array([7], dtype=np.uint64), 3)
    device.scatter(out, x, np.array([7], dtype=np.uint64), 3)
    assert out.tobytes() == want.tobytes()
    assert marked(device.scatter, "out")[1] is False


def test_a_distinct_list_out_of_order_is_verified_after_the_loop_by_marking_its_values(device, rust) -> None:
    out, x, zones = zones_input(1000, 5)
    want = out.copy()
    rust.scatter(want, x, zones, 5)
    device.backend.launches.clear()
    device.scatter(out, x, zones, 5)
    assert [symbol for symbol, _, _ in device.backend.launches] == ["rs2gpu_scatter_0", "rs2gpu_scatter_0_verify"]
    assert out.tobytes() == want.tobytes()
    elements, flagged = marked(device.scatter, "out")
    assert flagged and np.array_equal(elements, np.sort(zones))


def test_a_repeated_value_is_a_race_error_naming_both_positions(device) -> None:
    out, x, zones = zones_input(1000, 5)
    zones[17] = zones[3]
    with pytest.raises(rs2gpu.RaceError) as caught:
        device.scatter(out, x, zones, 5)
    assert str(caught.value) == race_message(device, "scatter", "3 and 17", f"out[{zones[3]}]")
    assert np.all(out == 0.0)  # nothing was copied back


@pytest.mark.parametrize("repeat", [(500, 501), (10, 900), (0, 999)], ids=["neighbours", "apart", "ends"])
def test_a_repeat_in_a_list_otherwise_in_order_is_a_race_error(device, repeat) -> None:
    first, second = repeat
    out, x, _ = zones_input(1000, 5)
    zones = np.arange(1000, dtype=np.uint64)
    zones[second] = zones[first]
    with pytest.raises(rs2gpu.RaceError) as caught:
        device.scatter(out, x, zones, 5)
    assert str(caught.value) == race_message(device, "scatter", f"{first} and {second}", f"out[{first}]")
    assert np.all(out == 0.0)


def test_a_race_error_leaves_the_elements_of_device_arrays_the_loop_does_not_write(device) -> None:
    out, x, zones = zones_input(1000, 5)
    zones = zones[:900].copy()
    zones[899] = zones[0]
    target = EmulatedDeviceArray(np.full(1000, 3.0))
    with pytest.raises(rs2gpu.RaceError):
        device.scatter(target, EmulatedDeviceArray(x), EmulatedDeviceArray(zones), 5)
    untouched = np.setdiff1d(np.arange(1000), zones)
    assert untouched.size == 101 and np.all(target.array[untouched] == 3.0)


def test_the_order_is_that_of_the_written_indices_from_the_loop_s_first_position(device, rust) -> None:
    # `out[2 * zones[ii - 1] + 1]` for ii in 1..len: positions 0..len - 1, odd elements
    n = 800
    x = np.random.default_rng(6).uniform(-1.0, 1.0, n)
    for zones in (np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64)[::-1].copy()):
        want, got = np.zeros(2 * n), np.zeros(2 * n)
        rust.interleave(want, zones, x)
        device.interleave(got, zones, x)
        assert got.tobytes() == want.tobytes()
        assert marked(device.interleave, "out")[1] is False
    zones = np.arange(n, dtype=np.uint64)
    zones[798] = zones[400]  # position 798 is read by the last iteration, ii = 799
    with pytest.raises(rs2gpu.RaceError) as caught:
        device.interleave(np.zeros(2 * n), zones, x)
    assert str(caught.value) == race_message(device, "interleave", "400 and 798", "out[801]")


def test_a_slice_written_twice_at_the_list_value_of_its_iteration_is_no_repeat(device, rust) -> None:
    n = 500
    zones = np.random.default_rng(7).permutation(n).astype(np.uint64)
    x = np.random.default_rng(7).uniform(-1.0, 1.0, n)
    want, got = np.zeros(n), np.zeros(n)
    rust.twice(want, zones, x)
    device.twice(got, zones, x)
    assert got.tobytes() == want.tobytes()


def test_each_slice_written_through_a_list_has_its_own_order(device, rust) -> None:
    n = 600
    zones = np.arange(n, dtype=np.uint64)
    others = np.random.default_rng(8).permutation(n).astype(np.uint64)
    want, got = [np.zeros(n), np.zeros(n)], [np.zeros(n), np.zeros(n)]
    rust.split(*want, zones, others)
    device.split(*got, zones, others)
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))
    assert marked(device.split, "a")[1] is False and marked(device.split, "b")[1] is True
    others[5] = others[250]
    with pytest.raises(rs2gpu.RaceError) as caught:
        device.split(np.zeros(n), np.zeros(n), zones, others)
    assert "index list `others` holds the same value at positions 5 and 250" in str(caught.value)


def test_in_a_host_loop_the_steps_after_a_race_error_do_not_run(device, rust) -> None:
    n = 400
    zones = np.random.default_rng(9).permutation(n).astype(np.uint64)
    x = np.random.default_rng(9).uniform(0.0, 1.0, n + 2)
    want, got = np.zeros(n), np.zeros(n)
    rust.steps(want, zones, x, 3)
    device.steps(got, zones, x, 3)
    assert got.tobytes() == want.tobytes()
    zones[1] = zones[0]
    out = EmulatedDeviceArray(np.zeros(n))
    with pytest.raises(rs2gpu.RaceError):
        device.steps(out, EmulatedDeviceArray(zones), EmulatedDeviceArray(x), 3)
    assert np.all(out.array < 1.0)  # only the first step wrote (x < 1, plus the step)


def test_a_read_through_the_list_past_its_slice_in_a_later_host_loop_step_panics_as_rust_does(device, rust) -> None:
    n = 300
    zones = np.random.default_rng(10).permutation(n).astype(np.uint64)
    x = np.random.default_rng(10).uniform(0.0, 1.0, n + 1)  # x[zones[ii] + 2] leaves it in the third step
    expected = rust_panic(lambda: rust.steps(np.zeros(n), zones, x, 3))
    assert expected.message == f"index out of bounds: the len is {n + 1} but the index is {n + 1}"
    assert same_panic(rust_panic(lambda: device.steps(np.zeros(n), zones, x, 3)), expected)


def two_slices(n: int, x_len: int, y_len: int):
    rng = np.random.default_rng(n + x_len + y_len)
    return rng.uniform(-1.0, 1.0, x_len), rng.uniform(-1.0, 1.0, y_len), rng.permutation(n).astype(np.uint64)


def test_reads_of_two_slices_at_two_scales_through_one_list_run_as_in_rust(device, rust) -> None:
    n = 500
    x, y, zones = two_slices(n, 2 * n, n + 3)  # every read in bounds, the last ones at the ends
    want, got = np.zeros(n), np.zeros(n)
    rust.gather_two(want, x, y, zones)
    device.gather_two(got, x, y, zones)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("x_len, y_len", [(2 * 500 - 1, 503), (1000, 502), (999, 502)],
                         ids=["x-only", "y-only", "both"])
def test_the_first_read_through_the_list_rust_fails_at_is_the_panic(device, rust, x_len, y_len) -> None:
    # zone 499 reads y[502], x[999], y[499] in this order
    n = 500
    x, y, zones = two_slices(n, x_len, y_len)
    expected = rust_panic(lambda: rust.gather_two(np.zeros(n), x, y, zones))
    out = np.full(n, 5.0)
    assert same_panic(rust_panic(lambda: device.gather_two(out, x, y, zones)), expected)
    assert np.all(out == 5.0)


def test_a_list_value_past_the_written_slice_panics_as_rust_does(device, rust) -> None:
    out, x, zones = zones_input(1000, 5)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 2000)
    zones[40] = 1200  # x[1200] and x[1205] exist, out[1200] does not
    expected = rust_panic(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert same_panic(rust_panic(lambda: device.scatter(out, x, zones, 5)), expected)
    assert np.all(out == 0.0)


def test_a_gather_through_the_list_past_its_slice_panics_as_rust_does(device, rust) -> None:
    out, x = np.zeros(1000), np.random.default_rng(2).uniform(-1.0, 1.0, 1003)
    zones = np.random.default_rng(2).permutation(999).astype(np.uint64)  # only zone 998 reads x[998 + 5]
    expected = rust_panic(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert expected.message == "index out of bounds: the len is 1003 but the index is 1003"
    assert same_panic(rust_panic(lambda: device.scatter(out, x, zones, 5)), expected)
    assert np.all(out == 0.0)


def test_gathers_at_offsets_that_wrap_below_zero_are_checked_as_rust_wraps_them(device, rust) -> None:
    minus_one = (1 << 64) - 1  # x[i + shift] is x[i - 1]
    out, x = np.zeros(1000), np.random.default_rng(4).uniform(-1.0, 1.0, 1000)
    zones = np.random.default_rng(4).permutation(999).astype(np.uint64) + 1
    want = out.copy()
    rust.scatter(want, x, zones, minus_one)
    device.scatter(out, x, zones, minus_one)
    assert out.tobytes() == want.tobytes()
    zones[500] = 0  # x[0 - 1] wraps to the largest index
    expected = rust_panic(lambda: rust.scatter(np.zeros(1000), x, zones, minus_one))
    assert expected.message.endswith(f"the index is {minus_one}")
    assert same_panic(rust_panic(lambda: device.scatter(np.zeros(1000), x, zones, minus_one)), expected)


def test_a_huge_list_value_fails_at_the_first_access_rust_makes(device, rust) -> None:
    out, x, zones = zones_input(1000, 5)
    zones[300] = 1 << 63
    expected = rust_panic(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert expected.message.endswith(f"the index is {1 << 63}")
    assert same_panic(rust_panic(lambda: device.scatter(out, x, zones, 5)), expected)


def test_every_call_verifies_the_list_again_with_the_same_marks_and_a_new_stamp(device) -> None:
    out, x, zones = zones_input(800, 5)
    device.scatter(out, x, zones, 5)
    marks = device.scatter._marks["out"]
    buffer, stamp = marks.buffer, marks.stamp
    zones[5] = zones[6]  # changed in place, same array: no cached verdict may let it through
    with pytest.raises(rs2gpu.RaceError):
        device.scatter(out, x, zones, 5)
    assert marks.buffer is buffer and marks.stamp == stamp + 1


def test_marks_are_zeroed_when_the_stamp_wraps(device) -> None:
    out, x, zones = zones_input(800, 5)
    device.scatter(out, x, zones, 5)
    marks = device.scatter._marks["out"]
    marks.stamp = 0xFFFFFFFF  # the next stamp would be 1 again, which earlier marks may hold
    device.scatter(out, x, zones, 5)
    assert marks.stamp == 1
    device.scatter(out, x, zones, 5)
    assert marks.stamp == 2


def test_after_the_stamp_wraps_an_earlier_call_s_order_flag_does_not_count(device) -> None:
    out, x, zones = zones_input(800, 5)
    marks = device.scatter._marks["out"]
    marks.stamp = 0xFFFFFFFF
    device.scatter(out, x, zones, 5)  # stamp 1, out of order: the flag holds 1
    assert marks.stamp == 1 and marked(device.scatter, "out")[1]
    marks.stamp = 0xFFFFFFFF
    device.scatter(out, x, np.arange(800, dtype=np.uint64), 5)  # stamp 1 again, in order
    assert marked(device.scatter, "out")[1] is False and marked(device.scatter, "out")[0].size == 0


def test_the_marks_grow_with_the_written_slice(device) -> None:
    small = zones_input(100, 5)
    device.scatter(*small, 5)
    large = zones_input(5000, 5)
    device.scatter(*large, 5)
    assert device.scatter._marks["out"].capacity >= 5000


def test_an_empty_list_launches_nothing(device) -> None:
    device.backend.launches.clear()
    device.scatter(np.zeros(10), np.zeros(10), np.zeros(0, dtype=np.uint64), 5)
    assert device.backend.launches == []


def test_a_conditional_list_write_ignores_values_it_never_writes_at(device, rust) -> None:
    n = 600
    zones = np.arange(n, dtype=np.uint64)
    keep = np.ones(n, dtype=np.uint8)
    zones[[10, 20, 30]] = 10**6  # out of bounds, twice the same value, but never written at
    keep[[10, 20, 30]] = 0
    want, got = np.zeros(n), np.zeros(n)
    rust.scatter_where(want, zones, keep)
    device.scatter_where(got, zones, keep)
    assert got.tobytes() == want.tobytes()


def test_a_conditional_list_write_past_the_end_that_runs_panics_as_rust_does(device, rust) -> None:
    n = 600
    zones = np.arange(n, dtype=np.uint64)
    keep = np.zeros(n, dtype=np.uint8)
    zones[77], keep[77] = n + 3, 1
    expected = rust_panic(lambda: rust.scatter_where(np.zeros(n), zones, keep))
    assert same_panic(rust_panic(lambda: device.scatter_where(np.zeros(n), zones, keep)), expected)


def test_reads_at_an_offset_from_a_struct_field_get_the_window_of_each_call_s_value(device, rust) -> None:
    n = 400
    zones = np.random.default_rng(11).permutation(n).astype(np.uint64)
    x = np.random.default_rng(11).uniform(-1.0, 1.0, n + 2)
    for by in (2, 0, 1):
        want, got = np.zeros(n), np.zeros(n)
        rust.gather_shifted(want, x, zones, {"by": by})
        device.gather_shifted(got, x, zones, {"by": by})
        assert got.tobytes() == want.tobytes()
    # the windows of the calls before would let zone n - 1 read x[n + 2]
    expected = rust_panic(lambda: rust.gather_shifted(np.zeros(n), x, zones, {"by": 3}))
    assert same_panic(rust_panic(lambda: device.gather_shifted(np.zeros(n), x, zones, {"by": 3})), expected)


# ---------------------------------------------------------------- the benchmark's kernels


@pytest.fixture(scope="module")
def rajaperf(tmp_path_factory: pytest.TempPathFactory) -> EmulatedKernels:
    return emulated(REPO / "examples" / "rajaperf", tmp_path_factory.mktemp("emulated-rajaperf"))


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


@pytest.fixture(scope="module")
def rajaperf_rust(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RS2GPU_CACHE_DIR", str(tmp_path_factory.mktemp("cpu-cache-rajaperf")))
        return rs2gpu.load(REPO / "examples" / "rajaperf", backend="cpu")


def test_the_benchmark_s_zone_list_needs_no_marks(rajaperf, rajaperf_rust) -> None:
    from bench.data import domain3d

    mesh = domain3d(2000)  # RAJAPerf's mesh, small: 14 real nodes per dimension, 13³ zones
    zones = mesh.real_zones(np).astype(np.uint64)
    x = np.random.default_rng(12).uniform(0.5, 1.5, mesh.nnalls)
    want, got = np.zeros(mesh.nnalls), np.zeros(mesh.nnalls)
    rajaperf_rust.zonal_accumulation_3d(want, x, zones, mesh.jp, mesh.kp)
    rajaperf.zonal_accumulation_3d(got, x, zones, mesh.jp, mesh.kp)
    assert got.tobytes() == want.tobytes()
    elements, flagged = marked(rajaperf.zonal_accumulation_3d, "vol")
    assert not flagged and elements.size == 0
