"""Host cost of calling a translated kernel, and the bandwidth of a call with host (numpy) arrays.

Run on a machine with an NVIDIA GPU:  python3 bench/call_overhead.py

1. Warm call overhead with cupy arrays: `k.triad(a, b, c, alpha)` against a raw cupy launch of the very
   same cubin (cupy.RawModule), both at a small size so the kernel itself takes a few microseconds.
   Each is timed as many back-to-back calls between two synchronizations (host time per call), and as
   calls that synchronize every time. Goal: at most 1.0x the raw launch.
   Beside them, the floor of a launch from Python: an empty kernel launched through cupy (`RawKernel`), through
   cupy's driver wrapper (what a call ends in) and through `cuda.bindings`' `cuLaunchKernel`, and the triad
   launched through cupy's driver wrapper with its parameters packed once beforehand. Goal: at most 1.2x the
   `cuda.bindings` launch.
2. Transfers: `k.triad` on numpy arrays (two uploads, one download, the kernel between) against pinned
   cudaMemcpy of the same bytes, and against pageable cudaMemcpy.
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def median_time(fn, reps: int, inner: int, sync) -> float:
    """Median over `reps` of the host time per call of `inner` back-to-back calls then one sync."""
    for _ in range(3):
        fn()
    sync()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        sync()
        times.append((time.perf_counter() - start) / inner)
    return statistics.median(times)


def launch_floors(cp):
    """An empty kernel's launch, back to back, three ways: what Python costs before any argument is checked."""
    module = cp.RawModule(code='extern "C" __global__ void empty() {}')
    empty = module.get_function("empty")
    empty_function = empty.kernel.ptr  # the CUfunction
    stream = cp.cuda.get_current_stream().ptr
    launch_kernel = cp.cuda.driver.launchKernel
    floors = [
        ("empty kernel, cupy RawKernel", lambda: empty((1,), (1,), ())),
        ("empty kernel, cupy launchKernel", lambda: launch_kernel(empty_function, 1, 1, 1, 1, 1, 1, 0, stream, 0, 0)),
    ]
    try:
        from cuda.bindings import driver
    except ImportError:
        print("cuda.bindings is not installed: its launch is left out of the floor")
        return floors
    function, cu_stream = driver.CUfunction(empty_function), driver.CUstream(stream)
    status, = driver.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, cu_stream, 0, 0)
    if status != driver.CUresult.CUDA_SUCCESS:
        print(f"cuda.bindings cuLaunchKernel returned {status}: its launch is left out of the floor")
        return floors
    floors.append(("empty kernel, cuda.bindings cuLaunchKernel",
                   lambda: driver.cuLaunchKernel(function, 1, 1, 1, 1, 1, 1, 0, cu_stream, 0, 0)))
    return floors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1 << 10, help="elements for the overhead test")
    parser.add_argument("--large", type=int, default=1 << 25, help="elements for the transfer test")
    parser.add_argument("--reps", type=int, default=21)
    parser.add_argument("--profile", action="store_true", help="also print where the host time of a call goes")
    args = parser.parse_args()

    import cupy as cp

    import rs2gpu

    k = rs2gpu.load(ROOT / "examples" / "rajaperf", backend="cuda")
    triad = k.triad
    symbol = triad.entry.launches[0].general.symbol
    sync = cp.cuda.Device().synchronize

    n = args.small
    a, b, c = cp.zeros(n), cp.random.random(n) + 0.5, cp.random.random(n) + 0.5
    with tempfile.TemporaryDirectory() as folder:  # cupy loads a module from a file
        cubin = Path(folder) / "triad.cubin"
        cubin.write_bytes(triad.binary)
        raw = cp.RawModule(path=str(cubin)).get_function(symbol)  # loads the module
    grid = (n + 255) // 256
    lengths = triad.entry.launches[0].lengths  # the slices whose lengths the entry point takes
    slices = [part for name, array in (("a", a), ("b", b), ("c", c))
              for part in ((array, np.uint64(n)) if name in lengths else (array,))]
    raw_args = (*slices, np.float64(2.0), np.uint64(0), np.uint64(n))

    def raw_launch():
        raw((grid,), (256,), raw_args)

    # the triad's parameters packed once, as the driver reads them: an array of pointers to the values
    as_c = {np.uint64: ctypes.c_uint64, np.float64: ctypes.c_double}
    values = [ctypes.c_uint64(arg.data.ptr) if isinstance(arg, cp.ndarray) else as_c[type(arg)](arg.item())
              for arg in raw_args]
    pointers = (ctypes.c_void_p * len(values))(*[ctypes.addressof(value) for value in values])
    launch_kernel, stream = cp.cuda.driver.launchKernel, cp.cuda.get_current_stream().ptr
    raw_function = raw.kernel.ptr

    def prepacked_launch():
        launch_kernel(raw_function, grid, 1, 1, 256, 1, 1, 0, stream, ctypes.addressof(pointers), 0)

    def generated_call():
        triad(a, b, c, 2.0)

    raw_launch()
    expected = cp.asnumpy(a).copy()
    a.fill(0)
    generated_call()
    sync()
    assert cp.asnumpy(a).tobytes() == expected.tobytes(), "generated and raw launches disagree"

    rows = []
    for label, fn in launch_floors(cp):
        rows.append((label, median_time(fn, args.reps, 200, sync), None))
    rows.append(("triad, launchKernel, packed once", median_time(prepacked_launch, args.reps, 200, sync), None))
    for label, sync_each in (("back-to-back", False), ("synchronized", True)):
        inner = 1 if sync_each else 200
        t_raw = median_time(raw_launch, args.reps, inner, sync)
        t_gen = median_time(generated_call, args.reps, inner, sync)
        rows.append((label, t_raw, t_gen))
    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(lambda: [generated_call() for _ in range(5000)])
        pstats.Stats(profiler).sort_stats("tottime").print_stats(12)
    print(f"Call overhead, cupy arrays, n={n} (host time per call, median of {args.reps})")
    print(f"  {'mode':<36}{'raw cupy launch':>18}{'rs2gpu call':>14}{'ratio':>8}")
    for label, t_raw, t_gen in rows:
        if t_gen is None:
            print(f"  {label:<36}{t_raw * 1e6:>15.2f} us")
        else:
            print(f"  {label:<36}{t_raw * 1e6:>15.2f} us{t_gen * 1e6:>11.2f} us{t_gen / t_raw:>8.2f}")

    n = args.large
    host_b = np.random.default_rng(1).uniform(0.5, 1.5, n)
    host_c = np.random.default_rng(2).uniform(0.5, 1.5, n)
    host_a = np.empty(n)
    triad(host_a, host_b, host_c, 2.0)
    assert host_a.tobytes() == (host_b + 2.0 * host_c).tobytes(), "triad on numpy arrays computed a wrong result"
    call_time = median_time(lambda: triad(host_a, host_b, host_c, 2.0), max(5, args.reps // 3), 1, sync)
    moved = 3 * 8 * n
    dev = cp.empty(n)
    pinned = cp.cuda.alloc_pinned_memory(8 * n)
    pinned_view = np.frombuffer(pinned, dtype=np.float64, count=n)
    pinned_view[:] = host_b

    def pinned_copy():
        cp.cuda.runtime.memcpy(dev.data.ptr, pinned.ptr, 8 * n, cp.cuda.runtime.memcpyHostToDevice)

    def pageable_copy():
        cp.cuda.runtime.memcpy(dev.data.ptr, host_b.ctypes.data, 8 * n, cp.cuda.runtime.memcpyHostToDevice)

    t_pinned = median_time(pinned_copy, max(5, args.reps // 3), 1, sync)
    t_pageable = median_time(pageable_copy, max(5, args.reps // 3), 1, sync)
    print(f"\nTransfers, numpy arrays, n={n} ({moved / 1e6:.0f} MB moved per triad call: 2 uploads, 1 download)")
    print(f"  rs2gpu triad call          {call_time * 1e3:8.2f} ms  {moved / call_time / 1e9:6.1f} GB/s")
    print(f"  pinned cudaMemcpy H2D      {t_pinned * 1e3:8.2f} ms  {8 * n / t_pinned / 1e9:6.1f} GB/s")
    print(f"  pageable cudaMemcpy H2D    {t_pageable * 1e3:8.2f} ms  {8 * n / t_pageable / 1e9:6.1f} GB/s")
    detail = ", ".join(f"{t.param} {t.direction} {t.nbytes / t.seconds / 1e9:.1f} GB/s" for t in triad.last_transfers)
    print(f"  per transfer of the last call: {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
