"""The panic a call raises is the one Rust raises first: the earliest iteration of the loop nest (the
outermost loop slowest) that fails, then the first failing access of that iteration, whether the host
finds it before the launch or the device records it.

The kernels are tests/runtime/data/first_panics.rs, run on an emulated device (the generated CUDA compiled
by g++, `bench.emulate`) through the real runtime. The device part runs every grid twice: blocks and
threads in order, and last first, the order that hides least which thread happens to fail first. The
expected panics come from rustc (the cpu backend runs the same Rust).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu
from rs2gpu import pipeline

from bench.emulate import EmulatedBackend, EmulatedDeviceArray, EmulatedKernels, compiler

DATA = Path(__file__).resolve().parent / "data"
FIRST_PANICS = DATA / "first_panics.rs"
CASES = Path(__file__).resolve().parents[1] / "cases"
U64 = 1 << 64


def emulated(source: Path, workdir: Path, reverse: bool) -> EmulatedKernels:
    """The kernels of one Rust file on one emulated device."""
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return EmulatedKernels(pipeline.translate(source), EmulatedBackend(workdir, reverse=reverse))


@pytest.fixture(scope="module")
def rust(tmp_path_factory: pytest.TempPathFactory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RS2GPU_CACHE_DIR", str(tmp_path_factory.mktemp("cpu-cache")))
        return rs2gpu.load(FIRST_PANICS, backend="cpu")


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> EmulatedKernels:
    return emulated(FIRST_PANICS, tmp_path_factory.mktemp("emulated"), reverse=False)


@pytest.fixture(scope="module", params=["in order", "last first"])
def devices(request, tmp_path_factory: pytest.TempPathFactory) -> EmulatedKernels:
    return emulated(FIRST_PANICS, tmp_path_factory.mktemp("emulated"), reverse=request.param == "last first")


def panic_of(call) -> rs2gpu.KernelPanic:
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        call()
    return caught.value


def same_panic_as_rust(rust, device, name: str, *args) -> rs2gpu.KernelPanic:
    """Call kernel `name` with copies of `args` on both; assert the same panic (message and place) and
    that the device call left the host arrays as they were."""
    copies = [[a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(2)]
    expected = panic_of(lambda: getattr(rust, name)(*copies[0]))
    raised = panic_of(lambda: getattr(device, name)(*copies[1]))
    assert (raised.message, raised.location, raised.kernel) == (expected.message, expected.location, expected.kernel)
    assert all(a.tobytes() == c.tobytes() for a, c in zip(args, copies[1]) if isinstance(a, np.ndarray))
    return raised


def message(length: int, index: int) -> str:
    return f"index out of bounds: the len is {length} but the index is {index}"


def place(line_text: str, access: str) -> str:
    """file:line:column of `access` on the line of first_panics.rs that holds `line_text`."""
    for number, line in enumerate(FIRST_PANICS.read_text().splitlines(), 1):
        if line_text in line:
            return f"{FIRST_PANICS.name}:{number}:{line.index(access) + 1}"
    raise AssertionError(line_text)


# ---------------------------------------------------------------- checked on the host


def test_a_grid_panics_at_the_first_cell_either_slice_fails_at(rust, device) -> None:
    # out fails at cell 1 (row 0), a at cell 17 (row 1): Rust writes out[1] before it reads a[17]
    raised = same_panic_as_rust(rust, device, "grid", np.zeros(1), np.ones(17), 10, 11)
    assert raised.message == message(1, 1)
    raised = same_panic_as_rust(rust, device, "grid", np.zeros(110), np.ones(17), 10, 11)
    assert raised.message == message(17, 17)


def test_the_calls_the_gpu_answered_with_another_panic_panic_as_rust_does(tmp_path) -> None:
    """grid_2d and matmul_from_bias with the arguments tests/gpu/test_differential.py gives them at size 1."""
    rng = np.random.default_rng(0)
    for path, name, args in [
        (CASES / "semantics.rs", "grid_2d", (np.zeros(1), rng.uniform(-2, 2, 17), 10, 11)),
        (CASES / "shapes.rs", "matmul_from_bias", (np.zeros(1, np.float32), *rng.uniform(-2, 2, (2, 17)).astype(np.float32),
                                                   14, 3, 10, 1.25)),
    ]:
        cpu = rs2gpu.load(path, backend="cpu")
        raised = same_panic_as_rust(cpu, emulated(path, tmp_path, reverse=False), name, *args)
        assert raised.message == {"grid_2d": message(1, 1), "matmul_from_bias": message(17, 20)}[name]


@pytest.mark.parametrize("lengths, failing", [
    ((115, 400, 20, 0), ("plane", 20)), ((115, 90, 30, 7), ("a", 90)), ((50, 400, 30, 0), ("out", 50)),
    ((50, 57, 30, 7), ("a", 57))], ids=["plane", "a", "out", "the value before the place"])
def test_a_cube_panics_at_the_first_iteration_any_slice_fails_at(rust, device, lengths, failing) -> None:
    out, a, plane, shift = lengths  # 4 x 5 x 6 cells; plane's index runs over one 5 x 6 layer
    raised = same_panic_as_rust(rust, device, "cube", np.zeros(out), np.ones(a), np.ones(plane), 4, 5, 6, shift)
    slice_name, length = failing
    assert raised.message == message(length, length) and raised.location == place("out[i + ni * (j + nj * k)] =",
                                                                                    f"{slice_name}[")


@pytest.mark.parametrize("lengths", [(1, 17, 17), (140, 42, 29), (140, 30, 60), (10, 42, 30)],
                         ids=["c", "b", "a", "c after the loop"])
def test_a_product_panics_in_the_first_step_of_its_inner_loop_that_fails(rust, device, lengths) -> None:
    c, a, b = lengths
    same_panic_as_rust(rust, device, "product", np.zeros(c, np.float32), np.ones(a, np.float32),
                       np.ones(b, np.float32), 14, 3, 10)


def test_a_read_after_an_inner_loop_comes_after_the_loop_reads_of_its_iteration(rust, device) -> None:
    # row 2 reads a[8..12] (a has 10) before bias[2 + 5] (bias has 7): a fails first
    raised = same_panic_as_rust(rust, device, "row_sums", np.zeros(4), np.ones(10), np.ones(7), 4, 5)
    assert raised.message == message(10, 10)
    # with a long enough, bias fails at row 2
    raised = same_panic_as_rust(rust, device, "row_sums", np.zeros(4), np.ones(16), np.ones(7), 4, 5)
    assert raised.message == message(7, 7)


@pytest.mark.parametrize("s", [3, -3, 0])
def test_indices_below_zero_wrap_past_the_end(rust, device, s: int) -> None:
    raised = same_panic_as_rust(rust, device, "shifted", np.zeros(10), np.ones(12), np.ones(9), s)
    if s:
        assert raised.message == message(9 if s > 0 else 12, U64 - 3)


def test_a_loop_bound_that_wraps_in_its_type_is_the_range_rust_runs(rust, device) -> None:
    # 1..n - 1 with n == 0 is 1..2^64 - 1: out[3] is the first write past out's end
    raised = same_panic_as_rust(rust, device, "interior", np.zeros(3), 0)
    assert raised.message == message(3, 3)


def test_an_index_that_wraps_past_2_64_into_the_slice_is_in_bounds(rust, device) -> None:
    w = 1 << 62  # (0 + 4) * w is 2^64, which wraps to 0
    want, got = np.zeros(1), np.zeros(1)
    rust.strided(want, np.arange(1.0, 4.0), w)
    device.strided(got, np.arange(1.0, 4.0), w)
    assert got.tobytes() == want.tobytes() == np.ones(1).tobytes()
    raised = same_panic_as_rust(rust, device, "strided", np.zeros(2), np.ones(3), w)
    assert raised.message == message(3, w)


def test_reads_a_break_may_skip_are_no_host_panic(rust, device) -> None:
    a = np.array([0.5, 0.25, 2.0])  # the loop stops at k = 2, long before a's end
    want, got = np.zeros(100), np.zeros(100)
    rust.until_large(want, a, 50)
    device.until_large(got, a, 50)
    assert got.tobytes() == want.tobytes()
    same_panic_as_rust(rust, device, "until_large", np.zeros(100), np.array([0.5, 0.25]), 50)


# ---------------------------------------------------------------- checked on the device, in any order


def test_a_volume_with_many_failing_writes_panics_at_rusts_first(rust, devices) -> None:
    for length in (1, 7, 300, 998):
        same_panic_as_rust(rust, devices, "volume", np.zeros(length, np.uint32), 10, 10, 10)
    assert devices.volume.last_variants == ["rs2gpu_volume_0_checked"]


def test_of_two_gathers_of_one_iteration_the_first_is_rusts_panic(rust, devices) -> None:
    n = 3000
    ia, ib = np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64)
    ia[[2500, 700]] = [n + 1, n + 2]
    ib[[2000, 700, 600]] = [n + 3, n + 4, n + 5]
    raised = same_panic_as_rust(rust, devices, "gather", np.zeros(n), np.ones(n), np.ones(n), ia, ib)
    assert raised.message == message(n, n + 5)  # iteration 600, where only b's read fails
    ib[600] = 0
    raised = same_panic_as_rust(rust, devices, "gather", np.zeros(n), np.ones(n), np.ones(n), ia, ib)
    assert raised.message == message(n, n + 2)  # iteration 700: a's read comes before b's


def test_checks_in_helpers_record_the_iteration_of_their_caller(rust, devices) -> None:
    rows, width = 40, 30
    idx = np.arange(rows * width, dtype=np.uint64) % 99  # reads up to a[98 + 1]
    idx[[1000, 35, 900]] = [150, 99, 120]  # 99 + 1 is the first: row 1, col 5, the helper's second read
    raised = same_panic_as_rust(rust, devices, "picked", np.zeros(rows * width), np.ones(100), idx, rows, width)
    assert raised.message == message(100, 100)


def test_the_first_division_rust_makes_names_its_own_failure(rust, devices) -> None:
    n = 2000
    a, d = np.arange(n, dtype=np.int64), np.ones(n, dtype=np.int64)
    d[[1500, 900]] = 0
    a[1200], d[1200] = np.iinfo(np.int64).min, -1
    raised = same_panic_as_rust(rust, devices, "ratios", np.zeros(n, np.int64), a, d)
    assert raised.message == "attempt to divide by zero"
    d[900] = 1
    raised = same_panic_as_rust(rust, devices, "ratios", np.zeros(n, np.int64), a, d)
    assert raised.message == "attempt to divide with overflow"


def test_a_reduction_with_failing_reads_panics_at_rusts_first(rust, devices) -> None:
    n = 5000
    idx = np.arange(n, dtype=np.uint64)
    idx[[4000, 3001, 3000]] = [n, n + 1, n + 2]
    raised = same_panic_as_rust(rust, devices, "gathered_sum", np.ones(n), idx)
    assert raised.message == message(n, n + 2)


def test_a_later_loop_does_not_replace_the_panic_of_an_earlier_one(rust, devices) -> None:
    n = 1000
    first, second = np.arange(n, dtype=np.uint64), np.full(n, 10 * n, dtype=np.uint64)
    first[n - 1] = n  # the last iteration of the first loop; every iteration of the second fails
    raised = same_panic_as_rust(rust, devices, "two_loops", np.zeros(n), np.ones(n), first, second)
    assert raised.message == message(n, n)


def test_a_later_index_list_verification_does_not_replace_an_earlier_panic(rust, devices) -> None:
    n = 600
    idx, zones = np.arange(n, dtype=np.uint64), np.arange(n, dtype=np.uint64)
    idx[n - 1] = n
    zones[0] = 10 * n  # out of bounds at the first position of the second loop
    raised = same_panic_as_rust(rust, devices, "then_list", np.zeros(n), np.ones(n), idx, zones)
    assert raised.message == message(n, n)


def test_a_failure_before_the_loop_comes_before_every_iteration(rust, devices) -> None:
    n = 700
    idx = np.full(n, 10 * n, dtype=np.uint64)  # every iteration fails too
    raised = same_panic_as_rust(rust, devices, "parts", np.zeros(n), np.ones(n), idx, 0)
    assert raised.message == "attempt to divide by zero"


def test_after_a_device_panic_the_next_call_starts_from_a_clean_record(rust, devices) -> None:
    n = 500
    idx = np.arange(n, dtype=np.uint64)
    idx[3] = n
    same_panic_as_rust(rust, devices, "gathered_sum", np.ones(n), idx)
    idx[3] = 3
    assert devices.gathered_sum(EmulatedDeviceArray(np.ones(n)), EmulatedDeviceArray(idx)) == float(n)


def test_a_panic_in_one_step_of_a_host_loop_ends_the_run(rust, devices) -> None:
    n, steps = 400, 5
    idx = np.tile(np.arange(n, dtype=np.uint64), steps)
    idx[2 * n + n - 1] = 5000  # step 2 fails in its last iteration
    idx[3 * n] = 7000          # step 3 would fail in its first
    raised = same_panic_as_rust(rust, devices, "steps", np.zeros(n), np.ones(n), idx, steps)
    assert raised.message == message(n, 5000)
