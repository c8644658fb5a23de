"""Everything about a call that does not depend on the argument values, prepared once per kernel.

A call then only classifies each argument, checks it against a precomputed expectation, and packs the
launch arguments with one `struct.pack_into` into a reusable buffer. This keeps the host cost of a call
close to a raw driver launch; the general (slower) conversions in `arguments.py` handle everything the
fast path does not recognise (torch tensors, DLPack objects, structured dtypes, ...).
"""
from __future__ import annotations

import ctypes
import struct
import sys
import threading
from dataclasses import dataclass
from typing import Callable

from rs2gpu.runtime.arguments import (INT_RANGES, PRIM_PACK, ArrayArg, array_argument, check_aliasing,
                                      check_array_length, numpy_dtype, scalar_value, struct_value)
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


def c_contiguous_of(array_type: type | None) -> Callable:
    """How to ask an array of `array_type` whether it is C-contiguous: cupy keeps the answer in a C field
    (`_c_contiguous`, there since its first releases) where `.flags` builds an object per call."""
    if array_type is not None and hasattr(array_type, "_c_contiguous"):
        return lambda array: array._c_contiguous
    return lambda array: array.flags.c_contiguous


def struct_fields(layout: dict, data: bytes, offset: int = 0) -> dict:
    """The scalar fields of a struct's bytes, by name (nested structs as nested dicts), for host
    expressions such as a loop bound `dims.num_z`."""
    out = {}
    for f in layout["fields"]:
        if "fields" in f:
            out[f["name"]] = struct_fields(f, data, offset + f["offset"])
        elif f["type"] in PRIM_PACK:
            out[f["name"]] = struct.unpack_from("<" + PRIM_PACK[f["type"]], data, offset + f["offset"])[0]
    return out


@dataclass(frozen=True)
class ParamSpec:
    index: int
    name: str
    kind: str          # slice | array | struct_ref | scalar | struct
    entry: dict        # the manifest entry of the parameter (for the general path and messages)
    dtype: object      # numpy dtype of the elements (arrays) or None
    mutable: bool
    transfer: str
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
    def __init__(self, name: str, entry: dict) -> None:
        import numpy as np

        self.name = name
        self.entry = entry
        self.params = []
        for i, p in enumerate(entry["params"]):
            dtype = numpy_dtype(p["elem"]) if "elem" in p else None
            fast = float if p["kind"] == "scalar" and p["type"] == "f64" else bool if p["type"] == "bool" else None
            self.params.append(ParamSpec(i, p["name"], p["kind"], p, dtype, bool(p.get("mutable")), p["transfer"],
                                         fast))
        self.by_name = {p.name: p for p in self.params}
        self._np_ndarray = np.ndarray
        self._cupy_contiguous: Callable | None = None  # set at the first cupy array (see `c_contiguous_of`)
        self.preamble = [(local["name"], compile_expr(local["expr"]), local.get("source", entry["source"]))
                         for local in entry["preamble"]]
        self.launches = [LaunchPlan(self, launch) for launch in entry["launches"]]
        self.schedule = [schedule_step(step, self) for step in entry["schedule"]] if "schedule" in entry else None
        # the call's last step, when it is a launch (not a host loop): nothing runs after its verification
        last = self.schedule[-1] if self.schedule else len(self.launches) - 1
        if isinstance(last, int) and last >= 0 and self.launches[last].verify is not None:
            self.launches[last].verify.last = True
        self.result = compile_expr(entry["returns"]["expr"]) if entry["returns"] else None
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
            elif spec.kind == "scalar":
                if type(value) is not spec.fast_scalar:
                    value = scalar_value(spec.entry, value)
                bound.scalars[spec.name] = env.params[spec.name] = value
            else:
                data = bound.structs[spec.name] = struct_value(spec.entry, value)
                env.params[spec.name] = struct_fields(spec.entry["layout"], data)
        arrays = bound.arrays
        for m, o in self.alias_pairs:
            if arrays[m].overlaps(arrays[o]):
                check_aliasing(self.entry["params"], {m: arrays[m], o: arrays[o]})
        for name, fn, source in self.preamble:
            try:
                env.locals[name] = fn(env)
            except HostPanic as panic:  # e.g. `let rows = len / w` with w == 0: Rust panics right there
                raise KernelPanic(str(panic), source, self.name) from None
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
        if kind is device_array and value.dtype == spec.dtype and spec.kind == "slice":
            if self._cupy_contiguous is None:
                self._cupy_contiguous = c_contiguous_of(kind)
            if self._cupy_contiguous(value):
                memory, count = value.data, value.size
                return ArrayArg(spec.name, memory.ptr, count * spec.dtype.itemsize, count, memory.device_id, None,
                                True)
        if kind is self._np_ndarray and value.dtype == spec.dtype and value.flags.c_contiguous and value.flags.aligned \
                and spec.kind == "slice" and (value.flags.writeable or not spec.mutable) and not spec.dtype.fields:
            return ArrayArg(spec.name, value.ctypes.data, value.nbytes, value.size, None, value.reshape(-1),
                            value.flags.writeable)
        arg = array_argument(spec.entry, value, allow_device)
        check_array_length(spec.entry, arg)
        return arg


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


