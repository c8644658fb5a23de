"""Running one table entry: its data for both sides, the generated kernel's arguments bound by parameter name,
the hand-written kernel's launches, and the comparison of the two sides' results.

Works with numpy arrays (the dry run binds and checks everything on the host) and with cupy arrays.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bench.data import POISON_F64, POISON_I32, POISON_I64, Rand
from bench.kernels import Kernel
from rs2gpu.ir.abi import KernelABI, Layout, ParamKind, Transfer
from rs2gpu.ir.types import PRIMITIVES



class BindError(Exception):
    """The generated kernel's signature asks for something the table does not provide."""


@dataclass
class Sides:
    """The data of one entry: `hand` and `gen` share the inputs; each has its own outputs and inout arrays."""

    kernel: Kernel
    dims: dict
    hand: dict
    gen: dict


def prepare(k: Kernel, dims: dict, xp, seed: int) -> Sides:
    r = Rand(xp, seed)
    base = k.data(r, dims)
    gen = dict(base)
    for name in (*k.outputs, *k.inout):
        gen[name] = base[name].copy()
    hand = dict(base)
    if k.host_result is not None:
        hand.update(k.host_result.buffers(r, dims))
    return Sides(k, dims, hand, gen)


def _lookup(name: str, v: dict, d: dict):
    if name in v:
        return v[name]
    if name in d:
        return d[name]
    raise BindError(f"the generated kernel's parameter `{name}` has no value in the bench table")


def _scalar(value, rust_type: str):
    if rust_type in ("f32", "f64"):
        return float(value)
    if rust_type == "bool":
        return bool(value)
    return int(value)


def _struct(layout: Layout, v: dict, d: dict) -> dict:
    out = {}
    for f in layout.fields:
        out[f.name] = _struct(f.layout, v, d) if f.layout.is_struct else _scalar(_lookup(f.name, v, d), f.layout.type)
    return out


def generated_arguments(entry: KernelABI, v: dict, d: dict, verified: tuple = ()) -> tuple:
    """The generated kernel's arguments, by parameter name, from the side's data and the dims. Integer arrays
    are reinterpreted to the Rust element type when only the signedness differs (i64 zone lists as usize);
    the lists named in `verified` become verified lists (`rs2gpu.IndexList`)."""
    import rs2gpu

    args = []
    for p in entry.params:
        kind, name = p.kind, p.name
        if kind in (ParamKind.SLICE, ParamKind.ARRAY):
            array = _lookup(name, v, d)
            elem = p.layout.type
            if elem not in PRIMITIVES:
                raise BindError(f"parameter `{name}`: slices of {elem} are not supported by the bench")
            want = np.dtype(PRIMITIVES[elem].dtype)
            if array.dtype != want:
                if array.dtype.kind in "iu" and want.kind in "iu" and array.dtype.itemsize == want.itemsize:
                    array = array.view(want)
                else:
                    raise BindError(f"parameter `{name}` is {p.rust_type} but the table's array holds {array.dtype}")
            if kind == ParamKind.ARRAY and array.size != p.length:
                raise BindError(f"parameter `{name}` is {p.rust_type} but the table's array has {array.size} "
                                f"elements")
            if p.transfer == Transfer.VALUE:
                # it travels in the launch arguments: a host copy, made once, as the hand-written side
                # copies its constant-memory coefficients once
                array = _on_host(array)
            args.append(rs2gpu.IndexList(array) if name in verified else array)
        elif kind == ParamKind.SCALAR:
            args.append(_scalar(_lookup(name, v, d), p.rust_type))
        elif kind == ParamKind.STRUCT:
            args.append(_struct(p.layout, v, d))
        else:
            raise BindError(f"parameter `{name}` ({p.rust_type}, {kind.value}) is not supported by the bench")
    return tuple(args)


def pad3(dims: tuple) -> tuple:
    return tuple(dims) + (1,) * (3 - len(dims))


def hand_launches(k: Kernel, v: dict, d: dict) -> list[tuple]:
    """(symbol, grid, block, arguments, shared bytes) of every launch, the arguments built once."""
    return [(lp.symbol, pad3(lp.grid(d)), pad3(lp.block), lp.args(v, d), lp.shared_bytes) for lp in k.launches]


def hand_caller(k: Kernel, v: dict, d: dict, functions: dict, stream):
    """A call of the hand-written side: the HostResult's initialisation, the launches (cupy RawKernels on
    `stream`), and the HostResult's read-back; returns the read-back results (or None)."""
    plan = [(functions[symbol], grid, block, args, shared)
            for symbol, grid, block, args, shared in hand_launches(k, v, d)]
    result = k.host_result

    def call():
        if result is not None:
            result.before(v, d)
        for function, grid, block, args, shared in plan:
            function(grid, block, args, shared_mem=shared, stream=stream)
        return result.finish(v, d) if result is not None else None

    return call


