"""A matrix product written plainly, on register tiles for the covering entry point.

    for row in 0..m {                                 // y
        for col in 0..p {                             // x
            let mut sum = 0.0;                        // pure `let`s
            for k in 0..n {                           // bounds the same in every thread
                sum += a[row * n + k] * b[k * p + col];       // or sum = a[..].mul_add(b[..], sum)
            }
            c[row * p + col] = sum;                   // the rest, in the threads of the iteration space
        }
    }

Each block of 16 x 16 threads computes a tile of `rows` x `cols` iterations, each thread a micro-tile of
`thread_rows` x `thread_cols` of them, whose sums it keeps in registers. The block moves through k `depth`
values at a time: its threads load the tile's rows of `a[row * n + k]` and columns of `b[k * p + col]` for
those k into shared memory (consecutive threads take consecutive k of a row, consecutive columns of a k),
the next slice into registers while they multiply out the current one from a second buffer, and every
thread reads, for each k, its micro-tile's rows and columns from there. A thread then does a multiply and
an add per two values it reads from shared memory, instead of the one it does per two it reads from the L1
with one thread per iteration: the product runs at the rate of the arithmetic, not of the loads.

The result is the Rust loop's, bit for bit: each iteration still adds `k` in increasing order, one rounded
product at a time (or one fused multiply-add at a time, as `mul_add` is), from its own initial value, and
nothing contracts a product and a sum that Rust rounds apart (the kernels compile without contraction).
Only the elements the Rust loop reads are loaded (a tile row or column outside the iteration space, or k
past the loop's end, is not: shared memory gets a zero there, which no kept sum reads), and the checker has
proven them in bounds on the host (the reads are hoisted), so no load can fault or panic.
"""
from __future__ import annotations

from dataclasses import dataclass
from math import isqrt

from rs2gpu.emit.cxx_expr import FLOAT_INTRINSICS
from rs2gpu.emit.cxx_stmt import BodyEmitter, iteration_declaration
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, PRODUCT_STAGING, RESIDENT_THREADS_PER_MULTIPROCESSOR
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType, RefType, SliceType
from rs2gpu.ir.walk import walk

SIDE = isqrt(BLOCK_SIZE)  # a block is SIDE x SIDE threads
USIZE = PrimType("usize")
_PURE = (ir.Lit, ir.ConstRef, ir.Var, ir.Unary, ir.Cast, ir.Field)


@dataclass(frozen=True)
class ProductTiles:
    """The shape of a block's tile of iterations and of each thread's part of it, for one element size.
    With `halves`, a thread's rows are two runs of `thread_rows / 2`, half a tile apart (and so its
    columns), so that the threads of a warp read shared memory in fewer, wider steps."""

    rows: int          # the block's rows of the iteration space (y)
    cols: int          # its columns (x)
    depth: int         # the k values in shared memory at once
    thread_rows: int   # each thread's rows: SIDE * thread_rows == rows
    thread_cols: int   # each thread's columns: SIDE * thread_cols == cols
    halves: bool = False

    @property
    def share(self) -> tuple[int, int]:
        """The elements of `a` and of `b` each thread loads per slice of k."""
        return self.rows * self.depth // BLOCK_SIZE, self.depth * self.cols // BLOCK_SIZE

    def position(self, axis: str) -> str:
        """The tile's row (`y`, of the thread's row `rs2gpu_r`) or column (`x`, of `rs2gpu_c`) that the thread
        computes, as C++."""
        own, extent, index = ((self.thread_rows, self.rows, "rs2gpu_r") if axis == "y" else
                              (self.thread_cols, self.cols, "rs2gpu_c"))
        if not self.halves:
            return f"RS2GPU_THREAD_IDX.{axis} * {own}u + {index}"
        half = own // 2
        return (f"({index} < {half}u ? RS2GPU_THREAD_IDX.{axis} * {half}u + {index} : "
                f"{extent // 2}u + RS2GPU_THREAD_IDX.{axis} * {half}u + {index} - {half}u)")


