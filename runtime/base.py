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
from typing import NamedTuple

from rs2gpu.runtime.callplan import (BoundArgs, CallPlan, HostLoopPlan, LaunchPlan, c_contiguous_of,
                                     compile_repeat_binding, cupy_ndarray)
from rs2gpu.runtime.covering import covering_geometry
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


class Covering(NamedTuple):
    """An entry point that runs one thread per iteration, on a grid that covers the loop: its function, the
    block its body needs (None: any), the count every axis must stay below, the idle threads its grid starts
    with along x (`emit.covering.warp_lead`), its symbol and whether it can record a panic."""

    function: object
    block: tuple | None
    count_limit: int
    lead: int
    symbol: str
    records_panics: bool

    def geometry(self, counts: dict[str, int]):
        """(grid, block) that covers `counts`, or None when no grid does."""
        return covering_geometry((counts["x"] + self.lead, counts.get("y", 1), counts.get("z", 1)), len(counts),
                                 self.block, self.count_limit, (MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ))


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

    def wait_for_word(self, word: memoryview) -> None:
        """Wait until the stream's last launch has set `word` (one word of `mapped` memory, cleared before
        the launch; see the prelude's `rs2gpu_signal_done`), or for the stream where the word never comes:
        what the launch wrote to mapped memory before the word is then in host memory. This default waits
        for the stream."""
        self.synchronize()

    @abstractmethod
    def multiprocessors(self) -> int:
        """The device's multiprocessors (NVIDIA SMs, AMD compute units)."""

    def l2_adds_bytes(self) -> int:
        """The most bytes of slice elements a loop may touch for its L2-adds entry point to run (its L2's
        size; see `emit.l2_adds`); 0 where that entry point is not to run."""
        return 0

    @abstractmethod
    def pinned(self, nbytes: int):
        """`nbytes` of page-locked host memory as a numpy uint8 array (which keeps the memory alive)."""

    @abstractmethod
    def mapped(self, nbytes: int):
        """`nbytes` of page-locked host memory that kernels write directly: (a numpy uint8 array over it,
        which keeps the memory alive; the address device code uses for it). What a kernel wrote there is in
        the array once the stream is synchronized."""

    @abstractmethod
    def copy_to_host_async(self, dst_address: int, src_ptr: int, nbytes: int) -> None:
        """Enqueue a device → host copy into pinned memory on the stream, after the launches before it."""

    @abstractmethod
    def zero_async(self, ptr: int, nbytes: int) -> None:
        """Enqueue the zeroing of device memory on the stream."""

    def device_array_type(self) -> type | None:
        """The type of the device arrays a call may repeat with (see `DeviceKernel._repeat`): cupy's, once
        the caller has imported cupy."""
        return cupy_ndarray()


class MarkArray:
    """The marks of the index-list verifications of writes to one slice: a `u32` per element, which a
    verification sets to its own stamp (the loop writes the stamp into its order flag, in the readback
    area, when the indices it writes are out of order). Each call gets a new stamp, so marks and flags left
    by earlier ones never count; the array is zeroed only when it grows and when the stamp wraps."""

    def __init__(self, backend: DeviceBackend) -> None:
        self.backend = backend
        self.buffer = None
        self.capacity = 0
        self.stamp = 0
        self.lock = threading.Lock()

    def next(self, length: int) -> tuple[int, int]:
        """(address of the marks, stamp) for the checks of a call's writes into `length` elements; stamp 1
        means the marks start again from zero (so must the order flags, which may hold an old stamp)."""
        with self.lock:
            if self.buffer is None or length > self.capacity:
                # the verification that used the old array ran in a call that waited for the device
                self.capacity = max(length, 1)
                self.buffer = self.backend.alloc(4 * self.capacity)
                self.stamp = 0
            if self.stamp == 0 or self.stamp == 0xFFFFFFFF:
                self.backend.zero_async(self.buffer.ptr, 4 * self.capacity)
                self.stamp = 0
            self.stamp += 1
            return self.buffer.ptr, self.stamp


