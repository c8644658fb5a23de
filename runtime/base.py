"""What every backend shares: binding a call's arguments to a kernel's ABI, the checks that run before
any device work, and, for GPU backends, the transfer plan and the launches.

A GPU backend implements `DeviceBackend` (compile, load, allocate, copy, launch, synchronize); the
`DeviceKernel` here drives it identically for CUDA and HIP.
"""
from __future__ import annotations

import struct
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, NamedTuple

from rs2gpu.ir.abi import (BLOCK_SIZE, RESIDENT_THREADS_PER_MULTIPROCESSOR, CoveringGrid, EntryKind, EntryPoint,
                           KernelABI, ParamKind, Transfer as ParamTransfer)
from rs2gpu.runtime.callplan import (BoundArgs, CallPlan, Conditions, DeviceArrays, LaunchPlan, compile_repeat_binding,
                                     cupy_arrays, cupy_ndarray, torch_arrays, torch_tensor, verified_lists)
from rs2gpu.runtime.covering import covering_geometry
from rs2gpu.runtime.errors import KernelPanic, LaunchError
from rs2gpu.runtime.hostchecks import check_launch, launch_order, repeat_error
from rs2gpu.runtime.hostexpr import Environment
from rs2gpu.runtime.readback import Readback
from rs2gpu.runtime.streams import take_stream

MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65535
# A launch with reductions gets at most this many blocks per multiprocessor: the threads it holds at once,
# so the grid is one full wave and each block's threads stride over the rest; the blocks' partials stay few
# for the last block to sum. Fewer iterations than the device holds threads leave it partly idle.
REDUCTION_BLOCKS_PER_MULTIPROCESSOR = RESIDENT_THREADS_PER_MULTIPROCESSOR // BLOCK_SIZE
_NONE: dict = {}  # shared empty mapping for launches without reductions (never written)


@dataclass(frozen=True)
class Transfer:
    """One host↔device copy made by a call: the transfer log tests and benchmarks read."""

    param: str
    direction: str  # "h2d" | "d2h"
    nbytes: int
    seconds: float


def panic_message(kind: str, index: int, length: int) -> str:
    """Rust's own panic message for a check that failed on the device."""
    if kind == "bounds":
        return f"index out of bounds: the len is {length} but the index is {index}"
    if kind == "div":
        return "attempt to divide by zero" if index == 0 else "attempt to divide with overflow"
    return ("attempt to calculate the remainder with a divisor of zero" if index == 0
            else "attempt to calculate the remainder with overflow")


