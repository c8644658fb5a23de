"""On the GPU, a call whose last launch reduces returns once that launch's last block has set the done
word (`readback.py`): calls queued back to back on other data each return their own results, and where
the word never comes, the CUDA backend's wait ends with the stream's work. (tests/runtime/test_done_word.py
specifies the word on every device.)"""
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


def test_calls_back_to_back_on_other_data_each_return_their_own_results(kernels) -> None:
    import cupy as cp

    gpu, cpu = kernels
    arrays = [np.random.default_rng(k).integers(-2**31, 2**31, 100_000 + k, dtype=np.int64).astype(np.int32)
              for k in range(64)]
    on_device = [cp.asarray(a) for a in arrays]
    assert [gpu.sum_and_max(a) for a in on_device] == [cpu.sum_and_max(a) for a in arrays]
    assert gpu.sum_and_max.repeats == 0  # other lengths: each call took the general path


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