class _PendingVerification(NamedTuple):
    """What the index-list verification of launch `index` takes, kept until the call's wait."""

    lp: LaunchPlan
    index: int
    device_ptrs: dict
    starts: dict
    counts: dict
    lists: dict
    number: int


DECISIONS_KEPT = 64  # the decisions a kernel keeps, for as many different lengths and integer parameters


def _shaped_symbol(lp: LaunchPlan, shape: str | None) -> str | None:
    """The symbol of the vector or L2-adds entry point a launch ran as `shape` (None for the others)."""
    return lp.vector[0] if shape == "vector" else lp.l2_adds[0] if shape == "l2_adds" else None


class _Decided:
    """What the host decided for the calls of one decision key (`CallPlan.decision_key`): each launch's
    variant, its first indices and counts, and per launch and alignment of its slices the entry point and
    grid it runs on. A call with the same key passes the same host checks (those that failed stored nothing)."""

    __slots__ = ("variants", "spaces", "shapes")

    def __init__(self, variants: list) -> None:
        self.variants = variants
        self.spaces: dict[int, tuple] = {}
        self.shapes: dict[tuple[int, bool], tuple] = {}


class _Launched:
    """What the launches of one call did: per launch its reduction seeds and whether it ran; whether any
    code that ran can have recorded a panic; how many launches the call has made (a launch's number,
    which a panic it records carries, so that only later launches stop on it)."""

    def __init__(self, launches: int) -> None:
        self.seeds: list[dict] = [_NONE] * launches
        self.ran = [False] * launches
        self.records_panics = False
        self.count = 0
        # the verification of the last launch's index lists, which the host runs after the call's wait
        # only when what came back asks for it (`DeviceKernel._verification_needed`)
        self.deferred_verification: _PendingVerification | None = None

    def number(self) -> int:
        """The number of the next launch of the call: 1, 2, ... (a u32 the device compares; never 0, which
        the device reads as no number)."""
        self.count += 1
        return (self.count - 1) % 0xFFFFFFFF + 1


