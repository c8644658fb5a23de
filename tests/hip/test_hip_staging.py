"""The pinned staging ring that the GPU backends copy host arrays through, driven by an in-memory device:
copies of every size (empty, one chunk, many chunks, more chunks than buffers) arrive intact, in order,
and only through the pinned buffers, and a device error during a copy is raised, not dropped."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

from rs2gpu.runtime.errors import LaunchError
from rs2gpu.runtime.staging import StagingRing

CHUNK = 4096


class _Event:
    def __init__(self) -> None:
        self.pending = 0  # copies enqueued before the last record that have not "completed"


class MemoryDevice:
    """Device memory is host memory; copies are queued and complete one step later (or on a wait)."""

    def __init__(self, fail_after: int | None = None) -> None:
        self.pinned_buffers: list = []
        self.queue: list = []
        self.copies = 0
        self.fail_after = fail_after

    def _drain(self) -> None:
        for dst, src, n in self.queue:
            ctypes.memmove(dst, src, n)
        self.queue.clear()

    def pinned(self, nbytes: int) -> int:
        buffer = (ctypes.c_uint8 * nbytes)()
        self.pinned_buffers.append(buffer)
        return ctypes.addressof(buffer)

    def is_pinned(self, address: int, n: int) -> bool:
        return any(ctypes.addressof(b) <= address and address + n <= ctypes.addressof(b) + len(b)
                   for b in self.pinned_buffers)

    def new_event(self) -> _Event:
        return _Event()

    def record(self, event: _Event) -> None:
        event.pending = len(self.queue)

    def is_done(self, event: _Event) -> bool:
        if event.pending and self.queue:
            self._drain()  # "completes" on the next query, so the ring sees both answers
            return False
        return True

    def wait(self, event: _Event) -> None:
        if self.fail_after is not None and self.copies > self.fail_after:
            raise LaunchError("hipEventSynchronize failed: hipErrorIllegalAddress")
        self._drain()

    def _copy(self, dst: int, src: int, n: int) -> None:
        self.copies += 1
        self.queue.append((dst, src, n))

    def copy_to_device(self, dst_ptr: int, src_address: int, nbytes: int) -> None:
        assert self.is_pinned(src_address, nbytes), "a host → device copy must come from a pinned buffer"
        self._copy(dst_ptr, src_address, nbytes)

    def copy_to_host(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        assert self.is_pinned(dst_address, nbytes), "a device → host copy must go to a pinned buffer"
        self._copy(dst_address, src_ptr, nbytes)


@pytest.mark.parametrize("nbytes", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 17, 20 * CHUNK + 5])
@pytest.mark.parametrize("threads", [1, 4])
def test_round_trip_through_the_ring(nbytes: int, threads: int) -> None:
    device = MemoryDevice()
    ring = StagingRing(device, chunk=CHUNK, buffers=3, threads=threads)
    source = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    device_memory = np.zeros(max(nbytes, 1), dtype=np.uint8)
    ring.upload(device_memory.ctypes.data, source)
    device.wait(_Event())  # the stream finishes what upload enqueued
    assert device_memory[:nbytes].tobytes() == source.tobytes()
    back = np.zeros(nbytes, dtype=np.uint8)
    ring.download(back, device_memory.ctypes.data)
    assert back.tobytes() == source.tobytes()
    assert device.copies == 2 * -(-nbytes // CHUNK)


def test_typed_arrays_travel_as_their_bytes() -> None:
    device = MemoryDevice()
    ring = StagingRing(device, chunk=CHUNK, buffers=2, threads=2)
    values = np.linspace(-1, 1, 5 * CHUNK // 8 + 3)
    device_memory = np.zeros(values.nbytes, dtype=np.uint8)
    ring.upload(device_memory.ctypes.data, values)
    device.wait(_Event())
    back = np.empty_like(values)
    ring.download(back, device_memory.ctypes.data)
    assert np.array_equal(back, values)


def test_a_device_error_during_a_copy_is_raised() -> None:
    device = MemoryDevice(fail_after=2)
    ring = StagingRing(device, chunk=CHUNK, buffers=2, threads=2)
    device_memory = np.zeros(10 * CHUNK, dtype=np.uint8)
    with pytest.raises(LaunchError, match="hipErrorIllegalAddress"):
        ring.upload(device_memory.ctypes.data, np.ones(10 * CHUNK, dtype=np.uint8))