# By the element's bytes, two shapes: the covering entry point's, for any product, and the tiles entry
# point's, which the host runs where its larger tiles still give every multiprocessor one (its `fill`, from
# `RESIDENT_THREADS_PER_MULTIPROCESSOR`): larger tiles reuse more of each value a thread reads from shared
# memory, and fewer blocks fill less of the device on small products. bench/results/NOTES.md measures them
# against others over products of 1024², 4096² and 2^18 x 128 x 128.
PRODUCT_TILES = {4: ProductTiles(rows=128, cols=64, depth=8, thread_rows=8, thread_cols=4),
                 8: ProductTiles(rows=128, cols=64, depth=8, thread_rows=8, thread_cols=4)}
LARGE_PRODUCT_TILES = {4: ProductTiles(rows=128, cols=128, depth=16, thread_rows=8, thread_cols=8, halves=True),
                       8: ProductTiles(rows=128, cols=128, depth=8, thread_rows=8, thread_cols=8, halves=True)}
# A thread reads its rows and columns of a slice 16 bytes a load (`rs2gpu_load_lanes`): its counts of rows
# and columns are multiples of the lanes of that many bytes, and the tiles' rows, padded by 16 bytes (the
# transposed stores of `a`'s slice then fall in distinct banks), keep every such group 16-byte aligned.
LANE_BYTES = PAD_BYTES = 16
ELEMENT_BYTES = {"f32": 4, "f64": 8}


@dataclass(frozen=True)
class StagedBody:
    """A covering entry point's lines whose block shares its iterations through shared memory: its block
    shape, the iterations each thread runs along x, y and z, and how it stages them (`ir.abi.CoveringGrid`)."""

    lines: list[str]
    block: tuple[int, int, int]
    tile: tuple[int, int, int]
    staging: str
    fill: int = 0   # see `ir.abi.CoveringGrid`
    blocks_per_multiprocessor: int = 0  # the blocks that must fit on a multiprocessor at once (0: any)


@dataclass(frozen=True)
class _Pattern:
    before: tuple            # the pure `let`s before the k loop
    k_loop: ir.For
    accumulator: ir.Binding
    row_read: ir.Index       # the operand that does not depend on `col`
    col_read: ir.Index       # the operand that does not depend on `row`
    fused: bool              # `acc = x.mul_add(y, acc)`, one rounding per term
    row_first: bool          # the row operand is the product's first
    rest: tuple              # the statements after the k loop
    batch: ir.Binding | None = None  # a 3-D nest's outer variable: one product per value