class DeviceKernel:
    """One translated kernel on one GPU backend: `kernel(*args)` runs it like the Rust function.

    Host arrays travel as the transfer plan says and the call waits for the device; a call whose
    arrays are all device arrays, that returns nothing and whose launched code cannot record a panic is
    asynchronous, like a cupy launch. Whatever the host must read after the launches (reduction results,
    the panic record) is there after one wait: the results written by the device into host memory,
    the record with one copy (see `readback.py`).
    """

    def __init__(self, backend: DeviceBackend, name: str, entry: dict, source: str, source_name: str) -> None:
        self.backend = backend
        self.name = name
        self.entry = entry
        self.source = source
        self.plan = CallPlan(name, entry)
        self.binary = backend.compile(source, source_name, entry["fast_math"])
        self._module = backend.load(self.binary)
        self._functions = [{v.symbol: backend.function(self._module, v.symbol)
                            for v in lp.variants + ([lp.private[0]] if lp.private else [])
                            + ([lp.proven] if lp.proven else [])}
                           for lp in self.plan.launches]
        self._verifiers = [backend.function(self._module, lp.verify.symbol) if lp.verify else None
                           for lp in self.plan.launches]
        self._covering = [Covering(backend.function(self._module, lp.covering[0]), *lp.covering[1:4], lp.covering[0],
                                   lp.covering[4]) if lp.covering else None for lp in self.plan.launches]
        self._proven = [Covering(self._functions[k][lp.proven.symbol], *lp.proven_shape, lp.proven.symbol,
                                 lp.proven.records_panics) if lp.proven else None
                        for k, lp in enumerate(self.plan.launches)]
        self._vector = [backend.function(self._module, lp.vector[0]) if lp.vector else None
                        for lp in self.plan.launches]
        self._l2_adds = [backend.function(self._module, lp.l2_adds[0]) if lp.l2_adds else None
                         for lp in self.plan.launches]
        self._l2_bytes = backend.l2_adds_bytes()
        self._ordinal = backend.device_ordinal()
        self.last_transfers: list[Transfer] = []
        self.last_variants: list[str] = []  # the entry point each launch of the last call ran
        self._marks: dict[str, MarkArray] = {}
        # Kernels that check something on the device report a panic through the module's readback area.
        self._panic_sites = {p["site"]: p for p in entry.get("panics", ())}
        reduces = any(lp.reduces for lp in self.plan.launches)
        self._max_blocks = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR if reduces else None
        self._one_wave = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR
        # An index-list verification runs as one full wave too: where the loop found its list in order,
        # each of its blocks returns at once, and a grid the size of the loop's would take longer to retire.
        self._verify_blocks = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR \
            if any(lp.verify for lp in self.plan.launches) else None
        self._readback = Readback(backend, self._module, entry, self._max_blocks or 0)
        # what a repeat call returns, read straight from the results where it is one or a tuple of them
        self._returned = self._readback.returned_reader(entry.get("returns"))
        self._call = threading.Lock()  # one call at a time uses the readback area and the partials
        self._decided: dict[tuple, _Decided] = {}
        # calls may repeat (see `_repeat`) where no launch runs in a host loop or checks index lists it has
        # no proven entry point for, and each one's arguments are pointers, lengths, scalars, loop bounds,
        # reductions whose seeds the repeat path computes and the list checks' arguments the proven entry
        # point does not read; the binding is compiled at the first call that may repeat
        self._repeatable = all(lp.repeat_values is not None and lp.repeat_seeds is not None
                               and (lp.proven is not None or (lp.verify is None and not lp.index_lists))
                               for lp in self.plan.launches) and self.plan.schedule is None
        self._repeat_scratch = [{**pointers, **lp.unchecked_lists}
                                for pointers, lp in zip(self._readback.pointers, self.plan.launches)]
        self._repeat_binding = None
        self.repeats = 0  # the calls that took the repeat path

    def __call__(self, *args, **kwargs):
        if self._repeatable and not kwargs:
            repeated = self._repeat(args)
            if repeated is not None:
                return repeated[0]
        bound = self.plan.bind(args, kwargs, allow_device=True)
        bound.env.read_element = lambda name, index, source: self._read_element(bound, name, index, source)
        variants = self._check_on_host(bound)
        transfers: list[Transfer] = []
        device_ptrs, staged = self._stage_arrays(bound, transfers)
        self.last_transfers = transfers
        with self._call:
            self._readback.clear_done()
            launched = self._launch_all(bound, variants, device_ptrs)
            if staged or launched.records_panics or self._readback.has_results:
                self._finish(bound, launched)
        self._download_outputs(staged, transfers)
        return None if self.plan.result is None else self.plan.result(bound.env)

    def _repeat(self, args: tuple) -> tuple | None:
        """Run a call the host has decided before, if this is one: (what it returns,), or None where it did
        not.

        A call of the general path binds its arguments into dictionaries, evaluates the preamble, checks what
        the host checks, stages its arrays and walks its launches: 6 µs of Python on a fast host, twice a raw
        cupy launch. A call with the decision key of an earlier one (the same lengths and integer parameters,
        `CallPlan.decision_key`) whose arguments are all device arrays and plain scalars (and numpy arrays for
        the arrays passed by value), checked as the general path checks them (`compile_repeat_binding`), differs
        from it only in the pointers and the scalars' values: where every launch of the earlier call ran code
        that cannot record a panic, this one packs and launches the same entry points on the same grids, waits
        for the reductions' results where there are any, and returns what the general path would. Anything
        else takes the general path, which decides for the next call."""
        bind = self._repeat_binding
        if bind is None:
            device_type = self.backend.device_array_type()
            if device_type is None:
                return None
            backend, ordinal = self.backend, self._ordinal
            bind = compile_repeat_binding(self.plan, device_type, c_contiguous_of(device_type), ordinal,
                                          lambda verified: verified.device_pointer(backend, ordinal))
            if bind is None:
                self._repeatable = False
                return None
            self._repeat_binding = bind
        bound = bind(args)
        decided = self._decided.get(bound[3]) if bound is not None else None
        if decided is None:
            return None
        ptrs, lengths, scalars, _ = bound
        launches = []
        for index, lp in enumerate(self.plan.launches):
            variant, space = decided.variants[index], decided.spaces.get(index)
            if variant is None or variant.records_panics or space is None or not all(space[1].values()):
                return None
            proven = variant is lp.proven  # the host proved the checks through its index lists
            if lp.index_lists and not proven:
                return None
            vector = self._vector[index] if variant is lp.variants[0] else None
            found = decided.shapes.get((index, vector is not None and lp.vector_fits(space[0], ptrs)))
            seeds = lp.repeat_seeds(ptrs, lengths)
            covering = self._proven[index] if proven else self._covering[index]
            if found is None or seeds is None or (found[3] == "covering" and covering.records_panics):
                return None
            launches.append((index, lp, variant, space, found, seeds, covering))
        with self._call:
            self._readback.clear_done()
            self.last_variants = []
            for number, (index, lp, variant, (starts, counts), (function, grid, block, shape), seeds, covering) \
                    in enumerate(launches, 1):
                self._pack_and_launch(lp, function, grid, block,
                                      lp.repeat_values(ptrs, lengths, scalars, starts, counts, number, seeds,
                                                       self._repeat_scratch[index]))
                self.last_variants.append(covering.symbol if shape == "covering"
                                          else _shaped_symbol(lp, shape) or variant.symbol)
            reductions = returned = None
            if self._readback.has_results:  # the launches' last blocks write them into host memory
                self._on_device(lambda: self._readback.wait(True))
                if self._returned is not None:
                    returned = (self._returned(),)
                else:
                    reductions = self._readback.results([launch[5] for launch in launches],
                                                        [True] * len(launches))
        self.last_transfers = []
        self.repeats += 1
        if returned is not None:
            return returned
        if self.plan.result is None:
            return (None,)
        return (self.plan.result(Environment(scalars, lengths, None, reductions)),)

    def _check_on_host(self, bound: BoundArgs) -> list:
        """Everything the host decides before any device work, launch after launch (see `_check_launch`),
        but for the launches whose checks read the values of a host loop around them: the host checks
        those in every iteration of the loop. The variant of each launch checked here (None for those)."""
        key = self.plan.decision_key(bound) if self.plan.decision_key is not None else None
        decided = self._decided.get(key) if key is not None else None
        if decided is None:
            decided = _Decided([None if lp.per_step else self._check_launch(index, bound)
                                for index, lp in enumerate(self.plan.launches)])
            if key is not None:
                if len(self._decided) >= DECISIONS_KEPT:
                    self._decided.clear()
                self._decided[key] = decided
        bound.decided = decided if key is not None else None
        return decided.variants

    def _check_launch(self, index: int, bound: BoundArgs):
        """The strides and the bounds of the accesses every iteration makes (raising Rust's panic), the
        positions the index lists are read at; returns the variant of launch `index` that runs."""
        lp = self.plan.launches[index]
        lp.check_strides(bound.env, self.name)
        failure = lp.check_bounds(bound.env)
        if failure is not None:
            raise KernelPanic(*failure, self.name)
        if lp.index_lists:
            self._check_list_positions(lp, bound)
        variant = lp.variant(bound.env)
        if variant is lp.variants[0] and lp.proven is not None and lp.lists_proven(bound) \
                and self._proven[index].geometry(lp.iteration_space(bound.env)[1]):
            return lp.proven  # one thread per iteration: only where a grid covers the loop
        return variant

    def _launch_all(self, bound: BoundArgs, variants: list, device_ptrs: dict[str, int]):
        """Every launch in the schedule's order (a host loop runs its body once per iteration, the data
        staying on the device), each followed by its index lists' verification: each launch's reduction
        seeds, whether it ran (an empty range does not), and whether any code that ran can record a panic."""
        launched = _Launched(len(self.plan.launches))
        self.last_variants = []
        steps = self.plan.schedule if self.plan.schedule is not None else range(len(self.plan.launches))
        try:
            self._run_steps(steps, bound, variants, device_ptrs, launched)
        except KernelPanic:
            # a host check of a later iteration failed: a panic the device recorded earlier came first
            self._finish(bound, launched, with_results=False)
            raise
        return launched

    def _run_steps(self, steps, bound: BoundArgs, variants: list, device_ptrs: dict[str, int],
                   launched: _Launched) -> None:
        for step in steps:
            if isinstance(step, HostLoopPlan):
                for value in step.values(bound.env):
                    step.enter(bound.env, value)
                    self._run_steps(step.body, bound, variants, device_ptrs, launched)
                continue
            lp = self.plan.launches[step]
            variant = self._check_launch(step, bound) if lp.per_step else variants[step]
            checks_lists = variant is not lp.proven
            # the covering entry point runs the first variant's body; the proven one always covers the loop
            covering = self._proven[step] if not checks_lists \
                else self._covering[step] if variant is lp.variants[0] else None
            # the vector and L2-adds entry points run the first variant's body too
            first = variant is lp.variants[0]
            seeds, ran, shape = self._launch(step, lp, self._functions[step][variant.symbol], covering,
                                             self._vector[step] if first else None, bound, device_ptrs, launched,
                                             variant.one_wave, checks_lists, self._l2_adds[step] if first else None)
            launched.seeds[step] = seeds
            launched.ran[step] |= ran
            covered = shape == "covering"
            launched.records_panics |= ran and (covering.records_panics if covered else variant.records_panics
                                                or (lp.verify is not None and checks_lists))
            self.last_variants.append(covering.symbol if covered else _shaped_symbol(lp, shape) or variant.symbol)

    def _finish(self, bound: BoundArgs, launched: _Launched, with_results: bool = True) -> None:
        """Wait for the launches, with the copy of the panic record and the order flags where they can
        have been written (the reductions' results need none, see `readback.py`), run the last launch's
        index-list verification if what came back asks for it, raise the panic the device recorded, and
        set the reduced values (`with_results`: not after a host check stopped the call, when some
        launches never took their seeds)."""
        with_record = launched.records_panics and self._readback.checks
        pending = launched.deferred_verification
        if with_record or pending is not None:
            self._on_device(lambda: self._readback.fetch(with_record))
            self._on_device(self.backend.synchronize)
        else:
            self._on_device(lambda: self._readback.wait(launched.ran[-1]))
        panic = self._readback.panic() if with_record else None
        if pending is not None and self._verification_needed(panic, pending):
            self._verify_index_lists(pending.lp, self._verifiers[pending.index], bound, pending.device_ptrs,
                                     pending.starts, pending.counts, pending.lists, pending.number)
            self._on_device(lambda: self._readback.fetch(True))
            self._on_device(self.backend.synchronize)
            panic = self._readback.panic()
        if with_record:
            self._raise_device_panic(bound, *panic)
        if with_results:
            bound.env.reductions.update(self._readback.results(launched.seeds, launched.ran))

    def _verification_needed(self, panic: tuple | None, pending: _PendingVerification) -> bool:
        """Whether the verification after the call's last launch, which no other launch follows, has work:
        only when the loop found a list out of order (its flag in the readback area holds this call's
        stamp) or a list value outside the windows of its reads (the record, `panic`, names that site).
        Otherwise, as for RAJAPerf's zone lists, the call saves a launch and the wait for it."""
        if panic is not None and panic[0] and self._panic_sites[panic[0]]["kind"] == "index list reads":
            return True
        return any(self._readback.flag(pending.index, target) == pending.lists["stamp", target]
                   for target in pending.lp.verify.targets)

    def _download_outputs(self, staged: dict, transfers: list[Transfer]) -> None:
        for name, (arg, buffer) in staged.items():
            if self.plan.by_name[name].transfer in ("out", "inout"):
                started = time.perf_counter()
                self.backend.download(arg.host, buffer.ptr)
                transfers.append(Transfer(name, "d2h", arg.nbytes, time.perf_counter() - started))

    def _raise_device_panic(self, bound: BoundArgs, site: int, index: int, length: int) -> None:
        """Raise the panic the device recorded, if any (nothing has been copied back yet), after queueing
        the record's reset for the next call."""
        if site == 0:
            return
        self._readback.reset_panic()
        info = self._panic_sites[site]
        if info["kind"] == "index list":
            raise self._repeat_error(info, index, length, bound)
        if info["kind"] == "index list reads":  # the verification after the loop replaces it by a read's panic
            raise RuntimeError(f"internal error in kernel `{self.name}`: the list value {index} lies outside a "
                               f"window of its reads at {info['source']}, but no read is out of bounds")
        raise KernelPanic(panic_message(info["kind"], index, length), info["source"], self.name)

    def _check_list_positions(self, lp: LaunchPlan, bound: BoundArgs) -> None:
        """The positions an index list is read at lie inside it, as Rust's own indexing requires."""
        starts, counts = lp.iteration_space(bound.env)
        if not all(counts.values()):
            return
        for name, first, end, _, _, _, source in lp.index_list_ranges(bound.env, starts, counts):
            length = bound.arrays[name].count
            if first < 0 or end > length:
                bad = first % (1 << 64) if first < 0 else end - 1
                raise KernelPanic(f"index out of bounds: the len is {length} but the index is {bad}", source,
                                  self.name)

    def _list_scratch(self, index: int, lp: LaunchPlan, bound: BoundArgs) -> dict:
        """What this call's checks of the index lists of launch `index` take: for each slice written through
        a list ("marks" | "unordered" | "stamp", target) its mark array, its order flag (a word of the
        readback area, so that the call's one copy brings it back) and its stamp, and for each group of
        reads through a list ("window_low" | "window_width", k) its window."""
        scratch = {}
        for target in lp.verify.targets:
            marks = self._marks.setdefault(target, MarkArray(self.backend))
            scratch["marks", target], scratch["stamp", target] = marks.next(bound.arrays[target].count)
            if scratch["stamp", target] == 1:
                self._readback.zero_flags()
            scratch["unordered", target] = self._readback.flag_address(index, target)
        for k, (low, width) in enumerate(lp.read_windows(bound.env)):
            scratch["window_low", k], scratch["window_width", k] = low, width
        return scratch

    def _verify_index_lists(self, lp: LaunchPlan, function, bound: BoundArgs, device_ptrs: dict[str, int],
                            starts: dict[str, int], counts: dict[str, int], scratch: dict, number: int) -> None:
        """Launch, after the loop (same stream, under the loop's number `number` in the call), the
        verification of its index lists: it states the panic of a read through a list the loop found out of
        bounds, and, for a list the loop found out of order, records an index-list panic for an index two
        iterations wrote at."""
        verify = lp.verify
        grid, block = launch_geometry(counts, self.backend.block_size, self._verify_blocks)
        with verify.lock:
            struct.pack_into(verify.format, verify.buffer, 0,
                             *verify.values(bound, device_ptrs, starts, counts, _NONE, scratch, False, number))
            try:
                self.backend.launch_packed(function, grid, block, verify.pointers_address)
            except LaunchError as e:
                raise LaunchError(f"launching the index-list verification of kernel `{self.name}` (loop at "
                                  f"{lp.source}) failed: {e}") from e

    def _repeat_error(self, info: dict, value: int, position: int, bound: BoundArgs) -> RaceError:
        """The error for an index list whose value `value` the verification met twice (the second time at
        `position`): the first two positions holding it, read from the list (unchanged: the call only
        reads it)."""
        import numpy as np

        lp = self.plan.launches[info["launch"]]
        starts, counts = lp.iteration_space(bound.env)
        name, first, end, scale, offset, target, source = lp.index_list_ranges(bound.env, starts, counts)[info["list"]]
        values = self._list_values(bound.arrays[name], first, end, self.plan.by_name[name].dtype)
        written = values.astype(np.uint64) * np.uint64(scale % (1 << 64)) + np.uint64(offset % (1 << 64))
        where = [int(p) + first for p in np.flatnonzero(written == np.uint64(value))[:2]]
        positions = f"{where[0]} and {where[1]}" if len(where) == 2 else f"{position} and another one"
        return RaceError(f"kernel `{self.name}`: index list `{name}` holds the same value at positions "
                         f"{positions}, so two iterations of the loop at {source} may write "
                         f"`{target}[{value}]`; nothing was copied back to the host, and what the loop wrote "
                         f"to device arrays is unspecified")

    def _list_values(self, arg, first: int, end: int, dtype):
        import numpy as np

        if arg.host is not None:
            return arg.host[first:end]
        values = np.empty(end - first, dtype=dtype)
        self.backend.download(values, arg.ptr + first * dtype.itemsize)
        return values

    def synchronize(self) -> None:
        """Wait for this kernel's launches; raise LaunchError if one of them failed."""
        self._on_device(self.backend.synchronize)

    def _stage_arrays(self, bound: BoundArgs, transfers: list[Transfer]):
        """Device addresses for every array: device arrays as they are, host arrays through a device
        buffer that is uploaded unless the plan says the kernel overwrites it entirely; the bytes of
        the arrays passed by value, which need no device memory."""
        device_ptrs: dict[str, int] = {}
        staged = {}
        for name, arg in bound.arrays.items():
            if self.plan.by_name[name].transfer == "value":
                bound.structs[name] = self._array_bytes(arg, transfers)
                continue
            if arg.verified is not None:  # its own device copy, made at its first call here
                device_ptrs[name] = arg.verified.device_pointer(self.backend, self._ordinal)
                continue
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

    def _array_bytes(self, arg, transfers: list[Transfer]) -> bytes:
        """The contents of an array passed by value, for the launch arguments: a device array is read
        back first (a synchronous copy, logged as a transfer)."""
        if arg.host is not None:
            return arg.host.tobytes()
        import numpy as np

        host = np.empty(arg.nbytes, dtype=np.uint8)
        started = time.perf_counter()
        self.backend.download(host, arg.ptr)
        transfers.append(Transfer(arg.name, "d2h", arg.nbytes, time.perf_counter() - started))
        return host.tobytes()

    def _launch(self, index: int, lp: LaunchPlan, function, covering: Covering | None, vector, bound: BoundArgs,
                device_ptrs: dict[str, int], launched: _Launched, one_wave: bool = False,
                checks_lists: bool = True, l2_adds=None) -> tuple[dict, bool, str | None]:
        """Launch one loop as the call's next launch (`launched` numbers them, and says whether code launched
        before it can have recorded a panic: then it checks the record at entry): its `l2_adds` entry point
        where one is given and the loop's data fit in the L2, else its `vector` entry point where one is
        given and its accesses are aligned, else its covering entry point where one is given and a grid
        covers the nest, else `function`; then the verification of its index lists, or, for the call's last
        launch, leave that to `_finish`; none without `checks_lists` (the proven entry point, whose lists
        the host verified). `one_wave`: `function` runs on a grid of one wave. Returns the reduction seeds,
        whether it ran, and which other entry point ran ("l2_adds", "covering", "vector" or None)."""
        decided = bound.decided
        space = decided.spaces.get(index) if decided is not None else None
        if space is None:
            space = lp.iteration_space(bound.env)
            if decided is not None:
                decided.spaces[index] = space
        starts, counts = space
        if not all(counts.values()):  # then the results are the seeds
            return (lp.seed_values(bound.env) if lp.reduces else _NONE), False, None
        seeds = lp.launch_seeds(bound, device_ptrs) if lp.reduces else _NONE
        aligned = vector is not None and lp.vector_fits(starts, device_ptrs)
        found = decided.shapes.get((index, aligned)) if decided is not None else None
        if found is None:
            found = self._shape(lp, function, covering, vector if aligned else None, counts, one_wave, checks_lists,
                                l2_adds)
            if decided is not None:
                decided.shapes[index, aligned] = found
        function, grid, block, shape = found
        scratch = self._readback.pointers[index]
        checks_lists = checks_lists and lp.verify is not None
        if checks_lists:
            lists = self._list_scratch(index, lp, bound)
            scratch = {**scratch, **lists}
        elif lp.verify is not None:
            scratch = {**scratch, **lp.unchecked_lists}
        number = launched.number()
        self._pack_and_launch(lp, function, grid, block,
                              lp.values(bound, device_ptrs, starts, counts, seeds, scratch, launched.records_panics,
                                        number))
        if checks_lists and lp.verify.last:
            launched.deferred_verification = _PendingVerification(lp, index, device_ptrs, starts, counts, lists, number)
        elif checks_lists:
            self._verify_index_lists(lp, self._verifiers[index], bound, device_ptrs, starts, counts, lists, number)
        return seeds, True, shape

    def _pack_and_launch(self, lp: LaunchPlan, function, grid, block, values: tuple) -> None:
        """Pack a launch's arguments into its buffer and launch `function` on them."""
        with lp.lock:
            struct.pack_into(lp.format, lp.buffer, 0, *values)
            try:
                self.backend.launch_packed(function, grid, block, lp.pointers_address)
            except LaunchError as e:
                raise LaunchError(f"launching kernel `{self.name}` (loop at {lp.source}) failed: {e}") from e

    def _shape(self, lp: LaunchPlan, function, covering: Covering | None, vector, counts: dict[str, int],
               one_wave: bool, checks_lists: bool, l2_adds=None) -> tuple:
        """(entry point, grid, block, which other entry point) of a launch of `counts` iterations: its
        `l2_adds` entry point where given and the loop's data fit in the L2, else its `vector` entry point
        where given (its accesses aligned; a nest's, where a grid covers its groups), else the covering one
        where a grid covers the nest, else `function`."""
        limit = self._one_wave if one_wave else self._max_blocks if lp.reduces else None
        if l2_adds is not None and lp.l2_adds_fit(counts, self._l2_bytes):  # one thread per iteration
            return l2_adds, *launch_geometry(counts, self.backend.block_size, limit), "l2_adds"
        if vector is not None:  # one thread per group of iterations: 16-byte accesses move a stream fastest
            groups = {**counts, "x": -(-counts["x"] // lp.vector[1])}
            if lp.vector_count_limit is None:
                return vector, *launch_geometry(groups, self.backend.block_size, limit), "vector"
            covered = counts["x"] < lp.vector_count_limit and covering_geometry(
                (groups["x"], groups.get("y", 1), groups.get("z", 1)), len(groups), None, lp.vector_count_limit,
                (MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ))
            if covered:  # a nest: one thread per group of a row, on a grid that covers them
                return vector, *covered, "vector"
        covered = covering is not None and covering.geometry(counts)
        if covered:  # one thread per iteration, on a grid that covers the nest
            return covering.function, *covered, "covering"
        if not checks_lists:  # `_check_launch` chose the proven entry point for a grid that covers the loop
            raise RuntimeError(f"internal error in kernel `{self.name}`: no grid covers the loop at {lp.source} "
                               f"for its proven entry point")
        return function, *launch_geometry(counts, self.backend.block_size, limit), None

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
