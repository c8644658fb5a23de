"""The CUDA backend: NVRTC to cubin (disk-cached), then cupy's driver bindings for modules, memory,
copies and launches. Every driver call raises on error; faults of asynchronous work surface at the
next synchronize as `LaunchError`.

A call's copies and launches go to cupy's current stream, as a cupy kernel's do: they are ordered after
the work already queued there that produced the call's device arrays, and before what the caller queues
next that reads them. That is the legacy default stream unless the caller chose another (`with
cupy.cuda.Stream():`), the same stream torch uses by default.
"""
from __future__ import annotations

import time

from rs2gpu.runtime.base import DeviceBackend
from rs2gpu.runtime.cache import BinaryCache
from rs2gpu.runtime.errors import LaunchError, ToolchainUnavailable
from rs2gpu.runtime.options import device_arch
from rs2gpu.runtime.staging import StagingRing

# `wait_for_word` polls the word for this long before the driver waits instead (a long kernel need not keep
# a host core busy), asking the stream every WORD_POLLS_PER_QUERY polls whether it failed or finished
WORD_POLL_S = 0.002
WORD_POLLS_PER_QUERY = 256


def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise ToolchainUnavailable("the CUDA backend needs cupy: pip install 'rs2gpu[cuda]' "
                                   "(cupy-cuda13x, cuda-bindings, nvidia-cuda-nvrtc)") from e
    return cupy


