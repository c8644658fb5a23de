"""The covering entry point of a loop or loop nest: one thread per iteration, one `if`.

The general entry point of a launch strides every thread over the grid in 64-bit arithmetic, so that it
is correct for any count and any grid. A loop or a nest of two or three loops (without reductions, whose
threads must combine many iterations) also gets this second entry point, `<symbol>_covering`, except
a loop whose index lists the general entry point checks (its `_proven` entry point has the covering
form):

    const u32 rs2gpu_ty = RS2GPU_BLOCK_IDX.y * RS2GPU_BLOCK_DIM.y + RS2GPU_THREAD_IDX.y;
    const u32 rs2gpu_tx = RS2GPU_BLOCK_IDX.x * RS2GPU_BLOCK_DIM.x + RS2GPU_THREAD_IDX.x;
    if (rs2gpu_ty < (u32)rs2gpu_count_y && rs2gpu_tx < (u32)rs2gpu_count_x) {
        const usize j = rs2gpu_start_y + rs2gpu_ty;
        const usize i = rs2gpu_start_x + rs2gpu_tx;
        ...the body...
    }

It is what a hand-written kernel looks like, and it halves the registers of NESTED_INIT (32 → 18). For
one loop it spares the registers that hold, across the iterations of a thread, what the compiler hoists
out of the grid-stride loop: VOL3D's 24 addresses (62 registers as a grid-stride loop, 48 covering, as
the hand-written kernel); a single loop that indexes only at its variable gets none (`covering_pays`). The runtime launches it when its grid covers the iteration space: every count
below `COVERING_LIMIT` (so the 32-bit coordinates cannot wrap) and every axis's block count within the
hardware's grid limits; otherwise it launches the general entry point. The manifest names the entry
point and, where the body needs one block shape (a tiled matrix product; a single loop, whose blocks
are rows of the launch's block size), that shape. A single loop from a literal start whose writes fall
off the 32-element spans a hand-written kernel's warps store (`xout[i]` for `i in 1..n`) starts its grid
with `lead` idle threads (`warp_lead`), which the host adds to the count along x that the grid covers.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_stmt import BodyEmitter, iteration_declaration
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.emit.tensor import tensor_product
from rs2gpu.emit.tiling import StagedBody, tiled_product
from rs2gpu.emit.transpose import staged_transpose
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType
from rs2gpu.ir.walk import children, walk

COVERING_LIMIT = 2**31  # every count is below it: thread coordinates fit in 31 bits, grid * block in 32
WARP_ITERATIONS = 32  # the iterations of a warp of a single loop's covering entry point, which starts them aligned
WIDE_INDEX = (PrimType("usize"), PrimType("u64"))


def has_covering_form(loop: ParallelLoop) -> bool:
    return not loop.reductions


def covering_pays(loop: ParallelLoop) -> bool:
    """Whether a covering entry point is worth having beside the grid-stride one: for a nest, always; for
    a single loop, where its body indexes a slice at anything but the loop variable itself (`x[i + jp]`,
    `x[n1]`, `out[bins[i]]`), whose addresses the grid-stride loop keeps in registers across iterations.
    With every index the loop variable there is nothing to spare, and the grid-stride form measured as fast
    or faster (IF_QUAD on an H200: 985 against 1080 µs at 10^8 elements, the same registers)."""
    if len(loop.dims) > 1:
        return True
    index = loop.dims[0].index
    return any(isinstance(node, ir.Index) and not (isinstance(node.index, ir.Var) and node.index.binding is index)
               for node in walk(loop.body))


def covering_context(loop: ParallelLoop, axes: list[str], names: LocalNames, sites, symbol: str,
                     uniform: frozenset[ir.Binding], hoisted: frozenset, block_size: int) -> dict:
    """The lines after the preamble and the block shape (None: the runtime chooses) of the covering entry
    point; `uniform` holds the parameters and preamble values, `hoisted` the accesses checked on the host;
    a single loop runs on rows of `block_size` threads, as the general entry point does."""
    shaped = tiled_product(loop, axes, names, sites, uniform, hoisted) or staged_transpose(loop, names, sites)
    if shaped is not None:
        return staged_context(symbol, shaped)
    lines = ["    // One thread per iteration: this entry point runs only on a grid that covers the loop nest."]
    lead = warp_lead(loop)
    if lead:
        idle = "the first thread idles" if lead == 1 else f"the first {lead} threads idle"
        lines.append(f"    // {idle.capitalize()} (its coordinate wraps past every count): each warp runs iterations "
                     f"from a multiple of {WARP_ITERATIONS}.")
    for axis in axes:
        skip = f" - {lead}u" if lead else ""
        lines.append(f"    const u32 rs2gpu_t{axis} = RS2GPU_BLOCK_IDX.{axis} * RS2GPU_BLOCK_DIM.{axis} "
                     f"+ RS2GPU_THREAD_IDX.{axis}{skip};")
    inside = " && ".join(f"rs2gpu_t{axis} < (u32)rs2gpu_count_{axis}" for axis in axes)
    lines.append(f"    if ({inside}) {{")
    for dim, axis in zip(loop.dims, axes):
        lines.append(f"        {index_declaration(dim, axis, names)}")
    # `continue` skips the rest of an iteration: the end of a loop that runs once
    once = continues_loop(loop.body)
    body = BodyEmitter(names, indent=3 if once else 2, sites=sites, hoisted=hoisted, scatters=loop.scatters)
    body.block(loop.body)
    if body.used_sites or body.passes_iteration:
        lines.append(f"        {iteration_declaration(len(loop.dims))}")
    if once:
        lines += ["        do {", *body.lines, "        } while (false);"]
    else:
        lines += body.lines
    lines.append("    }")
    return {"symbol": symbol, "lines": lines, "block": [block_size, 1, 1] if len(axes) == 1 else None,
            "checks": sorted(body.used_sites), "lead": lead, "tile": [1, 1, 1], "staging": "", "fill": 0}


def tiles_context(loop: ParallelLoop, axes: list[str], names: LocalNames, sites, symbol: str,
                  uniform: frozenset[ir.Binding], hoisted: frozenset) -> dict | None:
    """The tiles entry point of a matrix product (`emit.tensor` for one of half values into f32 sums,
    `emit.tiling`'s larger tiles for others), as `covering_context` gives the covering one; None for any
    other loop."""
    shaped = tensor_product(loop, names, sites, uniform, hoisted) \
        or tiled_product(loop, axes, names, sites, uniform, hoisted, large=True)
    return None if shaped is None else staged_context(symbol, shaped)


def staged_context(symbol: str, shaped: StagedBody) -> dict:
    return {"symbol": symbol, "lines": shaped.lines, "block": list(shaped.block), "lead": 0,
            "tile": list(shaped.tile), "staging": shaped.staging, "fill": shaped.fill,
            "blocks_per_multiprocessor": shaped.blocks_per_multiprocessor}


def warp_lead(loop: ParallelLoop) -> int:
    """The idle threads a single loop's covering grid starts with, so that its warps store whole 32-element
    spans as a hand-written kernel's do (thread i, iteration i): for a loop from a literal start whose
    writes to slices are all at the loop variable plus one literal offset (`xout[i] = ...` in
    `for i in 1..n`), that element's position in its span of 32, start + offset modulo 32. Thread t then runs
    iteration start - lead + t. (TRIDIAG_ELIM at 10^6 on an H200, in CUDA graphs: 3.96-4.01 µs per launch
    with its warps so aligned, 4.24-4.28 with each warp's accesses straddling two spans; the hand kernel
    3.87-3.89.) Where the kernel cannot know where the writes fall (another start, other indices): 0."""
    start = loop.dims[0].start
    if len(loop.dims) > 1 or not isinstance(start, ir.Lit) or not isinstance(start.value, int) \
            or isinstance(start.value, bool):
        return 0
    index = loop.dims[0].index
    offsets = {_offset_from(node.target.index, index) for node in walk(loop.body)
               if isinstance(node, ir.Assign) and isinstance(node.target, ir.Index)}
    if len(offsets) != 1 or None in offsets:
        return 0
    return (start.value + offsets.pop()) % WARP_ITERATIONS


def _offset_from(e: ir.Expr, index: ir.Binding) -> int | None:
    """c for an index `i`, `i + c`, `c + i` or `i - c` of the loop variable `i` and a literal c, else None."""
    if isinstance(e, ir.Var) and e.binding is index:
        return 0
    if not (isinstance(e, ir.Binary) and e.op in ("+", "-")):
        return None
    if isinstance(e.lhs, ir.Var) and e.lhs.binding is index and _literal(e.rhs) is not None:
        return _literal(e.rhs) if e.op == "+" else -_literal(e.rhs)
    if e.op == "+" and isinstance(e.rhs, ir.Var) and e.rhs.binding is index and _literal(e.lhs) is not None:
        return _literal(e.lhs)
    return None


def _literal(e: ir.Expr) -> int | None:
    return e.value if isinstance(e, ir.Lit) and type(e.value) is int else None


def index_declaration(dim, axis: str, names: LocalNames) -> str:
    """`const usize i = rs2gpu_start_x + rs2gpu_tx;`: the loop variable of thread coordinate `axis`."""
    index_type = cxx_type(dim.index.ty)
    t = f"rs2gpu_t{axis}"
    value = f"rs2gpu_start_{axis} + {t}" if dim.index.ty in WIDE_INDEX else \
        f"({index_type})((u64)rs2gpu_start_{axis} + {t})"
    return f"const {index_type} {names.name(dim.index)} = {value};"


def continues_loop(block: ir.Block) -> bool:
    """Whether a `continue` of the parallel loop itself (not of a loop inside it) occurs in `block`."""
    def visit(node) -> bool:
        if isinstance(node, ir.Continue):
            return True
        if isinstance(node, (ir.For, ir.While, ir.Loop)):
            return False
        return any(visit(child) for child in children(node))
    return visit(block)
