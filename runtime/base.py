"""What every backend shares: binding a call's arguments to a kernel's manifest entry, the checks that
run before any device work, and, for GPU backends, the transfer plan and the launches.

A GPU backend implements `DeviceBackend` (compile, load, allocate, copy, launch, synchronize); the
`DeviceKernel` here drives it identically for CUDA and HIP.
"""
from __future__ import annotations

import struct
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass

from rs2gpu.runtime.callplan import BoundArgs, CallPlan, HostLoopPlan, LaunchPlan
from rs2gpu.runtime.errors import KernelPanic, LaunchError, RaceError
from rs2gpu.runtime.hostexpr import Environment, evaluate

MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535
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


def launch_geometry(counts: dict[str, int], block_size: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Grid and block for an iteration space of one to three axes. Blocks always hold `block_size`
    threads (the block reductions rely on it): the innermost loop takes x, at least a warp wide and at
    most its own extent rounded up to a power of two; the outer loops share the rest. Each axis's grid
    is capped at the hardware limit, and the kernels stride over what does not fit."""
    cx, cy, cz = counts["x"], counts.get("y", 1), counts.get("z", 1)
    if "y" not in counts:
        bx, by, bz = block_size, 1, 1
    else:
        bx = min(block_size, max(32, _next_pow2(cx)))
        by = block_size // bx if "z" not in counts else min(block_size // bx, _next_pow2(cy))
        bz = block_size // (bx * by)
    grid = (min(-(-cx // bx), MAX_GRID_X), min(-(-cy // by), MAX_GRID_YZ), min(-(-cz // bz), MAX_GRID_YZ))
    return grid, (bx, by, bz)


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
        """Wait for the device; raise LaunchError for a fault of an earlier launch."""


class DeviceKernel:
    """One translated kernel on one GPU backend: `kernel(*args)` runs it like the Rust function.

    Host arrays travel as the transfer plan says and the call waits for the device; a call whose
    arrays are all device arrays and that returns nothing is asynchronous, like a cupy launch.
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
        # Kernels that check something on the device report a panic through a module variable.
        self._panic_sites = {p["site"]: p for p in entry.get("panics", ())}
        self._panic_record = backend.global_address(self._module, "rs2gpu_panic") if self._panic_sites else None

    def __call__(self, *args, **kwargs):
        bound = self.plan.bind(args, kwargs, allow_device=True)
        bound.env.read_element = lambda name, index, source: self._read_element(bound, name, index, source)
        for lp in self.plan.launches:
            if not lp.per_step:
                self._check_launch(lp, bound)
        transfers: list[Transfer] = []
        device_ptrs, staged = self._stage_arrays(bound, transfers)
        slots = {}
        if self.plan.schedule is None:
            for lp, function in zip(self.plan.launches, self._functions):
                slots.update(self._launch(lp, function, bound, device_ptrs))
        else:
            slots = self._run_schedule(self.plan.schedule, bound, device_ptrs)
        self.last_transfers = transfers
        if staged or slots or self._panic_record is not None:
            self._synchronize()
            self._raise_device_panic()
            for name, (arg, buffer) in staged.items():
                if self.plan.by_name[name].transfer in ("out", "inout"):
                    started = time.perf_counter()
                    self.backend.download(arg.host, buffer.ptr)
                    transfers.append(Transfer(name, "d2h", arg.nbytes, time.perf_counter() - started))
            for name, slot in slots.items():
                if isinstance(slot, _LocationSlots):
                    bound.env.reductions.update(slot.finish(self.backend))
                else:
                    bound.env.reductions[name] = self._read_scalar(*slot)
        return None if self.plan.result is None else self.plan.result(bound.env)

    def _check_launch(self, lp: LaunchPlan, bound: BoundArgs) -> None:
        """What the host verifies before a launch: stride inequalities, bounds, index lists."""
        lp.check_strides(bound.env, self.name)
        failure = lp.check_bounds(bound.env)
        if failure is not None:
            raise KernelPanic(*failure, self.name)
        if lp.index_lists:
            self._verify_index_lists(lp, bound)

    def _run_schedule(self, steps: list, bound: BoundArgs, device_ptrs: dict[str, int]) -> dict:
        """Launch in schedule order: a host loop sets its values, then runs its body once per iteration,
        with the data staying on the device. A check that fails in some iteration raises before that
        iteration's launches, once the earlier ones are done (nothing is copied back)."""
        try:
            return self._run_steps(steps, bound, device_ptrs)
        except KernelPanic:
            self._synchronize()  # the staged buffers must outlive the launches that use them
            raise

    def _run_steps(self, steps: list, bound: BoundArgs, device_ptrs: dict[str, int]) -> dict:
        slots = {}
        for step in steps:
            if isinstance(step, HostLoopPlan):
                for value in step.values(bound.env):
                    step.enter(bound.env, value)
                    slots.update(self._run_steps(step.body, bound, device_ptrs))
                continue
            lp = self.plan.launches[step]
            if lp.per_step:
                self._check_launch(lp, bound)
            slots.update(self._launch(lp, self._functions[step], bound, device_ptrs))
        return slots

    def _raise_device_panic(self) -> None:
        """Raise the panic the device recorded, if any (nothing has been copied back yet)."""
        if self._panic_record is None:
            return
        import numpy as np

        record = np.zeros(3, dtype=np.uint64)  # site (u32) + padding, index, len
        self.backend.download(record, self._panic_record)
        site = int(record[0] & 0xFFFFFFFF)
        if site == 0:
            return
        self.backend.upload(self._panic_record, np.zeros(3, dtype=np.uint64))  # ready for the next call
        info = self._panic_sites[site]
        raise KernelPanic(panic_message(info["kind"], int(record[1]), int(record[2])), info["source"], self.name)

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
        self._synchronize()

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

    def _launch(self, lp: LaunchPlan, function, bound: BoundArgs, device_ptrs: dict[str, int]) -> dict:
        starts, counts = lp.iteration_space(bound.env)
        runs = all(counts.values())
        grid, block = launch_geometry(counts, self.backend.block_size) if runs else ((0, 0, 0), (0, 0, 0))
        slots, slot_ptrs = ({}, {}) if lp.reductions or lp.locations else (_NONE, _NONE)
        for name, ty, init in lp.reductions:
            slot = self.backend.alloc(8)
            self.backend.upload(slot.ptr, _scalar_array(ty, init(bound.env)))
            slots[name] = (slot, ty)
            slot_ptrs[name] = slot.ptr
        blocks = grid[0] * grid[1] * grid[2]
        for r, init, location_init in lp.locations:
            seed = (init(bound.env), location_init(bound.env))
            partials = [self.backend.alloc(max(8 * blocks, 8)) for _ in range(2)]
            slots[r["name"]] = _LocationSlots(r, seed, partials, blocks)
            slot_ptrs[r["name"]], slot_ptrs[r["location"]] = partials[0].ptr, partials[1].ptr
        if runs:
            values = lp.values(bound, device_ptrs, starts, counts, slot_ptrs)
            with lp.lock:
                struct.pack_into(lp.format, lp.buffer, 0, *values)
                try:
                    self.backend.launch_packed(function, grid, block, lp.pointers_address)
                except LaunchError as e:
                    raise LaunchError(f"launching kernel `{self.name}` (loop at {lp.source}) failed: {e}") from e
        return slots

    def _synchronize(self) -> None:
        try:
            self.backend.synchronize()
        except LaunchError as e:
            raise LaunchError(f"kernel `{self.name}` failed on the device: {e}") from e

    def _read_element(self, bound: BoundArgs, name: str, index: int, source: str):
        """One element of an array argument, read before the launch (a reduction's seed like `x[0]`)."""
        arg = bound.arrays[name]
        if not 0 <= index < arg.count:
            raise KernelPanic(f"index out of bounds: the len is {arg.count} but the index is {index % (1 << 64)}",
                              source, self.name)
        return self._list_values(arg, index, index + 1, self.plan.by_name[name].dtype)[0].item()

    def _read_scalar(self, slot, ty: str):
        host = _scalar_array(ty, 0)
        self.backend.download(host, slot.ptr)
        return host[0].item()


class _LocationSlots:
    """The per-block (value, location) results of a min/max-location reduction, and how to finish it:
    the best block result, ties to the first (last) location, then Rust's comparison with the seed."""

    def __init__(self, reduction: dict, seed: tuple, partials: list, blocks: int) -> None:
        self.reduction, self.seed, self.partials, self.blocks = reduction, seed, partials, blocks

    def finish(self, backend) -> dict:
        r = self.reduction
        value, location = self.seed
        if self.blocks:
            values = _scalar_array(r["type"], 0).repeat(self.blocks)
            locations = _scalar_array(r["location_type"], 0).repeat(self.blocks)
            backend.download(values, self.partials[0].ptr)
            backend.download(locations, self.partials[1].ptr)
            is_min = r["op"] == "minloc"
            best = values.min() if is_min else values.max()
            at = locations[values == best]
            candidate = (best.item(), (at.min() if r["first"] else at.max()).item()) if at.size else None
            if candidate is not None:
                better = candidate[0] < value if is_min else candidate[0] > value
                if better or (not r["first"] and candidate[0] == value):
                    value, location = candidate
        return {r["name"]: value, r["location"]: location}


def _scalar_array(ty: str, value):
    import numpy as np

    from rs2gpu.runtime.arguments import PRIM_DTYPES

    return np.array([value], dtype=PRIM_DTYPES[ty])
