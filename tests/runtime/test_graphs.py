"""Repeat calls of several launches as one graph (`DeviceKernel._graph`): the first repeat call with given
pointers, lengths and scalars captures its launches with their arguments, and that call and every later one
with the same arguments replays them; other arguments capture a graph of their own. Each call computes what
rustc's build of the same kernels computes (tests/runtime/data/graphs.rs), bitwise but for the sum, whose
order is the device's reduction's. On the emulated device a graph is its launches with copies of their
argument bytes made at capture, as the driver's; on the GPU (the tests that take `device`, under
`-m gpu`), CUDA graphs."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from bench.emulate import EmulatedDeviceArray

SOURCE = Path(__file__).parent / "data" / "graphs.rs"


def values(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n)


def on_device(*arrays: np.ndarray) -> list[EmulatedDeviceArray]:
    """Device copies of `arrays` (an emulated device array holds its numpy array itself)."""
    return [EmulatedDeviceArray(a.copy()) for a in arrays]


def test_a_repeat_call_of_two_launches_replays_them_as_one_graph(rust, emulated, emulated_device) -> None:
    a, b = values(1000, 1), values(1000, 2)
    da, db = on_device(a, b)
    replays = emulated_device.backend.replays
    graphs = []
    for _ in range(3):
        rust.scale_then_add(a, b, 0.5)
        emulated.scale_then_add(da, db, 0.5)
        graphs.append(emulated.scale_then_add.last_graph)
        assert (da.array.tobytes(), db.array.tobytes()) == (a.tobytes(), b.tobytes())
    assert graphs == [False, True, True]  # the first call decides; the second captures and replays
    assert emulated_device.backend.replays - replays == 2


def test_a_graph_is_replayed_only_for_the_arguments_it_was_captured_with(rust, emulated) -> None:
    first = on_device(values(500, 3), values(500, 4))
    second = on_device(values(500, 5), values(500, 6))
    for s in (2.0, 2.0, -1.5):
        emulated.scale_then_add(*first, s)
    untouched = [d.array.copy() for d in first]
    expected = [d.array.copy() for d in second]
    for s in (2.0, -1.5):  # the other arrays' call, then a scalar of the first arrays' graphs on them
        rust.scale_then_add(*expected, s)
        emulated.scale_then_add(*second, s)
        assert emulated.scale_then_add.last_graph
        assert [d.array.tobytes() for d in second] == [e.tobytes() for e in expected]
    assert [d.array.tobytes() for d in first] == [u.tobytes() for u in untouched]


def test_a_sum_after_a_loop_comes_back_from_a_replayed_graph(rust, emulated) -> None:
    a = values(3000, 7)
    [da] = on_device(a)
    for _ in range(3):
        want = rust.scale_then_sum(a, 1.25)
        got = emulated.scale_then_sum(da, 1.25)
        assert da.array.tobytes() == a.tobytes()
        assert abs(got - want) <= a.size * np.finfo(np.float64).eps * np.abs(a).sum()
    assert emulated.scale_then_sum.last_graph


def test_graphs_off_launches_each_loop_on_its_own(rust, emulated, emulated_device) -> None:
    a, b = values(300, 8), values(300, 9)
    da, db = on_device(a, b)
    emulated.scale_then_add.graphs = False
    try:
        replays = emulated_device.backend.replays
        for _ in range(3):
            rust.scale_then_add(a, b, 3.0)
            emulated.scale_then_add(da, db, 3.0)
            assert not emulated.scale_then_add.last_graph
        assert emulated_device.backend.replays == replays
        assert (da.array.tobytes(), db.array.tobytes()) == (a.tobytes(), b.tobytes())
    finally:
        emulated.scale_then_add.graphs = True


def test_a_single_launch_is_never_a_graph(emulated) -> None:
    [da] = on_device(values(100, 10))
    for _ in range(3):
        emulated.scale(da, 2.0)
        assert not emulated.scale.last_graph
    assert emulated.scale.repeats >= 2


def test_repeat_calls_of_two_launches_compute_rusts_values_on_every_device(device, rust, kernels) -> None:
    a, b = values(100_003, 11), values(100_003, 12)
    da, db = device.to_device(a), device.to_device(b)
    for s in (0.5, 0.5, 0.5, -2.0, 0.5):
        rust.scale_then_add(a, b, s)
        kernels.scale_then_add(da, db, s)
        total = (rust.scale_then_sum(a, s), kernels.scale_then_sum(da, s))
        assert abs(total[1] - total[0]) <= a.size * np.finfo(np.float64).eps * np.abs(a).sum()
    assert kernels.scale_then_add.last_graph and kernels.scale_then_sum.last_graph
    assert (device.to_host(da).tobytes(), device.to_host(db).tobytes()) == (a.tobytes(), b.tobytes())
