"""The done word (`readback.py`): a call whose last launch reduces and ran, and that queues nothing after
it, waits for the word that launch's last block sets after writing the results, not for the stream; every
other call waits for the stream. The kernels run on an emulated device (the generated CUDA compiled by g++,
`bench.emulate`), whose launches have finished when they return, so a word the kernel did not set fails
the call there; results are compared with rustc's build of the same kernels."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bench.emulate import EmulatedDeviceArray, compiler, rust_and_emulated

SOURCE = (Path(__file__).parent / "data" / "done_word.rs").read_text()


@pytest.fixture(scope="module")
def kernels(tmp_path_factory: pytest.TempPathFactory):
    if compiler() is None:
        pytest.fail("the emulated device needs g++")
    return rust_and_emulated(tmp_path_factory.mktemp("done_word"), "done_word", SOURCE)


def whole(n: int, seed: int) -> np.ndarray:
    """Whole numbers as f64, whose sums are exact in any order: the device's order of the additions gives
    rustc's bits."""
    return np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.float64)


def waits(device) -> tuple[int, int]:
    """(waits for a done word, waits for the stream) so far."""
    return device.backend.word_waits, device.backend.synchronizations


def test_a_reducing_call_waits_for_the_word_and_returns_rusts_results(kernels) -> None:
    rust, device = kernels
    x = np.random.default_rng(1).integers(-2**31, 2**31, 5000, dtype=np.int64).astype(np.int32)
    words, streams = waits(device)
    assert device.sum_and_max(x) == rust.sum_and_max(x)
    assert waits(device) == (words + 1, streams)


def test_a_repeated_call_waits_for_the_word(kernels) -> None:
    rust, device = kernels
    x = whole(3000, 2)
    on_device = EmulatedDeviceArray(x)
    device.sum_from(on_device, 7)
    repeats, (words, streams) = device.sum_from.repeats, waits(device)
    for _ in range(3):  # the decision key of the first call: each one takes the repeat path
        assert device.sum_from(on_device, 7) == rust.sum_from(x, 7)
    assert device.sum_from.repeats == repeats + 3
    assert waits(device) == (words + 3, streams)


def test_a_call_whose_loop_runs_no_iteration_waits_for_the_stream(kernels) -> None:
    rust, device = kernels
    x = np.arange(10.0)
    words, streams = waits(device)
    assert device.sum_from(x, 10) == rust.sum_from(x, 10) == 0.0  # nothing launched sets the word
    assert waits(device) == (words, streams + 1)


def test_the_last_launch_sets_the_word_after_an_earlier_one(kernels) -> None:
    rust, device = kernels
    x = whole(2000, 3)
    expected, y = np.zeros_like(x), np.zeros_like(x)
    words, streams = waits(device)
    assert device.scale_then_sum(y, x, 0.25) == rust.scale_then_sum(expected, x, 0.25)
    assert y.tobytes() == expected.tobytes()
    assert waits(device) == (words + 1, streams)


def test_a_call_whose_last_launch_does_not_reduce_waits_for_the_stream(kernels) -> None:
    rust, device = kernels
    x = whole(2000, 4)
    expected, y = np.zeros_like(x), np.zeros_like(x)
    words, streams = waits(device)
    assert device.sum_then_scale(EmulatedDeviceArray(y), EmulatedDeviceArray(x)) == rust.sum_then_scale(expected, x)
    assert waits(device) == (words, streams + 1)


def test_a_call_that_copies_the_panic_record_back_waits_for_the_stream(kernels) -> None:
    # `x[at[i]]` is checked on the device: the record's copy follows the launch, and the call waits for it
    rust, device = kernels
    x = whole(100, 5)
    at = np.random.default_rng(6).integers(0, 100, 400).astype(np.uint64)
    words, streams = waits(device)
    assert device.sum_at(EmulatedDeviceArray(x), EmulatedDeviceArray(at)) == rust.sum_at(x, at)
    assert waits(device) == (words, streams + 1)
