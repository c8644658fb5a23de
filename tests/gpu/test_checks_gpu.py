"""The device side of the checks on the cuda backend: the checked launch variant, the checks of index
lists (in the loop, and the verification after it), the panic record, and calls that need not wait for
the device.

The kernels are tests/runtime/data/checks.rs (the same ones tests/runtime/test_device_checks.py runs on
an emulated device); the cpu backend (rustc) gives the expected results and panics. A RaceError has no
Rust counterpart (Rust runs the iterations in order), so its text is the runtime's documented one.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rs2gpu

from tests.support.paths import RAJAPERF as EXAMPLE

pytestmark = pytest.mark.gpu

CHECKS = Path(__file__).resolve().parents[1] / "runtime" / "data" / "checks.rs"


@pytest.fixture(scope="module")
def gpu():
    return rs2gpu.load(CHECKS, backend="cuda")


@pytest.fixture(scope="module")
def rust():
    return rs2gpu.load(CHECKS, backend="cpu")


def panic_of(call) -> rs2gpu.KernelPanic:
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        call()
    return caught.value


def same_panic(a: rs2gpu.KernelPanic, b: rs2gpu.KernelPanic) -> bool:
    return (a.message, a.location, a.kernel) == (b.message, b.location, b.kernel)


def roots_input(n: int, short: int, taken_past_end: list[int]) -> np.ndarray:
    s = np.random.default_rng(n).uniform(-1.0, 1.0, n)
    s[short:] = -1.0
    s[taken_past_end] = 4.0
    return s


# ---------------------------------------------------------------- conditional accesses


def test_a_conditional_write_past_the_end_that_never_runs_does_not_panic(gpu, rust) -> None:
    n, short = 1_000_003, 900_000
    s = roots_input(n, short, [])
    want, got = [np.zeros(n), np.zeros(short)], [np.zeros(n), np.zeros(short)]
    rust.roots(*want, s)
    gpu.roots(*got, s)
    assert gpu.roots.last_variants == ["rs2gpu_roots_0_checked"]
    assert all(g.tobytes() == w.tobytes() for g, w in zip(got, want))


def test_a_conditional_write_past_the_end_that_runs_panics_as_rust_does(gpu, rust) -> None:
    n, short = 1_000_003, 900_000
    s = roots_input(n, short, [950_001])
    expected = panic_of(lambda: rust.roots(np.zeros(n), np.zeros(short), s))
    x1, x2 = np.full(n, 7.0), np.full(short, 7.0)
    assert same_panic(panic_of(lambda: gpu.roots(x1, x2, s)), expected)
    assert np.all(x1 == 7.0) and np.all(x2 == 7.0)
    gpu.roots(np.zeros(n), np.zeros(n), s)  # the record was reset: the next call runs
    assert gpu.roots.last_variants == ["rs2gpu_roots_0"]


def test_the_right_side_of_a_short_circuit_runs_only_where_rust_runs_it(gpu, rust) -> None:
    a = np.random.default_rng(3).uniform(-1.0, 1.0, 100_000)
    want, got = np.zeros(a.size), np.zeros(a.size)
    rust.next_positive(want, a)
    gpu.next_positive(got, a)
    assert got.tobytes() == want.tobytes()


def test_an_access_in_a_loop_that_runs_no_iteration_never_panics(gpu, rust) -> None:
    got = np.full(5000, 1.0)
    gpu.repeat_sum(got, np.zeros(10), 0)
    assert np.all(got == 0.0)
    expected = panic_of(lambda: rust.repeat_sum(np.zeros(5000), np.zeros(10), 1))
    assert same_panic(panic_of(lambda: gpu.repeat_sum(np.zeros(5000), np.zeros(10), 1)), expected)


# ---------------------------------------------------------------- index lists


def zones_input(n: int, shift: int):
    rng = np.random.default_rng(n)
    return np.zeros(n), rng.uniform(-1.0, 1.0, n + shift), rng.permutation(n).astype(np.uint64)


def marked(kernel, target: str) -> tuple[int, bool]:
    """How many elements of `target` the last call's verification marked (read from the device), and
    whether the loop flagged its indices as out of order (its flag, as the call read it back)."""
    marks = kernel._marks[target]
    words = np.empty(marks.capacity, dtype=np.uint32)
    kernel.backend.download(words, marks.buffer.ptr)
    return int(np.count_nonzero(words == marks.stamp)), kernel._readback.flag(0, target) == marks.stamp


def race_message(gpu, kernel: str, positions: str, written: str) -> str:
    source = gpu.manifest["kernels"][kernel]["launches"][0]["index_lists"][0]["source"]
    return (f"kernel `{kernel}`: index list `zones` holds the same value at positions {positions}, so two "
            f"iterations of the loop at {source} may write `{written}`; nothing was copied back to the host, "
            f"and what the loop wrote to device arrays is unspecified")


@pytest.mark.parametrize("order", ["increasing", "decreasing"])
def test_a_monotone_list_is_verified_by_the_loop_alone(gpu, rust, order) -> None:
    n = 1_000_000
    out, x, _ = zones_input(2 * n, 7)
    zones = np.arange(0, 2 * n, 2, dtype=np.uint64)
    zones = zones if order == "increasing" else zones[::-1].copy()
    want = out.copy()
    rust.scatter(want, x, zones, 7)
    gpu.scatter(out, x, zones, 7)
    assert out.tobytes() == want.tobytes()
    assert marked(gpu.scatter, "out") == (0, False)


def test_a_distinct_list_out_of_order_is_verified_after_the_loop_by_marking_its_values(gpu, rust) -> None:
    out, x, zones = zones_input(1_000_000, 7)
    want = out.copy()
    rust.scatter(want, x, zones, 7)
    gpu.scatter(out, x, zones, 7)
    assert out.tobytes() == want.tobytes()
    assert marked(gpu.scatter, "out") == (1_000_000, True)


@pytest.mark.parametrize("first, second", [(12, 654_321), (500_000, 500_001), (0, 999_999)],
                         ids=["apart", "neighbours", "ends"])
def test_a_repeated_value_is_a_race_error_naming_both_positions(gpu, first, second) -> None:
    out, x, zones = zones_input(1_000_000, 7)
    zones[second] = zones[first]
    with pytest.raises(rs2gpu.RaceError) as caught:
        gpu.scatter(out, x, zones, 7)
    assert str(caught.value) == race_message(gpu, "scatter", f"{first} and {second}", f"out[{zones[first]}]")
    assert np.all(out == 0.0)  # nothing was copied back
    sorted_zones = np.arange(1_000_000, dtype=np.uint64)
    sorted_zones[second] = sorted_zones[first]
    with pytest.raises(rs2gpu.RaceError) as caught:
        gpu.scatter(out, x, sorted_zones, 7)
    assert str(caught.value) == race_message(gpu, "scatter", f"{first} and {second}", f"out[{first}]")


def test_a_race_error_leaves_the_elements_of_device_arrays_the_loop_does_not_write(gpu) -> None:
    import cupy as cp

    out, x, zones = zones_input(1_000_000, 7)
    zones = zones[:900_000].copy()
    zones[899_999] = zones[3]
    target = cp.full(out.size, 3.0)
    with pytest.raises(rs2gpu.RaceError):
        gpu.scatter(target, cp.asarray(x), cp.asarray(zones), 7)
    untouched = np.setdiff1d(np.arange(out.size), zones)
    assert bool(cp.all(target[cp.asarray(untouched)] == 3.0))


def test_a_list_value_past_the_written_slice_panics_as_rust_does(gpu, rust) -> None:
    out, x, zones = zones_input(100_000, 7)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, 300_000)
    zones[4_000] = 200_000
    expected = panic_of(lambda: rust.scatter(out.copy(), x, zones, 7))
    assert same_panic(panic_of(lambda: gpu.scatter(out, x, zones, 7)), expected)
    assert np.all(out == 0.0)


def test_a_gather_through_the_list_past_its_slice_panics_as_rust_does(gpu, rust) -> None:
    out, x = np.zeros(100_000), np.random.default_rng(2).uniform(-1.0, 1.0, 100_003)
    zones = np.random.default_rng(2).permutation(99_999).astype(np.uint64)  # zone 99_998 reads x[99_998 + 5]
    expected = panic_of(lambda: rust.scatter(out.copy(), x, zones, 5))
    assert same_panic(panic_of(lambda: gpu.scatter(out, x, zones, 5)), expected)
    assert np.all(out == 0.0)


@pytest.mark.parametrize("x_len, y_len", [(2 * 500_000 - 1, 500_003), (1_000_000, 500_002)], ids=["x", "y"])
def test_the_first_read_through_the_list_rust_fails_at_is_the_panic(gpu, rust, x_len, y_len) -> None:
    n = 500_000
    rng = np.random.default_rng(3)
    x, y, zones = rng.uniform(-1.0, 1.0, x_len), rng.uniform(-1.0, 1.0, y_len), rng.permutation(n).astype(np.uint64)
    expected = panic_of(lambda: rust.gather_two(np.zeros(n), x, y, zones))
    assert same_panic(panic_of(lambda: gpu.gather_two(np.zeros(n), x, y, zones)), expected)


def test_a_conditional_list_write_ignores_values_it_never_writes_at(gpu, rust) -> None:
    n = 300_000
    zones = np.arange(n, dtype=np.uint64)
    keep = np.ones(n, dtype=np.uint8)
    zones[[10, 20, 30]] = 10**9
    keep[[10, 20, 30]] = 0
    want, got = np.zeros(n), np.zeros(n)
    rust.scatter_where(want, zones, keep)
    gpu.scatter_where(got, zones, keep)
    assert got.tobytes() == want.tobytes()


def test_in_a_host_loop_the_steps_after_a_race_error_do_not_run(gpu) -> None:
    import cupy as cp

    n = 200_000
    zones = np.random.default_rng(9).permutation(n).astype(np.uint64)
    zones[1] = zones[0]
    out = cp.zeros(n)
    with pytest.raises(rs2gpu.RaceError):
        gpu.steps(out, cp.asarray(zones), cp.asarray(np.random.default_rng(9).uniform(0.0, 1.0, n + 2)), 3)
    assert bool(cp.all(out < 1.0))  # only the first step wrote (x < 1, plus the step)


def test_marks_are_zeroed_when_the_stamp_wraps(gpu) -> None:
    out, x, zones = zones_input(50_000, 7)
    gpu.scatter(out, x, zones, 7)
    gpu.scatter._marks["out"].stamp = 0xFFFFFFFF
    gpu.scatter(out, x, zones, 7)  # stamp 1 again: the marks of stamp 1 were cleared
    assert gpu.scatter._marks["out"].stamp == 1


def test_the_benchmark_s_zone_list_needs_no_marks(cuda_kernels, cpu_kernels) -> None:
    import cupy as cp

    from bench.data import domain3d

    mesh = domain3d(1_000_000)  # RAJAPerf's default size
    zones = mesh.real_zones(np).astype(np.uint64)
    x = np.random.default_rng(4).uniform(0.5, 1.5, mesh.nnalls)
    want = np.zeros(mesh.nnalls)
    cpu_kernels.zonal_accumulation_3d(want, x, zones, mesh.jp, mesh.kp)
    vol = cp.zeros(mesh.nnalls)
    cuda_kernels.zonal_accumulation_3d(vol, cp.asarray(x), cp.asarray(zones), mesh.jp, mesh.kp)
    assert cp.asnumpy(vol).tobytes() == want.tobytes()
    assert marked(cuda_kernels.zonal_accumulation_3d, "vol") == (0, False)


# ---------------------------------------------------------------- calls that need not wait


def _returns_before_the_device_finishes(kernels, call) -> bool:
    import cupy as cp

    call()
    done = cp.cuda.Event(disable_timing=True)
    done.record(kernels.device_backend.stream)
    finished = done.done
    kernels.synchronize()
    return not finished


def test_if_quad_on_cupy_arrays_returns_before_the_kernel_finishes(cuda_kernels) -> None:
    import cupy as cp

    n = 200_000_000  # about 2 ms of kernel on an H200, much longer than the call's host time
    rng = cp.random.default_rng(1)
    a, b, c = (rng.uniform(0.5, 1.5, n) for _ in range(3))
    x1, x2 = cp.empty(n), cp.empty(n)
    cuda_kernels.if_quad(a, b, c, x1, x2)  # warm: compiled and loaded
    cuda_kernels.synchronize()
    assert _returns_before_the_device_finishes(cuda_kernels, lambda: cuda_kernels.if_quad(a, b, c, x1, x2))
    assert cuda_kernels.if_quad.last_variants == ["rs2gpu_if_quad_0"]


def test_a_call_with_an_index_list_waits_for_the_verdict(cuda_kernels) -> None:
    import cupy as cp

    n = 10_000_000
    vol, x = cp.zeros(n + 200), cp.ones(n + 200)
    zones = cp.arange(n, dtype=cp.uint64)
    assert not _returns_before_the_device_finishes(
        cuda_kernels, lambda: cuda_kernels.zonal_accumulation_3d(vol, x, zones, 10, 100))


# ---------------------------------------------------------------- compute-sanitizer


SANITIZED = f"""
import numpy as np, cupy as cp, rs2gpu
k = rs2gpu.load({str(CHECKS)!r}, backend="cuda")
r = rs2gpu.load({str(EXAMPLE)!r}, backend="cuda")
s = np.where(np.arange(5000) < 4000, np.linspace(-1, 1, 5000), -1.0)
k.roots(np.zeros(5000), np.zeros(5000), s)
k.roots(np.zeros(5000), np.zeros(4000), s)
s[4500] = 1.0
try:
    k.roots(np.zeros(5000), np.zeros(4000), s)
