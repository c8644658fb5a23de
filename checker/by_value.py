"""Which `&[T; N]` parameters travel by value in the launch arguments instead of through a pointer.

    coeff: &[f64; 16], read as coeff[j] with j the same in every thread  →  by value

Kernel arguments live in a constant bank that every thread reads through the constant cache: a read
at an index all threads of a warp share costs one broadcast (FIR's 16 taps become operands with
fixed offsets once the tap loop is unrolled), and the array needs no allocation and no copy. The
cache serves one address per pass, though, so a read at an index that differs between threads
(`table[i % 16]`) would be replayed once per distinct address; such arrays stay in global memory.

An array qualifies when it is read-only, at most `ARRAY_LIMIT` bytes, and used only as `a[index]`
or `a.len()` with every index computed from values all threads share (parameters, consts, preamble
`let`s, and the variables and immutable `let`s of sequential loops whose bounds are such values).
"""
from __future__ import annotations

from rs2gpu.checker.structure import is_uniform
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import ArrayType, RefType, SliceType, size_of
from rs2gpu.ir.walk import walk

# One array at most 1 KiB (128 f64), and the whole argument list at most 4 KiB, the limit every CUDA
# architecture and HIP accept (CUDA 12.1 allows 32 KiB on Volta and later, HIP does not promise it).
ARRAY_LIMIT = 1024
ARGUMENTS_LIMIT = 4096
# What a launch adds after the parameters: up to three (start, count) pairs and the reduction slots.
LAUNCH_RESERVE = 256


def arrays_by_value(fn: ir.Function, bodies: list[ir.Block], uniform: set[ir.Binding]) -> dict[ir.Binding, str]:
    """The `&[T; N]` parameters of `fn` passed by value, each with the reason the transfer plan gives."""
    shared = [_shared_values(body, uniform) for body in bodies]
    budget = ARGUMENTS_LIMIT - LAUNCH_RESERVE - sum(_pointer_abi_size(p) for p in fn.params)
    out: dict[ir.Binding, str] = {}
    for p in fn.params:
        ty = p.ty
        if not (isinstance(ty, RefType) and not ty.mutable and isinstance(ty.target, ArrayType)):
            continue
        nbytes = size_of(ty.target)
        extra = nbytes - _pointer_abi_size(p)
        if nbytes > ARRAY_LIMIT or extra > budget:
            continue
        if all(_read_at_shared_indices(p, body, values) for body, values in zip(bodies, shared)):
            out[p] = f"{nbytes} read-only bytes, the same element in every thread: in the launch arguments"
            budget -= extra
    return out


def _pointer_abi_size(p: ir.Binding) -> int:
    """The bytes `p` takes in the launch arguments when every reference is a pointer."""
    if isinstance(p.ty, RefType):
        return 16 if isinstance(p.ty.target, SliceType) else 8  # a slice's pointer and length
    return size_of(p.ty)


def _shared_values(body: ir.Block, uniform: set[ir.Binding]) -> set[ir.Binding]:
    """`uniform` and the bindings of `body` that hold the same value in every thread that reaches them."""
    shared = set(uniform)
    for node in walk(body):
        if isinstance(node, ir.Let) and not node.binding.mutable and node.init is not None \
                and is_uniform(node.init, shared):
            shared.add(node.binding)
        elif isinstance(node, ir.For) and is_uniform(node.start, shared) and is_uniform(node.end, shared):
            shared.add(node.var)
    return shared


def _read_at_shared_indices(p: ir.Binding, body: ir.Block, shared: set[ir.Binding]) -> bool:
    """Every use of `p` in `body` is `p[index]` with a shared index, or `p.len()`."""
    uses = sum(1 for n in walk(body) if isinstance(n, ir.Var) and n.binding is p)
    allowed = 0
    for n in walk(body):
        if isinstance(n, ir.Index) and _root(n) is p:
            if not is_uniform(n.index, shared):  # in `p[k][m]` both indices
                return False
            allowed += isinstance(n.base, ir.Var)
        elif isinstance(n, ir.Intrinsic) and n.name == "len" and isinstance(n.args[0], ir.Var) \
                and n.args[0].binding is p:
            allowed += 1
    return uses == allowed


def _root(place: ir.Expr) -> ir.Binding | None:
    """The variable a chain of indices and fields starts from."""
    while isinstance(place, (ir.Index, ir.Field)):
        place = place.base
    return place.binding if isinstance(place, ir.Var) else None
