"""CUDA on the CPU, one block after another: the hand-written baselines, checked against the Rust kernels
without a GPU (the dry run and the tests), and rs2gpu's generated kernels, run through the runtime's own
launch path (`EmulatedBackend`) to test what happens between the launches and the host without a GPU.

Each file is compiled as plain C++ (g++, no FMA contraction, so the arithmetic is the GPU's with
--fmad=false) with a prelude that turns CUDA's index built-ins into (thread-local) globals, atomics into
updates under a lock, `__shared__` into statics, `__syncthreads` into a barrier and warp shuffles into an
exchange between the warp's threads. Blocks run one after another, so the last block to finish a grid is
its last one. A kernel whose threads do not cooperate runs its threads one after another too; one that
does (`cooperative`: shared memory, barriers, shuffles, rs2gpu's block reductions) runs each block's
threads as real threads that meet at the barriers.
"""
from __future__ import annotations

import atexit
import contextlib
import ctypes
import functools
import re
import shutil
import subprocess
import tempfile
import types
from pathlib import Path

import numpy as np

from rs2gpu.runtime.base import DeviceBackend, DeviceKernel
from rs2gpu.runtime.callplan import DeviceArrays, cupy_arrays
from rs2gpu.runtime.errors import LaunchError

_HEADERS = """\
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
"""
PRELUDE = r"""
using std::max;
using std::min;
using std::signbit;
struct bench_dim3 { unsigned x, y, z; };
bench_dim3 blockIdx, gridDim, blockDim;
thread_local bench_dim3 threadIdx;
static std::unique_ptr<std::barrier<>> bench_block_barrier;
static std::unique_ptr<std::barrier<>> bench_warp_barrier[32];
static unsigned long long bench_exchange[32][32];
static std::mutex bench_atomic_mutex;
extern "C" void bench_begin_block(unsigned bx, unsigned by, unsigned bz, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned dx, unsigned dy, unsigned dz)
{
    blockIdx = {bx, by, bz}; gridDim = {gx, gy, gz}; blockDim = {dx, dy, dz};
    const unsigned threads = dx * dy * dz;
    bench_block_barrier = std::make_unique<std::barrier<>>(threads);
    for (unsigned w = 0; w * 32 < threads; ++w)
        bench_warp_barrier[w] = std::make_unique<std::barrier<>>(std::min(32u, threads - 32 * w));
}
// Every block of a grid, one after another; `call` runs one thread of the kernel with its arguments. With
// `reverse`, the blocks and the threads of a block run last first: the order a GPU may well pick, and the
// one that hides least what depends on it.
extern "C" void bench_run_grid(void (*call)(void**), void** params, unsigned gx, unsigned gy, unsigned gz,
                               unsigned dx, unsigned dy, unsigned dz, int together, int reverse)
{
    auto at = [=](unsigned k, unsigned n) { return reverse ? n - 1 - k : k; };
    for (unsigned z = 0; z < gz; ++z)
        for (unsigned y = 0; y < gy; ++y)
            for (unsigned x = 0; x < gx; ++x) {
                bench_begin_block(at(x, gx), at(y, gy), at(z, gz), gx, gy, gz, dx, dy, dz);
                std::vector<std::thread> threads;
                for (unsigned tz = 0; tz < dz; ++tz)
                    for (unsigned ty = 0; ty < dy; ++ty)
                        for (unsigned tx = 0; tx < dx; ++tx) {
                            const bench_dim3 thread_index = {at(tx, dx), at(ty, dy), at(tz, dz)};
                            auto thread = [=] { threadIdx = thread_index; call(params); };
                            if (together) threads.emplace_back(thread); else thread();
                        }
                for (auto& thread : threads) thread.join();
            }
}
#define __global__
#define __device__
#define __constant__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __syncthreads() (bench_block_barrier->arrive_and_wait())
#define __threadfence() std::atomic_thread_fence(std::memory_order_seq_cst)
#define __threadfence_system() std::atomic_thread_fence(std::memory_order_seq_cst)
#define BENCH_ATOMIC std::lock_guard<std::mutex> bench_lock(bench_atomic_mutex)
template <typename T> static T atomicAdd(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = old + v; return old; }
template <typename T> static T atomicMin(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = std::min(old, v); return old; }
template <typename T> static T atomicMax(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = std::max(old, v); return old; }
template <typename T> static T atomicExch(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = v; return old; }
template <typename T> static T atomicAnd(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = old & v; return old; }
template <typename T> static T atomicOr(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = old | v; return old; }
template <typename T> static T atomicXor(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = old ^ v; return old; }
template <typename T> static T atomicCAS(T* p, T expected, T v)
{
    BENCH_ATOMIC;
    T old = *p;
    if (old == expected) *p = v;
    return old;
}
template <typename T> static T atomicInc(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = old >= v ? 0 : old + 1; return old; }
// A warp shuffle: each lane posts its value, the warp meets, each lane reads the lane `source(lane)`, or
// keeps its own value where that lane is outside the warp.
template <typename T, typename Source> static T bench_shuffle(T v, Source source)
{
    const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned warp = linear / 32, lane = linear % 32;
    std::memcpy(&bench_exchange[warp][lane], &v, sizeof(T));
    bench_warp_barrier[warp]->arrive_and_wait();
    T out = v;
    const int from = source((int)lane);
    if (from >= 0 && from < 32) std::memcpy(&out, &bench_exchange[warp][from], sizeof(T));
    bench_warp_barrier[warp]->arrive_and_wait();
    return out;
}
template <typename T> static T __shfl_up_sync(unsigned, T v, unsigned offset) { return bench_shuffle(v, [=](int lane) { return lane - (int)offset; }); }
template <typename T> static T __shfl_down_sync(unsigned, T v, unsigned offset) { return bench_shuffle(v, [=](int lane) { return lane + (int)offset; }); }
template <typename T> static T __shfl_sync(unsigned, T v, int from) { return bench_shuffle(v, [=](int) { return from; }); }
template <typename T> static T __shfl_xor_sync(unsigned, T v, int mask) { return bench_shuffle(v, [=](int lane) { return lane ^ mask; }); }
// The lanes of a kernel whose threads do not cooperate run one after another, so no warp is ever complete
// here: code that votes first (rs2gpu's scatter updates) takes its lane-by-lane path.
static unsigned __activemask() { return 0u; }
static int __all_sync(unsigned, int predicate) { return predicate; }
#define __grid_constant__
static double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
static long long __double_as_longlong(double d) { long long x; std::memcpy(&x, &d, 8); return x; }
static float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static int __ffs(int x) { return __builtin_ffs(x); }
static int __ffsll(long long x) { return __builtin_ffsll(x); }
"""