except rs2gpu.KernelPanic:
    pass
zones = np.random.default_rng(0).permutation(5000).astype(np.uint64)
k.scatter(cp.zeros(5000), cp.ones(5010), cp.asarray(zones), 10)
zones[7] = zones[8]
try:
    k.scatter(cp.zeros(5000), cp.ones(5010), cp.asarray(zones), 10)
except rs2gpu.RaceError:
    pass
try:
    k.scatter(cp.zeros(5000), cp.ones(5005), cp.asarray(np.arange(5000, dtype=np.uint64)), 10)
except rs2gpu.KernelPanic:
    pass
keep = np.zeros(5000, dtype=np.uint8)
k.scatter_where(np.zeros(5000), np.full(5000, 10**9, dtype=np.uint64), keep)
n = 20000
r.zonal_accumulation_3d(cp.zeros(n + 200), cp.ones(n + 200), cp.arange(n, dtype=cp.uint64), 10, 100)
r.if_quad(*(cp.ones(n) for _ in range(3)), cp.empty(n), cp.empty(n))
r.synchronize()
print("done")
"""


@pytest.mark.parametrize("tool", ["memcheck", "racecheck"])
def test_the_checks_are_clean_under_compute_sanitizer(tool: str, tmp_path: Path) -> None:
    script = tmp_path / "sanitized.py"
    script.write_text(SANITIZED)
    done = subprocess.run(["compute-sanitizer", "--tool", tool, "--error-exitcode", "1", sys.executable, "-P",
                           str(script)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "done" in done.stdout, done.stdout[-3000:] + done.stderr[-3000:]
    summary = {"memcheck": "ERROR SUMMARY: 0 errors",
               "racecheck": "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"}[tool]
    assert summary in done.stdout + done.stderr