class CudaBackend(DeviceBackend):
    name = "cuda"

    def __init__(self, cache: BinaryCache, device: int = 0, arch: str | None = None) -> None:
        cp = _cupy()
        self.cp = cp
        self.cache = cache
        self.compiles = 0  # NVRTC invocations by this process (the disk cache avoids them)
        try:
            self.device = cp.cuda.Device(device)
            self.device.use()
            major, minor = self.device.compute_capability[:-1], self.device.compute_capability[-1]
        except cp.cuda.runtime.CUDARuntimeError as e:
            raise ToolchainUnavailable(f"no usable CUDA device {device}: {e}") from e
        self.arch = arch or device_arch(int(major), int(minor))
        self._current_stream = cp.cuda.get_current_stream
        self._launch_kernel = cp.cuda.driver.launchKernel
        self._driver_errors = (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError)
        self._staging = StagingRing(_CupyCopies(self))
        self._streams: dict[int, object] = {}  # cupy's view of each stream a call was given, by handle

    @property
    def stream(self):
        """The stream a call runs on: cupy's current one."""
        return self._current_stream()

    # ------------------------------------------------------------ compile and load

    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes:
        from rs2gpu.runtime.nvrtc import cached_compile_cuda

        binary, compiled = cached_compile_cuda(self.cache, source, source_name, self.arch, fast_math)
        self.compiles += compiled
        return binary

    def load(self, binary: bytes):
        with self.device:
            return self.cp.cuda.driver.moduleLoadData(binary)

    def function(self, module, symbol: str):
        return self.cp.cuda.driver.moduleGetFunction(module, symbol)

    def global_address(self, module, name: str) -> int:
        lookup = getattr(self.cp.cuda.driver, "moduleGetGlobal", None)
        if lookup is not None:
            return int(self._check(lambda: lookup(module, name)))
        from cuda.bindings import driver  # older cupy: go through the driver bindings directly

        status, ptr, _ = driver.cuModuleGetGlobal(driver.CUmodule(module), name.encode())
        if status != driver.CUresult.CUDA_SUCCESS:
            raise LaunchError(f"cuModuleGetGlobal({name}) failed: {status}")
        return int(ptr)

    def device_ordinal(self) -> int:
        return self.device.id

    def multiprocessors(self) -> int:
        return int(self.device.attributes["MultiProcessorCount"])

    def l2_adds_bytes(self) -> int:
        return int(self.device.attributes["L2CacheSize"])

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int):
        with self.device:
            return self.cp.cuda.alloc(nbytes)

    def upload(self, dst_ptr: int, host) -> None:
        self._staging.upload(dst_ptr, host)

    def download(self, host, src_ptr: int) -> None:
        self._staging.download(host, src_ptr)

    def pinned(self, nbytes: int):
        import numpy as np

        return np.frombuffer(self.cp.cuda.alloc_pinned_memory(nbytes), dtype=np.uint8, count=nbytes)

    def mapped(self, nbytes: int):
        import numpy as np

        runtime = self.cp.cuda.runtime
        memory = self.cp.cuda.PinnedMemory(nbytes, runtime.hostAllocMapped | runtime.hostAllocPortable)
        device_address = self._check(lambda: runtime.pointerGetAttributes(memory.ptr)).devicePointer
        return np.frombuffer(self.cp.cuda.PinnedMemoryPointer(memory, 0), dtype=np.uint8, count=nbytes), \
            int(device_address)

    def copy_to_host_async(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        runtime = self.cp.cuda.runtime
        self._check(lambda: runtime.memcpyAsync(dst_address, src_ptr, nbytes, runtime.memcpyDeviceToHost,
                                                self._current_stream().ptr))

    def zero_async(self, ptr: int, nbytes: int) -> None:
        runtime = self.cp.cuda.runtime
        self._check(lambda: runtime.memsetAsync(ptr, 0, nbytes, self._current_stream().ptr))

    # ------------------------------------------------------------ launch

    def launch_packed(self, function, grid: tuple[int, int, int], block: tuple[int, int, int],
                      params_address: int) -> None:
        try:
            self._launch_kernel(function, *grid, *block, 0, self._current_stream().ptr, params_address, 0)
        except self._driver_errors as e:
            raise self._launch_error(e) from e

    def synchronize(self) -> None:
        self._check(self.stream.synchronize)

    graphs = True

    def capture(self, launches):
        """A CUDA graph of the launches, captured on a stream of its own (the legacy default stream cannot be
        captured), in relaxed mode so that other threads' CUDA calls meanwhile do not end the capture."""
        stream = self.cp.cuda.Stream(non_blocking=True)
        relaxed = getattr(self.cp.cuda.runtime, "streamCaptureModeRelaxed", None)
        with self.device, stream:
            self._check(lambda: stream.begin_capture() if relaxed is None else stream.begin_capture(relaxed))
            try:
                launches()
            finally:
                graph = self._check(stream.end_capture)
        return graph

    def replay(self, graph) -> None:
        self._check(lambda: graph.launch(self._current_stream()))

    def on_stream(self, handle: int):
        """The stream `handle` as cupy's current stream for the call (a cupy stream is that context), so that
        what cupy allocates for the call is ordered on it too."""
        stream = self._streams.get(handle)
        if stream is None:
            from_external = getattr(self.cp.cuda.Stream, "from_external", None)
            stream = from_external(_StreamHandle(handle)) if from_external is not None \
                else self.cp.cuda.ExternalStream(handle, self.device.id)
            self._streams[handle] = stream
        return stream

    def wait_for_word(self, word: memoryview) -> None:
        """The launch's last block sets the word once its results are in host memory, before the kernel
        ends; a synchronize returns only after the driver has seen the whole kernel end, a few µs later.
        A launch that fails never sets it: the stream's query then raises, and a stream that finishes
        without it (or a kernel that runs long) is waited for as `synchronize` waits."""
        stream = self.stream
        deadline = time.perf_counter() + WORD_POLL_S
        polls = 0
        while not word[0]:
            polls += 1
            if polls % WORD_POLLS_PER_QUERY == 0 and (self._check(lambda: stream.done)
                                                      or time.perf_counter() > deadline):
                self._check(stream.synchronize)
                return

    def _check(self, call):
        try:
            return call()
        except self._driver_errors as e:
            raise self._launch_error(e) from e

    @staticmethod
    def _launch_error(e: Exception) -> LaunchError:
        text = str(e)
        sticky = any(mark in text for mark in ("ILLEGAL_ADDRESS", "LAUNCH_FAILED", "illegal", "ASSERT"))
        note = "; the CUDA context is now unusable, so this process cannot run GPU work again" if sticky else ""
        return LaunchError(f"{text}{note}")


class _StreamHandle:
    """A stream handle in the CUDA stream protocol, which cupy's `Stream.from_external` takes."""

    def __init__(self, handle: int) -> None:
        self.handle = handle

    def __cuda_stream__(self) -> tuple[int, int]:
        return 0, self.handle


class _CupyCopies:
    """The staging ring's primitives (`runtime.staging.StagingDevice`) on the backend's current stream."""

    def __init__(self, backend: CudaBackend) -> None:
        self.backend = backend
        self.cp = backend.cp
        self._pinned: list = []  # keeps the ring's buffers alive

    def pinned(self, nbytes: int) -> int:
        memory = self.cp.cuda.alloc_pinned_memory(nbytes)
        self._pinned.append(memory)
        return memory.ptr

    def new_event(self):
        return self.cp.cuda.Event(disable_timing=True)

    def record(self, event) -> None:
        event.record(self.backend.stream)

    def is_done(self, event) -> bool:
        return self.backend._check(lambda: event.done)

    def wait(self, event) -> None:
        self.backend._check(event.synchronize)

    def copy_to_device(self, dst_ptr: int, src_address: int, nbytes: int) -> None:
        runtime = self.cp.cuda.runtime
        self.backend._check(lambda: runtime.memcpyAsync(dst_ptr, src_address, nbytes, runtime.memcpyHostToDevice,
                                                        self.backend.stream.ptr))

    def copy_to_host(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        self.backend.copy_to_host_async(dst_address, src_ptr, nbytes)