def _loop_fields(entry: dict, launch: dict) -> list[tuple]:
    """The fields of a launch's arguments up to its reduction results: the kernel's parameters (a slice's
    length only where the launch's code reads it), each dimension's start and count, the launch's number in the call (for a launch that can record or stop on
    a panic), then the values of the host loops around it that it reads."""
    fields = []
    for p in entry["params"]:
        for part in p["abi"]:
            if part["role"] == "pointer":
                fields.append(("pointer", p["name"], "Q", 8, 8))
            elif part["role"] == "length":
                if p["name"] in launch["lengths"]:
                    fields.append(("length", p["name"], "Q", 8, 8))
            elif p["kind"] == "scalar":
                fields.append(("scalar", p["name"], PRIM_PACK[p["layout"]["type"]], part["size"], part["align"]))
            elif p["kind"] == "array":  # a small read-only array passed by value: its elements' bytes
                fields.append(("array", p["name"], f"{part['size']}s", part["size"], part["align"]))
            else:
                fields.append(("struct", p["name"], f"{part['size']}s", part["size"], part["align"]))
    for dim in launch["dims"]:
        code = PRIM_PACK[dim["index_type"]]
        fields.append(("start", dim["axis"], code, struct.calcsize(code), struct.calcsize(code)))
        fields.append(("count", dim["axis"], "Q", 8, 8))
    if launch.get("numbered"):
        fields.append(("launch", "launch", "I", 4, 4))
    for value in launch.get("uniforms", ()):
        code = PRIM_PACK[value["type"]]
        fields.append(("uniform", value["name"], code, struct.calcsize(code), struct.calcsize(code)))
    return fields


@dataclass(frozen=True)
class Variant:
    """One entry point of a launch, and whether the code it runs can record a panic; `one_wave`, whether it
    runs on a grid of one wave (blocks that keep a private copy of a scatter target flush it when done)."""

    symbol: str
    records_panics: bool
    one_wave: bool = False


def _list_targets(launch: dict) -> list[str]:
    """The slices a loop writes through index lists, one check of each (see `emit.verify`)."""
    return [check["target"] for check in launch.get("index_lists", ())]


class IndexListVerification(PackedArguments):
    """The launch of the kernel that verifies, after a loop, the index lists the loop found out of order:
    the loop's own arguments, then a mark array, the stamp and the order flag for each slice written
    through a list (`targets`)."""

    def __init__(self, entry: dict, launch: dict) -> None:
        self.symbol = launch["verify"]["symbol"]
        self.targets = _list_targets(launch)
        self.last = False  # whether it verifies the call's last launch, so the host may decide after the wait
        fields = _loop_fields(entry, launch)
        for target in self.targets:
            fields += [("marks", target, "Q", 8, 8), ("stamp", target, "I", 4, 4), ("unordered", target, "Q", 8, 8)]
        super().__init__(fields)


