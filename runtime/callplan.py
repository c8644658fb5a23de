"""Everything about a call that does not depend on the argument values, prepared once per kernel.

A call then only classifies each argument, checks it against a precomputed expectation, and packs the
launch arguments with one `struct.pack_into` into a reusable buffer. This keeps the host cost of a call
close to a raw driver launch; the general (slower) conversions in `arguments.py` handle everything the
fast path does not recognise (torch tensors, DLPack objects, structured dtypes, ...).
"""
from __future__ import annotations

import math

import ctypes
import struct
import sys
import threading
from dataclasses import dataclass
from typing import Callable

from rs2gpu.ir.abi import (ArgRole, EntryKind, EntryPoint, IndexListWrite, KernelABI, Launch, Layout, ListRead, Param,
                           ParamKind, Reduction, Transfer, VectorLanes, HostLoop, host_exprs)
from rs2gpu.ir.types import PRIMITIVES
from rs2gpu.runtime.arguments import (ArrayArg, array_argument, check_aliasing, check_array_length, is_torch,
                                      numpy_dtype, scalar_value, struct_value)
from rs2gpu.runtime.bounds import (compile_ranges, first_out_of_bounds, may_leave, poly_value, ranges_hold,
                                   simple_source)
from rs2gpu.runtime.errors import KernelPanic, RaceError
from rs2gpu.runtime.hostexpr import Environment, HostPanic, evaluate
from rs2gpu.runtime.indexlist import IndexList
from rs2gpu.runtime.listwindows import read_window

WINDOWS_KEPT = 64  # the read windows a launch keeps, for as many different parameter values and lengths

def cupy_ndarray() -> type | None:
    """cupy's array type if cupy is imported (a caller passing cupy arrays has imported it)."""
    module = sys.modules.get("cupy")
    return getattr(module, "ndarray", None) if module is not None else None


def torch_tensor() -> type | None:
    """torch's tensor type if torch is imported (a caller passing torch tensors has imported it)."""
    module = sys.modules.get("torch")
    return getattr(module, "Tensor", None) if module is not None else None


def torch_dtype(dtype) -> object | None:
    """torch's dtype of a numpy dtype (ml_dtypes' bfloat16 is torch.bfloat16), None where torch has none."""
    return getattr(sys.modules["torch"], dtype.name, None) if dtype.fields is None else None


@dataclass(frozen=True)
class DeviceArrays:
    """How a call's fast paths read one library's device arrays, as Python source over an array `{a}`:
    `unusable` holds where the array is not one the call takes as it is (not of the library's `dtype_of`
    the slice's numpy dtype `{D}`, not C-contiguous, not on device `{ordinal}`), `pointer` and `length` are
    its address and element count. `names` are the globals those need."""

    type: type
    dtype_of: Callable
    unusable: str
    pointer: str
    length: str
    names: dict


def cupy_arrays(array_type: type) -> DeviceArrays:
    """The fast paths' reading of cupy's arrays (or of arrays that answer as they do): cupy keeps its
    contiguity in a C field (`c_contiguous_of`) and its device in the array's memory."""
    return DeviceArrays(array_type, lambda dtype: dtype, "type({a}) is not T or {a}.dtype != {D} or not C({a}) "
                        "or {a}.data.device_id != {ordinal}", "{a}.data.ptr", "{a}.size",
                        {"C": c_contiguous_of(array_type)})


def torch_arrays(array_type: type) -> DeviceArrays:
    """The fast paths' reading of torch's tensors: one call answers each question."""
    return DeviceArrays(array_type, torch_dtype, "type({a}) is not T or {a}.dtype is not {D} "
                        "or not {a}.is_contiguous() or {a}.get_device() != {ordinal}", "{a}.data_ptr()",
                        "{a}.numel()", {})


def c_contiguous_of(array_type: type | None) -> Callable:
    """How to ask an array of `array_type` whether it is C-contiguous: cupy keeps the answer in a C field
    (`_c_contiguous`, there since its first releases) where `.flags` builds an object per call."""
    if array_type is not None and hasattr(array_type, "_c_contiguous"):
        return lambda array: array._c_contiguous
    return lambda array: array.flags.c_contiguous


def struct_fields(layout: Layout, data: bytes, offset: int = 0) -> dict:
    """The scalar fields of a struct's bytes, by name (nested structs as nested dicts), for host
    expressions such as a loop bound `dims.num_z`."""
    out = {}
    for f in layout.fields:
        if f.layout.is_struct:
            out[f.name] = struct_fields(f.layout, data, offset + f.offset)
        elif f.layout.type in PRIMITIVES:
            out[f.name] = struct.unpack_from("<" + PRIMITIVES[f.layout.type].pack, data, offset + f.offset)[0]
    return out


@dataclass(frozen=True)
class ParamSpec:
    index: int
    name: str
    kind: ParamKind
    param: Param       # the ABI's parameter (for the general path and messages)
    dtype: object      # numpy dtype of the elements (arrays) or None
    mutable: bool
    transfer: Transfer
    fast_scalar: type | None  # a Python type whose values need no conversion or range check (float for f64)


class BoundArgs:
    """A call's checked arguments; `decided`, what a backend decided for calls with the same values of
    everything its host checks and launch shapes read (see `CallPlan.decision_key`)."""

    __slots__ = ("arrays", "scalars", "structs", "env", "decided")

    def __init__(self) -> None:
        self.arrays: dict[str, ArrayArg] = {}
        self.scalars: dict[str, object] = {}
        self.structs: dict[str, bytes] = {}   # structs, and the arrays passed by value once staged
        self.env = Environment()
        self.decided = None


def compile_expr(expr: dict) -> Callable[[Environment], object]:
    """A host expression as a closure; the common shapes skip the generic interpreter."""
    if "lit" in expr:
        value = evaluate(expr, Environment())
        return lambda env: value
    if "len" in expr:
        name = expr["len"]
        return lambda env: env.lengths[name]
    if "param" in expr:
        name = expr["param"]
        return lambda env: env.params[name]
    if "local" in expr:
        name = expr["local"]
        return lambda env: env.locals[name]
    if "reduction" in expr:  # what most kernels that return a value return, after each call's wait
        name = expr["reduction"]
        return lambda env: env.reductions[name]
    if "tuple" in expr:
        parts = [compile_expr(e) for e in expr["tuple"]]
        return lambda env: tuple([part(env) for part in parts])
    return lambda env: evaluate(expr, env)


