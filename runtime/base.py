"""What every backend shares: binding a call's arguments to a kernel's manifest entry, the checks that
run before any device work, and, for GPU backends, the transfer plan and the launches.

A GPU backend implements `DeviceBackend` (compile, load, allocate, copy, launch, synchronize); the
`DeviceKernel` here drives it identically for CUDA and HIP.
"""
from __future__ import annotations

import struct
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from rs2gpu.runtime.callplan import BoundArgs, CallPlan, LaunchPlan
from rs2gpu.runtime.errors import KernelPanic, LaunchError, RaceError
from rs2gpu.runtime.hostexpr import Environment, evaluate
from rs2gpu.runtime.readback import Readback

MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535
# A launch with reductions gets at most this many blocks per multiprocessor: 8 blocks of 256 threads are
# the 2048 threads one multiprocessor holds (NVIDIA sm_80/sm_90, AMD CDNA), so the grid is one full wave
# and each block's threads stride over the rest; the blocks' partials stay few for the last block to sum.
REDUCTION_BLOCKS_PER_MULTIPROCESSOR = 8
_NONE: dict = {}  # shared empty mapping for launches without reductions (never written)


@dataclass(frozen=True)
class Transfer:
    """One host↔device copy made by a call: the transfer log tests and benchmarks read."""

    param: str
    direction: str  # "h2d" | "d2h"
    nbytes: int
    seconds: float


_PLANS: dict[int, CallPlan] = {}


def bind_arguments(name: str, entry: dict, args: tuple, kwargs: dict, allow_device: bool) -> BoundArgs:
    """Check a call's arguments against a kernel's manifest entry (see `CallPlan.bind`)."""
    plan = _PLANS.get(id(entry))
    if plan is None or plan.entry is not entry:
        plan = _PLANS[id(entry)] = CallPlan(name, entry)
    return plan.bind(args, kwargs, allow_device)


def panic_message(kind: str, index: int, length: int) -> str:
    """Rust's own panic message for a check that failed on the device."""
    if kind == "bounds":
        return f"index out of bounds: the len is {length} but the index is {index}"
    if kind == "div":
        return "attempt to divide by zero" if index == 0 else "attempt to divide with overflow"
    return ("attempt to calculate the remainder with a divisor of zero" if index == 0
            else "attempt to calculate the remainder with overflow")