class LaunchPlan(PackedArguments):
    """One parallel loop: its host checks, its entry points, and its argument buffer."""

    def __init__(self, plan: CallPlan, launch: dict) -> None:
        self.launch = launch
        self.kernel = plan.name
        self.symbol = launch["symbol"]
        self.source = launch["source"]
        self.dims = [(dim["axis"], compile_expr(dim["start"]), compile_expr(dim["end"]), dim["inclusive"])
                     for dim in launch["dims"]]
        self.reduces = bool(launch["reductions"])
        # each reduction's value before the loop (and its location's), which the launch takes by value,
        # but where the seed is an element of a slice the kernel only reads: the launch takes the element's
        # address (name, slice, index, element size, source), and the host reads the element only for a
        # launch that runs no iteration
        self._seeds = [(r["name"], compile_expr(r["init"])) for r in launch["reductions"]
                       if not r.get("seed_on_device")]
        self._seeds += [(r["location"], compile_expr(r["location_init"])) for r in launch["reductions"]
                        if "location" in r]
        self._seed_elements = [(r["name"], r["init"]["element"], compile_expr(r["init"]["index"]),
                                plan.by_name[r["init"]["element"]].dtype.itemsize, r["init"]["source"])
                               for r in launch["reductions"] if r.get("seed_on_device")]
        self._seed_values = self._seeds + [(r["name"], compile_expr(r["init"])) for r in launch["reductions"]
                                           if r.get("seed_on_device")]
        self.repeat_seeds = _compile_repeat_seeds(launch["reductions"], plan)
        self.checks = [(check["poly"], check["source"]) for check in launch.get("checks", ())]
        self.index_lists = launch.get("index_lists", [])
        self.bounds = launch.get("bounds", [])
        self.bounds_hold = compile_ranges(self.bounds)
        self.guarded = launch.get("guarded_bounds", [])
        self.guarded_hold = compile_ranges(self.guarded)
        self.variants = [Variant(v["symbol"], v["records_panics"]) for v in launch["variants"]]
        private = launch.get("private")
        # (the entry point, the scatter target it copies per block, the longest target the copy holds)
        self.private = (Variant(private["symbol"], private["records_panics"], one_wave=True), private["target"],
                        private["capacity"]) if private else None
        self.verify = IndexListVerification(plan.entry, launch) if launch.get("verify") else None
        proven = launch.get("proven")
        self.proven = Variant(proven["symbol"], proven["records_panics"]) if proven else None
        # it runs one thread per iteration: (the block it needs, the count every axis must stay below)
        self.proven_shape = (tuple(proven["block"]) if proven["block"] else None, proven["count_limit"], proven["lead"]) \
            if proven else None
        # the lists the proven entry point needs verified, those whose order must keep the written indices
        # distinct, and (list, scale, offset, slice) for each index scale * value + offset the proof bounds
        self.proven_lists = proven["lists"] if proven else []
        self._ordered_lists = [entry["list"] for entry in self.index_lists]
        self._proof_terms = _proof_terms(self.index_lists, proven["reads"]) if proven else []
        self._proof_inputs = _compile_window_inputs([{"param": param or name, "offsets": [offset]}
                                                     for name, _, offset, param in self._proof_terms])
        self._proofs: dict[tuple, bool] = {}
        covering = launch.get("covering")
        # (symbol, the block its body needs or None, the count every axis must stay below, the idle threads
        # before x's first iteration, whether it can panic)
        self.covering = (covering["symbol"], tuple(covering["block"]) if covering["block"] else None,
                         covering["count_limit"], covering["lead"], covering["records_panics"]) if covering else None
        vector = launch.get("vector")
        # (symbol, iterations per thread, the alignment its accesses need, the slices they are to with the
        # offset of each one's first lane from the loop variable)
        self.vector = (vector["symbol"], vector["width"], vector["alignment"],
                       tuple(zip(vector["slices"], vector["offsets"]))) if vector else None
        self._vector_aligned = _compile_alignment(*self.vector[1:]) if vector else None
        # a nest's vector entry point runs one thread per group of a row, on a grid that covers them: every
        # count below this (None: a single loop's, a grid-stride loop over its groups)
        self.vector_count_limit = vector.get("count_limit") if vector else None
        l2_adds = launch.get("l2_adds")
        # (symbol, the bytes of slice elements an iteration touches)
        self.l2_adds = (l2_adds["symbol"], l2_adds["bytes_per_iteration"]) if l2_adds else None
        fields = _loop_fields(plan.entry, launch)
        windows = 0
        for entry in self.index_lists:  # the loop's own checks of the list (`emit.verify`)
            fields += [("unordered", entry["target"], "Q", 8, 8), ("stamp", entry["target"], "I", 4, 4)]
            for _ in entry["windows"]:
                fields += [("window_low", windows, "Q", 8, 8), ("window_width", windows, "Q", 8, 8)]
                windows += 1
        if launch.get("stops"):  # whether code launched before it in the call can have recorded a panic
            fields.append(("stop", "", "?", 1, 1))
        self._window_inputs = _compile_window_inputs([w for entry in self.index_lists for w in entry["windows"]])
        # the arguments of the list checks the proven entry point takes but does not read
        self.unchecked_lists = {**{(kind, entry["target"]): 0 for entry in self.index_lists
                                   for kind in ("unordered", "stamp")},
                                **{(kind, k): 0 for k in range(windows) for kind in ("window_low", "window_width")}}
        self._windows: dict[tuple, tuple] = {}
        for r in launch["reductions"]:
            seeds = [(r["name"], r["type"])] + ([(r["location"], r["location_type"])] if "location" in r else [])
            for name, ty in seeds:
                code = "Q" if name == r["name"] and r.get("seed_on_device") else PRIM_PACK[ty]
                fields.append(("seed", name, code, struct.calcsize(code), struct.calcsize(code)))
            fields.append(("partials", r["name"], "Q", 8, 8))
            fields += [("result", name, "Q", 8, 8) for name, _ in seeds]
        if launch.get("signals_done"):  # the word the launch sets after its results (`readback.py`)
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
        return self.l2_adds is not None and counts["x"] * self.l2_adds[1] <= l2_bytes

    def iteration_space(self, env: Environment) -> tuple[dict[str, int], dict[str, int]]:
        """The first index and the number of iterations along each grid axis (0 for an empty range)."""
        starts, counts = {}, {}
        try:
            for axis, start, end, inclusive in self.dims:
                first = start(env)
                starts[axis] = first
                counts[axis] = max(0, end(env) - first + (1 if inclusive else 0))
        except HostPanic as panic:  # a bound like `n / w` with w == 0 panics in Rust before the loop
            raise KernelPanic(str(panic), self.source, self.kernel) from None
        return starts, counts

    def index_list_ranges(self, env: Environment, starts: dict[str, int], counts: dict[str, int]):
        """For each index-list write: (list name, first position, end position, scale, offset, target)."""
        out = []
        for entry in self.index_lists:
            shift = poly_value(entry["position"], env)
            offset = poly_value(entry["offset"], env)
            first = starts["x"] + shift
            out.append((entry["list"], first, first + counts["x"], entry["scale"], offset, entry["target"],
                        entry["source"]))
        return out

    def read_windows(self, env: Environment) -> tuple[tuple[int, int], ...]:
        """The (low, width) of every group of reads through the loop's index lists (see `listwindows.py`),
        in launch argument order; kept for the values and lengths they are computed from, which one
        generated expression reads (computing them costs more than a launch)."""
        key = self._window_inputs(env)
        windows = self._windows.get(key)
        if windows is None:
            windows = tuple(read_window([poly_value(offset, env) for offset in window["offsets"]],
                                        env.lengths[window["param"]])
                            for entry in self.index_lists for window in entry["windows"])
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
        return f"index out of bounds: the len is {env.lengths[check['param']]} but the index is {index}", \
            check["source"]

    def variant(self, env: Environment) -> Variant:
        """The entry point to launch: the private one when the scatter target fits the blocks' copies; the
        one without checks of the conditional accesses when the host finds all of them in bounds over the
        whole iteration space, else the one that checks them."""
        if self.private is not None and env.lengths[self.private[1]] <= self.private[2]:
            return self.private[0]  # a launch with a private entry point has no conditional checks
        if len(self.variants) == 1 or (self.guarded_hold is not None and self.guarded_hold(env)) \
                or not any(may_leave(check, env) for check in self.guarded):
            return self.variants[0]
        return self.variants[1]

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
        if any(facts[name].order is None for name in self._ordered_lists):
            return False  # values strictly rising or falling are distinct, so are the indices they make
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
        for terms, source in self.checks:
            if poly_value(terms, env) < 0:
                raise RaceError(f"kernel `{kernel}`: with these arguments, two iterations of the loop at {source} "
                                f"would write the same element (the row stride is shorter than the row); "
                                f"nothing was launched")



