"""`stream=` on a call (runtime/streams.py): every launch of the call is queued on the stream it names,
which may be given as a cupy stream, a torch stream or the driver's handle; a kernel whose Rust parameter
is named `stream` takes the keyword as that argument; anything else is a TypeError with the same message
on every backend. The kernels are tests/runtime/data/streams.rs and RAJAPerf's DOT; the expected values come
from rustc's build of the same files.

These tests run on the emulated device, whose launch log records each launch's stream, and on the cpu
backend, which runs the call before returning; tests/gpu/test_streams_gpu.py orders calls against cupy and
torch work on real streams."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tests.support.paths import RAJAPERF

SOURCE = Path(__file__).parent / "data" / "streams.rs"
HANDLE = 0x5EED  # a stream handle the emulated device records as given


def random(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, n)


def launches_on(emulated, call) -> list:
    """The streams of the launches `call()` queued."""
    log = emulated.smooth.backend.launch_streams
    before = len(log)
    call()
    return log[before:]


@pytest.mark.parametrize("stream", [HANDLE, SimpleNamespace(ptr=HANDLE), SimpleNamespace(cuda_stream=HANDLE)],
                         ids=["a handle", "a cupy stream (.ptr)", "a torch stream (.cuda_stream)"])
def test_every_launch_of_a_call_is_queued_on_the_stream_it_names(emulated, rust, stream) -> None:
    a, b = random(300, 1), random(300, 2)
    want_a, want_b = a.copy(), b.copy()
    rust.smooth(want_a, want_b, 3)
    assert launches_on(emulated, lambda: emulated.smooth(a, b, 3, stream=stream)) == [HANDLE] * 6
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


def test_a_call_without_a_stream_or_with_none_runs_on_the_default_stream(emulated) -> None:
    a, b = random(300, 3), random(300, 4)
    assert launches_on(emulated, lambda: emulated.smooth(a, b, 1)) == [None, None]
    assert launches_on(emulated, lambda: emulated.smooth(a, b, 1, stream=None)) == [None, None]
    # the stream is the call's alone: the next call without one is back on the default stream
    emulated.smooth(a, b, 1, stream=HANDLE)
    assert launches_on(emulated, lambda: emulated.smooth(a, b, 1)) == [None, None]


def test_a_call_that_repeats_an_earlier_ones_decisions_is_queued_on_its_stream(emulated, emulated_device) -> None:
    a, b = (emulated_device.to_device(random(500, seed)) for seed in (5, 6))
    x, y = (emulated_device.to_device(np.zeros(500)) for _ in range(2))
    emulated.doubled(x, a)
    before = emulated.doubled.repeats
    assert launches_on(emulated, lambda: emulated.doubled(y, b, stream=HANDLE)) == [HANDLE]
    assert emulated.doubled.repeats == before + 1
    assert emulated_device.to_host(y).tobytes() == (2.0 * emulated_device.to_host(b)).tobytes()


def test_a_reduction_on_a_stream_returns_rusts_result(emulated_device, rajaperf) -> None:
    a, b = (np.random.default_rng(seed).integers(-1000, 1000, 10_000).astype(np.float64) for seed in (7, 8))
    dot = emulated_device.load(RAJAPERF).dot  # sums of whole numbers: exact in any order
    log = dot.backend.launch_streams
    before = len(log)
    assert dot(a, b, stream=HANDLE) == rajaperf.dot(a, b)
    assert log[before:] == [HANDLE]


def test_a_generic_kernel_instantiated_at_its_call_runs_on_the_stream(emulated) -> None:
    out = np.zeros(100, np.float32)
    assert launches_on(emulated, lambda: emulated.filled(out, np.float32(1.5), stream=HANDLE)) == [HANDLE]
    assert emulated.filled.instantiations == ["filled::<f32>"] and (out == 1.5).all()


def test_a_parameter_named_stream_takes_the_keyword(emulated, rust) -> None:
    a = random(100, 8)
    want, got = np.zeros(100), np.zeros(100)
    rust.scaled(want, a, stream=3.0)
    assert launches_on(emulated, lambda: emulated.scaled(got, a, stream=3.0)) == [None]
    assert got.tobytes() == want.tobytes() == (3.0 * a).tobytes()


def test_the_cpu_backend_takes_a_stream_and_has_run_the_call_when_it_returns(rust) -> None:
    a, b = random(300, 9), random(300, 10)
    want_a, want_b = a.copy(), b.copy()
    rust.smooth(want_a, want_b, 2)
    rust.smooth(a, b, 2, stream=SimpleNamespace(ptr=HANDLE))
    assert a.tobytes() == want_a.tobytes() and b.tobytes() == want_b.tobytes()


@pytest.mark.parametrize("backend", ["cpu", "emulated"])
@pytest.mark.parametrize("stream", ["7", 2.5, True, SimpleNamespace(handle=7)], ids=["str", "float", "bool", "other"])
def test_anything_else_given_as_a_stream_is_refused_alike_on_every_backend(rust, emulated, backend, stream) -> None:
    kernels = rust if backend == "cpu" else emulated
    a, b = random(10, 11), random(10, 12)
    with pytest.raises(TypeError) as refused:
        kernels.smooth(a, b, 1, stream=stream)
    assert str(refused.value) == ("stream= takes a cupy stream, a torch stream or a stream handle (an int), got "
                                  f"{type(stream).__name__}")
    assert a.tobytes() == random(10, 11).tobytes()
