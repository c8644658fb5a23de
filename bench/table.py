"""What a benchmark table entry is (`Kernel`, `Launch`, `HostResult`) and the building blocks the entries of
bench/kernels.py are made of."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bench.data import Rand, ceil_div

BLOCK = 256
EPS = float(np.finfo(np.float64).eps)
INT_MAX, INT_MIN = 2**31 - 1, -(2**31)
DBL_MAX = float(np.finfo(np.float64).max)
K = 1.1 / 1.12345   # RAJAPerf's scalar initialiser: 0.1·K or 0.2·K


@dataclass(frozen=True)
class Launch:
    """One launch of a hand-written kernel: grid (from the dims), block, dynamic shared memory, arguments."""

    symbol: str
    grid: Callable[[dict], tuple]
    args: Callable[[dict, dict], tuple]   # (vars, dims) -> kernel arguments
    block: tuple = (BLOCK,)
    shared_bytes: int = 0


@dataclass(frozen=True)
class HostResult:
    """For a hand-written kernel whose result goes back to the host in every rep (reductions, index lists):
    `buffers` are device arrays it needs, `before` initialises them before the launches (an upload or a
    memset on the stream), `finish` copies the result back and finishes it on the host, as RAJAPerf's
    Base_CUDA reductions do in every rep."""

    buffers: Callable[[Rand, dict], dict]
    before: Callable[[dict, dict], None]
    finish: Callable[[dict, dict], dict]


@dataclass(frozen=True)
class Kernel:
    """One RAJAPerf kernel: its data, its hand-written launches, its generated counterpart, its metrics."""

    name: str
    group: str
    rust: str                  # the #[kernel] of examples/rajaperf that is the generated side
    reps: int                  # RAJAPerf's default reps (caps the back-to-back count)
    size_rule: str             # how RAJAPerf's dimensions derive from the target size
    dims: Callable[[int], dict]
    data: Callable[[Rand, dict], dict]
    source: str                # bench/baselines/<source>.cu
    launches: tuple
    bytes_read: Callable[[dict], int]
    bytes_written: Callable[[dict], int]
    flops: Callable[[dict], int]
    outputs: tuple = ()
    inout: tuple = ()
    bytes_atomic: Callable[[dict], int] = lambda d: 0
    host_result: HostResult | None = None
    returns: tuple = ()        # names of the generated kernel's return values, in order
    tolerance: Callable | None = None   # (hand results, vars, dims) -> {result name: absolute bound}
    hand_setup: Callable | None = None  # (cupy RawModule, vars) -> None, once before the first launch
    cupy: Callable | None = None        # (vars, dims) -> {result name: host value}, cupy's own routine (timed)
    reference: Callable | None = None   # (vars, dims) -> results to check the hand-written side against (not timed)
    unwritten: Callable | None = None   # dims -> {output: elements the kernel leaves alone}; default none
    default_size: int = 1_000_000
    max_factor: float | None = None     # larger size factors are capped to this one
    # the generated side's index lists passed as rs2gpu.IndexList (verified once, when the data is made,
    # as RAJAPerf makes its zone lists in the kernel's setup), unless `--plain-lists`
    verified_lists: tuple = ()
    note: str = ""

    @property
    def results(self) -> tuple:
        """The names compared between the two sides."""
        return tuple(self.outputs) + tuple(self.inout) + tuple(self.returns)


def bytes_per_rep(k: Kernel, d: dict) -> int:
    """RAJAPerf's Bytes/rep: read + written + 2 × atomically modified."""
    return k.bytes_read(d) + k.bytes_written(d) + 2 * k.bytes_atomic(d)


def target_size(k: Kernel, factor: float) -> tuple[int, float]:
    """The target problem size for a size factor (capped by `max_factor`), and the factor used."""
    used = min(factor, k.max_factor) if k.max_factor else factor
    return int(k.default_size * used), used


# ---------------------------------------------------------------------------------------------------
# Building blocks

def dims_1d(target: int) -> dict:
    return {"n": target, "size": target}


def grid_1d(d: dict) -> tuple:
    return (ceil_div(d["n"], BLOCK),)


def i64(x) -> np.int64:
    return np.int64(x)


def f64(x) -> np.float64:
    return np.float64(x)


def sum_bound(abs_sum: float, count: int) -> float:
    """How far two orders of summing `count` terms can land apart: 2·n·ε·Σ|terms|."""
    return 2.0 * count * EPS * float(abs_sum)


def reorder_bound(abs_sum, count):
    """How far two orders (or trees) of adding the same `count` terms can land apart: each is within
    (count − 1)·ε/2·Σ|terms| of the exact sum (to first order), so the two within (count − 1)·ε·Σ|terms|.
    Works elementwise on arrays of sums and counts."""
    return (count - 1) * EPS * abs_sum


def zero(*names):
    """A HostResult `before` that zeroes the named buffers (a memset on the stream)."""
    def before(v: dict, d: dict) -> None:
        for name in names:
            v[name].fill(0)
    return before


def upload(name: str, values, dtype):
    """A HostResult `before` that copies fixed values into a device buffer from pinned host memory
    (asynchronous, on the current stream), as the generated code initialises its reduction slots."""
    def before(v: dict, d: dict) -> None:
        key = "_pinned_" + name
        if key not in v:
            host = np.asarray(values, dtype=dtype)
            try:
                import cupy

                pinned = cupy.cuda.alloc_pinned_memory(host.nbytes)
                staged = np.frombuffer(pinned, dtype=host.dtype, count=host.size)
                staged[...] = host
                v[key] = (pinned, staged)
            except ImportError:
                v[key] = (None, host)
        pinned, staged = v[key]
        target = v[name]
        if pinned is None or not hasattr(target.data, "copy_from_host_async"):
            target[...] = staged
        else:
            target.data.copy_from_host_async(pinned.ptr, staged.nbytes)
    return before


def host(array) -> np.ndarray:
    """A device (or host) array on the host."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def array_module(array):
    """numpy for a numpy array, cupy otherwise (the library routines run where the data is)."""
    if isinstance(array, np.ndarray):
        return np
    import cupy
    return cupy