def _proof_terms(index_lists: list, reads: list) -> list[tuple]:
    """(list, scale, offset, slice) for each index `scale * value + offset` that the proven entry point of a
    loop reads or writes through a list without a check: it must lie in [0, len(slice)) for every value of
    the list, or in [0, 2^64) for slice None (a written index whose bounds the loop checks itself; distinct
    values must still make distinct indices)."""
    terms = []
    for entry in index_lists:
        terms.append((entry["list"], entry["scale"], entry["offset"],
                      entry["target"] if entry["bounds"] is not None else None))
        terms += [(entry["list"], window["scale"], offset, window["param"])
                  for window in entry["windows"] for offset in window["offsets"]]
    return terms + [(read["list"], read["scale"], read["offset"], read["param"]) for read in reads]


def _compile_window_inputs(windows: list) -> Callable[[Environment], tuple]:
    """What a list of windows (`{"param", "offsets"}`: groups of reads through index lists) is computed
    from, as one expression: the values their offsets are polynomials of, and the lengths of the slices
    read (every offset itself where a factor is not a plain length, parameter or local)."""
    factors = {f"env.lengths[{window['param']!r}]" for window in windows}
    for window in windows:
        for terms in window["offsets"]:
            for _, poly_factors in terms:
                factors |= {simple_source(f) for f in poly_factors}
    if None in factors:
        return lambda env: tuple((poly_value(terms, env) for window in windows for terms in window["offsets"])) \
            + tuple(env.lengths[window["param"]] for window in windows)
    return eval(f"lambda env: ({''.join(f + ', ' for f in sorted(factors))})", {})  # noqa: S307 - from the manifest


