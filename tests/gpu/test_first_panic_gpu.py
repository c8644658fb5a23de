"""On the GPU, the panic a call raises is the one Rust raises first, whatever order the threads run in:
many threads fail at once here, in launches large enough that blocks run on every multiprocessor and in no
fixed order. Every call is made several times and must give rustc's panic each time.

The kernels are tests/runtime/data/first_panics.rs (tests/runtime/test_first_panic.py runs them on an
emulated device, in order and last first); the cpu backend (rustc) gives the expected panics.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

pytestmark = pytest.mark.gpu

SOURCE = Path(__file__).resolve().parents[1] / "runtime" / "data" / "first_panics.rs"
REPEATS = 5


@pytest.fixture(scope="module")
def gpu():
    return rs2gpu.load(SOURCE, backend="cuda")


def panic_of(call) -> rs2gpu.KernelPanic:
    with pytest.raises(rs2gpu.KernelPanic) as caught:
        call()
    return caught.value


def always_rusts_panic(rust, gpu, name: str, *args) -> str:
    """Rust's panic message for kernel `name` on `args`, after checking that the GPU raises the same one
    (message, place) in each of REPEATS calls and leaves the host arrays as they were."""
    expected = panic_of(lambda: getattr(rust, name)(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
    for _ in range(REPEATS):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        raised = panic_of(lambda: getattr(gpu, name)(*copies))
        assert (raised.message, raised.location) == (expected.message, expected.location)
        assert all(a.tobytes() == c.tobytes() for a, c in zip(args, copies) if isinstance(a, np.ndarray))
    return expected.message


@pytest.mark.parametrize("length", [1, 4_000, 3_000_000])
def test_a_volume_whose_writes_fail_in_millions_of_threads(rust, gpu, length: int) -> None:
    n = 200  # 8 million cells, every fifth diagonal skipped: a conditional write, checked on the device
    always_rusts_panic(rust, gpu, "volume", np.zeros(length, np.uint32), n, n, n)
    assert gpu.volume.last_variants == ["rs2gpu_volume_0_checked"]


def test_gathers_failing_in_one_percent_of_ten_million_iterations(rust, gpu) -> None:
    n = 10_000_000
    rng = np.random.default_rng(7)
    ia, ib = rng.integers(0, n, n, dtype=np.uint64), rng.integers(0, n, n, dtype=np.uint64)
    for bad in (ia, ib):
        spots = rng.choice(n, n // 100, replace=False)
        bad[spots] = n + spots.astype(np.uint64)  # each failure names its own iteration
    always_rusts_panic(rust, gpu, "gather", np.zeros(n), np.ones(n), np.ones(n), ia, ib)


def test_device_arrays_get_the_same_panic(rust, gpu) -> None:
    import cupy as cp

    n = 4_000_000
    idx = np.arange(n, dtype=np.uint64)
    idx[n // 2:] += np.uint64(n)  # the second half fails
    idx[123_457] = 2 * n + 5
    expected = panic_of(lambda: rust.gathered_sum(np.ones(n), idx))
    for _ in range(REPEATS):
        raised = panic_of(lambda: gpu.gathered_sum(cp.ones(n), cp.asarray(idx)))
        assert (raised.message, raised.location) == (expected.message, expected.location)


def test_checks_in_helpers_of_a_2d_nest(rust, gpu) -> None:
    rows, width = 2_000, 3_000
    rng = np.random.default_rng(8)
    idx = rng.integers(0, 99, rows * width, dtype=np.uint64)
    idx[rng.choice(rows * width, 5_000, replace=False)] = 99  # its second read, a[100], fails
    always_rusts_panic(rust, gpu, "picked", np.zeros(rows * width), np.ones(100), idx, rows, width)


def test_divisions_failing_in_many_threads(rust, gpu) -> None:
    n = 5_000_000
    rng = np.random.default_rng(9)
    a, d = rng.integers(-1000, 1000, n, dtype=np.int64), rng.integers(1, 50, n, dtype=np.int64)
    d[rng.choice(n, 10_000, replace=False)] = 0
    spots = rng.choice(n, 10_000, replace=False)
    a[spots], d[spots] = np.iinfo(np.int64).min, -1
    always_rusts_panic(rust, gpu, "ratios", np.zeros(n, np.int64), a, d)


def test_a_reduction_whose_reads_fail_in_many_blocks(rust, gpu) -> None:
    n = 8_000_000
    idx = np.arange(n, dtype=np.uint64)
    idx[n // 3::7] = np.uint64(n + 1)
    always_rusts_panic(rust, gpu, "gathered_sum", np.ones(n), idx)


def test_later_launches_and_verifications_do_not_replace_an_earlier_panic(rust, gpu) -> None:
    n = 2_000_000
    first, second = np.arange(n, dtype=np.uint64), np.full(n, 10 * n, dtype=np.uint64)
    first[n - 1] = n
    assert always_rusts_panic(rust, gpu, "two_loops", np.zeros(n), np.ones(n), first, second).endswith(f"{n}")
    zones = np.arange(n, dtype=np.uint64)
    zones[:1000] = 10 * n
    always_rusts_panic(rust, gpu, "then_list", np.zeros(n), np.ones(n), first, zones)


def test_a_panic_in_one_step_of_a_host_loop_ends_the_run(rust, gpu) -> None:
    n, steps = 1_000_000, 6
    idx = np.tile(np.arange(n, dtype=np.uint64), steps)
    idx[2 * n + n - 1] = 5 * n
    idx[3 * n:4 * n] = 7 * n  # every iteration of the next step fails
    always_rusts_panic(rust, gpu, "steps", np.zeros(n), np.ones(n), idx, steps)


def test_a_failure_before_the_loop_comes_before_every_iteration(rust, gpu) -> None:
    n = 3_000_000
    always_rusts_panic(rust, gpu, "parts", np.zeros(n), np.ones(n), np.full(n, 10 * n, dtype=np.uint64), 0)