class CallPlan:
    def __init__(self, name: str, entry: KernelABI) -> None:
        import numpy as np

        self.name = name
        self.entry = entry
        self.params = []
        for i, p in enumerate(entry.params):
            dtype = numpy_dtype(p.layout) if p.in_memory else None
            scalar = p.layout.type if p.kind == ParamKind.SCALAR else None
            fast = float if scalar == "f64" else bool if scalar == "bool" else None
            self.params.append(ParamSpec(i, p.name, p.kind, p, dtype, p.mutable, p.transfer, fast))
        self.by_name = {p.name: p for p in self.params}
        self._np_ndarray = np.ndarray
        self._cupy_contiguous: Callable | None = None  # set at the first cupy array (see `c_contiguous_of`)
        self._torch_tensor: type | None = None  # torch's tensor type, set at the first tensor a call passes
        self._torch_dtypes: dict[int, object] = {}  # torch's dtype of each slice's elements, by parameter
        self.preamble = [(local.name, compile_expr(local.expr), local.source) for local in entry.preamble]
        self.launches = [LaunchPlan(self, launch) for launch in entry.launches]
        self.schedule = [schedule_step(step, self) for step in entry.schedule] if entry.schedule is not None \
            else None
        # the call's last step, when it is a launch (not a host loop): nothing runs after its verification
        last = self.schedule[-1] if self.schedule else len(self.launches) - 1
        if isinstance(last, int) and last >= 0 and self.launches[last].verify is not None:
            self.launches[last].verify.last = True
        self.result = compile_expr(entry.returns.expr) if entry.returns else None
        self.decision_key = _decision_key(entry)
        mutable = [p.name for p in self.params if p.mutable and p.dtype is not None]
        self.alias_pairs = [(m, o.name) for m in mutable for o in self.params
                            if o.dtype is not None and o.name != m and not (o.mutable and o.name < m)]

    # ------------------------------------------------------------ binding

    def bind(self, args: tuple, kwargs: dict, allow_device: bool) -> BoundArgs:
        params = self.params
        if kwargs or len(args) != len(params):
            args = self._merge(args, kwargs)
        bound = BoundArgs()
        env = bound.env
        device_array = cupy_ndarray() if allow_device else None
        for spec, value in zip(params, args):
            if spec.dtype is not None:
                arg = self._array(spec, value, allow_device, device_array)
                bound.arrays[spec.name] = arg
                env.lengths[spec.name] = arg.count
            elif spec.kind == ParamKind.SCALAR:
                if type(value) is not spec.fast_scalar:
                    value = scalar_value(spec.name, spec.param.layout.type, value)
                bound.scalars[spec.name] = env.params[spec.name] = value
            else:
                data = bound.structs[spec.name] = struct_value(spec.param, value)
                env.params[spec.name] = struct_fields(spec.param.layout, data)
        arrays = bound.arrays
        for m, o in self.alias_pairs:
            if arrays[m].overlaps(arrays[o]):
                check_aliasing(self.entry.params, {m: arrays[m], o: arrays[o]})
        for name, fn, source in self.preamble:
            try:
                env.locals[name] = fn(env)
            except HostPanic as panic:  # e.g. `let rows = len / w` with w == 0: Rust panics right there
                raise KernelPanic(str(panic), panic.source or source, self.name) from None
        return bound

    def _merge(self, args: tuple, kwargs: dict) -> tuple:
        names = [p.name for p in self.params]
        if len(args) > len(names):
            raise TypeError(f"{self.name}() takes {len(names)} arguments but {len(args)} were given")
        values = dict(zip(names, args))
        for key, value in kwargs.items():
            if key not in names:
                raise TypeError(f"{self.name}() got an unexpected keyword argument `{key}`")
            if key in values:
                raise TypeError(f"{self.name}() got multiple values for argument `{key}`")
            values[key] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise TypeError(f"{self.name}() missing argument(s): {', '.join(f'`{m}`' for m in missing)}")
        return tuple(values[n] for n in names)

    def _array(self, spec: ParamSpec, value, allow_device: bool, device_array: type | None) -> ArrayArg:
        """`value` checked as the array argument `spec`; `device_array` is cupy's array type where the
        call takes device memory (`allow_device`) and cupy is imported: its arrays are checked here, without
        the general path's conversions."""
        kind = type(value)
        if kind is device_array and value.dtype == spec.dtype and spec.kind == ParamKind.SLICE:
            if self._cupy_contiguous is None:
                self._cupy_contiguous = c_contiguous_of(kind)
            if self._cupy_contiguous(value):
                memory, count = value.data, value.size
                return ArrayArg(spec.name, memory.ptr, count * spec.dtype.itemsize, count, memory.device_id, None,
                                True)
        if kind is self._np_ndarray and value.dtype == spec.dtype and value.flags.c_contiguous and value.flags.aligned \
                and spec.kind == ParamKind.SLICE and (value.flags.writeable or not spec.mutable) \
                and not spec.dtype.fields:
            return ArrayArg(spec.name, value.ctypes.data, value.nbytes, value.size, None, value.reshape(-1),
                            value.flags.writeable)
        if self._torch_tensor is None and allow_device and is_torch(value):
            self._torch_tensor = torch_tensor()  # the first tensor a call passes: torch is imported
        if kind is self._torch_tensor and spec.kind == ParamKind.SLICE and value.dtype is self._torch_dtype(spec) \
                and value.is_contiguous():
            device = value.get_device()
            if device >= 0:  # a CUDA tensor (CPU tensors take the general path, through numpy)
                count = value.numel()
                return ArrayArg(spec.name, value.data_ptr(), count * spec.dtype.itemsize, count, device, None, True)
        arg = array_argument(spec.param, value, allow_device)
        check_array_length(spec.param, arg)
        return arg

    def _torch_dtype(self, spec: ParamSpec) -> object | None:
        found = self._torch_dtypes.get(spec.index, self)
        if found is self:
            found = self._torch_dtypes[spec.index] = torch_dtype(spec.dtype)
        return found