def decision_inputs(entry: dict) -> tuple[list[str], list[str]] | None:
    """The integer parameters and preamble values the launches' bounds, checks and index-list positions
    and proofs name, beside the slices' lengths and the facts of the verified lists the proofs take
    (`verified_lists`): what a call's host checks, entry-point choice and launch shapes read; None where
    those decisions read anything else: a host loop's values, struct fields, elements, or floats (whose
    key would not tell -0.0 from 0.0)."""
    launches = entry["launches"]
    if any("loop" in step for step in entry.get("schedule", ())):
        return None
    params = {p["name"]: p for p in entry["params"]}
    local_types = {local["name"]: local["type"] for local in entry["preamble"]}
    names: dict[str, set] = {"param": set(), "local": set()}
    if not _note_reads([[launch.get(key) for key in ("dims", "checks", "bounds", "guarded_bounds", "index_lists",
                                                     "proven")]
                        for launch in launches], names):
        return None
    integer = set(PRIM_PACK) - {"f32", "f64"}
    if any(params[name]["kind"] != "scalar" or params[name]["type"] not in integer for name in names["param"]) \
            or any(local_types.get(name) not in integer for name in names["local"]):
        return None
    return sorted(names["param"]), sorted(names["local"])


def verified_lists(entry: dict) -> list[str]:
    """The index lists whose facts a launch's proof takes (see `LaunchPlan.lists_proven`), in a fixed order."""
    return sorted({name for launch in entry["launches"] for name in (launch.get("proven") or {}).get("lists", ())})


