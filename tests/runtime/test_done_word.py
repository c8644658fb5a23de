"""The done word (`readback.py`): a call whose last launch reduces and ran, and that queues nothing after
it, waits for the word that launch's last block sets after writing the results, not for the stream; every
other call waits for the stream. Results are compared with rustc's build of the same kernels
(tests/runtime/data/done_word.rs).

Tests that take `device` run on the emulated device (whose launches have finished when they return, so a
word the kernel did not set fails the call there) and, under `-m gpu`, on the GPU, where each call clears
the word first, so that the previous call's word cannot hand back that call's results."""
from __future__ import annotations

from pathlib import Path

import numpy as np

SOURCE = Path(__file__).parent / "data" / "done_word.rs"


def whole(n: int, seed: int) -> np.ndarray:
    """Whole numbers as f64, whose sums are exact in any order: the device's order of the additions gives
    rustc's bits."""
    return np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.float64)


def waits(device, kernel, since) -> tuple[int, int]:
    """(waits for a done word, waits for the stream) of `kernel`'s device after `since`."""
    now = device.activity(kernel)
    return now.word_waits - since.word_waits, now.stream_waits - since.stream_waits


def test_a_reducing_call_waits_for_the_word_and_returns_rusts_results(emulated_device, emulated, rust) -> None:
    x = np.random.default_rng(1).integers(-2**31, 2**31, 5000, dtype=np.int64).astype(np.int32)
    before = emulated_device.activity(emulated.sum_and_max)
    assert emulated.sum_and_max(x) == rust.sum_and_max(x)
    assert waits(emulated_device, emulated.sum_and_max, before) == (1, 0)


def test_repeated_calls_on_other_data_wait_for_the_word_and_return_rusts_results(device, kernels, rust) -> None:
    x = whole(16 * device.grid_threads(), 2)
    kernels.sum_from(device.to_device(x), 3)  # the decision key of the calls below: each one repeats it
    repeats, before = kernels.sum_from.repeats, device.activity(kernels.sum_from)
    for k in range(10):
        x[k] += 1.0  # other data in every call
        assert kernels.sum_from(device.to_device(x), 3) == rust.sum_from(x, 3)
    assert kernels.sum_from.repeats - repeats == 10
    assert waits(device, kernels.sum_from, before) == (10, 0)


def test_a_call_whose_loop_runs_no_iteration_waits_for_the_stream(emulated_device, emulated, rust) -> None:
    x = np.arange(10.0)
    before = emulated_device.activity(emulated.sum_from)
    assert emulated.sum_from(x, 10) == rust.sum_from(x, 10) == 0.0  # nothing launched sets the word
    assert waits(emulated_device, emulated.sum_from, before) == (0, 1)


def test_the_last_launch_sets_the_word_after_an_earlier_one(device, kernels, rust) -> None:
    x = whole(4 * device.grid_threads() + 3, 3)
    expected, y = np.zeros_like(x), np.zeros_like(x)
    before = device.activity(kernels.scale_then_sum)
    assert kernels.scale_then_sum(y, x, 0.25) == rust.scale_then_sum(expected, x, 0.25)
    assert y.tobytes() == expected.tobytes()
    assert waits(device, kernels.scale_then_sum, before) == (1, 0)


def test_a_call_whose_last_launch_does_not_reduce_waits_for_the_stream(emulated_device, emulated, rust) -> None:
    x = whole(2000, 4)
    expected = np.zeros_like(x)
    before = emulated_device.activity(emulated.sum_then_scale)
    got = emulated.sum_then_scale(emulated_device.to_device(np.zeros_like(x)), emulated_device.to_device(x))
    assert got == rust.sum_then_scale(expected, x)
    assert waits(emulated_device, emulated.sum_then_scale, before) == (0, 1)


def test_a_call_that_copies_the_panic_record_back_waits_for_the_stream(emulated_device, emulated, rust) -> None:
    # `x[at[i]]` is checked on the device: the record's copy follows the launch, and the call waits for it
    x = whole(100, 5)
    at = np.random.default_rng(6).integers(0, 100, 400).astype(np.uint64)
    before = emulated_device.activity(emulated.sum_at)
    assert emulated.sum_at(emulated_device.to_device(x), emulated_device.to_device(at)) == rust.sum_at(x, at)
    assert waits(emulated_device, emulated.sum_at, before) == (0, 1)
