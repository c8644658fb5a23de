"""On the GPU, a call whose last launch reduces returns once that launch's last block has set the done
word (`readback.py`): with rustc's results, call after call on other data (each call clears the word
first, so the previous call's word cannot hand back that call's results), and on the repeat path. Where the
word never comes, the CUDA backend's wait ends with the stream's work."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

pytestmark = pytest.mark.gpu

SOURCE = Path(__file__).resolve().parents[1] / "runtime" / "data" / "done_word.rs"


@pytest.fixture(scope="module")
def kernels():
    return rs2gpu.load(SOURCE, backend="cuda"), rs2gpu.load(SOURCE, backend="cpu")


def whole(n: int, seed: int) -> np.ndarray:
    """Whole numbers as f64, whose sums are exact in any order: the GPU's order of the additions gives
    rustc's bits."""
    return np.random.default_rng(seed).integers(-1000, 1000, n).astype(np.float64)


def test_calls_back_to_back_on_other_data_each_return_their_own_results(kernels) -> None:
    import cupy as cp

    gpu, cpu = kernels
    arrays = [np.random.default_rng(k).integers(-2**31, 2**31, 100_000 + k, dtype=np.int64).astype(np.int32)
              for k in range(64)]
    on_device = [cp.asarray(a) for a in arrays]
    assert [gpu.sum_and_max(a) for a in on_device] == [cpu.sum_and_max(a) for a in arrays]
    assert gpu.sum_and_max.repeats == 0  # other lengths: each call took the general path


def test_repeated_calls_return_rustcs_results(kernels) -> None:
    import cupy as cp

    gpu, cpu = kernels
    x = whole(4_000_000, 1)
    on_device = cp.asarray(x)
    before = gpu.sum_from.repeats
    results, expected = [], []
    for k in range(50):
        x[k] += 1.0
        on_device[k] += 1.0  # queued on the stream before the call: each call sums other data
        results.append(gpu.sum_from(on_device, 3))
        expected.append(cpu.sum_from(x, 3))
    assert gpu.sum_from.repeats - before >= 49  # all but the first took the repeat path
    assert results == expected


def test_a_launch_before_the_last_one_leaves_the_word_to_it(kernels) -> None:
    gpu, cpu = kernels
    x = whole(1_000_003, 2)
    expected, y = np.zeros_like(x), np.zeros_like(x)
    assert gpu.scale_then_sum(y, x, 0.5) == cpu.scale_then_sum(expected, x, 0.5)
    assert y.tobytes() == expected.tobytes()


def test_the_wait_ends_with_the_streams_work_where_the_word_never_comes(kernels) -> None:
    import cupy as cp

    backend = kernels[0].sum_from.backend
    host, _ = backend.mapped(8)
    word = memoryview(host)[:4].cast("I")
    busy = cp.zeros(1 << 26)
    for _ in range(20):
        busy += 1.0  # a few ms of work on the stream, none of which sets the word
    backend.wait_for_word(word)
    assert cp.cuda.get_current_stream().done  # it returned once the stream's work was done, not before
    assert word[0] == 0