class PackedArguments:
    """The argument buffer layout of one entry point: every argument at its own aligned offset, so the
    `void**` array the driver wants is fixed and only the bytes change between calls. `fields` are
    (what, name, struct format code, size, alignment); `values(bound, device_ptrs, starts, counts, seeds,
    scratch, stop, launch)` gives the arguments in buffer order."""

    def __init__(self, fields: list[tuple]) -> None:
        self.format, offsets, offset = "<", [], 0
        for _, _, code, size, align in fields:
            pad = (-offset) % max(align, 1)
            self.format += "x" * pad + code
            offset += pad
            offsets.append(offset)
            offset += size
        self.fields = fields
        self.values = _compile_values(fields)
        # the same from the repeat path's pointers, lengths and scalars (see `compile_repeat_binding`), where
        # the buffer holds nothing else
        self.repeat_values = _compile_repeat_values(fields) if {kind for kind, *_ in fields} <= REPEAT_FIELDS \
            else None
        self.size = max(offset, 8)
        self.buffer = ctypes.create_string_buffer(self.size)
        base = ctypes.addressof(self.buffer)
        self.pointers = (ctypes.c_void_p * len(fields))(*[base + off for off in offsets])
        self.pointers_address = ctypes.addressof(self.pointers)
        self.lock = threading.Lock()
        self.per_step = False  # whether its checks read a host loop's values, so must be redone in every iteration


def _loop_fields(entry: KernelABI, launch: Launch) -> list[tuple]:
    """The fields of a launch's arguments up to its reduction results: the kernel's parameters (a slice's
    length only where the launch's code reads it), each dimension's start and count, the launch's number
    in the call (for a launch that can record or stop on a panic), then the values of the host loops around
    it that it reads."""
    fields = []
    for p in entry.params:
        for part in p.parts:
            if part.role == ArgRole.POINTER:
                fields.append(("pointer", p.name, "Q", 8, 8))
            elif part.role == ArgRole.LENGTH:
                if p.name in launch.lengths:
                    fields.append(("length", p.name, "Q", 8, 8))
            elif p.kind == ParamKind.SCALAR:
                fields.append(("scalar", p.name, PRIMITIVES[p.layout.type].pack, part.size, part.align))
            elif p.kind == ParamKind.ARRAY:  # a small read-only array passed by value: its elements' bytes
                fields.append(("array", p.name, f"{part.size}s", part.size, part.align))
            else:
                fields.append(("struct", p.name, f"{part.size}s", part.size, part.align))
    for dim in launch.dims:
        code = PRIMITIVES[dim.index_type].pack
        fields.append(("start", dim.axis, code, struct.calcsize(code), struct.calcsize(code)))
        fields.append(("count", dim.axis, "Q", 8, 8))
    if launch.numbered:
        fields.append(("launch", "launch", "I", 4, 4))
    for value in launch.uniforms:
        code = PRIMITIVES[value.type].pack
        fields.append(("uniform", value.name, code, struct.calcsize(code), struct.calcsize(code)))
    return fields


class IndexListVerification(PackedArguments):
    """The launch of the kernel that verifies, after a loop, the index lists the loop found out of order:
    the loop's own arguments, then a mark array, the stamp and the order flag for each slice written
    through a list (`targets`)."""

    def __init__(self, entry: KernelABI, launch: Launch, verify: EntryPoint) -> None:
        self.symbol = verify.symbol
        self.targets = [write.target for write in launch.index_lists]
        self.last = False  # whether it verifies the call's last launch, so the host may decide after the wait
        fields = _loop_fields(entry, launch)
        for target in self.targets:
            fields += [("marks", target, "Q", 8, 8), ("stamp", target, "I", 4, 4), ("unordered", target, "Q", 8, 8)]
        super().__init__(fields)


@dataclass(frozen=True)
class Conditions:
    """What the host found, for one launch of a call, that decides which entry point runs (see
    `LaunchPlan.runs`): every conditional access in bounds (or no entry point that checks them), the
    scatter target short enough for the blocks' private copies, the index lists' checks proven from
    verified lists."""

    in_bounds: bool
    private_fits: bool = False
    lists_proven: bool = False