def launch_geometry(counts: dict[str, int], block_size: int,
                    max_blocks: int | None = None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Grid and block for an iteration space of one to three axes. Blocks always hold `block_size`
    threads (the block reductions rely on it): the innermost loop takes x, at least a warp wide and at
    most its own extent rounded up to a power of two; the outer loops share the rest. Each axis's grid
    is capped at the hardware limit, and the whole grid at `max_blocks` when given (the outer axes give
    way first); the kernels stride over what does not fit."""
    cx, cy, cz = counts["x"], counts.get("y", 1), counts.get("z", 1)
    if "y" not in counts:
        bx, by, bz = block_size, 1, 1
    else:
        bx = min(block_size, max(32, _next_pow2(cx)))
        by = block_size // bx if "z" not in counts else min(block_size // bx, _next_pow2(cy))
        bz = block_size // (bx * by)
    gx, gy, gz = min(-(-cx // bx), MAX_GRID_X), min(-(-cy // by), MAX_GRID_YZ), min(-(-cz // bz), MAX_GRID_YZ)
    if max_blocks is not None:
        gz = min(gz, max(1, max_blocks // (gx * gy)))
        gy = min(gy, max(1, max_blocks // (gx * gz)))
        gx = min(gx, max(1, max_blocks // (gy * gz)))
    return (gx, gy, gz), (bx, by, bz)


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def iteration_count(launch: dict, env: Environment) -> tuple[int, int]:
    """The loop's first index and its number of iterations (0 for an empty range), as Rust's range does."""
    start = evaluate(launch["start"], env)
    end = evaluate(launch["end"], env)
    count = end - start + (1 if launch["inclusive"] else 0)
    return start, max(0, count)


class DeviceBackend(ABC):
    """One GPU vendor's runtime: the only vendor-specific code on the launch path."""

    name: str
    block_size: int = 256

    @abstractmethod
    def compile(self, source: str, source_name: str, fast_math: bool) -> bytes: ...

    @abstractmethod
    def load(self, binary: bytes): ...

    @abstractmethod
    def function(self, module, symbol: str): ...

    @abstractmethod
    def device_ordinal(self) -> int: ...

    @abstractmethod
    def global_address(self, module, name: str) -> int:
        """The device address of a `__device__` variable of a loaded module."""

    @abstractmethod
    def alloc(self, nbytes: int):
        """Device memory that is freed when the returned object is dropped; `.ptr` is its address."""

    @abstractmethod
    def upload(self, dst_ptr: int, host) -> None:
        """Copy a C-contiguous numpy array to device memory (through pinned staging)."""

    @abstractmethod
    def download(self, host, src_ptr: int) -> None: ...

    @abstractmethod
    def launch_packed(self, function, grid: tuple[int, int, int], block: tuple[int, int, int],
                      params_address: int) -> None:
        """Launch with the `void**` argument array at `params_address` (see `LaunchPlan`)."""

    @abstractmethod
    def synchronize(self) -> None:
        """Wait for the stream; raise LaunchError for a fault of an earlier launch."""

    @abstractmethod
    def multiprocessors(self) -> int:
        """The device's multiprocessors (NVIDIA SMs, AMD compute units)."""

    @abstractmethod
    def pinned(self, nbytes: int):
        """`nbytes` of page-locked host memory as a numpy uint8 array (which keeps the memory alive)."""

    @abstractmethod
    def copy_to_host_async(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        """Enqueue a device → host copy into pinned memory on the stream, after the launches before it."""

    @abstractmethod
    def zero_async(self, ptr: int, nbytes: int) -> None:
        """Enqueue the zeroing of device memory on the stream."""


class DeviceKernel:
    """One translated kernel on one GPU backend: `kernel(*args)` runs it like the Rust function.

    Host arrays travel as the transfer plan says and the call waits for the device; a call whose
    arrays are all device arrays, that returns nothing and that checks nothing on the device is
    asynchronous, like a cupy launch. Whatever the host must read after the launches (reduction results,
    the panic record) comes back with one copy and one wait (see `readback.py`).
    """

    def __init__(self, backend: DeviceBackend, name: str, entry: dict, source: str, source_name: str) -> None:
        self.backend = backend
        self.name = name
        self.entry = entry
        self.source = source
        self.plan = CallPlan(name, entry)
        self.binary = backend.compile(source, source_name, entry["fast_math"])
        self._module = backend.load(self.binary)
        self._functions = [backend.function(self._module, lp.symbol) for lp in self.plan.launches]
        self._ordinal = backend.device_ordinal()
        self.last_transfers: list[Transfer] = []
        # Kernels that check something on the device report a panic through the module's readback area.
        self._panic_sites = {p["site"]: p for p in entry.get("panics", ())}
        reduces = any(lp.seeds for lp in self.plan.launches)
        self._max_blocks = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR if reduces else None
        self._readback = Readback(backend, self._module, entry, self._max_blocks or 0)
        self._call = threading.Lock()  # one call at a time uses the readback area and the partials

    def __call__(self, *args, **kwargs):
        bound = self.plan.bind(args, kwargs, allow_device=True)
        bound.env.read_element = lambda name, index, source: self._read_element(bound, name, index, source)
        self._check_launches(bound)
        transfers: list[Transfer] = []
        device_ptrs, staged = self._stage_arrays(bound, transfers)
        self.last_transfers = transfers
        with self._call:
            seeds, ran = self._launch_all(bound, device_ptrs)
            if staged or self._readback.size:
                self._finish(bound, seeds, ran)
        self._download_outputs(staged, transfers)
        return None if self.plan.result is None else self.plan.result(bound.env)

    def _check_launches(self, bound: BoundArgs) -> None:
        """The launch-time checks, in Rust's order, before any device work."""
        for lp in self.plan.launches:
            lp.check_strides(bound.env, self.name)
            failure = lp.check_bounds(bound.env)
            if failure is not None:
                raise KernelPanic(*failure, self.name)
            if lp.index_lists:
                self._verify_index_lists(lp, bound)

    def _launch_all(self, bound: BoundArgs, device_ptrs: dict[str, int]) -> tuple[list[dict], list[bool]]:
        """Every launch, in order: each one's reduction seeds, and whether it ran (an empty range does not)."""
        seeds, ran = [], []
        for index, (lp, function) in enumerate(zip(self.plan.launches, self._functions)):
            launch_seeds, launched = self._launch(index, lp, function, bound, device_ptrs)
            seeds.append(launch_seeds)
            ran.append(launched)
        return seeds, ran

    def _finish(self, bound: BoundArgs, seeds: list[dict], ran: list[bool]) -> None:
        """Wait for the launches with the one readback copy (or without one, when nothing is read back),
        raise the panic the device recorded, and set the reduced values."""
        if self._readback.size:
            self._on_device(self._readback.fetch)
        self._on_device(self.backend.synchronize)
        if self._readback.checks:
            self._raise_device_panic(*self._readback.panic())
        bound.env.reductions.update(self._readback.results(seeds, ran))

    def _download_outputs(self, staged: dict, transfers: list[Transfer]) -> None:
        for name, (arg, buffer) in staged.items():
            if self.plan.by_name[name].transfer in ("out", "inout"):
                started = time.perf_counter()
                self.backend.download(arg.host, buffer.ptr)
                transfers.append(Transfer(name, "d2h", arg.nbytes, time.perf_counter() - started))

    def _raise_device_panic(self, site: int, index: int, length: int) -> None:
        """Raise the panic the device recorded, if any (nothing has been copied back yet), after queueing
        the record's reset for the next call."""
        if site == 0:
            return
        self._readback.reset_panic()
        info = self._panic_sites[site]
        raise KernelPanic(panic_message(info["kind"], index, length), info["source"], self.name)

    def _verify_index_lists(self, lp: LaunchPlan, bound: BoundArgs) -> None:
        """Writes like `out[idx[i]]` are race-free only if the list's values are distinct, and in bounds
        only if they index `out`: check both before any device work, as Rust's own indexing would."""
        import numpy as np

        starts, counts = lp.iteration_space(bound.env)
        if not all(counts.values()):
            return
        for name, first, end, scale, offset, target, source in lp.index_list_ranges(bound.env, starts, counts):
            arg = bound.arrays[name]
            if first < 0 or end > arg.count:
                bad = first if first < 0 else end - 1
                raise KernelPanic(f"index out of bounds: the len is {arg.count} but the index is {bad}", source,
                                  self.name)
            values = self._list_values(arg, first, end).astype(np.int64) * scale + offset
            length = bound.arrays[target].count
            outside = np.flatnonzero((values < 0) | (values >= length))
            if outside.size:
                raise KernelPanic(f"index out of bounds: the len is {length} but the index is "
                                  f"{int(values[outside[0]])}", source, self.name)
            counts_per_value = np.bincount(values, minlength=0)
            repeated = np.flatnonzero(counts_per_value > 1)
            if repeated.size:
                where = np.flatnonzero(values == repeated[0])[:2] + first
                raise RaceError(f"kernel `{self.name}`: index list `{name}` holds the same value at positions "
                                f"{where[0]} and {where[1]}, so two iterations of the loop at {source} would write "
                                f"`{target}[{int(repeated[0])}]`; nothing was launched")

    def _list_values(self, arg, first: int, end: int, dtype=None):
        import numpy as np

        if arg.host is not None:
            return arg.host[first:end]
        if dtype is None:
            dtype = np.dtype(f"i{arg.nbytes // max(arg.count, 1)}") if arg.count else np.dtype("i8")
        values = np.empty(end - first, dtype=dtype)
        self.backend.download(values, arg.ptr + first * dtype.itemsize)
        return values

    def synchronize(self) -> None:
        """Wait for this kernel's launches; raise LaunchError if one of them failed."""
        self._on_device(self.backend.synchronize)

    def _stage_arrays(self, bound: BoundArgs, transfers: list[Transfer]):
        """Device addresses for every array: device arrays as they are, host arrays through a device
        buffer that is uploaded unless the plan says the kernel overwrites it entirely."""
        device_ptrs: dict[str, int] = {}
        staged = {}
        for name, arg in bound.arrays.items():
            if arg.device is not None:
                if arg.device != self._ordinal:
                    raise ValueError(f"argument `{name}` is on device {arg.device}, but the kernel runs on "
                                     f"device {self._ordinal}")
                device_ptrs[name] = arg.ptr
                continue
            buffer = self.backend.alloc(max(arg.nbytes, 1))
            if self.plan.by_name[name].transfer in ("in", "inout") and arg.nbytes:
                started = time.perf_counter()
                self.backend.upload(buffer.ptr, arg.host)
                transfers.append(Transfer(name, "h2d", arg.nbytes, time.perf_counter() - started))
            device_ptrs[name] = buffer.ptr
            staged[name] = (arg, buffer)
        return device_ptrs, staged

    def _launch(self, index: int, lp: LaunchPlan, function, bound: BoundArgs,
                device_ptrs: dict[str, int]) -> tuple[dict, bool]:
        starts, counts = lp.iteration_space(bound.env)
        seeds = {name: seed(bound.env) for name, seed in lp.seeds} if lp.seeds else _NONE
        if not all(counts.values()):
            return seeds, False
        grid, block = launch_geometry(counts, self.backend.block_size, self._max_blocks if lp.seeds else None)
        values = lp.values(bound, device_ptrs, starts, counts, seeds, self._readback.pointers[index])
        with lp.lock:
            struct.pack_into(lp.format, lp.buffer, 0, *values)
            try:
                self.backend.launch_packed(function, grid, block, lp.pointers_address)
            except LaunchError as e:
                raise LaunchError(f"launching kernel `{self.name}` (loop at {lp.source}) failed: {e}") from e
        return seeds, True

    def _on_device(self, call) -> None:
        """A call that waits for (or queues behind) the launches: a fault of one is this kernel's error."""
        try:
            call()
        except LaunchError as e:
            raise LaunchError(f"kernel `{self.name}` failed on the device: {e}") from e

    def _read_element(self, bound: BoundArgs, name: str, index: int, source: str):
        """One element of an array argument, read before the launch (a reduction's seed like `x[0]`)."""
        arg = bound.arrays[name]
        if not 0 <= index < arg.count:
            raise KernelPanic(f"index out of bounds: the len is {arg.count} but the index is {index % (1 << 64)}",
                              source, self.name)
        return self._list_values(arg, index, index + 1, self.plan.by_name[name].dtype)[0].item()