def generated_caller(k: Kernel, entry: dict, v: dict, d: dict, function, verified_lists: bool = True):
    """A call of the generated side; its index lists verified as the table says, or plain arrays."""
    args = generated_arguments(entry, v, d, k.verified_lists if verified_lists else ())
    return lambda: function(*args)


def gen_results(k: Kernel, v: dict, returned) -> dict:
    out = {name: v[name] for name in (*k.outputs, *k.inout)}
    if k.returns:
        values = returned if isinstance(returned, tuple) else (returned,)
        if len(values) != len(k.returns):
            raise BindError(f"the generated kernel returned {len(values)} values; the table expects {k.returns}")
        out.update(zip(k.returns, values))
    return out


def hand_results(k: Kernel, v: dict, finished) -> dict:
    out = {name: v[name] for name in (*k.outputs, *k.inout)}
    out.update(finished or {})
    return out


def _xp(array):
    return np if isinstance(array, np.ndarray) else __import__("cupy")


def _on_host(array):
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _bits(array):
    return array.view(np.uint64) if array.dtype == np.float64 else array


def compare(k: Kernel, got: dict, want: dict, v: dict, d: dict, tolerance: dict | None = None) -> tuple[bool, str]:
    """Compare `got` against `want` (the hand-written side) for every result the table names: bitwise, or
    within the entry's bound. Returns (agree, how): how says 'bitwise' or the largest difference allowed
    by a bound, or describes the first disagreement."""
    if tolerance is None:
        tolerance = k.tolerance(want, v, d) if k.tolerance else {}
    notes = []
    for name in k.results:
        if name not in got or name not in want:
            continue
        g, w = got[name], want[name]
        if hasattr(g, "dtype") and getattr(g, "ndim", 0) > 0:
            if _xp(g) is not _xp(w):   # one side on the host: compare there
                g, w = _on_host(g), _on_host(w)
            xp = _xp(w)
            if g.shape != w.shape or g.dtype != w.dtype:
                return False, f"`{name}`: shape/type {g.shape}/{g.dtype} against {w.shape}/{w.dtype}"
            differ = _bits(g) != _bits(w)
            count = int(differ.sum())
            if count == 0:
                continue
            if name in tolerance:
                both_nan = xp.isnan(g) & xp.isnan(w)
                excess = xp.where(differ & ~both_nan, xp.abs(g - w) - tolerance[name], 0.0)
                worst = float(xp.nan_to_num(excess, nan=np.inf).max())
                if worst <= 0:
                    notes.append(f"{name}: {count} within bound")
                    continue
            first = int(xp.flatnonzero(differ)[0])
            return False, (f"`{name}`: {count} of {g.size} elements differ; first at {first}: "
                           f"{_show(g[first])} against {_show(w[first])}")
        else:
            if _same_scalar(g, w):
                continue
            bound = tolerance.get(name)
            if bound is not None and abs(float(g) - float(w)) <= float(bound):
                notes.append(f"{name}: |Δ| {abs(float(g) - float(w)):.3g} ≤ {float(bound):.3g}")
                continue
            return False, f"`{name}`: {_show(g)} against {_show(w)}" + (f" (bound {float(bound):.3g})" if bound else "")
    return True, "bitwise" if not notes else "; ".join(notes)


def unwritten_check(k: Kernel, results: dict, d: dict, side: str) -> str | None:
    """None if every output element the kernel should write was written (no poison left beyond the
    entry's `unwritten` counts), else what was left."""
    expected = k.unwritten(d) if k.unwritten else {}
    for name in k.outputs:
        array = results.get(name)
        if array is None or expected.get(name, 0) is None:
            continue
        poison = {8: POISON_F64 if array.dtype.kind == "f" else POISON_I64, 4: POISON_I32}[array.dtype.itemsize]
        bits = array.view(np.uint64) if array.dtype.kind == "f" else array
        left = int((bits == (np.uint64(poison) if array.dtype.kind == "f" else poison)).sum())
        if left != expected.get(name, 0):
            return f"`{name}`: the {side} kernel left {left} elements unwritten (expected {expected.get(name, 0)})"
    return None


def _same_scalar(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return np.float64(a).view(np.uint64) == np.float64(b).view(np.uint64)
    return int(a) == int(b)


def _show(x) -> str:
    value = x.item() if hasattr(x, "item") else x
    return repr(value)