class LaunchPlan(PackedArguments):
    """One parallel loop: its host checks, its entry points, and its argument buffer."""

    def __init__(self, plan: CallPlan, launch: Launch) -> None:
        self.launch = launch
        self.kernel = plan.name
        self.source = launch.source
        self.dims = [(dim.axis, compile_expr(dim.start), compile_expr(dim.end), dim.inclusive)
                     for dim in launch.dims]
        self.reduces = bool(launch.reductions)
        # each reduction's value before the loop (and its location's), which the launch takes by value,
        # but where the seed is an element of a slice the kernel only reads: the launch takes the element's
        # address (name, slice, index, element size, source), and the host reads the element only for a
        # launch that runs no iteration
        self._seeds = [(r.name, compile_expr(r.init)) for r in launch.reductions if not r.seed_on_device]
        self._seeds += [(r.location.name, compile_expr(r.location.init)) for r in launch.reductions
                        if r.location is not None]
        self._seed_elements = [(r.name, r.init["element"], compile_expr(r.init["index"]),
                                plan.by_name[r.init["element"]].dtype.itemsize, r.init["source"])
                               for r in launch.reductions if r.seed_on_device]
        self._seed_values = self._seeds + [(r.name, compile_expr(r.init)) for r in launch.reductions
                                           if r.seed_on_device]
        self.repeat_seeds = _compile_repeat_seeds(launch.reductions, plan)
        self.checks = launch.stride_checks
        self.index_lists = launch.index_lists
        self.bounds = launch.bounds
        self.bounds_hold = compile_ranges(self.bounds)
        self.guarded = launch.guarded_bounds
        self.guarded_hold = compile_ranges(self.guarded)
        # the entry points, in the order the host tries them (see `runs`)
        self.entry_points = tuple(e for e in launch.entry_points if e.kind != EntryKind.VERIFY)
        self.general = launch.general
        self.checked = launch.entry(EntryKind.CHECKED)
        verify = launch.entry(EntryKind.VERIFY)
        self.verify = IndexListVerification(plan.entry, launch, verify) if verify is not None else None
        private = launch.entry(EntryKind.PRIVATE)
        self.private = private.private if private is not None else None
        proven = launch.entry(EntryKind.PROVEN)
        self.proven = proven
        # the lists the proven entry point needs verified, those whose values must be distinct for the
        # written indices to be, and (list, scale, offset, slice) for each index scale * value + offset the
        # proof bounds
        self.proven_lists = list(proven.proof.lists) if proven else []
        self._distinct_lists = [write.list for write in self.index_lists]
        self._proof_terms = _proof_terms(self.index_lists, proven.proof.reads) if proven else []
        self._proof_inputs = _compile_window_inputs([(param or name, (offset,))
                                                     for name, _, offset, param in self._proof_terms])
        self._proofs: dict[tuple, bool] = {}
        vector = launch.entry(EntryKind.VECTOR)
        self.vector = vector
        self._vector_aligned = _compile_alignment(vector.vector) if vector else None
        l2_adds = launch.entry(EntryKind.L2_ADDS)
        self.l2_bytes_per_iteration = l2_adds.l2_adds.bytes_per_iteration if l2_adds else None
        fields = _loop_fields(plan.entry, launch)
        windows = 0
        for write in self.index_lists:  # the loop's own checks of the list (`emit.verify`)
            fields += [("unordered", write.target, "Q", 8, 8), ("stamp", write.target, "I", 4, 4)]
            for _ in write.windows:
                fields += [("window_low", windows, "Q", 8, 8), ("window_width", windows, "Q", 8, 8)]
                windows += 1
        if launch.stops:  # whether code launched before it in the call can have recorded a panic
            fields.append(("stop", "", "?", 1, 1))
        self._window_inputs = _compile_window_inputs([(w.param, w.offsets) for write in self.index_lists
                                                      for w in write.windows])
        # the arguments of the list checks the proven entry point takes but does not read
        self.unchecked_lists = {**{(kind, write.target): 0 for write in self.index_lists
                                   for kind in ("unordered", "stamp")},
                                **{(kind, k): 0 for k in range(windows) for kind in ("window_low", "window_width")}}
        self._windows: dict[tuple, tuple] = {}
        for r in launch.reductions:
            seeds = [(r.name, r.type)] + ([(r.location.name, r.location.type)] if r.location is not None else [])
            for name, ty in seeds:
                code = "Q" if name == r.name and r.seed_on_device else PRIMITIVES[ty].pack
                fields.append(("seed", name, code, struct.calcsize(code), struct.calcsize(code)))
            fields.append(("partials", r.name, "Q", 8, 8))
            fields += [("result", name, "Q", 8, 8) for name, _ in seeds]
        if launch.signals_done:  # the word the launch sets after its results (`readback.py`)
            fields.append(("done", "", "Q", 8, 8))
        super().__init__(fields)

    def seed_values(self, env: Environment) -> dict:
        """Every reduction's seed as a value (for a launch that runs no iteration: its results)."""
        return {name: seed(env) for name, seed in self._seed_values}

    def launch_seeds(self, bound, device_ptrs: dict[str, int]) -> dict:
        """The seeds the launch takes: values, and the device address of each element seed after checking
        its index as Rust's indexing does."""
        seeds = {name: seed(bound.env) for name, seed in self._seeds}
        for name, array, index, size, source in self._seed_elements:
            at, length = index(bound.env), bound.arrays[array].count
            if not 0 <= at < length:
                raise KernelPanic(f"index out of bounds: the len is {length} but the index is {at % (1 << 64)}",
                                  source, self.kernel)
            seeds[name] = device_ptrs[array] + at * size
        return seeds

    def vector_fits(self, starts: dict[str, int], device_ptrs: dict[str, int]) -> bool:
        """Whether the vector entry point's 16-byte accesses are aligned: the first group's lanes of every
        slice, at the loop's first index plus the slice's offset, at an aligned address (see `emit.vector`)."""
        return self._vector_aligned(device_ptrs, starts["x"])

    def l2_adds_fit(self, counts: dict[str, int], l2_bytes: int) -> bool:
        """Whether the slice elements the loop touches fit in `l2_bytes`, so that its L2-adds entry point is
        the fastest (see `emit.l2_adds`)."""
        return self.l2_bytes_per_iteration is not None and counts["x"] * self.l2_bytes_per_iteration <= l2_bytes

    def iteration_space(self, env: Environment) -> tuple[dict[str, int], dict[str, int]]:
        """The first index and the number of iterations along each grid axis (0 for an empty range)."""
        starts, counts = {}, {}
        try:
            for axis, start, end, inclusive in self.dims:
                first = start(env)
                starts[axis] = first
                counts[axis] = max(0, end(env) - first + (1 if inclusive else 0))
        except HostPanic as panic:  # a bound like `n / w` with w == 0 panics in Rust before the loop
            raise KernelPanic(str(panic), panic.source or self.source, self.kernel) from None
        return starts, counts

    def index_list_ranges(self, env: Environment, starts: dict[str, int], counts: dict[str, int]):
        """For each index-list write: (list name, first position, end position, scale, offset, target)."""
        out = []
        for write in self.index_lists:
            shift = poly_value(write.position, env)
            offset = poly_value(write.offset, env)
            first = starts["x"] + shift
            out.append((write.list, first, first + counts["x"], write.scale, offset, write.target, write.source))
        return out

    def read_windows(self, env: Environment) -> tuple[tuple[int, int], ...]:
        """The (low, width) of every group of reads through the loop's index lists (see `listwindows.py`),
        in launch argument order; kept for the values and lengths they are computed from, which one
        generated expression reads (computing them costs more than a launch)."""
        key = self._window_inputs(env)
        windows = self._windows.get(key)
        if windows is None:
            windows = tuple(read_window([poly_value(offset, env) for offset in window.offsets],
                                        env.lengths[window.param])
                            for write in self.index_lists for window in write.windows)
            if len(self._windows) >= WINDOWS_KEPT:
                self._windows.clear()
            self._windows[key] = windows
        return windows

    def check_bounds(self, env: Environment) -> tuple[str, str] | None:
        """The panic (message, location) Rust raises first among the accesses that every iteration makes
        and that the host checks (see `bounds.py`); None when all of them stay in bounds."""
        if self.bounds_hold(env) if self.bounds_hold is not None else ranges_hold(self.bounds, env):
            return None  # the common case, decided by one generated expression where the bounds allow
        starts, counts = self.iteration_space(env)
        found = first_out_of_bounds(self.bounds, env, [axis for axis, *_ in self.dims], starts, counts)
        if found is None:
            return None
        check, index = found
        return f"index out of bounds: the len is {env.lengths[check.param]} but the index is {index}", check.source

    def conditions(self, bound: BoundArgs) -> Conditions:
        """What decides this call's entry point besides the launch's shape (see `runs`)."""
        env = bound.env
        # without a checked entry point, the general one runs whatever the conditional accesses do
        in_bounds = self.checked is None or (self.guarded_hold is not None and self.guarded_hold(env)) \
            or not any(may_leave(check, env) for check in self.guarded)
        private_fits = self.private is not None and env.lengths[self.private.target] <= self.private.capacity
        lists_proven = self.proven is not None and in_bounds and self.lists_proven(bound)
        return Conditions(in_bounds, private_fits, lists_proven)

    def runs(self, entry: EntryPoint, conditions: Conditions, counts: dict[str, int], aligned: bool,
             l2_bytes: int, resident_threads: int) -> bool:
        """Whether `entry` may run where the host found `conditions`, for these counts, with the vector
        entry point's slices `aligned`, on a device whose L2 takes `l2_bytes` of a loop's data and which
        holds `resident_threads` threads at once (see `ir.abi.EntryKind`); whether a grid covers the loop is
        the caller's part."""
        kind = entry.kind
        if entry.split is not None:  # where its threads pay: fewer than the device holds, if `fill` says so
            split = entry.split
            return conditions.in_bounds and (split.fill == 0 or counts["x"] * split.fill < resident_threads)
        if kind == EntryKind.PRIVATE:
            return conditions.private_fits
        if kind == EntryKind.PROVEN:
            return conditions.lists_proven
        if kind == EntryKind.L2_ADDS:
            return conditions.in_bounds and self.l2_adds_fit(counts, l2_bytes)
        if kind == EntryKind.VECTOR:
            return conditions.in_bounds and aligned
        if kind == EntryKind.TILES:  # where its larger tiles still fill the device
            return conditions.in_bounds and math.prod(counts.values()) >= entry.grid.fill * resident_threads
        if kind == EntryKind.COVERING:
            return conditions.in_bounds
        if kind == EntryKind.GENERAL:
            return conditions.in_bounds
        return kind == EntryKind.CHECKED

    def lists_proven(self, bound: BoundArgs) -> bool:
        """Whether the host proves, from the facts of verified lists, what the checks through index lists
        that the proven entry point leaves out would find: every index read or written through a list in
        bounds, and the indices written through a list distinct (see `indexlist.py`)."""
        facts = []
        for name in self.proven_lists:
            verified = bound.arrays[name].verified
            if verified is None:
                return False
            facts.append(verified.facts)
        key = (self._proof_inputs(bound.env), *facts)
        proven = self._proofs.get(key)
        if proven is None:
            proven = self._prove(bound.env, dict(zip(self.proven_lists, facts)))
            if len(self._proofs) >= WINDOWS_KEPT:
                self._proofs.clear()
            self._proofs[key] = proven
        return proven

    def _prove(self, env: Environment, facts: dict) -> bool:
        if not all(facts[name].distinct for name in self._distinct_lists):
            return False  # distinct values make distinct indices: a list writes one index per iteration
        for name, scale, offset, param in self._proof_terms:
            list_facts = facts[name]
            if list_facts.high < list_facts.low:
                continue  # an empty list: nothing is read through it
            if list_facts.low < 0:
                return False  # a negative value is a huge index once the kernel widens it to u64
            shift = poly_value(offset, env)
            ends = (scale * list_facts.low + shift, scale * list_facts.high + shift)
            # exactly: an index in [0, 2^64) is the one Rust's wrapping usize arithmetic computes
            if min(ends) < 0 or max(ends) >= (env.lengths[param] if param is not None else 1 << 64):
                return False
        return True

    def check_strides(self, env: Environment, kernel: str) -> None:
        """Confirm the inequalities the translator's race-freedom proof left to the launch."""
        for check in self.checks:
            if poly_value(check.poly, env) < 0:
                raise RaceError(f"kernel `{kernel}`: with these arguments, two iterations of the loop at "
                                f"{check.source} would write the same element (the row stride is shorter than "
                                f"the row); nothing was launched")


