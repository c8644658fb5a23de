"""A matrix product written plainly, tiled through shared memory for the covering entry point.

    for row in 0..m {                                 // y
        for col in 0..p {                             // x
            let mut sum = 0.0;                        // pure `let`s
            for k in 0..n {                           // bounds the same in every thread
                sum += a[row * n + k] * b[k * p + col];
            }
            c[row * p + col] = sum;                   // the rest, in the threads of the iteration space
        }
    }

Every thread of a row of the block reads the same `a[row * n + k]` for each k, every thread of a column
the same `b[k * p + col]`: with one thread per iteration and 16 x 16 threads a block, the block loads
each k-slice of 16 of those elements once into shared memory (one element per thread, coalesced along
x), and every thread then adds its 16 products from there, 16 times fewer loads from L1/L2 per product.

The result is the Rust loop's, bit for bit: each thread still adds `k` in increasing order, one rounded
product at a time, from its own initial value. Only the elements the Rust loop reads are loaded (a tile
row or column outside the iteration space, or past the loop's end, is not), and the checker has proven
them in bounds on the host (the reads are hoisted), so no load can fault or panic.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.emit.cxx_stmt import BodyEmitter, iteration_declaration
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType, RefType, SliceType
from rs2gpu.ir.walk import walk

TILE = 16  # TILE x TILE threads = the 256 of every block
USIZE = PrimType("usize")
_PURE = (ir.Lit, ir.ConstRef, ir.Var, ir.Unary, ir.Cast, ir.Field)


@dataclass(frozen=True)
class TiledProduct:
    lines: list[str]
    block: tuple[int, int, int]


@dataclass(frozen=True)
class _Pattern:
    before: tuple            # the pure `let`s before the k loop
    k_loop: ir.For
    accumulator: ir.Binding
    row_read: ir.Index       # the operand that does not depend on `col`
    col_read: ir.Index       # the operand that does not depend on `row`
    rest: tuple              # the statements after the k loop


def tiled_product(loop: ParallelLoop, axes: list[str], names: LocalNames, sites,
                  uniform: frozenset[ir.Binding], hoisted: frozenset) -> TiledProduct | None:
    """The covering entry point's lines for a 2-D nest whose body is a product like the one above (None
    for any other body)."""
    pattern = _match(loop, uniform)
    if pattern is None:
        return None
    row_dim, col_dim = loop.dims
    emit = BodyEmitter(names, indent=1, sites=sites, hoisted=hoisted)
    row, col, k = names.name(row_dim.index), names.name(col_dim.index), names.name(pattern.k_loop.var)
    elem_a, elem_b = cxx_type(pattern.row_read.ty), cxx_type(pattern.col_read.ty)
    out = [f"    // A matrix product through {TILE} x {TILE} tiles of shared memory, on blocks of {TILE} x {TILE} "
           "threads, one per iteration.",
           f"    const u32 rs2gpu_ty = RS2GPU_BLOCK_IDX.y * {TILE} + RS2GPU_THREAD_IDX.y;",
           f"    const u32 rs2gpu_tx = RS2GPU_BLOCK_IDX.x * {TILE} + RS2GPU_THREAD_IDX.x;",
           "    const bool rs2gpu_row_in = rs2gpu_ty < (u32)rs2gpu_count_y;",
           "    const bool rs2gpu_col_in = rs2gpu_tx < (u32)rs2gpu_count_x;",
           f"    const {cxx_type(row_dim.index.ty)} {row} = rs2gpu_start_y + rs2gpu_ty;",
           f"    const {cxx_type(col_dim.index.ty)} {col} = rs2gpu_start_x + rs2gpu_tx;"]
    for stmt in pattern.before:
        emit.statement(stmt)
    out += emit.lines
    k_loop = pattern.k_loop
    start, end = _render(names, sites, loop, k_loop.start), _render(names, sites, loop, k_loop.end)
    row_load = _render(names, sites, loop, pattern.row_read)
    col_load = _render(names, sites, loop, pattern.col_read)
    a_first = _operands(k_loop)[0] is pattern.row_read
    product = ("rs2gpu_row_tile[RS2GPU_THREAD_IDX.y][rs2gpu_kk] * rs2gpu_col_tile[rs2gpu_kk][RS2GPU_THREAD_IDX.x]"
               if a_first else
               "rs2gpu_col_tile[rs2gpu_kk][RS2GPU_THREAD_IDX.x] * rs2gpu_row_tile[RS2GPU_THREAD_IDX.y][rs2gpu_kk]")
    accumulator = names.name(pattern.accumulator)
    out += [f"    RS2GPU_SHARED {elem_a} rs2gpu_row_tile[{TILE}][{TILE}];  // the block's rows of {_source(pattern.row_read)}",
            f"    RS2GPU_SHARED {elem_b} rs2gpu_col_tile[{TILE}][{TILE}];  // the block's columns of {_source(pattern.col_read)}",
            f"    for (usize rs2gpu_k0 = {start}, rs2gpu_k_end = {end}; rs2gpu_k0 < rs2gpu_k_end;) {{",
            "        const usize rs2gpu_k_left = rs2gpu_k_end - rs2gpu_k0;",
            f"        const u32 rs2gpu_k_tile = rs2gpu_k_left < {TILE} ? (u32)rs2gpu_k_left : {TILE}u;",
            "        // only elements the loop reads: rows and columns of the iteration space, k before the end",
            "        if (rs2gpu_row_in && RS2GPU_THREAD_IDX.x < rs2gpu_k_tile) {",
            f"            const usize {k} = rs2gpu_k0 + RS2GPU_THREAD_IDX.x;",
            f"            rs2gpu_row_tile[RS2GPU_THREAD_IDX.y][RS2GPU_THREAD_IDX.x] = {row_load};",
            "        }",
            "        if (rs2gpu_col_in && RS2GPU_THREAD_IDX.y < rs2gpu_k_tile) {",
            f"            const usize {k} = rs2gpu_k0 + RS2GPU_THREAD_IDX.y;",
            f"            rs2gpu_col_tile[RS2GPU_THREAD_IDX.y][RS2GPU_THREAD_IDX.x] = {col_load};",
            "        }",
            "        RS2GPU_SYNC_THREADS();",
            "        if (rs2gpu_row_in && rs2gpu_col_in) {",
            f"            if (rs2gpu_k_tile == {TILE}) {{  // a whole tile: unrolled",
            "#pragma unroll",
            f"                for (u32 rs2gpu_kk = 0; rs2gpu_kk < {TILE}; rs2gpu_kk++) {{",
            f"                    {accumulator} += ({product});",
            "                }",
            "            } else {",
            "                for (u32 rs2gpu_kk = 0; rs2gpu_kk < rs2gpu_k_tile; rs2gpu_kk++) {",
            f"                    {accumulator} += ({product});",
            "                }",
            "            }",
            "        }",
            "        RS2GPU_SYNC_THREADS();  // the tiles are overwritten next",
            "        rs2gpu_k0 += rs2gpu_k_tile;",
            "    }",
            "    if (rs2gpu_row_in && rs2gpu_col_in) {"]
    rest = BodyEmitter(names, indent=2, sites=sites, hoisted=hoisted, scatters=loop.scatters)
    for stmt in pattern.rest:
        rest.statement(stmt)
    if rest.used_sites or rest.passes_iteration:
        out.append(f"        {iteration_declaration(len(loop.dims))}")
    out += rest.lines + ["    }"]
    return TiledProduct(out, (TILE, TILE, 1))


def _render(names: LocalNames, sites, loop: ParallelLoop, expr) -> str:
    emitter = BodyEmitter(names, indent=0, line_directives=False, sites=sites, hoisted=loop.hoisted)
    text = emitter.expr(expr)
    assert not emitter.lines, "a matched operand renders as one expression"
    return text


def _source(read: ir.Index) -> str:
    return f"`{read.base.binding.name}` ({read.span})"


def _operands(k_loop: ir.For) -> tuple[ir.Index, ir.Index]:
    value = k_loop.body.stmts[0].value
    return value.lhs, value.rhs


def _match(loop: ParallelLoop, uniform: frozenset[ir.Binding]) -> _Pattern | None:
    if len(loop.dims) != 2 or loop.reductions or any(d.index.ty != USIZE for d in loop.dims):
        return None
    row_var, col_var = loop.dims[0].index, loop.dims[1].index
    stmts = loop.body.stmts + ((ir.ExprStmt(loop.body.tail, loop.body.tail.span),) if loop.body.tail else ())
    at = next((n for n, s in enumerate(stmts) if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.For)), None)
    if at is None or any(isinstance(n, (ir.Continue, ir.Break, ir.Return)) for n in walk(loop.body)):
        return None
    before, k_loop, rest = stmts[:at], stmts[at].expr, stmts[at + 1:]
    if not all(isinstance(s, ir.Let) and s.init is not None and _pure(s.init) for s in before):
        return None
    if k_loop.inclusive or k_loop.var.ty != USIZE or len(k_loop.body.stmts) != 1 or k_loop.body.tail is not None:
        return None
    shared = set(uniform)
    if not all(_reads_only(bound, shared) for bound in (k_loop.start, k_loop.end)):
        return None
    update = k_loop.body.stmts[0]
    if not (isinstance(update, ir.Assign) and update.op == "+" and isinstance(update.target, ir.Var)
            and update.target.binding.kind == "local" and isinstance(update.value, ir.Binary)
            and update.value.op == "*"):
        return None
    lhs, rhs = update.value.lhs, update.value.rhs
    reads = [r for r in (lhs, rhs) if _tileable(r, loop)]
    if len(reads) != 2:
        return None
    k = k_loop.var
    for row_read, col_read in ((lhs, rhs), (rhs, lhs)):
        if _reads_only(row_read.index, shared | {row_var, k}) and _reads_only(col_read.index, shared | {col_var, k}) \
                and _mentions(row_read.index, k) and _mentions(col_read.index, k):
            return _Pattern(before, k_loop, update.target.binding, row_read, col_read, rest)
    return None


def _tileable(read, loop: ParallelLoop) -> bool:
    """`p[index]` of a read-only slice parameter, bounds-checked on the host, of a primitive element."""
    return isinstance(read, ir.Index) and read.node_id in loop.hoisted and isinstance(read.base, ir.Var) \
        and read.base.binding.kind == "param" and isinstance(read.base.ty, RefType) and not read.base.ty.mutable \
        and isinstance(read.base.ty.target, SliceType) and isinstance(read.ty, PrimType)


def _pure(expr) -> bool:
    """Computes a value without reading memory, dividing or calling: harmless in threads outside the space."""
    return all(isinstance(n, _PURE) or (isinstance(n, ir.Binary) and n.op not in ("/", "%"))
               or (isinstance(n, ir.Intrinsic) and n.name == "len") for n in walk(expr))


def _reads_only(expr, allowed: set) -> bool:
    """`expr` is pure and reads no variable outside `allowed`."""
    return _pure(expr) and all(n.binding in allowed for n in walk(expr) if isinstance(n, ir.Var))


def _mentions(expr, binding) -> bool:
    return any(isinstance(n, ir.Var) and n.binding is binding for n in walk(expr))