def _decision_key(entry: dict) -> Callable[[BoundArgs], tuple] | None:
    """`key(bound)`: the values a call's host checks, entry-point choice and launch shapes read, as one
    generated expression (every slice's length, the integer parameters and preamble values of
    `decision_inputs`, then the facts of each of the `verified_lists`, None for a plain array), so that a
    backend decides once per key; None where those decisions read anything else."""
    inputs = decision_inputs(entry)
    if inputs is None:
        return None
    parts = [f"bound.env.lengths[{p['name']!r}], " for p in entry["params"] if "elem" in p]
    parts += [f"bound.env.params[{name!r}], " for name in inputs[0]]
    parts += [f"bound.env.locals[{name!r}], " for name in inputs[1]]
    # facts are values: lists of the same least and greatest value and order prove the same, and a key holds
    # no list (nor its device copy) alive
    parts += [f"getattr(bound.arrays[{name!r}].verified, 'facts', None), " for name in verified_lists(entry)]
    return eval(f"lambda bound: ({''.join(parts)})", {})  # noqa: S307 - from the manifest's names only


def compile_repeat_binding(plan: CallPlan, device_type: type, contiguous: Callable, ordinal: int,
                           list_pointer: Callable[[IndexList], int]) -> Callable[[tuple], tuple | None] | None:
    """For a kernel whose calls can repeat (see `DeviceKernel._repeat`): `bind(args)`, the positional
    arguments of a call checked as the general path would find them, or None where it would not (or would
    raise): every slice an array of `device_type` on device `ordinal`, of its dtype and C-contiguous, but
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
    preamble = {local["name"]: local["expr"] for local in entry["preamble"]}
    lists = verified_lists(entry)
    names = {"T": device_type, "C": contiguous, "L": IndexList, "P": list_pointer}
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
        elif p.kind == "slice" and p.dtype is not None:
            names[f"D{p.index}"] = p.dtype
            lines += [f"    if type({a}) is not T or {a}.dtype != D{p.index} or not C({a}):", "        return None",
                      f"    m{p.index} = {a}.data", f"    if m{p.index}.device_id != {ordinal}:", "        return None"]
            ptrs.append(f"{p.name!r}: m{p.index}.ptr")
            lengths.append(f"{p.name!r}: {a}.size")
        elif p.kind == "scalar" and p.entry["type"] in ("bool", "f64"):
            python_type = "bool" if p.entry["type"] == "bool" else "float"
            lines += [f"    if type({a}) is not {python_type}:", "        return None"]
            scalars.append(f"{p.name!r}: {a}")
        elif p.kind == "scalar" and p.entry["type"] in INT_RANGES:
            lo, hi = INT_RANGES[p.entry["type"]]
            lines += [f"    if type({a}) is not int or not {lo} <= {a} <= {hi}:", "        return None"]
            scalars.append(f"{p.name!r}: {a}")
        elif p.kind == "array" and p.transfer == "value" and p.dtype.fields is None:
            # a numpy array whose elements travel in the launch arguments, as the general path takes it:
            # any C-contiguous shape of `length` elements, aligned as a Rust reference is
            names["ndarray"], names[f"D{p.index}"] = plan._np_ndarray, p.dtype
            lines += [f"    if type({a}) is not ndarray or {a}.dtype != D{p.index} or {a}.size != {p.entry['length']}:",
                      "        return None", f"    f{p.index} = {a}.flags",
                      f"    if not f{p.index}.c_contiguous or not f{p.index}.aligned:", "        return None"]
            lengths.append(f"{p.name!r}: {p.entry['length']}")
            scalars.append(f"{p.name!r}: {a}.tobytes()")
        else:
            return None
    by_value = {p.name for p in plan.params if p.transfer == "value"}
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
    exec("\n".join(lines), names)  # noqa: S102 - the source is built above from the manifest's names only
    return names["bind"]


def _preamble_repeats(entry: dict, key_params: set) -> bool:
    """Whether the preamble computes, for calls of one decision key, what it computed before: it reads
    lengths, preamble values and parameters, the integer ones among them in the key (a float operation
    cannot panic, an integer one by one of the key's values would have panicked before), and no element
    or field."""
    floats = {p["name"] for p in entry["params"] if p["kind"] == "scalar" and p["type"] in ("f32", "f64")}
    names: dict[str, set] = {"param": set(), "local": set()}
    return _note_reads([local["expr"] for local in entry["preamble"]], names) \
        and names["param"] <= key_params | floats


def _result_repeats(entry: dict) -> bool:
    """Whether the value a call returns can be computed from its reductions' results, parameters and
    lengths alone (the repeat path evaluates no preamble): no preamble value, element or field."""
    if not entry["returns"]:
        return True
    names: dict[str, set] = {"param": set(), "local": set()}
    return _note_reads(entry["returns"]["expr"], names, reductions=True) and not names["local"]


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
        if set(node) <= {kind, "type"}:  # a leaf (a bound's own "param" names its slice)
            names[kind].add(node[kind])
            return True
    return all(_note_reads(value, names, reductions) for value in node.values())


def _compile_alignment(width: int, alignment: int, slices: tuple) -> Callable[[dict, int], bool]:
    """`aligned(device_ptrs, start)`: whether every slice's first lane, at `start` plus its offset, lies at a
    multiple of `alignment` bytes, as one generated expression (it runs in every call of a streaming loop);
    always, with no slices (a nest's groups test their rows themselves)."""
    size = alignment // width
    terms = " and ".join(f"(device_ptrs[{name!r}] + (start + {offset}) * {size}) % {alignment} == 0"
                         for name, offset in slices)
    return eval(f"lambda device_ptrs, start: {terms or True}", {})  # noqa: S307 - from the manifest's names only


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


def _compile_repeat_seeds(reductions: list, plan: CallPlan) -> Callable[[dict, dict], dict | None] | None:
    """`seeds(ptrs, lengths)`: a repeat call's reduction seeds, as `LaunchPlan.launch_seeds` gives them, or
    None where an element seed's index lies outside its slice (the general path raises Rust's panic);
    None where a seed is anything but a literal or an element at a literal index (`let mut min = x[0];`),
    whose value the repeat path does not compute."""
    values, elements = {}, []
    for r in reductions:
        inits = [(r["name"], r["init"])] + ([(r["location"], r["location_init"])] if "location" in r else [])
        for name, init in inits:
            on_device = name == r["name"] and r.get("seed_on_device")
            literal = init["index"] if on_device else init
            if set(literal) - {"lit", "type"}:
                return None
            if on_device:
                if plan.by_name[init["element"]].transfer == "value":  # no device memory of its own
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

    def __init__(self, loop: dict, plan: CallPlan) -> None:
        self.kernel = plan.name
        self.var = loop["var"]
        self.source = loop["source"]
        self.start, self.end = compile_expr(loop["start"]), compile_expr(loop["end"])
        self.inclusive = loop["inclusive"]
        self.locals = [(local["name"], compile_expr(local["expr"]), local["source"]) for local in loop["locals"]]
        self.body = [schedule_step(step, plan) for step in loop["body"]]
        names = {self.var} | {name for name, _, _ in self.locals}
        for launch in launches_in(self.body, plan):
            checked = [launch.launch[key] for key in ("dims", "checks", "bounds", "guarded_bounds", "index_lists")
                       if key in launch.launch]
            launch.per_step |= any(reads_local(part, names) for part in checked)

    def values(self, env: Environment) -> range:
        try:
            start, end = self.start(env), self.end(env)
        except HostPanic as panic:  # a bound like `n / w` with w == 0
            raise KernelPanic(str(panic), self.source, self.kernel) from None
        return range(start, end + 1 if self.inclusive else end)

    def enter(self, env: Environment, value: int) -> None:
        env.locals[self.var] = value
        for name, fn, source in self.locals:
            try:
                env.locals[name] = fn(env)
            except HostPanic as panic:
                raise KernelPanic(str(panic), source, self.kernel) from None


def schedule_step(step: dict, plan: CallPlan) -> "int | HostLoopPlan":
    """A launch's index, or a host loop."""
    return step["launch"] if "launch" in step else HostLoopPlan(step["loop"], plan)


def launches_in(steps: list, plan: CallPlan) -> list[LaunchPlan]:
    out = []
    for step in steps:
        out += launches_in(step.body, plan) if isinstance(step, HostLoopPlan) else [plan.launches[step]]
    return out


def reads_local(expr, names: set[str]) -> bool:
    """Whether a manifest host expression (or a structure of them) reads one of the locals `names`."""
    if isinstance(expr, dict):
        return expr.get("local") in names or any(reads_local(v, names) for v in expr.values())
    if isinstance(expr, list):
        return any(reads_local(v, names) for v in expr)
    return False