def _proof_terms(index_lists: tuple[IndexListWrite, ...], reads: tuple[ListRead, ...]) -> list[tuple]:
    """(list, scale, offset, slice) for each index `scale * value + offset` that the proven entry point of a
    loop reads or writes through a list without a check: it must lie in [0, len(slice)) for every value of
    the list, or in [0, 2^64) for slice None (a written index whose bounds the loop checks itself; distinct
    values must still make distinct indices)."""
    terms = []
    for write in index_lists:
        terms.append((write.list, write.scale, write.offset, write.target if write.bounds is not None else None))
        terms += [(write.list, window.scale, offset, window.param)
                  for window in write.windows for offset in window.offsets]
    return terms + [(read.list, read.scale, read.offset, read.param) for read in reads]


def _compile_window_inputs(windows: list[tuple[str, tuple]]) -> Callable[[Environment], tuple]:
    """What a list of windows ((slice, offsets): groups of reads through index lists) is computed from, as
    one expression: the values their offsets are polynomials of, and the lengths of the slices read (every
    offset itself where a factor is not a plain length, parameter or local)."""
    factors = {f"env.lengths[{param!r}]" for param, _ in windows}
    for _, offsets in windows:
        for terms in offsets:
            for term in terms:
                factors |= {simple_source(f) for f in term.factors}
    if None in factors:
        return lambda env: tuple((poly_value(terms, env) for _, offsets in windows for terms in offsets)) \
            + tuple(env.lengths[param] for param, _ in windows)
    return eval(f"lambda env: ({''.join(f + ', ' for f in sorted(factors))})", {})  # noqa: S307 - from the ABI