_KERNEL = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+(?:, \w+\(\d+\))?\)\s*(\w+)\s*\(([^{]*)\)\s*\{')
_DYNAMIC_SHARED = re.compile(r"extern __shared__ (\w+) (\w+)\[\];")
_COOPERATION = ("__syncthreads", "__shared__", "RS2GPU_SYNC_THREADS", "RS2GPU_SHARED", "block_inclusive_scan", "look_back",
                "rs2gpu_reduce_block", "rs2gpu_warp_all", "rs2gpu_lane_all", "rs2gpu_block_all")
# NVRTC's constant offsetof (its front end's __INTADDR__) is g++'s __builtin_offsetof.
_NVRTC_OFFSETOF = "#define RS2GPU_OFFSETOF(T, field) __INTADDR__(&((T*)0)->field)"
_GXX_OFFSETOF = "#define RS2GPU_OFFSETOF(T, field) __builtin_offsetof(T, field)"
# The PTX store of 16 bytes (a nest's group of lanes) is a copy of them on the CPU.
_PTX_STORE16 = re.compile(r"^static __device__ __forceinline__ void rs2gpu_store16\((.+?)\* p, .*$", re.M)
_CPU_STORE16 = r"static void rs2gpu_store16(\1* p, const \1* v) { std::memcpy(p, v, 16); }"


_FLAGS = ("-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-pthread")


def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")


@functools.lru_cache(maxsize=1)
def _headers() -> Path:
    """The prelude's standard headers, which take most of each file's compile time, precompiled once per
    process where the compiler can (g++ reads `headers.h.gch` in place of `headers.h`; another compiler
    reads the header itself)."""
    folder = Path(tempfile.mkdtemp(prefix="bench-emulate-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    header = folder / "headers.h"
    header.write_text(_HEADERS)
    subprocess.run([compiler(), *_FLAGS, "-x", "c++-header", "-o", f"{header}.gch", str(header)], capture_output=True)
    return header


@functools.lru_cache(maxsize=1)
def unavailable() -> str | None:
    """Why the baselines cannot run on the CPU here (no C++20 compiler with <barrier>), or None."""
    cxx = compiler()
    if cxx is None:
        return "no C++ compiler (g++, c++ or clang++)"
    probe = subprocess.run([cxx, "-std=c++20", "-fsyntax-only", "-x", "c++", "-"], input="#include <barrier>\n",
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"{cxx} cannot compile C++20 with <barrier>"


def cooperative(source: str) -> set[str]:
    """Kernels of a file whose threads cooperate through shared memory, barriers or shuffles."""
    starts = [(m.start(), m.group(1)) for m in _KERNEL.finditer(source)] + [(len(source), "")]
    return {name for (start, name), (end, _) in zip(starts, starts[1:])
            if any(mark in source[start:end] for mark in _COOPERATION)}


def parameters(text: str) -> list[str]:
    """The declarations of a parameter list, split at the commas outside template brackets."""
    out, depth, current = [], 0, ""
    for char in text:
        depth += {"<": 1, ">": -1}.get(char, 0)
        if char == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += char
    return [p for p in [*out, current.strip()] if p]


def trampolines(source: str) -> str:
    """For each kernel `k`, `bench_packed_k(void** p)`: the call of `k` with the arguments p points at, as a
    driver's launch with a `void**` argument array makes it; and `bench_sizes_k`, the size of each argument
    (ending with 0), which a graph's capture copies as a driver's does."""
    out = []
    for m in _KERNEL.finditer(source):
        name, params = m.group(1), parameters(m.group(2))
        types = [re.sub(r"\s*\b__restrict__\b\s*", " ", re.sub(r"\w+$", "", p)).strip() for p in params]
        args = ", ".join(f"*({t}*)p[{i}]" for i, t in enumerate(types))
        out.append(f'extern "C" void bench_packed_{name}(void** p) {{ {name}({args}); }}')
        sizes = "".join(f"sizeof({t}), " for t in types)
        out.append(f'extern "C" const unsigned long bench_sizes_{name}[] = {{{sizes}0}};')
    return "\n".join(out) + "\n"


class Library:
    """One CUDA file compiled for the CPU."""

    def __init__(self, source_path: Path, workdir: Path) -> None:
        self._build(source_path.read_text(encoding="utf-8"), source_path.stem, Path(workdir))

    @classmethod
    def from_source(cls, source: str, name: str, workdir: Path) -> Library:
        library = cls.__new__(cls)
        library._build(source, name, Path(workdir))
        return library

    def _build(self, source: str, name: str, workdir: Path) -> None:
        if unavailable():
            raise RuntimeError(f"CUDA files cannot run on the CPU: {unavailable()}")
        self.cooperative = cooperative(source)
        source = _DYNAMIC_SHARED.sub(r"static \1 \2[8192];", source).replace(_NVRTC_OFFSETOF, _GXX_OFFSETOF)
        source = _PTX_STORE16.sub(_CPU_STORE16, source)
        cpp, lib = workdir / f"{name}_cpu.cpp", workdir / f"lib{name}_cpu.so"
        cpp.write_text(f'#include "{_headers()}"\n' + PRELUDE + source + trampolines(source))
        result = subprocess.run([compiler(), *_FLAGS, "-shared", "-o", str(lib), str(cpp)], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{name} does not compile as C++ for the CPU:\n{result.stderr[-2000:]}")
        self.handle = ctypes.CDLL(str(lib))

    def global_array(self, name: str, ctype, length: int):
        return (ctype * length).in_dll(self.handle, name)

    def launch(self, symbol: str, grid: tuple, block: tuple, args: tuple) -> None:
        c_args = [_c_value(a) for a in args]
        pointers = (ctypes.c_void_p * max(1, len(c_args)))(*[ctypes.addressof(a) for a in c_args])
        self.launch_packed(symbol, grid, block, ctypes.addressof(pointers))

    def argument_bytes(self, symbol: str, params_address: int) -> list[bytes]:
        """The bytes of each argument of a launch of `symbol` with the `void**` array at `params_address`."""
        sizes = ctypes.cast(getattr(self.handle, f"bench_sizes_{symbol}"), ctypes.POINTER(ctypes.c_ulong))
        pointers = ctypes.cast(params_address, ctypes.POINTER(ctypes.c_void_p))
        out = []
        while sizes[len(out)]:
            out.append(ctypes.string_at(pointers[len(out)], sizes[len(out)]))
        return out

    def launch_packed(self, symbol: str, grid: tuple, block: tuple, params_address: int, reverse: bool = False) -> None:
        """Run the kernel on `grid` x `block` with the `void**` argument array at `params_address`; with
        `reverse`, the blocks and their threads last first."""
        call = ctypes.cast(getattr(self.handle, f"bench_packed_{symbol}"), ctypes.c_void_p)
        self.handle.bench_run_grid(call, ctypes.c_void_p(params_address), *(ctypes.c_uint(v) for v in (*grid, *block)),
                                   ctypes.c_int(symbol in self.cooperative), ctypes.c_int(reverse))


def _c_value(value):
    if isinstance(value, np.ndarray) and value.dtype.fields:   # a struct passed by value
        words = value.view(np.uint64)

        class Record(ctypes.Structure):
            _fields_ = [("words", ctypes.c_uint64 * words.size)]

        record = Record()
        record.words[:] = [int(w) for w in words]
        return record
    if isinstance(value, np.ndarray):
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, np.float64):
        return ctypes.c_double(float(value))
    if isinstance(value, (np.int64, np.uint64)):
        return ctypes.c_int64(int(np.int64(value.view(np.int64)) if isinstance(value, np.uint64) else value))
    if isinstance(value, np.int32):
        return ctypes.c_int32(int(value))
    if isinstance(value, np.uint32):
        return ctypes.c_uint32(int(value))
    if isinstance(value, np.float32):
        return ctypes.c_float(float(value))
    raise TypeError(f"cannot pass {type(value).__name__} to a CPU-compiled kernel")


def can_emulate(kernel, library: Library) -> bool:
    """Every kernel of the baselines runs on the CPU; kept for callers that ask."""
    return all(hasattr(library.handle, lp.symbol) for lp in kernel.launches)


class _HostBuffer:
    """Host memory standing in for a device allocation; `.ptr` is its address."""

    def __init__(self, nbytes: int) -> None:
        self.array = np.zeros(max(nbytes, 1), dtype=np.uint8)
        self.ptr = self.array.ctypes.data


class EmulatedBackend(DeviceBackend):
    """rs2gpu's device backend interface over this emulation: a
    `DeviceKernel` on it runs the generated CUDA on the CPU through the runtime's real launch path:
    argument packing, launch geometry, reduction seeds and scratch, the readback of results and panics.
    `multiprocessors` is what the device reports, which caps the grids of launches with reductions;
    `l2_bytes` is its L2 size for the L2-adds entry points (0: they never run);
    `reverse` runs every grid's blocks and threads last first (what the order of their side effects must
    not change); `launches` records every launch, `synchronizations` counts the waits for the device and
    `word_waits` those for a launch's done word; `launch_streams` the stream each launch was queued on;
    `replays` the graphs replayed (a graph: the launches with copies of their arguments, made at capture)."""

    name = "cuda"

    def __init__(self, workdir: Path, multiprocessors: int = 1, reverse: bool = False, l2_bytes: int = 0) -> None:
        self.workdir = Path(workdir)
        self._multiprocessors = multiprocessors
        self._l2_bytes = l2_bytes
        self.reverse = reverse
        self.launches: list[tuple[str, tuple, tuple]] = []  # (symbol, grid, block) of every launch
        self.stream: int | None = None  # the stream a call was given (`on_stream`), None for the default one
        self.launch_streams: list[int | None] = []  # the stream of every launch
        self.synchronizations = 0
        self.word_waits = 0
        self.replays = 0  # the graphs replayed
        self._captured: list | None = None  # the launches of a graph being captured

    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes:
        return source.encode()

    def load(self, binary: bytes) -> Library:
        source = binary.decode()
        name = f"generated_{len(list(self.workdir.glob('*_cpu.cpp')))}"
        return Library.from_source(source, name, self.workdir)

    def function(self, module: Library, symbol: str):
        return module, symbol

    def device_ordinal(self) -> int:
        return 0

    def device_array_type(self) -> type:
        return EmulatedDeviceArray

    def device_arrays(self, array_type: type) -> DeviceArrays | None:
        return cupy_arrays(array_type) if array_type is EmulatedDeviceArray else None

    def global_address(self, module: Library, name: str) -> int:
        return ctypes.addressof(ctypes.c_uint8.in_dll(module.handle, name))

    def alloc(self, nbytes: int) -> _HostBuffer:
        return _HostBuffer(nbytes)

    def upload(self, dst_ptr: int, host) -> None:
        ctypes.memmove(dst_ptr, host.ctypes.data, host.nbytes)

    def download(self, host, src_ptr: int) -> None:
        ctypes.memmove(host.ctypes.data, src_ptr, host.nbytes)

    def launch_packed(self, function, grid: tuple, block: tuple, params_address: int) -> None:
        module, symbol = function
        if self._captured is not None:  # a graph's capture: the arguments as they are now, nothing run
            self._captured.append((function, grid, block, module.argument_bytes(symbol, params_address)))
            return
        self.launches.append((symbol, grid, block))
        self.launch_streams.append(self.stream)
        module.launch_packed(symbol, grid, block, params_address, self.reverse)

    graphs = True

    def capture(self, launches) -> list:
        """The launches' functions, shapes and argument bytes, in order: a graph, as the driver captures one."""
        self._captured = []
        try:
            launches()
            return self._captured
        finally:
            self._captured = None

    def replay(self, graph: list) -> None:
        self.replays += 1
        for function, grid, block, arguments in graph:
            buffers = [ctypes.create_string_buffer(a, len(a)) for a in arguments]
            pointers = (ctypes.c_void_p * max(1, len(buffers)))(*[ctypes.addressof(b) for b in buffers])
            self.launch_packed(function, grid, block, ctypes.addressof(pointers))

    def synchronize(self) -> None:
        self.synchronizations += 1  # every launch has finished when it returns: nothing to wait for

    @contextlib.contextmanager
    def on_stream(self, handle: int):
        before, self.stream = self.stream, handle
        try:
            yield
        finally:
            self.stream = before

    def wait_for_word(self, word: memoryview) -> None:
        """Every launch has finished when it returns, so the word must be set already: a launch that ends
        its call without setting it would leave a GPU's host polling until the stream is done."""
        self.word_waits += 1
        if not word[0]:
            raise LaunchError("the call's last launch ended without setting its done word")

    def multiprocessors(self) -> int:
        return self._multiprocessors

    def l2_adds_bytes(self) -> int:
        return self._l2_bytes

    def pinned(self, nbytes: int):
        return np.zeros(nbytes, dtype=np.uint8)

    def mapped(self, nbytes: int):
        memory = np.zeros(nbytes, dtype=np.uint8)  # the emulated device's memory is the host's
        return memory, memory.ctypes.data

    def copy_to_host_async(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        ctypes.memmove(dst_address, src_ptr, nbytes)

    def zero_async(self, ptr: int, nbytes: int) -> None:
        ctypes.memset(ptr, 0, nbytes)


class EmulatedKernels:
    """The kernels of one translation on one emulated device, each compiled by the host's C++ compiler
    when first used: `kernels.name(*args)` calls kernel `name` through the runtime's real `DeviceKernel`;
    `backend` is the device, `translation` what was translated."""

    def __init__(self, translation, backend: EmulatedBackend) -> None:
        self.translation = translation
        self.backend = backend
        self._kernels: dict[str, DeviceKernel] = {}

    def __getattr__(self, name: str) -> DeviceKernel:
        if name.startswith("_") or name in ("backend", "translation"):
            raise AttributeError(name)
        if name not in self._kernels:
            entry = self.translation.emitted.abi.kernels[name]
            file = entry.files["cuda"]
            self._kernels[name] = DeviceKernel(self.backend, name, entry, self.translation.emitted.files[file], file)
        return self._kernels[name]


def rust_and_emulated(folder: Path, name: str, source: str, backend: EmulatedBackend | None = None):
    """(rustc's build of `source`'s kernels, the same kernels on an emulated device): the source written to
    `folder`/`name`.rs, the cpu backend's library cached under `folder`, the device `backend` or one working
    in `folder`/emulated."""
    import os

    import rs2gpu
    from rs2gpu import pipeline

    path = folder / f"{name}.rs"
    path.write_text(source)
    saved = os.environ.get("RS2GPU_CACHE_DIR")
    os.environ["RS2GPU_CACHE_DIR"] = str(folder / "cpu-cache")
    try:
        rust = rs2gpu.load(path, backend="cpu")
    finally:
        if saved is None:
            del os.environ["RS2GPU_CACHE_DIR"]
        else:
            os.environ["RS2GPU_CACHE_DIR"] = saved
    if backend is None:
        (folder / "emulated").mkdir()
        backend = EmulatedBackend(folder / "emulated")
    return rust, EmulatedKernels(pipeline.translate(path), backend)


class EmulatedDeviceArray:
    """A numpy array that the runtime takes for device memory (it announces itself through
    `__cuda_array_interface__`, as a cupy array does): on the emulated device, kernels use it in place."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = np.ascontiguousarray(array)
        self.__cuda_array_interface__ = {"shape": self.array.shape, "typestr": self.array.dtype.str,
                                         "data": (self.array.ctypes.data, False), "strides": None, "version": 3}
        # what a repeat call reads of a cupy array (`DeviceKernel._repeat`)
        self.data = types.SimpleNamespace(ptr=self.array.ctypes.data, device_id=0)
        self.dtype, self.size = self.array.dtype, self.array.size

    _c_contiguous = True  # (its array is)
