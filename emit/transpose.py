"""A loop nest that copies a matrix to its transpose, staged through shared memory for the covering entry point.

    for i in 0..rows {                                // y
        for j in 0..cols {                            // x
            out[j * rows + i] = a[i * cols + j];      // the read steps by one along j, the write along i
        }
    }

With one thread per iteration, consecutive threads of a warp (consecutive j) read consecutive elements but
write elements `rows` apart: every store of a warp touches 32 memory sectors for 32 values. Here a block of
32 x 8 threads copies a tile of 32 x 32 iterations in two steps: each thread reads four of them (rows y,
y + 8, ... of the tile, at column x: consecutive threads, consecutive j) into shared memory, and after the
block's barrier writes four of them, now taking the tile's iterations by column (consecutive threads,
consecutive i), so that both the reads and the writes of a warp are consecutive. The tile's rows are padded
by one element, so that a warp reading a column of it touches 32 distinct banks.

Every iteration still stores exactly the value its read gives, once: the result is the loop's, bit for bit.
Both accesses are proven in bounds on the host (hoisted), so nothing here can fault or panic, and the
checker has proven that no two iterations write the same element.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.emit.tiling import StagedBody, mentions, render_access
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, TRANSPOSE_STAGING
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType, RefType, SliceType
from rs2gpu.ir.walk import walk

WARP = 32  # the tile's side: a warp's width of consecutive elements along each of its axes
ROWS_PER_PASS = BLOCK_SIZE // WARP  # the tile's rows a block's threads read (and columns they write) at once
USIZE = PrimType("usize")


def staged_transpose(loop: ParallelLoop, names: LocalNames, sites) -> StagedBody | None:
    """The covering entry point's lines for a 2-D nest whose body is one copy like the one above (None for
    any other body)."""
    copy = _match(loop)
    if copy is None:
        return None
    target, read = copy
    row_dim, col_dim = loop.dims
    row, col = names.name(row_dim.index), names.name(col_dim.index)
    row_type, col_type = cxx_type(row_dim.index.ty), cxx_type(col_dim.index.ty)
    store, load = render_access(names, sites, loop, target), render_access(names, sites, loop, read)
    passes = WARP // ROWS_PER_PASS
    source = f"`{read.base.binding.name}` ({read.span})"

    def each(ty: str, tx: str, statement: str) -> list[str]:
        return ["#pragma unroll",
                f"    for (u32 rs2gpu_r = 0; rs2gpu_r < {WARP}u; rs2gpu_r += {ROWS_PER_PASS}u) {{",
                f"        const u32 rs2gpu_ty = rs2gpu_row0 + {ty};",
                f"        const u32 rs2gpu_tx = rs2gpu_col0 + {tx};",
                "        if (rs2gpu_ty < (u32)rs2gpu_count_y && rs2gpu_tx < (u32)rs2gpu_count_x) {",
                f"            const {row_type} {row} = rs2gpu_start_y + rs2gpu_ty;",
                f"            const {col_type} {col} = rs2gpu_start_x + rs2gpu_tx;",
                f"            {statement}",
                "        }",
                "    }"]

    lines = [f"    // A transpose through shared memory: tiles of {WARP} x {WARP} iterations per block of {WARP} x "
             f"{ROWS_PER_PASS} threads, {passes} per thread,",
             "    // read along the rows of the tile and written along its columns, each by consecutive threads.",
             f"    const u32 rs2gpu_row0 = RS2GPU_BLOCK_IDX.y * {WARP}u;  // the tile's first row and column",
             f"    const u32 rs2gpu_col0 = RS2GPU_BLOCK_IDX.x * {WARP}u;",
             f"    RS2GPU_SHARED {cxx_type(read.ty)} rs2gpu_stage[{WARP}][{WARP + 1}];"
             f"  // the tile's values of {source}",
             *each("RS2GPU_THREAD_IDX.y + rs2gpu_r", "RS2GPU_THREAD_IDX.x",
                   f"rs2gpu_stage[RS2GPU_THREAD_IDX.y + rs2gpu_r][RS2GPU_THREAD_IDX.x] = {load};"),
             "    RS2GPU_SYNC_THREADS();",
             *each("RS2GPU_THREAD_IDX.x", "RS2GPU_THREAD_IDX.y + rs2gpu_r",
                   f"{store} = rs2gpu_stage[RS2GPU_THREAD_IDX.x][RS2GPU_THREAD_IDX.y + rs2gpu_r];")]
    return StagedBody(lines, (WARP, ROWS_PER_PASS, 1), (1, passes, 1), TRANSPOSE_STAGING)


def _match(loop: ParallelLoop) -> tuple[ir.Index, ir.Index] | None:
    """(target, read) of a nest whose body is only `out[w] = a[r]`: `out` and `a` slice parameters, both
    accesses checked on the host, `r` stepping by one along the inner loop and `w` along the outer one
    but not along the inner one."""
    if len(loop.dims) != 2 or loop.reductions or loop.scatters or any(d.index.ty != USIZE for d in loop.dims):
        return None
    body = loop.body
    stmts = body.stmts + ((ir.ExprStmt(body.tail, body.tail.span),) if body.tail is not None else ())
    if len(stmts) != 1:
        return None
    stmt = stmts[0]
    assign = stmt.expr if isinstance(stmt, ir.ExprStmt) else stmt
    if not (isinstance(assign, ir.Assign) and assign.op is None):
        return None
    target, read = assign.target, assign.value
    if not (_slice_access(target, loop, mutable=True) and _slice_access(read, loop, mutable=False)):
        return None
    row, col = loop.dims[0].index, loop.dims[1].index
    if _unit_step(read.index, col) and _unit_step(target.index, row) and mentions(target.index, col) \
            and not _unit_step(target.index, col):
        return target, read
    return None


def _slice_access(e, loop: ParallelLoop, mutable: bool) -> bool:
    """`p[index]` of a slice parameter (`&mut` for a target), checked on the host, of a primitive element,
    at an index that reads nothing but variables and literals."""
    return isinstance(e, ir.Index) and e.node_id in loop.hoisted and isinstance(e.base, ir.Var) \
        and e.base.binding.kind == "param" and isinstance(e.base.ty, RefType) and e.base.ty.mutable == mutable \
        and isinstance(e.base.ty.target, SliceType) and isinstance(e.ty, PrimType) \
        and all(isinstance(n, (ir.Var, ir.Lit, ir.ConstRef)) or (isinstance(n, ir.Binary) and n.op in ("+", "*"))
                for n in walk(e.index))


def _unit_step(index, var: ir.Binding) -> bool:
    """`index` is `var + c` (a sum, in any order) with c free of `var`: it steps by one as `var` does."""
    if isinstance(index, ir.Var):
        return index.binding is var
    if isinstance(index, ir.Binary) and index.op == "+":
        for with_var, other in ((index.lhs, index.rhs), (index.rhs, index.lhs)):
            if _unit_step(with_var, var) and not mentions(other, var):
                return True
    return False