def decision_inputs(entry: KernelABI) -> tuple[list[str], list[str]] | None:
    """The integer parameters and preamble values the launches' bounds, checks and index-list positions
    and proofs name, beside the slices' lengths and the facts of the verified lists the proofs take
    (`verified_lists`): what a call's host checks, entry-point choice and launch shapes read; None where
    those decisions read anything else: a host loop's values, struct fields, elements, or floats (whose
    key would not tell -0.0 from 0.0)."""
    if entry.schedule is not None and any(not isinstance(step, int) for step in entry.schedule):
        return None
    params = {p.name: p for p in entry.params}
    local_types = {local.name: local.type for local in entry.preamble}
    names: dict[str, set] = {"param": set(), "local": set()}
    decided_by = [(launch.dims, launch.stride_checks, launch.bounds, launch.guarded_bounds, launch.index_lists,
                   [e.proof for e in launch.entry_points if e.proof is not None]) for launch in entry.launches]
    if not _note_reads(list(host_exprs(decided_by)), names):
        return None
    def exact(ty: str | None) -> bool:  # a value the key can hold (-0.0 and 0.0 are equal keys)
        return ty in PRIMITIVES and PRIMITIVES[ty].kind != "float"

    if any(params[name].kind != ParamKind.SCALAR or not exact(params[name].layout.type) for name in names["param"]) \
            or any(not exact(local_types.get(name)) for name in names["local"]):
        return None
    return sorted(names["param"]), sorted(names["local"])


def verified_lists(entry: KernelABI) -> list[str]:
    """The index lists whose facts a launch's proof takes (see `LaunchPlan.lists_proven`), in a fixed order."""
    return sorted({name for launch in entry.launches for e in launch.entry_points if e.proof is not None
                   for name in e.proof.lists})


def _decision_key(entry: KernelABI) -> Callable[[BoundArgs], tuple] | None:
    """`key(bound)`: the values a call's host checks, entry-point choice and launch shapes read, as one
    generated expression (every slice's length, the integer parameters and preamble values of
    `decision_inputs`, then the facts of each of the `verified_lists`, None for a plain array), so that a
    backend decides once per key; None where those decisions read anything else."""
    inputs = decision_inputs(entry)
    if inputs is None:
        return None
    parts = [f"bound.env.lengths[{p.name!r}], " for p in entry.params if p.in_memory]
    parts += [f"bound.env.params[{name!r}], " for name in inputs[0]]
    parts += [f"bound.env.locals[{name!r}], " for name in inputs[1]]
    # facts are values: lists of the same least and greatest value and order prove the same, and a key holds
    # no list (nor its device copy) alive
    parts += [f"getattr(bound.arrays[{name!r}].verified, 'facts', None), " for name in verified_lists(entry)]
    return eval(f"lambda bound: ({''.join(parts)})", {})  # noqa: S307 - from the ABI's names only


def compile_repeat_binding(plan: CallPlan, arrays: DeviceArrays, ordinal: int,
                           list_pointer: Callable[[IndexList], int]) -> Callable[[tuple], tuple | None] | None:
    """For a kernel whose calls can repeat (see `DeviceKernel._repeat`): `bind(args)`, the positional
    arguments of a call checked as the general path would find them, or None where it would not (or would
    raise): every slice a device array of the library `arrays` reads on device `ordinal`, of its dtype and
    C-contiguous, but
    each of the `verified_lists` an `IndexList` of its dtype (at `list_pointer(list)`, its copy on the
    device), every scalar a `bool`, a `float` for an f64 or an `int` in its type's range, and no slice a
    call writes overlapping another argument. It returns (pointers, lengths, scalars, decision key) by name, the key as
    `CallPlan.decision_key` makes it; the scalars hold the bytes of each array passed by value (a numpy
    array, as the general path takes it). None where a call cannot repeat: a struct parameter, an array on
    the device or of structs, an f32, a result computed from the preamble (`_result_repeats`), a host loop,
    a decision key that reads a preamble value other than a length or a parameter of the key
    (`let n = a.len()`), or a preamble that could panic (reads an integer parameter the key leaves out, an
    element, a field)."""
    entry = plan.entry
    inputs = decision_inputs(entry)
    if inputs is None or plan.schedule is not None or not _preamble_repeats(entry, set(inputs[0])) \
            or not _result_repeats(entry):
        return None
    preamble = {local.name: local.expr for local in entry.preamble}
    lists = verified_lists(entry)
    names = {"T": arrays.type, "L": IndexList, "P": list_pointer, **arrays.names}
    lines = ["def bind(args):", f"    if len(args) != {len(plan.params)}:", "        return None",
             f"    {', '.join(f'a{p.index}' for p in plan.params)}{',' if len(plan.params) == 1 else ''} = args"]
    ptrs, lengths, scalars = [], [], []
    for p in plan.params:
        a = f"a{p.index}"
        if p.name in lists:
            names[f"D{p.index}"] = p.dtype
            lines += [f"    if type({a}) is not L or {a}.dtype != D{p.index}:", "        return None"]
            ptrs.append(f"{p.name!r}: P({a})")
            lengths.append(f"{p.name!r}: len({a})")
        elif p.kind == ParamKind.SLICE and p.dtype is not None:
            names[f"D{p.index}"] = arrays.dtype_of(p.dtype)
            if names[f"D{p.index}"] is None:
                return None
            lines += [f"    if {arrays.unusable.format(a=a, D=f'D{p.index}', ordinal=ordinal)}:", "        return None"]
            ptrs.append(f"{p.name!r}: {arrays.pointer.format(a=a)}")
            lengths.append(f"{p.name!r}: {arrays.length.format(a=a)}")
        elif p.kind == ParamKind.SCALAR and p.param.layout.type in ("bool", "f64"):
            python_type = "bool" if p.param.layout.type == "bool" else "float"
            lines += [f"    if type({a}) is not {python_type}:", "        return None"]
            scalars.append(f"{p.name!r}: {a}")
        elif p.kind == ParamKind.SCALAR and PRIMITIVES[p.param.layout.type].is_int:
            primitive = PRIMITIVES[p.param.layout.type]
            lines += [f"    if type({a}) is not int or not {primitive.min} <= {a} <= {primitive.max}:",
                      "        return None"]
            scalars.append(f"{p.name!r}: {a}")
        elif p.kind == ParamKind.ARRAY and p.transfer == Transfer.VALUE and p.dtype.fields is None:
            # a numpy array whose elements travel in the launch arguments, as the general path takes it:
            # any C-contiguous shape of `length` elements, aligned as a Rust reference is
            names["ndarray"], names[f"D{p.index}"] = plan._np_ndarray, p.dtype
            lines += [f"    if type({a}) is not ndarray or {a}.dtype != D{p.index} or {a}.size != {p.param.length}:",
                      "        return None", f"    f{p.index} = {a}.flags",
                      f"    if not f{p.index}.c_contiguous or not f{p.index}.aligned:", "        return None"]
            lengths.append(f"{p.name!r}: {p.param.length}")
            scalars.append(f"{p.name!r}: {a}.tobytes()")
        else:
            return None
    by_value = {p.name for p in plan.params if p.transfer == Transfer.VALUE}
    lines += [f"    ptrs = {{{', '.join(ptrs)}}}", f"    lengths = {{{', '.join(lengths)}}}"]
    # a by-value array is host memory, which `ArrayArg.overlaps` never finds overlapping a device array, and
    # a verified list's copy on the device is its own; the others compare byte ranges, as it does
    for m, o in [(m, o) for m, o in plan.alias_pairs if o not in by_value and o not in lists]:
        sm, so = plan.by_name[m].dtype.itemsize, plan.by_name[o].dtype.itemsize
        lines += [f"    if lengths[{m!r}] and lengths[{o!r}] and ptrs[{m!r}] < ptrs[{o!r}] + lengths[{o!r}] * {so} "
                  f"and ptrs[{o!r}] < ptrs[{m!r}] + lengths[{m!r}] * {sm}:", "        return None"]
    key = [f"lengths[{p.name!r}]" for p in plan.params if p.dtype is not None]
    key += [f"a{plan.by_name[name].index}" for name in inputs[0]]
    for name in inputs[1]:  # a preamble value in the key: one the binding has already (`let n = a.len()`)
        expr = preamble[name]
        if set(expr) <= {"len", "type"} and plan.by_name[expr["len"]].dtype is not None:
            key.append(f"lengths[{expr['len']!r}]")
        elif set(expr) <= {"param", "type"} and expr.get("param") in inputs[0]:
            key.append(f"a{plan.by_name[expr['param']].index}")
        else:
            return None
    key += [f"a{plan.by_name[name].index}.facts" for name in lists]
    lines.append(f"    return ptrs, lengths, {{{', '.join(scalars)}}}, ({', '.join(key)},)")
    exec("\n".join(lines), names)  # noqa: S102 - the source is built above from the ABI's names only
    return names["bind"]