def tiled_product(loop: ParallelLoop, axes: list[str], names: LocalNames, sites,
                  uniform: frozenset[ir.Binding], hoisted: frozenset, large: bool = False) -> StagedBody | None:
    """The covering entry point's lines for a 2-D nest whose body is a product like the one above, or with
    `large` the tiles entry point's (None for any other body)."""
    pattern = match_product(loop, uniform)
    if pattern is None:
        return None
    elem = pattern.accumulator.ty
    tiles = (LARGE_PRODUCT_TILES if large else PRODUCT_TILES)[ELEMENT_BYTES[elem.name]]
    t = cxx_type(elem)
    row_dim, col_dim = loop.dims
    row, col, k = names.name(row_dim.index), names.name(col_dim.index), names.name(pattern.k_loop.var)
    row_type, col_type = cxx_type(row_dim.index.ty), cxx_type(col_dim.index.ty)
    accumulator = names.name(pattern.accumulator)
    pad = PAD_BYTES // ELEMENT_BYTES[elem.name]
    lanes = LANE_BYTES // ELEMENT_BYTES[elem.name]
    a_share, b_share = tiles.share
    k_start = render_access(names, sites, loop, pattern.k_loop.start)
    k_end = render_access(names, sites, loop, pattern.k_loop.end)
    row_load = render_access(names, sites, loop, pattern.row_read)
    col_load = render_access(names, sites, loop, pattern.col_read)
    row_read = row if mentions(pattern.row_read.index, row_dim.index) else None
    col_read = col if mentions(pattern.col_read.index, col_dim.index) else None
    thread_row, thread_col = tiles.position("y"), tiles.position("x")
    a_value, b_value = "rs2gpu_row_values[rs2gpu_r]", "rs2gpu_col_values[rs2gpu_c]"
    x, y = (a_value, b_value) if pattern.row_first else (b_value, a_value)
    update = (f"rs2gpu_sums[rs2gpu_r][rs2gpu_c] = {_fma(elem).format(x, y, 'rs2gpu_sums[rs2gpu_r][rs2gpu_c]')};"
              if pattern.fused else f"rs2gpu_sums[rs2gpu_r][rs2gpu_c] += {x} * {y};")
    before = BodyEmitter(names, indent=3, sites=sites, hoisted=hoisted)
    for stmt in pattern.before:
        before.statement(stmt)
    uses = {n.binding for stmt in pattern.before for n in walk(stmt) if isinstance(n, ir.Var)}
    out = [f"    // A matrix product on tiles of {tiles.rows} x {tiles.cols} iterations per block of {SIDE} x {SIDE} "
           f"threads, {tiles.thread_rows} x {tiles.thread_cols} per thread,",
           f"    // k {tiles.depth} at a time through shared memory; each iteration adds its terms in the loop's "
           "order.",
           f"    const u32 rs2gpu_thread = RS2GPU_THREAD_IDX.y * {SIDE}u + RS2GPU_THREAD_IDX.x;",
           f"    const u32 rs2gpu_row0 = RS2GPU_BLOCK_IDX.y * {tiles.rows}u;  // the tile's first row and column",
           f"    const u32 rs2gpu_col0 = RS2GPU_BLOCK_IDX.x * {tiles.cols}u;",
           f"    alignas(16) RS2GPU_SHARED {t} rs2gpu_row_tile[2][{tiles.depth}][{tiles.rows + pad}];"
           f"  // the tile's rows of {source_of(pattern.row_read)}, k by k",
           f"    alignas(16) RS2GPU_SHARED {t} rs2gpu_col_tile[2][{tiles.depth}][{tiles.cols + pad}];"
           f"  // its columns of {source_of(pattern.col_read)}",
           f"    {t} rs2gpu_sums[{tiles.thread_rows}][{tiles.thread_cols}];",
           *_each_iteration(tiles, [
               *iteration_indices(row, row_type, col, col_type, thread_row if row_dim.index in uses else None,
                         thread_col if col_dim.index in uses else None),
               *before.lines,
               f"            rs2gpu_sums[rs2gpu_r][rs2gpu_c] = {accumulator};"]),
           f"    const usize rs2gpu_k_begin = {k_start}, rs2gpu_k_end = {k_end};",
           f"    {t} rs2gpu_row_next[{a_share}], rs2gpu_col_next[{b_share}];  // this thread's share of the next slice",
           *_load_slice(tiles, t, "rs2gpu_k_begin", row_read, row_type, col_read, col_type, k, row_load, col_load),
           "    u32 rs2gpu_buffer = 0;",
           f"    for (usize rs2gpu_k0 = rs2gpu_k_begin; rs2gpu_k0 < rs2gpu_k_end; rs2gpu_k0 += {tiles.depth}u, "
           "rs2gpu_buffer ^= 1u) {",
           "#pragma unroll",
           f"        for (u32 rs2gpu_l = 0; rs2gpu_l < {a_share}u; rs2gpu_l++) {{",
           f"            const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
           f"            rs2gpu_row_tile[rs2gpu_buffer][rs2gpu_e % {tiles.depth}u][rs2gpu_e / {tiles.depth}u] = "
           "rs2gpu_row_next[rs2gpu_l];",
           "        }",
           "#pragma unroll",
           f"        for (u32 rs2gpu_l = 0; rs2gpu_l < {b_share}u; rs2gpu_l++) {{",
           f"            const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
           f"            rs2gpu_col_tile[rs2gpu_buffer][rs2gpu_e / {tiles.cols}u][rs2gpu_e % {tiles.cols}u] = "
           "rs2gpu_col_next[rs2gpu_l];",
           "        }",
           "        // one barrier a slice: a buffer is written again only after every thread has passed the next one",
           "        RS2GPU_SYNC_THREADS();",
           "        const usize rs2gpu_k_left = rs2gpu_k_end - rs2gpu_k0;",
           f"        if (rs2gpu_k_left > {tiles.depth}u) {{",
           *indented(_load_slice(tiles, t, f"rs2gpu_k0 + {tiles.depth}u", row_read, row_type, col_read, col_type,
                                   k, row_load, col_load)),
           "        }",
           f"        if (rs2gpu_k_left >= {tiles.depth}u) {{  // a whole slice: unrolled",
           "#pragma unroll",
           f"            for (u32 rs2gpu_kk = 0; rs2gpu_kk < {tiles.depth}u; rs2gpu_kk++) {{",
           *indented(_multiply(tiles, t, lanes, thread_row, thread_col, update)),
           "            }",
           "        } else {",
           "            for (u32 rs2gpu_kk = 0; rs2gpu_kk < (u32)rs2gpu_k_left; rs2gpu_kk++) {",
           *indented(_multiply(tiles, t, lanes, thread_row, thread_col, update)),
           "            }",
           "        }",
           "    }"]
    out += ["    // the iterations of the space: the rest of the body, from each one's sum",
            *_each_iteration(tiles, output_lines(loop, pattern, names, sites, hoisted, (thread_row, thread_col),
                                                 before.lines, "rs2gpu_sums[rs2gpu_r][rs2gpu_c]", 3))]
    fill = tiles.rows * tiles.cols // RESIDENT_THREADS_PER_MULTIPROCESSOR if large else 0
    return StagedBody(out, (SIDE, SIDE, 1), (tiles.thread_cols, tiles.thread_rows, 1), PRODUCT_STAGING, fill)


