"""Everything about a call that does not depend on the argument values, prepared once per kernel.

A call then only classifies each argument, checks it against a precomputed expectation, and packs the
launch arguments with one `struct.pack_into` into a reusable buffer. This keeps the host cost of a call
close to a raw driver launch; the general (slower) conversions in `arguments.py` handle everything the
fast path does not recognise (torch tensors, DLPack objects, structured dtypes, ...).
"""
from __future__ import annotations

import ctypes
import struct
import threading
from dataclasses import dataclass
from typing import Callable

from rs2gpu.runtime.arguments import (PRIM_PACK, ArrayArg, array_argument, check_aliasing, check_array_length,
                                      numpy_dtype, scalar_value, struct_value)
from rs2gpu.runtime.hostexpr import Environment, evaluate


@dataclass(frozen=True)
class ParamSpec:
    index: int
    name: str
    kind: str          # slice | array | struct_ref | scalar | struct
    entry: dict        # the manifest entry of the parameter (for the general path and messages)
    dtype: object      # numpy dtype of the elements (arrays) or None
    mutable: bool
    transfer: str


class BoundArgs:
    """A call's checked arguments."""

    __slots__ = ("arrays", "scalars", "structs", "env")

    def __init__(self) -> None:
        self.arrays: dict[str, ArrayArg] = {}
        self.scalars: dict[str, object] = {}
        self.structs: dict[str, bytes] = {}
        self.env = Environment()


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
    return lambda env: evaluate(expr, env)


class CallPlan:
    def __init__(self, name: str, entry: dict) -> None:
        import numpy as np

        self.name = name
        self.entry = entry
        self.params = []
        for i, p in enumerate(entry["params"]):
            dtype = numpy_dtype(p["elem"]) if "elem" in p else None
            self.params.append(ParamSpec(i, p["name"], p["kind"], p, dtype, bool(p.get("mutable")), p["transfer"]))
        self.by_name = {p.name: p for p in self.params}
        self._np_ndarray = np.ndarray
        self.preamble = [(local["name"], compile_expr(local["expr"])) for local in entry["preamble"]]
        self.launches = [LaunchPlan(self, launch) for launch in entry["launches"]]
        self.result = compile_expr(entry["returns"]["expr"]) if entry["returns"] else None
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
        for spec, value in zip(params, args):
            if spec.dtype is not None:
                arg = self._array(spec, value, allow_device)
                bound.arrays[spec.name] = arg
                env.lengths[spec.name] = arg.count
            elif spec.kind == "scalar":
                bound.scalars[spec.name] = env.params[spec.name] = scalar_value(spec.entry, value)
            else:
                bound.structs[spec.name] = struct_value(spec.entry, value)
        arrays = bound.arrays
        for m, o in self.alias_pairs:
            if arrays[m].overlaps(arrays[o]):
                check_aliasing(self.entry["params"], {m: arrays[m], o: arrays[o]})
        for name, fn in self.preamble:
            env.locals[name] = fn(env)
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

    def _array(self, spec: ParamSpec, value, allow_device: bool) -> ArrayArg:
        kind = type(value)
        if kind.__name__ == "ndarray" and kind.__module__.startswith("cupy") and allow_device \
                and value.dtype == spec.dtype and value.flags.c_contiguous and spec.kind == "slice":
            return ArrayArg(spec.name, value.data.ptr, value.nbytes, value.size, value.device.id, None, True)
        if kind is self._np_ndarray and value.dtype == spec.dtype and value.flags.c_contiguous \
                and spec.kind == "slice" and (value.flags.writeable or not spec.mutable) and not spec.dtype.fields:
            return ArrayArg(spec.name, value.ctypes.data, value.nbytes, value.size, None, value.reshape(-1),
                            value.flags.writeable)
        arg = array_argument(spec.entry, value, allow_device)
        check_array_length(spec.entry, arg)
        return arg


class LaunchPlan:
    """The argument buffer layout of one launch: every argument at its own aligned offset, so the
    `void**` array the driver wants is fixed and only the bytes change between calls."""

    def __init__(self, plan: CallPlan, launch: dict) -> None:
        self.launch = launch
        self.symbol = launch["symbol"]
        self.source = launch["source"]
        self.start = compile_expr(launch["start"])
        self.end = compile_expr(launch["end"])
        self.inclusive = launch["inclusive"]
        self.reductions = [(r["name"], r["type"], compile_expr(r["init"])) for r in launch["reductions"]]
        fields = []  # (what, parameter name, struct format code, size, alignment)
        for p in plan.entry["params"]:
            for part in p["abi"]:
                if part["role"] == "pointer":
                    fields.append(("pointer", p["name"], "Q", 8, 8))
                elif part["role"] == "length":
                    fields.append(("length", p["name"], "Q", 8, 8))
                elif p["kind"] == "scalar":
                    fields.append(("scalar", p["name"], PRIM_PACK[p["layout"]["type"]], part["size"], part["align"]))
                else:
                    fields.append(("struct", p["name"], f"{part['size']}s", part["size"], part["align"]))
        fields.append(("start", "", PRIM_PACK[launch["index_type"]], struct.calcsize(PRIM_PACK[launch["index_type"]]),
                       struct.calcsize(PRIM_PACK[launch["index_type"]])))
        fields.append(("count", "", "Q", 8, 8))
        for r in launch["reductions"]:
            fields.append(("reduction", r["name"], "Q", 8, 8))
        self.format, offsets, offset = "<", [], 0
        for _, _, code, size, align in fields:
            pad = (-offset) % max(align, 1)
            self.format += "x" * pad + code
            offset += pad
            offsets.append(offset)
            offset += size
        self.fields = fields
        self.size = max(offset, 8)
        self.buffer = ctypes.create_string_buffer(self.size)
        base = ctypes.addressof(self.buffer)
        self.pointers = (ctypes.c_void_p * len(fields))(*[base + off for off in offsets])
        self.pointers_address = ctypes.addressof(self.pointers)
        self.lock = threading.Lock()

    def count(self, env: Environment) -> tuple[int, int]:
        start, end = self.start(env), self.end(env)
        return start, max(0, end - start + (1 if self.inclusive else 0))

    def values(self, bound: BoundArgs, device_ptrs: dict[str, int], start: int, count: int,
               slots: dict[str, int]) -> list:
        out = []
        for kind, name, *_ in self.fields:
            if kind == "pointer":
                out.append(device_ptrs[name])
            elif kind == "length":
                out.append(bound.arrays[name].count)
            elif kind == "scalar":
                out.append(bound.scalars[name])
            elif kind == "struct":
                out.append(bound.structs[name])
            elif kind == "start":
                out.append(start)
            elif kind == "count":
                out.append(count)
            else:
                out.append(slots[name])
        return out