def _preamble_repeats(entry: KernelABI, key_params: set) -> bool:
    """Whether the preamble computes, for calls of one decision key, what it computed before: it reads
    lengths, preamble values and parameters, the integer ones among them in the key (a float operation
    cannot panic, an integer one by one of the key's values would have panicked before), and no element
    or field."""
    floats = {p.name for p in entry.params if p.kind == ParamKind.SCALAR and PRIMITIVES[p.layout.type].kind == "float"}
    names: dict[str, set] = {"param": set(), "local": set()}
    return _note_reads([local.expr for local in entry.preamble], names) and names["param"] <= key_params | floats


def _result_repeats(entry: KernelABI) -> bool:
    """Whether the value a call returns can be computed from its reductions' results, parameters and
    lengths alone (the repeat path evaluates no preamble): no preamble value, element or field."""
    if not entry.returns:
        return True
    names: dict[str, set] = {"param": set(), "local": set()}
    return _note_reads(entry.returns.expr, names, reductions=True) and not names["local"]


def _note_reads(node, names: dict[str, set], reductions: bool = False) -> bool:
    """Note in `names` the parameters ("param") and preamble values ("local") the host expressions in
    `node` read; whether they read only those and lengths (no element or field, and a reduction's result
    only where `reductions` allows it)."""
    if isinstance(node, list):
        return all(_note_reads(item, names, reductions) for item in node)
    if not isinstance(node, dict):
        return True
    if "element" in node or "field" in node:
        return False
    if "reduction" in node:
        return reductions
    for kind in ("param", "local"):
        if set(node) <= {kind, "type"}:  # a leaf
            names[kind].add(node[kind])
            return True
    return all(_note_reads(value, names, reductions) for value in node.values())


def _compile_alignment(lanes: VectorLanes) -> Callable[[dict, int], bool]:
    """`aligned(device_ptrs, start)`: whether every slice's first lane, at `start` plus its offset, lies at a
    multiple of the lanes' alignment, as one generated expression (it runs in every call of a streaming
    loop); always, with no slices (a nest's groups test their rows themselves)."""
    size, alignment = lanes.alignment // lanes.width, lanes.alignment
    terms = " and ".join(f"(device_ptrs[{s.slice!r}] + (start + {s.offset}) * {size}) % {alignment} == 0"
                         for s in lanes.aligned)
    return eval(f"lambda device_ptrs, start: {terms or True}", {})  # noqa: S307 - from the ABI's names only


REPEAT_FIELDS = {"pointer", "length", "scalar", "array", "start", "count", "seed", "partials", "result", "done",
                 "stop", "launch", "unordered", "stamp", "window_low", "window_width"}


def _compile_repeat_values(fields: list) -> Callable:
    """`values(ptrs, lengths, scalars, starts, counts, launch, seeds, scratch)`: the launch arguments in
    buffer order for a repeat call, whose launches follow none that can record a panic (so `stop` is
    false); `seeds` as `repeat_seeds` gives them, `scratch` the reductions' device memory (`readback.py`)
    and, for a launch through index lists, which runs its proven entry point, the arguments of the list
    checks it does not read (`LaunchPlan.unchecked_lists`)."""
    getters = {"pointer": "ptrs[{!r}]", "length": "lengths[{!r}]", "scalar": "scalars[{!r}]",
               "array": "scalars[{!r}]", "start": "starts[{!r}]", "count": "counts[{!r}]", "seed": "seeds[{!r}]",
               "partials": "scratch[('partials', {!r})]", "result": "scratch[('result', {!r})]",
               "done": "scratch[('done', {!r})]", "stop": "False", "launch": "launch",
               "unordered": "scratch[('unordered', {!r})]", "stamp": "scratch[('stamp', {!r})]",
               "window_low": "scratch[('window_low', {!r})]", "window_width": "scratch[('window_width', {!r})]"}
    items = ", ".join(getters[kind].format(name) for kind, name, *_ in fields)
    return eval(f"lambda ptrs, lengths, scalars, starts, counts, launch, seeds, scratch: ({items},)",  # noqa: S307
                {})