def output_lines(loop: ParallelLoop, pattern: "_Pattern", names: LocalNames, sites, hoisted: frozenset,
                 at: tuple[str, str], before: list[str], total: str, depth: int) -> list[str]:
    """What one output of a thread's tile runs after the k loop, at `depth` levels of indent: where the tile
    places it (`at`, its row and column in the tile), inside the iteration space, its loop variables, the
    `let`s before the k loop (`before`, rendered one level in), its sum (`total`) and the rest of the body."""
    row_dim, col_dim = loop.dims[-2:]
    row, col = names.name(row_dim.index), names.name(col_dim.index)
    pad = "    " * depth
    rest = BodyEmitter(names, indent=depth + 1, sites=sites, hoisted=hoisted, scatters=loop.scatters)
    for stmt in pattern.rest:
        rest.statement(stmt)
    indices = iteration_indices(row, cxx_type(row_dim.index.ty), col, cxx_type(col_dim.index.ty), *at)
    for _ in range(depth - 2):  # `iteration_indices` writes them three levels in
        indices = indented(indices)
    lines = [f"{pad}const u32 rs2gpu_ty = rs2gpu_row0 + {at[0]};",
             f"{pad}const u32 rs2gpu_tx = rs2gpu_col0 + {at[1]};",
             f"{pad}if (rs2gpu_ty < (u32)rs2gpu_count_y && rs2gpu_tx < (u32)rs2gpu_count_x) {{",
             *indices, *indented(before), f"{pad}    {names.name(pattern.accumulator)} = {total};"]
    if rest.used_sites or rest.passes_iteration:
        lines.append(f"{pad}    {iteration_declaration(len(loop.dims))}")
    return [*lines, *rest.lines, f"{pad}}}"]


def indented(lines: list[str]) -> list[str]:
    """`lines` one level deeper; preprocessor lines stay where they are."""
    return [line if line.lstrip().startswith("#") else "    " + line for line in lines]


def _each_iteration(tiles: ProductTiles, body: list[str]) -> list[str]:
    """`body` (at an indent of three levels) for each of the thread's iterations (r, c)."""
    return ["#pragma unroll",
            f"    for (u32 rs2gpu_r = 0; rs2gpu_r < {tiles.thread_rows}u; rs2gpu_r++) {{",
            "#pragma unroll",
            f"        for (u32 rs2gpu_c = 0; rs2gpu_c < {tiles.thread_cols}u; rs2gpu_c++) {{",
            *body,
            "        }",
            "    }"]


def iteration_indices(row: str, row_type: str, col: str, col_type: str, thread_row: str | None,
             thread_col: str | None) -> list[str]:
    """The loop variables of iteration (r, c) of the thread's micro-tile, of those given a position."""
    out = []
    if thread_row is not None:
        out.append(f"            const {row_type} {row} = rs2gpu_start_y + rs2gpu_row0 + {thread_row};")
    if thread_col is not None:
        out.append(f"            const {col_type} {col} = rs2gpu_start_x + rs2gpu_col0 + {thread_col};")
    return out


