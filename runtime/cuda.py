"""The CUDA backend: NVRTC to cubin (disk-cached), then cupy's driver bindings for modules, memory,
copies and launches. Every driver call raises on error; faults of asynchronous work surface at the
next synchronize as `LaunchError`.
"""
from __future__ import annotations

from rs2gpu.runtime.base import DeviceBackend, kernel_params_array
from rs2gpu.runtime.cache import BinaryCache, cache_key
from rs2gpu.runtime.errors import LaunchError, ToolchainUnavailable

STAGING_CHUNK = 8 << 20  # bytes per pinned staging buffer; two of them let copies overlap


def _cupy():
    try:
        import cupy
    except ImportError as e:
        raise ToolchainUnavailable("the CUDA backend needs cupy: pip install 'rs2gpu[cuda]' "
                                   "(cupy-cuda13x, cuda-bindings, nvidia-cuda-nvrtc)") from e
    return cupy


class CudaBackend(DeviceBackend):
    name = "cuda"

    def __init__(self, cache: BinaryCache, device: int = 0, block_size: int = 256, arch: str | None = None) -> None:
        cp = _cupy()
        self.cp = cp
        self.block_size = block_size
        self.cache = cache
        self.compiles = 0  # NVRTC invocations by this process (the disk cache avoids them)
        try:
            self.device = cp.cuda.Device(device)
            self.device.use()
            major, minor = self.device.compute_capability[:-1], self.device.compute_capability[-1]
        except cp.cuda.runtime.CUDARuntimeError as e:
            raise ToolchainUnavailable(f"no usable CUDA device {device}: {e}") from e
        self.arch = arch or f"sm_{major}{minor}"
        self.stream = cp.cuda.Stream(non_blocking=True)
        self._staging = [cp.cuda.alloc_pinned_memory(STAGING_CHUNK) for _ in range(2)]
        self._staging_done = [cp.cuda.Event(disable_timing=True) for _ in range(2)]
        for event in self._staging_done:
            event.record(self.stream)

    # ------------------------------------------------------------ compile and load

    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes:
        from rs2gpu.runtime.nvrtc import compile_cuda, nvrtc_version
        from rs2gpu.runtime.options import CudaOptions

        options = CudaOptions(self.arch, fast_math)
        key = cache_key("cuda", source, options.key(), repr(nvrtc_version()))
        binary = self.cache.get(key)
        if binary is None:
            binary = compile_cuda(source, source_name, self.arch, fast_math=fast_math).binary
            self.compiles += 1
            self.cache.put(key, binary)
        return binary

    def load(self, binary: bytes):
        with self.device:
            return self.cp.cuda.driver.moduleLoadData(binary)

    def function(self, module, symbol: str):
        return self.cp.cuda.driver.moduleGetFunction(module, symbol)

    def device_ordinal(self) -> int:
        return self.device.id

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int):
        with self.device:
            return self.cp.cuda.alloc(nbytes)

    def upload(self, dst_ptr: int, host) -> None:
        """Host → device through two pinned buffers: while one chunk is on its way, the next is copied
        into the other buffer."""
        import numpy as np

        data = host.view(np.uint8).reshape(-1)
        runtime = self.cp.cuda.runtime
        for k, offset in enumerate(range(0, data.size, STAGING_CHUNK)):
            chunk = data[offset:offset + STAGING_CHUNK]
            slot = k % 2
            self._staging_done[slot].synchronize()
            pinned = np.frombuffer(self._staging[slot], dtype=np.uint8, count=chunk.size)
            pinned[...] = chunk
            self._check(lambda: runtime.memcpyAsync(dst_ptr + offset, self._staging[slot].ptr, chunk.size,
                                                    runtime.memcpyHostToDevice, self.stream.ptr))
            self._staging_done[slot].record(self.stream)

    def download(self, host, src_ptr: int) -> None:
        import numpy as np

        data = host.view(np.uint8).reshape(-1)
        runtime = self.cp.cuda.runtime
        chunks = list(range(0, data.size, STAGING_CHUNK))

        def start(k: int) -> None:
            offset = chunks[k]
            size = min(STAGING_CHUNK, data.size - offset)
            self._check(lambda: runtime.memcpyAsync(self._staging[k % 2].ptr, src_ptr + offset, size,
                                                    runtime.memcpyDeviceToHost, self.stream.ptr))
            self._staging_done[k % 2].record(self.stream)

        if chunks:
            start(0)
        for k, offset in enumerate(chunks):
            if k + 1 < len(chunks):
                start(k + 1)
            self._staging_done[k % 2].synchronize()
            size = min(STAGING_CHUNK, data.size - offset)
            data[offset:offset + size] = np.frombuffer(self._staging[k % 2], dtype=np.uint8, count=size)

    # ------------------------------------------------------------ launch

    def launch(self, function, grid: int, block: int, params: list[bytes]) -> None:
        array, keep_alive = kernel_params_array(params)
        import ctypes

        self._check(lambda: self.cp.cuda.driver.launchKernel(function, grid, 1, 1, block, 1, 1, 0, self.stream.ptr,
                                                             ctypes.addressof(array), 0))
        del keep_alive

    def synchronize(self) -> None:
        self._check(self.stream.synchronize)

    def _check(self, call):
        cp = self.cp
        try:
            return call()
        except (cp.cuda.driver.CUDADriverError, cp.cuda.runtime.CUDARuntimeError) as e:
            sticky = "ILLEGAL_ADDRESS" in str(e) or "illegal" in str(e).lower() or "LAUNCH_FAILED" in str(e)
            note = ("; the CUDA context is now unusable, so this process cannot run GPU work again"
                    if sticky else "")
            raise LaunchError(f"{e}{note}") from e