def _compile_repeat_seeds(reductions: tuple[Reduction, ...], plan: CallPlan) \
        -> Callable[[dict, dict], dict | None] | None:
    """`seeds(ptrs, lengths)`: a repeat call's reduction seeds, as `LaunchPlan.launch_seeds` gives them, or
    None where an element seed's index lies outside its slice (the general path raises Rust's panic);
    None where a seed is anything but a literal or an element at a literal index (`let mut min = x[0];`),
    whose value the repeat path does not compute."""
    values, elements = {}, []
    for r in reductions:
        inits = [(r.name, r.init)] + ([(r.location.name, r.location.init)] if r.location is not None else [])
        for name, init in inits:
            on_device = name == r.name and r.seed_on_device
            literal = init["index"] if on_device else init
            if set(literal) - {"lit", "type"}:
                return None
            if on_device:
                if plan.by_name[init["element"]].transfer == Transfer.VALUE:  # no device memory of its own
                    return None
                size = plan.by_name[init["element"]].dtype.itemsize
                elements.append((name, init["element"], literal["lit"], size))
            else:
                values[name] = evaluate(literal, Environment())
    if not elements:
        return lambda ptrs, lengths: values
    inside = " and ".join(f"{index} < lengths[{array!r}]" for _, array, index, _ in elements)
    addresses = ", ".join(f"{name!r}: ptrs[{array!r}] + {index * size}" for name, array, index, size in elements)
    return eval(f"lambda ptrs, lengths: {{**values, {addresses}}} if {inside} else None",  # noqa: S307
                {"values": values})


def _compile_values(fields: list) -> Callable:
    """`values(bound, device_ptrs, start, count, seeds, scratch, stop, launch)`: the launch arguments in
    buffer order, as one generated expression (a per-field loop of `if`s costs more than the launch itself).
    `scratch` maps ("partials" | "result", name) to the device memory of a reduction and ("done", "") to
    the done word (see `readback.py`), ("marks" | "stamp" | "unordered", target) to the mark array, the
    stamp and the order flag of the checks of a slice written through an index list, and ("window_low" |
    "window_width", k) to the window of the k-th group of reads through the loop's index lists; `stop` says
    whether code launched before it in the call can have recorded a panic, and `launch` is the launch's
    number in the call."""
    getters = {"pointer": "device_ptrs[{!r}]", "length": "bound.arrays[{!r}].count",
               "scalar": "bound.scalars[{!r}]", "struct": "bound.structs[{!r}]", "array": "bound.structs[{!r}]",
               "start": "starts[{!r}]", "count": "counts[{!r}]", "seed": "seeds[{!r}]",
               "partials": "scratch[('partials', {!r})]", "result": "scratch[('result', {!r})]",
               "done": "scratch[('done', {!r})]", "marks": "scratch[('marks', {!r})]",
               "stamp": "scratch[('stamp', {!r})]",
               "unordered": "scratch[('unordered', {!r})]", "window_low": "scratch[('window_low', {!r})]",
               "window_width": "scratch[('window_width', {!r})]",
               "uniform": "bound.env.locals[{!r}]", "stop": "stop", "launch": "launch"}
    items = ", ".join(getters[kind].format(name) for kind, name, *_ in fields)
    source = f"lambda bound, device_ptrs, starts, counts, seeds, scratch, stop=False, launch=0: ({items},)"
    return eval(source, {})  # noqa: S307 - the source is built above from the manifest's names only


class HostLoopPlan:
    """A host loop of the schedule: `for var in start..end`, setting the loop's values in the environment
    (its variable and the `let`s the launches' bounds read) before running `body` in every iteration."""

    def __init__(self, loop: HostLoop, plan: CallPlan) -> None:
        self.kernel = plan.name
        self.var = loop.var
        self.source = loop.source
        self.start, self.end = compile_expr(loop.start), compile_expr(loop.end)
        self.inclusive = loop.inclusive
        self.locals = [(local.name, compile_expr(local.expr), local.source) for local in loop.locals]
        self.body = [schedule_step(step, plan) for step in loop.body]
        names = {self.var} | {name for name, _, _ in self.locals}
        for launch in launches_in(self.body, plan):
            checked = host_exprs((launch.launch.dims, launch.launch.stride_checks, launch.launch.bounds,
                                  launch.launch.guarded_bounds, launch.launch.index_lists))
            launch.per_step |= any(reads_local(expr, names) for expr in checked)

    def values(self, env: Environment) -> range:
        try:
            start, end = self.start(env), self.end(env)
        except HostPanic as panic:  # a bound like `n / w` with w == 0
            raise KernelPanic(str(panic), panic.source or self.source, self.kernel) from None
        return range(start, end + 1 if self.inclusive else end)

    def enter(self, env: Environment, value: int) -> None:
        env.locals[self.var] = value
        for name, fn, source in self.locals:
            try:
                env.locals[name] = fn(env)
            except HostPanic as panic:
                raise KernelPanic(str(panic), panic.source or source, self.kernel) from None


def schedule_step(step: int | HostLoop, plan: CallPlan) -> "int | HostLoopPlan":
    """A launch's index, or a host loop."""
    return step if isinstance(step, int) else HostLoopPlan(step, plan)


def launches_in(steps: list, plan: CallPlan) -> list[LaunchPlan]:
    out = []
    for step in steps:
        out += launches_in(step.body, plan) if isinstance(step, HostLoopPlan) else [plan.launches[step]]
    return out


def reads_local(expr, names: set[str]) -> bool:
    """Whether a host expression reads one of the locals `names`."""
    if isinstance(expr, dict):
        return expr.get("local") in names or any(reads_local(v, names) for v in expr.values())
    if isinstance(expr, list):
        return any(reads_local(v, names) for v in expr)
    return False