def _load_slice(tiles: ProductTiles, t: str, k0: str, row: str | None, row_type: str, col: str | None,
                col_type: str, k: str, row_load: str, col_load: str) -> list[str]:
    """This thread's share of the slice of k from `k0` into its registers: the elements the loop reads,
    zeros elsewhere; `row` and `col` are the loop variables the operands read (None: not read)."""
    a_share, b_share = tiles.share
    row_line = [] if row is None else [f"        const {row_type} {row} = rs2gpu_start_y + rs2gpu_ty;"]
    col_line = [] if col is None else [f"        const {col_type} {col} = rs2gpu_start_x + rs2gpu_tx;"]
    return ["#pragma unroll",
            f"    for (u32 rs2gpu_l = 0; rs2gpu_l < {a_share}u; rs2gpu_l++) {{",
            f"        const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
            f"        const u32 rs2gpu_ty = rs2gpu_row0 + rs2gpu_e / {tiles.depth}u;",
            f"        const usize {k} = {k0} + rs2gpu_e % {tiles.depth}u;",
            *row_line,
            f"        rs2gpu_row_next[rs2gpu_l] = rs2gpu_ty < (u32)rs2gpu_count_y && {k} < rs2gpu_k_end ? "
            f"{row_load} : ({t})0;",
            "    }",
            "#pragma unroll",
            f"    for (u32 rs2gpu_l = 0; rs2gpu_l < {b_share}u; rs2gpu_l++) {{",
            f"        const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
            f"        const u32 rs2gpu_tx = rs2gpu_col0 + rs2gpu_e % {tiles.cols}u;",
            f"        const usize {k} = {k0} + rs2gpu_e / {tiles.cols}u;",
            *col_line,
            f"        rs2gpu_col_next[rs2gpu_l] = rs2gpu_tx < (u32)rs2gpu_count_x && {k} < rs2gpu_k_end ? "
            f"{col_load} : ({t})0;",
            "    }"]


def _multiply(tiles: ProductTiles, t: str, lanes: int, thread_row: str, thread_col: str, update: str) -> list[str]:
    """One k of the slice: the thread's rows and columns from shared memory, `lanes` values (16 bytes) a
    load, then each of its sums' term."""
    def read(values: str, count: int, index: str, tile: str, position: str) -> list[str]:
        return ["#pragma unroll",
                f"            for (u32 {index} = 0; {index} < {count}u; {index} += {lanes}u) {{",
                f"                const rs2gpu_lanes<{t}, {lanes}> rs2gpu_group = "
                f"rs2gpu_load_lanes<{lanes}>(&{tile}[rs2gpu_buffer][rs2gpu_kk][{position}]);",
                "#pragma unroll",
                f"                for (u32 rs2gpu_w = 0; rs2gpu_w < {lanes}u; rs2gpu_w++) "
                f"{values}[{index} + rs2gpu_w] = rs2gpu_group.lane[rs2gpu_w];",
                "            }"]
    return [f"            {t} rs2gpu_row_values[{tiles.thread_rows}], rs2gpu_col_values[{tiles.thread_cols}];",
            *read("rs2gpu_row_values", tiles.thread_rows, "rs2gpu_r", "rs2gpu_row_tile", thread_row),
            *read("rs2gpu_col_values", tiles.thread_cols, "rs2gpu_c", "rs2gpu_col_tile", thread_col),
            "#pragma unroll",
            f"            for (u32 rs2gpu_r = 0; rs2gpu_r < {tiles.thread_rows}u; rs2gpu_r++) {{",
            "#pragma unroll",
            f"                for (u32 rs2gpu_c = 0; rs2gpu_c < {tiles.thread_cols}u; rs2gpu_c++) {update}",
            "            }"]


def _fma(ty: PrimType) -> str:
    f64_form, f32_form = FLOAT_INTRINSICS["mul_add"]
    return f32_form if ty.name == "f32" else f64_form


def render_access(names: LocalNames, sites, loop: ParallelLoop, expr) -> str:
    """An access the host checks (one of `loop.hoisted`), or a value made of them, as one C++ expression."""
    emitter = BodyEmitter(names, indent=0, line_directives=False, sites=sites, hoisted=loop.hoisted)
    text = emitter.expr(expr)
    assert not emitter.lines, "a matched access renders as one expression"
    return text


def source_of(read: ir.Index) -> str:
    return f"`{read.base.binding.name}` ({read.span})"


