"""A block's private copy of a small scatter target, in shared memory.

A histogram of few bins (`values[bins[i]] += data[i]`, RAJAPerf's MULTI_REDUCE) sends every update of the
whole grid to the same few words of global memory, where the atomics queue one behind the other (on an
H200, 5.9 ms for 10^8 updates of 10 bins, against 0.4 ms to stream the data). The `_private` entry point
of such a loop gives each block a copy of the slice in shared memory, starting at the identity of the
addition; the body's updates go to the copy (atomics on shared memory, within the multiprocessor), and
after the loop each block adds every element of its copy that it changed to the slice, one global atomic
per element and block. The host launches it when the slice fits (`capacity` elements of its type), on a
grid capped at one wave as for reductions, so that few blocks flush.

Only additions qualify (`+=`, `-=`, which adds the negation): the identity is exact for them (0 for
integers, -0.0 for floats: x + -0.0 == x for every x, -0.0 included), so an element a block never
changed adds nothing and is skipped, and a float sum changes only by the order of its additions, as
with the atomics on global memory. One target per loop, a slice of a primitive type updated at plain
indices (`t[e]`, not a field), in a loop without reductions, conditional checks or index lists.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParallelLoop, Scatter
from rs2gpu.ir.types import PrimType, RefType, SliceType, size_of
from rs2gpu.ir.walk import walk

PRIVATE_BYTES = 16 * 1024  # shared memory per block for the copy: a block of 256 threads keeps 14 blocks per SM
ADDABLE = frozenset({"f32", "f64", "i32", "u32", "i64", "u64", "isize", "usize"})  # the prelude's atomic adds


def private_scatter(loop: ParallelLoop) -> Scatter | None:
    """The scatter target of `loop` that blocks can accumulate privately, if there is one."""
    if len(loop.scatters) != 1 or loop.reductions or loop.optional or loop.index_lists:
        return None
    scatter = loop.scatters[0]
    ty = scatter.param.ty
    elem = ty.target.elem if isinstance(ty, RefType) and isinstance(ty.target, SliceType) else None
    if scatter.op != "+" or not isinstance(elem, PrimType) or elem.name not in ADDABLE:
        return None
    if not all(isinstance(u.assign.target, ir.Index) and isinstance(u.assign.target.base, ir.Var)
               for u in scatter.updates):
        return None
    if any(isinstance(node, ir.Return) for node in walk(loop.body)):
        return None  # a thread leaving early would miss the block's barrier before the flush
    return scatter


def capacity(scatter: Scatter) -> int:
    """How many elements of the target the block's copy holds."""
    return PRIVATE_BYTES // size_of(scatter.param.ty.target.elem)


def private_name(scatter: Scatter, names) -> str:
    return f"rs2gpu_private_{names.name(scatter.param)}"


def private_lines(scatter: Scatter, names, length: str, block: int) -> tuple[list[str], list[str]]:
    """The lines before the grid loop (the copy, at the identity) and after it (the flush), which every
    thread of the `block` threads takes part in; `length` is the C++ name of the target's length, at most
    `capacity` when this entry point runs."""
    elem = scatter.param.ty.target.elem
    t, copy, target = cxx_type(elem), private_name(scatter, names), names.name(scatter.param)
    each = f"for (unsigned rs2gpu_k = rs2gpu_thread_in_block(); rs2gpu_k < {length}; rs2gpu_k += {block}u)"
    before = [f"    RS2GPU_SHARED {t} {copy}[{capacity(scatter)}];  // this block's updates of `{scatter.param.name}`",
              f"    {each} {copy}[rs2gpu_k] = rs2gpu_add_identity(({t})0);",
              "    RS2GPU_SYNC_THREADS();"]
    after = ["    RS2GPU_SYNC_THREADS();",
             f"    {each} rs2gpu_flush_add(&{target}[rs2gpu_k], {copy}[rs2gpu_k]);"]
    return before, after
