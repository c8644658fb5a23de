"""Host↔device copies through a ring of pinned (page-locked) host buffers, for any GPU backend.

Pageable copies run 5-7x slower than pinned ones, and pinning the caller's arrays costs more than copying
them, so every host array travels through a few fixed pinned buffers: worker threads copy chunks between
the array and the buffers (numpy releases the GIL for the copy) while the DMA engine moves the chunks
already staged. The vendor supplies the primitives (`StagingDevice`); the pipelining lives here once.
"""
from __future__ import annotations

import ctypes
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

STAGING_CHUNK = 8 << 20   # bytes per pinned staging buffer
STAGING_THREADS = min(8, os.cpu_count() or 1)  # host copies into/out of the pinned buffers run in parallel
STAGING_BUFFERS = STAGING_THREADS + 2          # a ring: while threads fill some, the DMA engine drains others


class StagingDevice(Protocol):
    """What a backend provides to the ring: pinned memory, events on its stream, and async copies."""

    def pinned(self, nbytes: int) -> int:
        """The address of `nbytes` of page-locked host memory, kept alive by the backend."""

    def new_event(self): ...

    def record(self, event) -> None:
        """Record `event` on the copy stream."""

    def is_done(self, event) -> bool: ...

    def wait(self, event) -> None:
        """Block until `event` has completed; raise LaunchError for a device error."""

    def copy_to_device(self, dst_ptr: int, src_address: int, nbytes: int) -> None:
        """Enqueue a host → device copy on the stream."""

    def copy_to_host(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        """Enqueue a device → host copy on the stream."""


class _Done:
    """A finished job, for the single-chunk path that needs no thread."""

    def __init__(self, value=None) -> None:
        self.value = value

    def result(self):
        return self.value

    def done(self) -> bool:
        return True


class StagingRing:
    def __init__(self, device: StagingDevice, chunk: int = STAGING_CHUNK, buffers: int = STAGING_BUFFERS,
                 threads: int = STAGING_THREADS) -> None:
        import numpy as np

        self.device = device
        self.chunk = chunk
        self.threads = threads
        self._addresses = [device.pinned(chunk) for _ in range(buffers)]
        self._views = [np.frombuffer((ctypes.c_uint8 * chunk).from_address(a), dtype=np.uint8)
                       for a in self._addresses]
        self._done = [device.new_event() for _ in range(buffers)]
        for event in self._done:
            device.record(event)
        self._pool: ThreadPoolExecutor | None = None

    def upload(self, dst_ptr: int, host) -> None:
        """Copy a C-contiguous numpy array to device memory at `dst_ptr`; returns once every chunk is
        enqueued (the caller's array may be reused: its bytes are in the pinned buffers or on the device)."""
        import numpy as np

        data = host.view(np.uint8).reshape(-1)
        chunks = range(0, data.size, self.chunk)
        ring = len(self._views)

        def stage(slot: int, offset: int) -> int:
            size = min(self.chunk, data.size - offset)
            self._views[slot][:size] = data[offset:offset + size]
            return size

        pending: deque = deque()
        for k, offset in enumerate(chunks):
            slot = k % ring
            if len(pending) == ring:
                self._send(pending.popleft(), dst_ptr)
            self.device.wait(self._done[slot])  # its previous chunk has left for the device
            pending.append((slot, offset, self._threads().submit(stage, slot, offset) if len(chunks) > 1
                            else _Done(stage(slot, offset))))
        while pending:
            self._send(pending.popleft(), dst_ptr)

    def _send(self, staged, dst_ptr: int) -> None:
        slot, offset, copied = staged
        self.device.copy_to_device(dst_ptr + offset, self._addresses[slot], copied.result())
        self.device.record(self._done[slot])

    def download(self, host, src_ptr: int) -> None:
        """Copy device memory at `src_ptr` into a C-contiguous numpy array: DMA into the pinned buffers
        ahead, threads copy them out."""
        import numpy as np

        data = host.view(np.uint8).reshape(-1)
        chunks = list(range(0, data.size, self.chunk))

        def unstage(slot: int, offset: int) -> None:
            size = min(self.chunk, data.size - offset)
            data[offset:offset + size] = self._views[slot][:size]

        free = deque(range(len(self._views)))
        in_flight: deque = deque()  # (slot, offset): DMA issued into the pinned slot
        copying: deque = deque()    # (slot, job): a thread copies the slot out to the array
        k = 0
        while k < len(chunks) or in_flight or copying:
            while k < len(chunks) and free:
                slot, offset = free.popleft(), chunks[k]
                self.device.copy_to_host(self._addresses[slot], src_ptr + offset,
                                         min(self.chunk, data.size - offset))
                self.device.record(self._done[slot])
                in_flight.append((slot, offset))
                k += 1
            progressed = False
            while in_flight and self.device.is_done(self._done[in_flight[0][0]]):
                slot, offset = in_flight.popleft()
                copying.append((slot, self._threads().submit(unstage, slot, offset) if len(chunks) > 1
                                else _Done(unstage(slot, offset))))
                progressed = True
            while copying and copying[0][1].done():
                slot, job = copying.popleft()
                job.result()
                free.append(slot)
                progressed = True
            if not progressed:  # wait for the oldest piece of work instead of spinning
                if in_flight and not copying:
                    self.device.wait(self._done[in_flight[0][0]])
                else:
                    copying[0][1].result()

    def _threads(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.threads, thread_name_prefix="rs2gpu-staging")
        return self._pool
