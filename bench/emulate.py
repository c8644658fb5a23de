"""The hand-written baselines on the CPU, one thread after another, to check them against the Rust kernels
without a GPU (the dry run and the tests); rs2gpu's generated HIP files run the same way.

Each baseline file is compiled as plain C++ (g++, no FMA contraction, so the arithmetic is the GPU's with
--fmad=false) with a prelude that turns CUDA's index built-ins into (thread-local) globals, atomics into
updates under a lock, `__shared__` into statics, `__syncthreads` into a barrier and warp shuffles into an
exchange between the warp's threads. Blocks run one after another. A kernel whose threads do not cooperate
runs its threads one after another too; one that does (`cooperative`: shared memory, barriers, shuffles)
runs each block's threads as real threads that meet at the barriers.
"""
from __future__ import annotations

import ctypes
import functools
import re
import shutil
import subprocess
import threading
from pathlib import Path

import numpy as np

PRELUDE = r"""
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
using std::max;
using std::min;
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
extern "C" void bench_set_thread(unsigned tx, unsigned ty, unsigned tz) { threadIdx = {tx, ty, tz}; }
#define __global__
#define __device__
#define __constant__
#define __shared__ static
#define __launch_bounds__(n)
#define __syncthreads() (bench_block_barrier->arrive_and_wait())
#define BENCH_ATOMIC std::lock_guard<std::mutex> bench_lock(bench_atomic_mutex)
template <typename T> static T atomicAdd(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = old + v; return old; }
template <typename T> static T atomicMin(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = std::min(old, v); return old; }
template <typename T> static T atomicMax(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = std::max(old, v); return old; }
template <typename T> static T atomicExch(T* p, T v) { BENCH_ATOMIC; T old = *p; *p = v; return old; }
template <typename T> static T atomicCAS(T* p, T expected, T v)
{
    BENCH_ATOMIC;
    T old = *p;
    if (old == expected) *p = v;
    return old;
}
// A warp shuffle: each lane posts its value, the warp meets, each lane reads the lane `offset` below.
template <typename T> static T __shfl_up_sync(unsigned, T v, unsigned offset)
{
    const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned warp = linear / 32, lane = linear % 32;
    std::memcpy(&bench_exchange[warp][lane], &v, sizeof(T));
    bench_warp_barrier[warp]->arrive_and_wait();
    T out = v;
    if (lane >= offset) std::memcpy(&out, &bench_exchange[warp][lane - offset], sizeof(T));
    bench_warp_barrier[warp]->arrive_and_wait();
    return out;
}
static double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
static long long __double_as_longlong(double d) { long long x; std::memcpy(&x, &d, 8); return x; }
// What rs2gpu's generated files (their HIP form: no NVRTC-only constructs) use besides the above.
#define __forceinline__ inline
static float __int_as_float(int x) { float f; std::memcpy(&f, &x, 4); return f; }
static int __popc(unsigned x) { return __builtin_popcount(x); }
static int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
static int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
static int __ffs(int x) { return __builtin_ffs(x); }
static int __ffsll(long long x) { return __builtin_ffsll(x); }
using std::signbit;
"""

_KERNEL = re.compile(r'extern "C" __global__ void __launch_bounds__\(\d+\)\s*(\w+)\s*\(')
_DYNAMIC_SHARED = re.compile(r"extern __shared__ (\w+) (\w+)\[\];")
_COOPERATION = ("__syncthreads", "__shared__", "block_inclusive_scan", "look_back")


def compiler() -> str | None:
    return shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")


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
    """Kernels of a baseline file whose threads cooperate through shared memory or barriers."""
    starts = [(m.start(), m.group(1)) for m in _KERNEL.finditer(source)] + [(len(source), "")]
    return {name for (start, name), (end, _) in zip(starts, starts[1:])
            if any(mark in source[start:end] for mark in _COOPERATION)}


class Library:
    """One baseline file compiled for the CPU."""

    def __init__(self, source_path: Path, workdir: Path) -> None:
        if unavailable():
            raise RuntimeError(f"the baselines cannot run on the CPU: {unavailable()}")
        cxx = compiler()
        source = source_path.read_text(encoding="utf-8")
        self.cooperative = cooperative(source)
        text = PRELUDE + _DYNAMIC_SHARED.sub(r"static \1 \2[8192];", source)
        cpp = Path(workdir) / f"{source_path.stem}_cpu.cpp"
        lib = Path(workdir) / f"lib{source_path.stem}_cpu.so"
        cpp.write_text(text)
        result = subprocess.run([cxx, "-std=c++20", "-O1", "-ffp-contract=off", "-fPIC", "-shared", "-pthread", "-o",
                                 str(lib), str(cpp)], capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"{source_path.name} does not compile as C++ for the CPU:\n{result.stderr[-2000:]}")
        self.handle = ctypes.CDLL(str(lib))

    def global_array(self, name: str, ctype, length: int):
        return (ctype * length).in_dll(self.handle, name)

    def launch(self, symbol: str, grid: tuple, block: tuple, args: tuple) -> None:
        function = getattr(self.handle, symbol)
        function.restype = None
        c_args = [_c_value(a) for a in args]
        threads = [(tx, ty, tz) for tz in range(block[2]) for ty in range(block[1]) for tx in range(block[0])]
        together = symbol in self.cooperative
        for z in range(grid[2]):
            for y in range(grid[1]):
                for x in range(grid[0]):
                    self.handle.bench_begin_block(x, y, z, *grid, *block)
                    if together:
                        _run_together(self.handle.bench_set_thread, function, c_args, threads, symbol)
                    else:
                        for t in threads:
                            self.handle.bench_set_thread(*t)
                            function(*c_args)


def _run_together(set_thread, function, c_args, threads, symbol: str) -> None:
    """One block's threads as OS threads (ctypes lets go of the GIL during the calls, so they meet at the
    C++ barriers)."""
    failures = []

    def body(t):
        try:
            set_thread(*t)
            function(*c_args)
        except Exception as e:  # noqa: BLE001 - reported below
            failures.append(e)

    workers = [threading.Thread(target=body, args=(t,), daemon=True) for t in threads]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
        if w.is_alive():
            raise RuntimeError(f"{symbol}: a block's threads did not finish (a barrier that not all reach?)")
    if failures:
        raise failures[0]


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
    if isinstance(value, np.float32):
        return ctypes.c_float(float(value))
    raise TypeError(f"cannot pass {type(value).__name__} to a CPU-compiled kernel")


def can_emulate(kernel, library: Library) -> bool:
    """Every kernel of the baselines runs on the CPU; kept for callers that ask."""
    return all(hasattr(library.handle, lp.symbol) for lp in kernel.launches)