def launch_geometry(counts: dict[str, int],
                    max_blocks: int | None = None) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Grid and block for an iteration space of one to three axes. Blocks always hold `BLOCK_SIZE`
    threads (the block reductions rely on it): the innermost loop takes x, at least a warp wide and at
    most its own extent rounded up to a power of two; the outer loops share the rest. Each axis's grid
    is capped at the hardware limit, and the whole grid at `max_blocks` when given (the outer axes give
    way first); the kernels stride over what does not fit."""
    cx, cy, cz = counts["x"], counts.get("y", 1), counts.get("z", 1)
    if "y" not in counts:
        bx, by, bz = BLOCK_SIZE, 1, 1
    else:
        bx = min(BLOCK_SIZE, max(32, _next_pow2(cx)))
        by = BLOCK_SIZE // bx if "z" not in counts else min(BLOCK_SIZE // bx, _next_pow2(cy))
        bz = BLOCK_SIZE // (bx * by)
    gx, gy, gz = min(-(-cx // bx), MAX_GRID_X), min(-(-cy // by), MAX_GRID_YZ), min(-(-cz // bz), MAX_GRID_YZ)
    if max_blocks is not None:
        gz = min(gz, max(1, max_blocks // (gx * gy)))
        gy = min(gy, max(1, max_blocks // (gx * gz)))
        gx = min(gx, max(1, max_blocks // (gy * gz)))
    return (gx, gy, gz), (bx, by, bz)


def covering_launch(grid: CoveringGrid, counts: dict[str, int]):
    """(grid, block) of an entry point that runs one thread per iteration (or per tile of iterations) on a
    grid that covers `counts` (after the grid's lead of idle threads along x), or None when no grid does."""
    extents = (counts["x"] + grid.lead, counts.get("y", 1), counts.get("z", 1))
    if any(e >= grid.count_limit for e in extents):
        return None
    threads = tuple(-(-e // t) for e, t in zip(extents, grid.tile))
    return covering_geometry(threads, len(counts), grid.block, grid.count_limit, (MAX_GRID_X, MAX_GRID_YZ, MAX_GRID_YZ))


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


class DeviceBackend(ABC):
    """One GPU vendor's runtime: the only vendor-specific code on the launch path."""

    name: str

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
    def on_stream(self, handle: int):
        """A context in which the backend's stream is the stream `handle` (see `runtime/streams.py`)."""

    # whether `capture` makes graphs this backend can `replay`
    graphs = False

    def capture(self, launches: Callable[[], None]):
        """The launches `launches()` queues, captured into a graph with the arguments they are given, without
        running them; `replay` queues them all at once on the stream. Only backends with `graphs` have one."""
        raise NotImplementedError

    def replay(self, graph) -> None:
        """Queue the launches of a graph `capture` made on the stream."""
        raise NotImplementedError

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
        """The type of the device arrays a call without slices repeats with (see `DeviceKernel._repeat`):
        cupy's, once the caller has imported cupy."""
        return cupy_ndarray()

    def device_arrays(self, array_type: type) -> DeviceArrays | None:
        """How a repeat call reads device arrays of `array_type` (see `DeviceKernel._repeat`): cupy's arrays
        and torch's tensors, of the libraries the caller has imported; None for any other type."""
        if array_type is not None and array_type is cupy_ndarray():
            return cupy_arrays(array_type)
        if array_type is not None and array_type is torch_tensor():
            return torch_arrays(array_type)
        return None


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
GRAPHS_KEPT = 16     # the graphs a kernel keeps, for as many different arguments of repeat calls


class _Decided:
    """What the host decided for the calls of one decision key (`CallPlan.decision_key`): the conditions
    it found for each launch (None for a launch it checks in every step of a host loop), each launch's first
    indices and counts, and per launch and alignment of its slices the entry point, its function and the
    grid it runs on. A call with the same key passes the same host checks (those that failed stored
    nothing)."""

    __slots__ = ("conditions", "spaces", "shapes")

    def __init__(self, conditions: list[Conditions | None]) -> None:
        self.conditions = conditions
        self.spaces: dict[int, tuple] = {}
        self.shapes: dict[tuple[int, bool], tuple] = {}


# the entry points that run a launch of no iteration, whose shape nothing decides
BODY_KINDS = (EntryKind.PRIVATE, EntryKind.PROVEN, EntryKind.GENERAL, EntryKind.CHECKED)


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

    def __init__(self, backend: DeviceBackend, name: str, entry: KernelABI, source: str, source_name: str) -> None:
        self.backend = backend
        self.name = name
        self.entry = entry
        self.source = source
        self.plan = CallPlan(name, entry)
        self.binary = backend.compile(source, source_name, entry.fast_math)
        self._module = backend.load(self.binary)
        self._functions = [{e.symbol: backend.function(self._module, e.symbol) for e in lp.entry_points}
                           for lp in self.plan.launches]
        self._verifiers = [backend.function(self._module, lp.verify.symbol) if lp.verify else None
                           for lp in self.plan.launches]
        self._l2_bytes = backend.l2_adds_bytes()
        self._resident_threads = backend.multiprocessors() * RESIDENT_THREADS_PER_MULTIPROCESSOR
        self._ordinal = backend.device_ordinal()
        self.last_transfers: list[Transfer] = []
        self.last_variants: list[str] = []  # the entry point each launch of the last call ran
        self._marks: dict[str, MarkArray] = {}
        # Kernels that check something on the device report a panic through the module's readback area.
        self._panic_sites = {p.site: p for p in entry.panics}
        reduces = any(lp.reduces for lp in self.plan.launches)
        self._max_blocks = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR if reduces else None
        self._one_wave = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR
        # An index-list verification runs as one full wave too: where the loop found its list in order,
        # each of its blocks returns at once, and a grid the size of the loop's would take longer to retire.
        self._verify_blocks = backend.multiprocessors() * REDUCTION_BLOCKS_PER_MULTIPROCESSOR \
            if any(lp.verify for lp in self.plan.launches) else None
        self._readback = Readback(backend, self._module, entry, self._max_blocks or 0)
        # what a repeat call returns, read straight from the results where it is one or a tuple of them
        self._returned = self._readback.returned_reader(entry.returns)
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
        self._repeat_bindings: dict[type, Callable | None] = {}  # by the type of the arrays a call passes
        # the position of the first slice parameter (not a verified list): its array's library chooses the binding
        lists = set(verified_lists(entry))
        self._first_slice = next((p.index for p in self.plan.params
                                  if p.kind == ParamKind.SLICE and p.dtype is not None and p.name not in lists), None)
        self.repeats = 0  # the calls that took the repeat path
        # a repeat call of several launches queues them as one graph, captured at the first call with its
        # pointers, lengths and scalars, where the backend has graphs (`graphs = False`: one by one)
        self.graphs = backend.graphs
        self._graphs: dict[tuple, object] = {}
        self.last_graph = False  # whether the last call replayed a graph

    def __call__(self, *args, **kwargs):
        if kwargs:
            handle = take_stream(self.plan.by_name, kwargs)
            if handle is not None:
                with self.backend.on_stream(handle):
                    return self(*args, **kwargs)
        if self._repeatable and not kwargs:
            repeated = self._repeat(args)
            if repeated is not None:
                return repeated[0]
        bound = self.plan.bind(args, kwargs, allow_device=True)
        bound.env.read_element = lambda name, index, source: self._read_element(bound, name, index, source)
        conditions = self._check_on_host(bound)
        transfers: list[Transfer] = []
        device_ptrs, staged = self._stage_arrays(bound, transfers)
        self.last_transfers = transfers
        with self._call:
            self._readback.clear_done()
            launched = self._launch_all(bound, conditions, device_ptrs)
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
        kind = type(args[self._first_slice]) if self._first_slice is not None and len(args) > self._first_slice \
            else self.backend.device_array_type()
        bind = self._repeat_bindings.get(kind, self)
        if bind is self:  # the first call with this library's arrays: compile its binding
            arrays = self.backend.device_arrays(kind)
            backend, ordinal = self.backend, self._ordinal
            bind = self._repeat_bindings[kind] = None if arrays is None else compile_repeat_binding(
                self.plan, arrays, ordinal, lambda verified: verified.device_pointer(backend, ordinal))
        if bind is None:
            return None
        bound = bind(args)
        decided = self._decided.get(bound[3]) if bound is not None else None
        if decided is None:
            return None
        ptrs, lengths, scalars, _ = bound
        launches = []
        for index, lp in enumerate(self.plan.launches):
            space = decided.spaces.get(index)
            if decided.conditions[index] is None or space is None or not all(space[1].values()):
                return None
            found = decided.shapes.get((index, lp.vector is not None and lp.vector_fits(space[0], ptrs)))
            seeds = lp.repeat_seeds(ptrs, lengths)
            if found is None or seeds is None or found[0].records_panics:
                return None
            if lp.index_lists and found[0].kind != EntryKind.PROVEN:
                return None  # only the host's proof from verified lists leaves their checks out
            launches.append((index, lp, space, found, seeds))
        def launch_all() -> None:
            for number, (index, lp, (starts, counts), (entry, function, grid, block), seeds) in enumerate(launches, 1):
                self._pack_and_launch(lp, function, grid, block,
                                      lp.repeat_values(ptrs, lengths, scalars, starts, counts, number, seeds,
                                                       self._repeat_scratch[index]))
        with self._call:
            self._readback.clear_done()
            self.last_variants = [launch[3][0].symbol for launch in launches]
            graph = self._graph((*ptrs.values(), *lengths.values(), *scalars.values()), launch_all) \
                if self.graphs and len(launches) > 1 else None
            self.last_graph = graph is not None
            if graph is None:
                launch_all()
            else:
                self._on_device(lambda: self.backend.replay(graph))
            reductions = returned = None
            if self._readback.has_results:  # the launches' last blocks write them into host memory
                self._on_device(lambda: self._readback.wait(True))
                if self._returned is not None:
                    returned = (self._returned(),)
                else:
                    reductions = self._readback.results([launch[4] for launch in launches],
                                                        [True] * len(launches))
        self.last_transfers = []
        self.repeats += 1
        if returned is not None:
            return returned
        if self.plan.result is None:
            return (None,)
        return (self.plan.result(Environment(scalars, lengths, None, reductions)),)

    def _graph(self, key: tuple, launch_all: Callable[[], None]):
        """The graph of a repeat call's launches for its arguments `key` (every value its launches are
        given follows from them, the reductions' scratch and results being the kernel's own), captured from
        `launch_all` at the first call with them."""
        graph = self._graphs.get(key)
        if graph is None:
            if len(self._graphs) >= GRAPHS_KEPT:
                self._graphs.clear()
            try:
                graph = self._graphs[key] = self.backend.capture(launch_all)
            except LaunchError as e:
                raise LaunchError(f"capturing the launches of kernel `{self.name}` failed: {e}") from e
        return graph

    def _check_on_host(self, bound: BoundArgs) -> list[Conditions | None]:
        """Everything the host decides before any device work, launch after launch (see `_check_launch`),
        but for the launches whose checks read the values of a host loop around them: the host checks
        those in every iteration of the loop. The conditions found for each launch checked here (None for
        those)."""
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
        return decided.conditions

    def _check_launch(self, index: int, bound: BoundArgs) -> Conditions:
        """The strides and the bounds of the accesses every iteration makes (raising Rust's panic), the
        positions the index lists are read at; returns what decides the entry point of launch `index`."""
        lp = self.plan.launches[index]
        check_launch(lp, bound)
        return lp.conditions(bound)

    def _launch_all(self, bound: BoundArgs, conditions: list[Conditions | None], device_ptrs: dict[str, int]):
        """Every launch in the schedule's order (a host loop runs its body once per iteration, the data
        staying on the device), each followed by its index lists' verification: each launch's reduction
        seeds, whether it ran (an empty range does not), and whether any code that ran can record a panic."""
        launched = _Launched(len(self.plan.launches))
        self.last_variants = []
        self.last_graph = False
        try:
            for step in launch_order(self.plan, bound.env):
                self._run_step(step, bound, conditions, device_ptrs, launched)
        except KernelPanic:
            # a host check of a later iteration failed: a panic the device recorded earlier came first
            self._finish(bound, launched, with_results=False)
            raise
        return launched

    def _run_step(self, step: int, bound: BoundArgs, conditions: list[Conditions | None], device_ptrs: dict[str, int],
                  launched: _Launched) -> None:
        lp = self.plan.launches[step]
        found = self._check_launch(step, bound) if lp.per_step else conditions[step]
        seeds, ran, entry = self._launch(step, lp, found, bound, device_ptrs, launched)
        launched.seeds[step] = seeds
        launched.ran[step] |= ran
        checks_lists = lp.verify is not None and entry.kind != EntryKind.PROVEN
        launched.records_panics |= ran and (entry.records_panics or checks_lists)
        self.last_variants.append(entry.symbol)

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
        if panic is not None and panic[0] and self._panic_sites[panic[0]].kind == "index list reads":
            return True
        return any(self._readback.flag(pending.index, target) == pending.lists["stamp", target]
                   for target in pending.lp.verify.targets)

    def _download_outputs(self, staged: dict, transfers: list[Transfer]) -> None:
        for name, (arg, buffer) in staged.items():
            if self.plan.by_name[name].transfer in (ParamTransfer.OUT, ParamTransfer.INOUT):
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
        if info.kind == "index list":
            lp = self.plan.launches[info.launch]
            raise repeat_error(lp, info.list, index, length, bound, lambda name, first, end: self._list_values(
                bound.arrays[name], first, end, self.plan.by_name[name].dtype))
        if info.kind == "index list reads":  # the verification after the loop replaces it by a read's panic
            raise RuntimeError(f"internal error in kernel `{self.name}`: the list value {index} lies outside a "
                               f"window of its reads at {info.source}, but no read is out of bounds")
        raise KernelPanic(panic_message(info.kind, index, length), info.source, self.name)

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
        grid, block = launch_geometry(counts, self._verify_blocks)
        with verify.lock:
            struct.pack_into(verify.format, verify.buffer, 0,
                             *verify.values(bound, device_ptrs, starts, counts, _NONE, scratch, False, number))
            try:
                self.backend.launch_packed(function, grid, block, verify.pointers_address)
            except LaunchError as e:
                raise LaunchError(f"launching the index-list verification of kernel `{self.name}` (loop at "
                                  f"{lp.source}) failed: {e}") from e

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
            if self.plan.by_name[name].transfer == ParamTransfer.VALUE:
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
            if self.plan.by_name[name].transfer in (ParamTransfer.IN, ParamTransfer.INOUT) and arg.nbytes:
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

    def _launch(self, index: int, lp: LaunchPlan, conditions: Conditions, bound: BoundArgs,
                device_ptrs: dict[str, int], launched: _Launched) -> tuple[dict, bool, EntryPoint]:
        """Launch one loop as the call's next launch (`launched` numbers them, and says whether code launched
        before it can have recorded a panic: then it checks the record at entry), on the first of its entry
        points that may run (see `_shape`); then the verification of its index lists, or, for the call's
        last launch, leave that to `_finish`; none after its proven entry point, whose lists the host
        verified. Returns the reduction seeds, whether it ran, and the entry point (for a launch of no
        iteration, the one whose body would have run)."""
        decided = bound.decided
        space = decided.spaces.get(index) if decided is not None else None
        if space is None:
            space = lp.iteration_space(bound.env)
            if decided is not None:
                decided.spaces[index] = space
        starts, counts = space
        if not all(counts.values()):  # then the results are the seeds
            entry = next(e for e in lp.entry_points if e.kind in BODY_KINDS
                         and lp.runs(e, conditions, counts, False, self._l2_bytes, self._resident_threads))
            return (lp.seed_values(bound.env) if lp.reduces else _NONE), False, entry
        seeds = lp.launch_seeds(bound, device_ptrs) if lp.reduces else _NONE
        aligned = lp.vector is not None and lp.vector_fits(starts, device_ptrs)
        found = decided.shapes.get((index, aligned)) if decided is not None else None
        if found is None:
            found = self._shape(index, lp, conditions, counts, aligned)
            if decided is not None:
                decided.shapes[index, aligned] = found
        entry, function, grid, block = found
        scratch = self._readback.pointers[index]
        checks_lists = lp.verify is not None and entry.kind != EntryKind.PROVEN
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
        return seeds, True, entry

    def _pack_and_launch(self, lp: LaunchPlan, function, grid, block, values: tuple) -> None:
        """Pack a launch's arguments into its buffer and launch `function` on them."""
        with lp.lock:
            struct.pack_into(lp.format, lp.buffer, 0, *values)
            try:
                self.backend.launch_packed(function, grid, block, lp.pointers_address)
            except LaunchError as e:
                raise LaunchError(f"launching kernel `{self.name}` (loop at {lp.source}) failed: {e}") from e

    def _shape(self, index: int, lp: LaunchPlan, conditions: Conditions, counts: dict[str, int],
               aligned: bool) -> tuple:
        """(entry point, its function, grid, block) of a launch of `counts` iterations: the first of its entry
        points, in `EntryKind`'s order, that may run (`LaunchPlan.runs`) and, where it needs a grid that
        covers the loop, has one."""
        for entry in lp.entry_points:
            if not lp.runs(entry, conditions, counts, aligned, self._l2_bytes, self._resident_threads):
                continue
            geometry = self._geometry(lp, entry, counts)
            if geometry is not None:
                return entry, self._functions[index][entry.symbol], *geometry
        raise RuntimeError(f"internal error in kernel `{self.name}`: no entry point of the loop at {lp.source} "
                           f"runs on these counts")

    def _geometry(self, lp: LaunchPlan, entry: EntryPoint, counts: dict[str, int]):
        """(grid, block) of `entry` for `counts`, or None where it needs a grid that covers the loop and no
        grid does. A private copy runs on one wave of blocks, which flush their copies when done; a launch
        with reductions on at most `_max_blocks`."""
        if entry.kind == EntryKind.VECTOR:  # one thread per group of iterations: 16-byte accesses
            groups = {**counts, "x": -(-counts["x"] // entry.vector.width)}
            if entry.grid is None:
                return launch_geometry(groups, self._max_blocks if lp.reduces else None)
            if counts["x"] >= entry.grid.count_limit:
                return None
            return covering_launch(entry.grid, groups)  # a nest: one thread per group of a row
        if entry.grid is not None:  # one thread per iteration
            return covering_launch(entry.grid, counts)
        if entry.split is not None:  # several threads per iteration: one wave of blocks strides over the rest
            return launch_geometry({"x": counts["x"] * entry.split.threads}, self._one_wave)
        limit = self._one_wave if entry.kind == EntryKind.PRIVATE else self._max_blocks if lp.reduces else None
        return launch_geometry(counts, limit)

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
