"""On the GPU, `stream=` queues a call on that stream (runtime/streams.py): after the cupy or torch work
queued there before it and before the work queued after it, and a call that need not wait for the device
returns while the stream is still busy. Each stream here is non-blocking, so work on the default stream
would not wait for it: a call that ran anywhere else would read its inputs before they are written.
Expected values come from rustc's build of tests/runtime/data/streams.rs, and for RAJAPerf's DOT from
exact sums."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

import rs2gpu

pytestmark = pytest.mark.gpu

SOURCE = Path(__file__).resolve().parents[1] / "runtime" / "data" / "streams.rs"
N = 1 << 20
SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}
"""
BUSY_CYCLES = 400_000_000  # about 0.2 s of one thread's clock: far longer than a call's host time


@pytest.fixture(scope="module")
def gpu():
    return rs2gpu.load(SOURCE, backend="cuda")


@pytest.fixture(scope="module")
def spin():
    import cupy as cp

    return cp.RawKernel(SPIN, "spin")


def busy(spin, stream) -> None:
    """Keep `stream` busy for a while with one spinning thread."""
    with stream:
        spin((1,), (1,), (np.int64(BUSY_CYCLES),))


def test_a_call_runs_after_the_cupy_work_queued_before_it_and_before_the_work_after(gpu, rust, spin) -> None:
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    values = np.random.default_rng(1).uniform(-1.0, 1.0, N)
    with stream:
        a, out = cp.asarray(values), cp.zeros(N)
    busy(spin, stream)
    with stream:
        a *= 2.0  # only once the spinning kernel has ended
    gpu.doubled(out, a, stream=stream)
    with stream:
        out *= 3.0  # reads what the call wrote
    stream.synchronize()
    want = np.zeros(N)
    rust.doubled(want, 2.0 * values)
    assert cp.asnumpy(out).tobytes() == (3.0 * want).tobytes()


def test_a_call_on_device_arrays_returns_while_its_stream_is_busy(gpu, spin) -> None:
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    a, out = cp.ones(N), cp.zeros(N)
    busy(spin, stream)
    started = time.perf_counter()
    gpu.doubled(out, a, stream=stream)
    returned = time.perf_counter() - started
    assert not stream.done, "the call waited for its stream"
    assert returned < 0.1
    stream.synchronize()
    assert float(out.sum()) == 2.0 * N


def test_a_reduction_on_a_busy_stream_waits_for_its_result_there(cuda_kernels, spin) -> None:
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    a = cp.zeros(N)
    busy(spin, stream)
    with stream:
        a.fill(1.5)
    assert cuda_kernels.dot(a, a, stream=stream) == 2.25 * N  # RAJAPerf's DOT: exact sums of 2.25


def test_a_host_loop_call_on_numpy_arrays_copies_and_launches_on_the_stream(gpu, rust, spin) -> None:
    import cupy as cp

    stream = cp.cuda.Stream(non_blocking=True)
    a, b = (np.random.default_rng(seed).uniform(-1.0, 1.0, 4099) for seed in (2, 3))
    want_a, want_b = a.copy(), b.copy()
    rust.smooth(want_a, want_b, 5)
    busy(spin, stream)
    gpu.smooth(a, b, 5, stream=stream)
    assert stream.done  # the call waited for its downloads, after the spinning kernel
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


def test_a_torch_stream_orders_the_call_with_torch_work(gpu, rust) -> None:
    import torch

    stream = torch.cuda.Stream()
    values = np.random.default_rng(4).uniform(-1.0, 1.0, N)
    with torch.cuda.stream(stream):
        a = torch.from_numpy(values).to("cuda")
        out = torch.zeros(N, dtype=torch.float64, device="cuda")
        torch.cuda._sleep(BUSY_CYCLES)
        a.mul_(2.0)  # only once the sleep has ended
    gpu.doubled(out, a, stream=stream)
    with torch.cuda.stream(stream):
        out.add_(1.0)  # reads what the call wrote
    stream.synchronize()
    want = np.zeros(N)
    rust.doubled(want, 2.0 * values)
    assert out.cpu().numpy().tobytes() == (want + 1.0).tobytes()
