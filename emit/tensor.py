"""A matrix product of half values with f32 sums, on the tensor cores, for the tiles entry point.

    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc += a[row * n + k].to_f32() * b[col * n + k].to_f32();   // or b[k * p + col], a[k * m + row]
            }
            c[row * p + col] = f16::from_f32(acc);
        }
    }

This is `emit.tiling`'s pattern with operands of one half type (`f16` or `bf16`) widened to an `f32` sum.
Each block of 16 x 16 threads computes a tile of `ROWS` x `COLS` iterations as eight warps, each a warp tile
of `WARP_ROWS` x `WARP_COLS` of them, made of the 16 x 8 tiles of the tensor cores' `mma.m16n8k16`
(`rs2gpu_warp_tile` in the prelude). The block moves through k `DEPTH` values at a time: its threads load
the tile's rows of `a` and columns of `b` for those k into shared memory, k-contiguous, with each warp's
loads along the operand's unit-stride axis (k where the index adds `k` itself, the row or column
otherwise), the next slice into registers while the warps multiply out the current one from a second buffer.

The tensor cores add a slice's 16 products in an order of their own, so the sums are a float reduction's:
within n·ε·Σ|aₖbₖ| of the Rust loop's (docs/kernels.md). Where the GPU has no tensor cores the prelude
computes the same tiles lane by lane, adding the terms one at a time in k order as Rust does (each product
of two halves is exact in f32). As in `emit.tiling`, only the elements the Rust loop reads are loaded (a
zero elsewhere, which no kept sum reads but as a zero term), and the checker has proven them in bounds.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_stmt import BodyEmitter, iteration_declaration
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.emit.tiling import (SIDE, StagedBody, indented, iteration_indices, match_product, mentions,
                                render_access, source_of)
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, RESIDENT_THREADS_PER_MULTIPROCESSOR, TENSOR_STAGING
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.walk import walk

ROWS = COLS = 128            # a block's tile of iterations
DEPTH = 32                   # the k values in shared memory at once
WARP_ROWS, WARP_COLS = 64, 32
MMA_ROWS, MMA_COLS, MMA_DEPTH = 16, 8, 16
TILES_PER_WARP = (WARP_ROWS // MMA_ROWS, WARP_COLS // MMA_COLS)
WARPS_PER_ROW = COLS // WARP_COLS
# A tile row is padded by 16 bytes: the eight rows a warp's lanes read a fragment from fall in distinct banks.
STRIDE = DEPTH + 8


def tensor_product(loop: ParallelLoop, names: LocalNames, sites, uniform: frozenset[ir.Binding],
                   hoisted: frozenset) -> StagedBody | None:
    """The tiles entry point's lines for a 2-D nest whose body is a product of half values into an f32 sum
    (None for any other body)."""
    pattern = match_product(loop, uniform, halves=True)
    if pattern is None:
        return None
    half = cxx_type(pattern.row_read.ty)
    row_dim, col_dim = loop.dims
    row, col, k = names.name(row_dim.index), names.name(col_dim.index), names.name(pattern.k_loop.var)
    row_type, col_type = cxx_type(row_dim.index.ty), cxx_type(col_dim.index.ty)
    accumulator = names.name(pattern.accumulator)
    share = ROWS * DEPTH // BLOCK_SIZE  # the elements of each operand a thread loads per slice
    operands = [_Operand("rs2gpu_row_tile", "rs2gpu_row_next", "y", "rs2gpu_ty", row, row_type,
                         render_access(names, sites, loop, pattern.row_read),
                         mentions(pattern.row_read.index, row_dim.index),
                         _adds(pattern.row_read.index, pattern.k_loop.var)),
                _Operand("rs2gpu_col_tile", "rs2gpu_col_next", "x", "rs2gpu_tx", col, col_type,
                         render_access(names, sites, loop, pattern.col_read),
                         mentions(pattern.col_read.index, col_dim.index),
                         _adds(pattern.col_read.index, pattern.k_loop.var))]
    before = BodyEmitter(names, indent=4, sites=sites, hoisted=hoisted)
    for stmt in pattern.before:
        before.statement(stmt)
    uses = {n.binding for stmt in pattern.before for n in walk(stmt) if isinstance(n, ir.Var)}
    row_at, col_at = _position("y"), _position("x")
    row_tiles, col_tiles = TILES_PER_WARP
    k_start = render_access(names, sites, loop, pattern.k_loop.start)
    k_end = render_access(names, sites, loop, pattern.k_loop.end)
    out = [f"    // A matrix product of half values with f32 sums: tiles of {ROWS} x {COLS} iterations per block of "
           f"{SIDE} x {SIDE} threads,",
           f"    // {WARP_ROWS} x {WARP_COLS} per warp on the tensor cores' 16 x 8 x 16 tiles where the GPU has them, "
           f"k {DEPTH} at a time through shared memory.",
           f"    const u32 rs2gpu_thread = RS2GPU_THREAD_IDX.y * {SIDE}u + RS2GPU_THREAD_IDX.x;",
           f"    const u32 rs2gpu_warp_row = rs2gpu_thread / 32u / {WARPS_PER_ROW}u * {WARP_ROWS}u;  "
           "// the warp's first row and column in the tile",
           f"    const u32 rs2gpu_warp_col = rs2gpu_thread / 32u % {WARPS_PER_ROW}u * {WARP_COLS}u;",
           "    const u32 rs2gpu_group = rs2gpu_thread % 32u / 4u, rs2gpu_pair = rs2gpu_thread % 4u * 2u;",
           f"    const u32 rs2gpu_row0 = RS2GPU_BLOCK_IDX.y * {ROWS}u;  // the tile's first row and column",
           f"    const u32 rs2gpu_col0 = RS2GPU_BLOCK_IDX.x * {COLS}u;",
           f"    alignas(16) RS2GPU_SHARED {half} rs2gpu_row_tile[2][{ROWS}][{STRIDE}];"
           f"  // the tile's rows of {source_of(pattern.row_read)}, k-contiguous",
           f"    alignas(16) RS2GPU_SHARED {half} rs2gpu_col_tile[2][{COLS}][{STRIDE}];"
           f"  // its columns of {source_of(pattern.col_read)}",
           f"    f32 rs2gpu_sums[{row_tiles}][{col_tiles}][4];",
           *_each_sum([*indented(iteration_indices(row, row_type, col, col_type, row_at if row_dim.index in uses else None,
                                                    col_at if col_dim.index in uses else None)),
                       *before.lines,
                       f"                rs2gpu_sums[rs2gpu_mi][rs2gpu_ni][rs2gpu_e] = {accumulator};"]),
           f"    const usize rs2gpu_k_begin = {k_start}, rs2gpu_k_end = {k_end};",
           f"    {half} rs2gpu_row_next[{share}], rs2gpu_col_next[{share}];  // this thread's share of the next slice",
           *_load_slice(operands, half, share, "rs2gpu_k_begin", k),
           "    u32 rs2gpu_buffer = 0;",
           f"    for (usize rs2gpu_k0 = rs2gpu_k_begin; rs2gpu_k0 < rs2gpu_k_end; rs2gpu_k0 += {DEPTH}u, "
           "rs2gpu_buffer ^= 1u) {",
           *[line for o in operands for line in _store_slice(o, share)],
           "        // one barrier a slice: a buffer is written again only after every thread has passed the next one",
           "        RS2GPU_SYNC_THREADS();",
           f"        if (rs2gpu_k_end - rs2gpu_k0 > {DEPTH}u) {{",
           *indented(indented(_load_slice(operands, half, share, f"rs2gpu_k0 + {DEPTH}u", k))),
           "        }",
           "#pragma unroll",
           f"        for (u32 rs2gpu_kk = 0; rs2gpu_kk < {DEPTH}u; rs2gpu_kk += {MMA_DEPTH}u)",
           "            rs2gpu_warp_tile(rs2gpu_sums, &rs2gpu_row_tile[rs2gpu_buffer][rs2gpu_warp_row][rs2gpu_kk], "
           f"{STRIDE}u,",
           f"                             &rs2gpu_col_tile[rs2gpu_buffer][rs2gpu_warp_col][rs2gpu_kk], {STRIDE}u);",
           "    }"]
    rest = BodyEmitter(names, indent=5, sites=sites, hoisted=hoisted, scatters=loop.scatters)
    for stmt in pattern.rest:
        rest.statement(stmt)
    finish = [f"                const u32 rs2gpu_ty = rs2gpu_row0 + {row_at};",
              f"                const u32 rs2gpu_tx = rs2gpu_col0 + {col_at};",
              "                if (rs2gpu_ty < (u32)rs2gpu_count_y && rs2gpu_tx < (u32)rs2gpu_count_x) {",
              *indented(indented(iteration_indices(row, row_type, col, col_type, row_at, col_at))),
              *indented(before.lines),
              f"                    {accumulator} = rs2gpu_sums[rs2gpu_mi][rs2gpu_ni][rs2gpu_e];"]
    if rest.used_sites or rest.passes_iteration:
        finish.append(f"                    {iteration_declaration(len(loop.dims))}")
    out += ["    // the iterations of the space: the rest of the body, from each one's sum",
            *_each_sum([*finish, *rest.lines, "                }"])]
    fill = ROWS * COLS // RESIDENT_THREADS_PER_MULTIPROCESSOR
    return StagedBody(out, (SIDE, SIDE, 1), (COLS // SIDE, ROWS // SIDE, 1), TENSOR_STAGING, fill)


class _Operand:
    """One operand's staging: its shared tile and registers, the launch axis and loop variable of its rows
    (`a`'s) or columns (`b`'s), its load, whether that reads the variable, and whether its index adds `k`
    itself (consecutive k are consecutive elements)."""

    def __init__(self, tile: str, registers: str, axis: str, position: str, var: str, var_type: str, load: str,
                 reads_var: bool, k_contiguous: bool) -> None:
        self.tile, self.registers, self.axis, self.position = tile, registers, axis, position
        self.var, self.var_type, self.load = var, var_type, load
        self.reads_var, self.k_contiguous = reads_var, k_contiguous

    def place(self) -> tuple[str, str]:
        """The tile row (its row or column) and k of the thread's element `rs2gpu_e`: consecutive threads
        take consecutive elements of the operand in memory."""
        if self.k_contiguous:
            return f"rs2gpu_e / {DEPTH}u", f"rs2gpu_e % {DEPTH}u"
        return f"rs2gpu_e % {ROWS}u", f"rs2gpu_e / {ROWS}u"


def _load_slice(operands: list[_Operand], half: str, share: int, k0: str, k: str) -> list[str]:
    """This thread's share of the slice of k from `k0` into its registers: the elements the loop reads,
    zeros elsewhere."""
    out = []
    for o in operands:
        line, depth = o.place()
        count = "rs2gpu_count_y" if o.axis == "y" else "rs2gpu_count_x"
        start = "rs2gpu_row0" if o.axis == "y" else "rs2gpu_col0"
        var = [f"        const {o.var_type} {o.var} = rs2gpu_start_{o.axis} + {o.position};"] if o.reads_var else []
        out += ["#pragma unroll",
                f"    for (u32 rs2gpu_l = 0; rs2gpu_l < {share}u; rs2gpu_l++) {{",
                f"        const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
                f"        const u32 {o.position} = {start} + {line};",
                f"        const usize {k} = {k0} + {depth};",
                *var,
                f"        {o.registers}[rs2gpu_l] = {o.position} < (u32){count} && {k} < rs2gpu_k_end ? "
                f"{o.load} : {half}::from_bits(0);",
                "    }"]
    return out


def _store_slice(o: _Operand, share: int) -> list[str]:
    line, depth = o.place()
    return ["#pragma unroll",
            f"        for (u32 rs2gpu_l = 0; rs2gpu_l < {share}u; rs2gpu_l++) {{",
            f"            const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
            f"            {o.tile}[rs2gpu_buffer][{line}][{depth}] = {o.registers}[rs2gpu_l];",
            "        }"]


def _position(axis: str) -> str:
    """The tile's row (`y`) or column (`x`) of the thread's sum (rs2gpu_mi, rs2gpu_ni, rs2gpu_e), as the
    tensor cores' fragments place it."""
    if axis == "y":
        return f"rs2gpu_warp_row + rs2gpu_mi * {MMA_ROWS}u + rs2gpu_group + rs2gpu_e / 2u * 8u"
    return f"rs2gpu_warp_col + rs2gpu_ni * {MMA_COLS}u + rs2gpu_pair + rs2gpu_e % 2u"


def _each_sum(body: list[str]) -> list[str]:
    """`body` (at an indent of four levels) for each of the thread's sums."""
    row_tiles, col_tiles = TILES_PER_WARP
    return ["#pragma unroll",
            f"    for (u32 rs2gpu_mi = 0; rs2gpu_mi < {row_tiles}u; rs2gpu_mi++) {{",
            "#pragma unroll",
            f"        for (u32 rs2gpu_ni = 0; rs2gpu_ni < {col_tiles}u; rs2gpu_ni++) {{",
            "#pragma unroll",
            "            for (u32 rs2gpu_e = 0; rs2gpu_e < 4u; rs2gpu_e++) {",
            *body,
            "            }",
            "        }",
            "    }"]


def _adds(index: ir.Expr, var: ir.Binding) -> bool:
    """The index is a sum with `var` itself as a term: consecutive values of `var` read consecutive elements."""
    if isinstance(index, ir.Binary) and index.op in ("+", "-"):
        return _adds(index.lhs, var) or (index.op == "+" and _adds(index.rhs, var))
    return isinstance(index, ir.Var) and index.binding is var