def match_product(loop: ParallelLoop, uniform: frozenset[ir.Binding], halves: bool = False) -> _Pattern | None:
    """The product in `loop`'s body, or None; with `halves`, only one of half values widened to an f32 sum
    (`acc += a[..].to_f32() * b[..].to_f32()`), whose reads are the half elements, in a 2-D nest or in a
    3-D one whose outer variable (the batch) both operands may read: a product per value of it."""
    if len(loop.dims) not in ((2, 3) if halves else (2,)) or loop.reductions \
            or any(d.index.ty != USIZE for d in loop.dims):
        return None
    batch = loop.dims[0].index if len(loop.dims) == 3 else None
    row_var, col_var = loop.dims[-2].index, loop.dims[-1].index
    stmts = loop.body.stmts + ((ir.ExprStmt(loop.body.tail, loop.body.tail.span),) if loop.body.tail else ())
    at = next((n for n, s in enumerate(stmts) if isinstance(s, ir.ExprStmt) and isinstance(s.expr, ir.For)), None)
    if at is None or any(isinstance(n, (ir.Continue, ir.Break, ir.Return)) for n in walk(loop.body)):
        return None
    before, k_loop, rest = stmts[:at], stmts[at].expr, stmts[at + 1:]
    if not all(isinstance(s, ir.Let) and s.init is not None and _pure(s.init) for s in before):
        return None
    if k_loop.inclusive or k_loop.var.ty != USIZE or len(k_loop.body.stmts) != 1 or k_loop.body.tail is not None:
        return None
    shared = set(uniform) | ({batch} if batch is not None else set())
    if not all(_reads_only(bound, shared) for bound in (k_loop.start, k_loop.end)):
        return None
    term = _term(k_loop.body.stmts[0])
    if term is None:
        return None
    accumulator, lhs, rhs, fused = term
    if accumulator.kind != "local" or accumulator.ty.name not in ELEMENT_BYTES:
        return None
    if halves:
        if fused or accumulator.ty.name != "f32" or not all(_widened_half(r) for r in (lhs, rhs)):
            return None
        lhs, rhs = lhs.args[0], rhs.args[0]
        if lhs.ty != rhs.ty or not all(_tileable(r, loop) for r in (lhs, rhs)):
            return None
    elif not all(_tileable(r, loop) and r.ty == accumulator.ty for r in (lhs, rhs)):
        return None
    k = k_loop.var
    for row_read, col_read in ((lhs, rhs), (rhs, lhs)):
        if _reads_only(row_read.index, shared | {row_var, k}) and _reads_only(col_read.index, shared | {col_var, k}) \
                and mentions(row_read.index, k) and mentions(col_read.index, k):
            return _Pattern(before, k_loop, accumulator, row_read, col_read, fused, row_read is lhs, rest, batch)
    return None


def _term(update) -> tuple[ir.Binding, ir.Expr, ir.Expr, bool] | None:
    """(accumulator, x, y, fused) of the k loop's only statement when it is `acc += x * y`,
    `acc = acc + x * y` or `acc = x.mul_add(y, acc)`; None for anything else."""
    if not (isinstance(update, ir.Assign) and isinstance(update.target, ir.Var)):
        return None
    acc, value = update.target.binding, update.value
    if update.op == "+" and isinstance(value, ir.Binary) and value.op == "*":
        return acc, value.lhs, value.rhs, False
    if update.op is not None:
        return None
    if isinstance(value, ir.Binary) and value.op == "+" and _is_var(value.lhs, acc) \
            and isinstance(value.rhs, ir.Binary) and value.rhs.op == "*":
        return acc, value.rhs.lhs, value.rhs.rhs, False
    if isinstance(value, ir.Intrinsic) and value.name == "mul_add" and _is_var(value.args[2], acc):
        return acc, value.args[0], value.args[1], True
    return None


def _widened_half(expr) -> bool:
    """`x.to_f32()` (or `f32::from(x)`) of a half value."""
    return isinstance(expr, ir.Intrinsic) and expr.name == "to_f32" and isinstance(expr.args[0].ty, PrimType) \
        and expr.args[0].ty.is_half


def _is_var(expr, binding: ir.Binding) -> bool:
    return isinstance(expr, ir.Var) and expr.binding is binding


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


def mentions(expr, binding) -> bool:
    return any(isinstance(n, ir.Var) and n.binding is binding for n in walk(expr))
