"""A device backend that runs the generated kernels on the CPU, for testing the runtime's device-side
protocol (launch variants, index-list verification, the panic record, when a call waits) without a GPU.

The generated HIP file is compiled as plain C++ by g++ with a prelude that supplies the GPU built-ins:
the index variables (`threadIdx` per thread), atomics under one lock, `__syncthreads` as a barrier of
the block's threads. Each block runs as real threads, one block after another. Device memory is host
memory, so an `EmulatedDeviceArray` (host memory announced through `__cuda_array_interface__`) is what
a cupy array is on a GPU: the runtime passes it to the kernels without copies.
"""
from __future__ import annotations

import ctypes
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np

from rs2gpu.runtime.base import DeviceBackend

PRELUDE = r"""
#include <barrier>
#include <cmath>
#include <cstring>
#include <math.h>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>
using std::signbit;
struct rs2gpu_dim3 { unsigned x, y, z; };
static rs2gpu_dim3 blockIdx, gridDim, blockDim;
static thread_local rs2gpu_dim3 threadIdx;
static std::barrier<>* rs2gpu_block_barrier;
static std::mutex rs2gpu_atomic_mutex;
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
#define __launch_bounds__(n)
#define __syncthreads() (rs2gpu_block_barrier->arrive_and_wait())
template <typename T> static T atomicAdd(T* p, T v) { std::lock_guard<std::mutex> l(rs2gpu_atomic_mutex); T old = *p; *p = old + v; return old; }
template <typename T> static T atomicExch(T* p, T v) { std::lock_guard<std::mutex> l(rs2gpu_atomic_mutex); T old = *p; *p = v; return old; }
template <typename T> static T atomicCAS(T* p, T expected, T v) {
    std::lock_guard<std::mutex> l(rs2gpu_atomic_mutex);
    T old = *p;
    if (old == expected) *p = v;
    return old;
}
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static int __ffs(int x) { return __builtin_ffs(x); }
static int __ffsll(long long x) { return __builtin_ffsll(x); }
static double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
static float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
"""

LAUNCHER = r"""
template <typename... A, std::size_t... I>
static void rs2gpu_call(void (*kernel)(A...), void** args, std::index_sequence<I...>) {
    kernel(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}
template <typename... A>
static void rs2gpu_emulate(void (*kernel)(A...), const unsigned* grid, const unsigned* block, void** args) {
    gridDim = {grid[0], grid[1], grid[2]};
    blockDim = {block[0], block[1], block[2]};
    const unsigned threads = block[0] * block[1] * block[2];
    for (unsigned z = 0; z < grid[2]; z++)
        for (unsigned y = 0; y < grid[1]; y++)
            for (unsigned x = 0; x < grid[0]; x++) {
                blockIdx = {x, y, z};
                std::barrier<> barrier(threads);
                rs2gpu_block_barrier = &barrier;
                std::vector<std::thread> running;
                for (unsigned t = 0; t < threads; t++)
                    running.emplace_back([=] {
                        threadIdx = {t % block[0], t / block[0] % block[1], t / (block[0] * block[1])};
                        rs2gpu_call(kernel, args, std::index_sequence_for<A...>{});
                    });
                for (auto& thread : running) thread.join();
            }
}
"""

_ENTRY = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\) (\w+)\(')


def compiler() -> str | None:
    return shutil.which("g++")


class HostMemory:
    """Emulated device memory: a zeroed host buffer; `.ptr` is its address."""

    def __init__(self, nbytes: int) -> None:
        self.array = np.zeros(max(nbytes, 1), dtype=np.uint8)
        self.ptr = self.array.ctypes.data


class EmulatedDeviceArray:
    """A numpy array that the runtime takes for device memory, as it takes a cupy array on a GPU."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.ascontiguousarray(array)
        self.__cuda_array_interface__ = {"shape": self.array.shape, "typestr": self.array.dtype.str,
                                         "data": (self.array.ctypes.data, False), "strides": None, "version": 3}


class EmulatedBackend(DeviceBackend):
    """The generated C++ compiled by g++, launched block after block on the CPU. `synchronizations`
    counts the calls' waits for the device, `launches` the symbols launched."""

    name = "emulated"

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir)
        self.synchronizations = 0
        self.launches: list[str] = []
        self._names: dict[int, str] = {}

    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes:
        entries = _ENTRY.findall(source)
        trampolines = "".join(f'extern "C" void rs2gpu_emulate_{s}(const unsigned* grid, const unsigned* block, '
                              f'void** args) {{ rs2gpu_emulate({s}, grid, block, args); }}\n' for s in entries)
        text = PRELUDE + source + LAUNCHER + trampolines
        digest = hashlib.sha256(text.encode()).hexdigest()[:16]
        library = self.workdir / f"kernels-{digest}.so"
        if not library.exists():
            cpp = self.workdir / f"kernels-{digest}.cpp"
            cpp.write_text(text)
            done = subprocess.run([compiler(), "-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-shared",
                                   "-pthread", "-w", "-o", str(library), str(cpp)], capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"{source_name} does not compile for the CPU:\n{done.stderr[-3000:]}")
        return str(library).encode()

    def load(self, binary: bytes):
        return ctypes.CDLL(binary.decode())

    def function(self, module, symbol: str):
        function = getattr(module, f"rs2gpu_emulate_{symbol}")
        function.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        function.restype = None
        self._names[id(function)] = symbol
        return function

    def device_ordinal(self) -> int:
        return 0

    def global_address(self, module, name: str) -> int:
        return ctypes.addressof(ctypes.c_char.in_dll(module, name))

    def alloc(self, nbytes: int) -> HostMemory:
        return HostMemory(nbytes)

    def upload(self, dst_ptr: int, host) -> None:
        ctypes.memmove(dst_ptr, host.ctypes.data, host.nbytes)

    def download(self, host, src_ptr: int) -> None:
        ctypes.memmove(host.ctypes.data, src_ptr, host.nbytes)

    def zero(self, dst_ptr: int, nbytes: int) -> None:
        ctypes.memset(dst_ptr, 0, nbytes)

    def launch_packed(self, function, grid, block, params_address: int) -> None:
        self.launches.append(self._names[id(function)])
        function((ctypes.c_uint * 3)(*grid), (ctypes.c_uint * 3)(*block), params_address)

    def synchronize(self) -> None:
        self.synchronizations += 1
