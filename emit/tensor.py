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
(`WARP_TILE`, or `WARPGROUP_TILE` where `a` is k-contiguous) made of the 16 x 8 tiles of the tensor
cores' `mma.m16n8k16`, or, on Hopper (sm_90a), four warps' tiles as one warpgroup product, wgmma
(`rs2gpu_warp_tile` in the prelude). The block moves through k `DEPTH` values at a time, in `STAGES`
buffers of shared memory: its threads copy the tile's rows of `a` and columns of `b` for those k, 16 bytes
a copy along the operand's unit-stride axis (k where the index adds `k` itself, the row or column
otherwise), asynchronously where the GPU can (cp.async), two slices ahead of the one the warps multiply.
A group of 8 elements that is not whole (the loop's edges) or not 16-byte aligned is read element by
element.

The tensor cores add a slice's 16 products in an order of their own, so the sums are a float reduction's:
within n·ε·Σ|aₖbₖ| of the Rust loop's (docs/kernels.md). Where the GPU has no tensor cores the prelude
computes the same tiles lane by lane, adding the terms one at a time in k order as Rust does (each product
of two halves is exact in f32). As in `emit.tiling`, only the elements the Rust loop reads are loaded (a
zero elsewhere, which no kept sum reads but as a zero term), and the checker has proven them in bounds.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_stmt import BodyEmitter
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.emit.tiling import (SIDE, StagedBody, indented, iteration_indices, match_product, mentions,
                                output_lines, render_access, source_of)
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, RESIDENT_THREADS_PER_MULTIPROCESSOR, TENSOR_STAGING
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.walk import walk

ROWS = COLS = 128            # a block's tile of iterations
DEPTH = 32                   # the k values of one stage of shared memory
STAGES = 3                   # slices of k in flight: one multiplied while the next two arrive
MMA_ROWS, MMA_COLS, MMA_DEPTH = 16, 8, 16
# A warp's sums: 32 x 64, two 16-row fragments of A against eight 8-column ones of B per 16 k; where A is
# k-contiguous, 16 x 128, four warps making a warpgroup's 64 x 128, the shape of Hopper's warpgroup
# products (wgmma), which read both operands from shared memory (elsewhere, mma.m16n8k16 tiles).
WARP_TILE = (32, 64)
WARPGROUP_TILE = (16, 128)
GROUP = 8                    # the halves of one 16-byte copy
# Two blocks a multiprocessor (the registers of a thread capped to fit them): while one waits at a barrier,
# the other multiplies.
BLOCKS_PER_MULTIPROCESSOR = 2


def has_tensor_form(loop: ParallelLoop, uniform: frozenset[ir.Binding]) -> bool:
    """Whether the loop is a product of half values into an f32 sum (`tensor_product` renders it)."""
    return match_product(loop, uniform, halves=True) is not None


def tensor_product(loop: ParallelLoop, names: LocalNames, sites, uniform: frozenset[ir.Binding],
                   hoisted: frozenset) -> StagedBody | None:
    """The tiles entry point's lines for a 2-D nest whose body is a product of half values into an f32 sum,
    or a 3-D one with a product per value of its outer variable (None for any other body)."""
    pattern = match_product(loop, uniform, halves=True)
    if pattern is None:
        return None
    half = cxx_type(pattern.row_read.ty)
    row_dim, col_dim = loop.dims[-2:]
    row, col, k = names.name(row_dim.index), names.name(col_dim.index), names.name(pattern.k_loop.var)
    row_type, col_type = cxx_type(row_dim.index.ty), cxx_type(col_dim.index.ty)
    accumulator = names.name(pattern.accumulator)
    a = _Operand("rs2gpu_row_tile", "y", ROWS, row, row_type, render_access(names, sites, loop, pattern.row_read),
                 pattern.row_read.index, row_dim.index, pattern.k_loop.var)
    b = _Operand("rs2gpu_col_tile", "x", COLS, col, col_type, render_access(names, sites, loop, pattern.col_read),
                 pattern.col_read.index, col_dim.index, pattern.k_loop.var)
    before = BodyEmitter(names, indent=4, sites=sites, hoisted=hoisted)
    for stmt in pattern.before:
        before.statement(stmt)
    uses = {n.binding for stmt in pattern.before for n in walk(stmt) if isinstance(n, ir.Var)}
    row_at, col_at = _position("y"), _position("x")
    warp_rows, warp_cols = WARPGROUP_TILE if a.k_contiguous else WARP_TILE
    tiles = row_tiles, col_tiles = warp_rows // MMA_ROWS, warp_cols // MMA_COLS
    warps_per_row = COLS // warp_cols
    k_start = render_access(names, sites, loop, pattern.k_loop.start)
    k_end = render_access(names, sites, loop, pattern.k_loop.end)
    layout = f"{ROWS}u, {COLS}u, {DEPTH}u"
    out = [f"    // A matrix product of half values with f32 sums: tiles of {ROWS} x {COLS} iterations per block of "
           f"{SIDE} x {SIDE} threads,",
           f"    // {warp_rows} x {warp_cols} per warp on the tensor cores where the GPU has them, "
           f"k {DEPTH} at a time through {STAGES} stages of shared memory.",
           f"    const u32 rs2gpu_thread = RS2GPU_THREAD_IDX.y * {SIDE}u + RS2GPU_THREAD_IDX.x;",
           f"    const u32 rs2gpu_warp_row = rs2gpu_thread / 32u / {warps_per_row}u * {warp_rows}u;  "
           "// the warp's first row and column in the tile",
           f"    const u32 rs2gpu_warp_col = rs2gpu_thread / 32u % {warps_per_row}u * {warp_cols}u;",
           "    const u32 rs2gpu_group = rs2gpu_thread % 32u / 4u, rs2gpu_pair = rs2gpu_thread % 4u * 2u;",
           f"    const u32 rs2gpu_row0 = RS2GPU_BLOCK_IDX.y * {ROWS}u;  // the tile's first row and column",
           f"    const u32 rs2gpu_col0 = RS2GPU_BLOCK_IDX.x * {COLS}u;",
           *_batch_lines(loop, names),
           f"    alignas(1024) RS2GPU_SHARED {half} rs2gpu_row_tile[{STAGES}][{ROWS * DEPTH}];  // the tile's rows of "
           f"{source_of(pattern.row_read)}, {a.layout()}",
           f"    alignas(1024) RS2GPU_SHARED {half} rs2gpu_col_tile[{STAGES}][{COLS * DEPTH}];  // its columns of "
           f"{source_of(pattern.col_read)}, {b.layout()}",
           f"    f32 rs2gpu_sums[{row_tiles}][{col_tiles}][4];",
           *_each_sum(tiles, [*indented(iteration_indices(row, row_type, col, col_type,
                                                    row_at if row_dim.index in uses else None,
                                                    col_at if col_dim.index in uses else None)),
                       *before.lines,
                       f"                rs2gpu_sums[rs2gpu_mi][rs2gpu_ni][rs2gpu_e] = {accumulator};"]),
           f"    const usize rs2gpu_k_begin = {k_start}, rs2gpu_k_end = {k_end};",
           "    const usize rs2gpu_slices = rs2gpu_k_end > rs2gpu_k_begin ? "
           f"(rs2gpu_k_end - rs2gpu_k_begin + {DEPTH - 1}u) / {DEPTH}u : 0;",
           *_group_sources(a, half, k), *_group_sources(b, half, k),
           f"    for (u32 rs2gpu_ahead = 0; rs2gpu_ahead < {STAGES - 1}u; rs2gpu_ahead++) {{",
           "        if (rs2gpu_ahead < rs2gpu_slices) {",
           "            const u32 rs2gpu_stage = rs2gpu_ahead;",
           f"            const usize rs2gpu_k0 = rs2gpu_k_begin + rs2gpu_ahead * {DEPTH}u;",
           *_indented_by(3, _copy_slice(a, half, k) + _copy_slice(b, half, k)),
           "        }",
           "        rs2gpu_async_commit();  // a group for each slice, empty or not: the wait below counts them",
           "    }",
           "    u32 rs2gpu_current = 0;  // the stage of slice rs2gpu_slice",
           "    for (usize rs2gpu_slice = 0; rs2gpu_slice < rs2gpu_slices; rs2gpu_slice++) {",
           f"        rs2gpu_async_wait<{STAGES - 2}>();  // this thread's copies of the slice have arrived",
           "        rs2gpu_async_proxy_fence();  // and are visible to the tensor cores' own reads of shared memory",
           "        // one barrier a slice: every thread's copies of it have arrived, and every warp has multiplied",
           "        // out the slice before, whose stage the copies below overwrite",
           "        RS2GPU_SYNC_THREADS();",
           f"        if (rs2gpu_slice + {STAGES - 1}u < rs2gpu_slices) {{",
           f"            const u32 rs2gpu_stage = rs2gpu_current == 0 ? {STAGES - 1}u : rs2gpu_current - 1u;",
           f"            const usize rs2gpu_k0 = rs2gpu_k_begin + (rs2gpu_slice + {STAGES - 1}u) * {DEPTH}u;",
           *_indented_by(3, _copy_slice(a, half, k) + _copy_slice(b, half, k)),
           "        }",
           "        rs2gpu_async_commit();",
           "#pragma unroll",
           f"        for (u32 rs2gpu_kk = 0; rs2gpu_kk < {DEPTH}u; rs2gpu_kk += {MMA_DEPTH}u)",
           f"            rs2gpu_warp_tile<{_cxx_bool(a.k_contiguous)}, {_cxx_bool(b.k_contiguous)}, {layout}>("
           "rs2gpu_sums, rs2gpu_row_tile[rs2gpu_current], rs2gpu_warp_row,",
           "                rs2gpu_col_tile[rs2gpu_current], rs2gpu_warp_col, rs2gpu_kk);",
           "        rs2gpu_warp_tiles_done(rs2gpu_sums);  // the slice's products are in the sums",
           f"        rs2gpu_current = rs2gpu_current == {STAGES - 1}u ? 0 : rs2gpu_current + 1u;",
           "    }"]
    out += ["    // the iterations of the space: the rest of the body, from each one's sum",
            *_each_sum(tiles, output_lines(loop, pattern, names, sites, hoisted, (row_at, col_at), before.lines,
                                    "rs2gpu_sums[rs2gpu_mi][rs2gpu_ni][rs2gpu_e]", 4))]
    fill = ROWS * COLS // RESIDENT_THREADS_PER_MULTIPROCESSOR
    return StagedBody(out, (SIDE, SIDE, 1), (COLS // SIDE, ROWS // SIDE, 1), TENSOR_STAGING, fill,
                      BLOCKS_PER_MULTIPROCESSOR)


class _Operand:
    """One operand's staging: its shared tile, the launch axis and loop variable of its rows (`a`'s) or
    columns (`b`'s), its load, and the layout that follows from its index: k-contiguous where the index adds
    `k` itself (consecutive k are consecutive elements), else, where it adds the row or column variable
    itself, contiguous along that (`a[k * m + row]`); where it adds neither, k-contiguous in shared memory,
    read element by element."""

    def __init__(self, tile: str, axis: str, lines: int, var: str, var_type: str, load: str, index: ir.Expr,
                 var_binding: ir.Binding, k: ir.Binding) -> None:
        self.tile, self.axis, self.var, self.var_type, self.load = tile, axis, var, var_type, load
        self.lines = lines  # the tile's rows (or columns)
        self.share = lines * DEPTH // GROUP // BLOCK_SIZE  # the groups of a slice each thread copies
        self.reads_var = mentions(index, var_binding)
        self.k_contiguous = _unit_term(index, k) or not _unit_term(index, var_binding)
        self.vector = _unit_term(index, k) or _unit_term(index, var_binding)
        self.count, self.start = f"rs2gpu_count_{axis}", ("rs2gpu_row0" if axis == "y" else "rs2gpu_col0")
        self.sources = tile.replace("_tile", "_from")  # `_group_sources`' pointers
        # copied 16 bytes at a time from addresses found once: along k (a slice is `DEPTH` elements on), or
        # along the rows where `k` enters the index linearly (a slice is as many elements on as `k`'s factor)
        self.stepped = self.vector and (self.k_contiguous or _linear_in(index, k, var_binding))
        self.position = "rs2gpu_ty" if axis == "y" else "rs2gpu_tx"

    def layout(self) -> str:
        return "k-contiguous" if self.k_contiguous else "a line of them per k"

    def group_place(self) -> tuple[str, str]:
        """The tile line (its row or column) and the k of the first element of the thread's group `rs2gpu_e`:
        consecutive threads take consecutive groups of the operand in memory."""
        if self.k_contiguous:
            return f"rs2gpu_e / {DEPTH // GROUP}u", f"rs2gpu_e % {DEPTH // GROUP}u * {GROUP}u"
        return f"rs2gpu_e % {self.lines // GROUP}u * {GROUP}u", f"rs2gpu_e / {self.lines // GROUP}u"


def _copy_slice(o: _Operand, half: str, k: str) -> list[str]:
    """This thread's share of the slice of k from `rs2gpu_k0` of operand `o`, into stage `rs2gpu_stage`: the
    groups of GROUP elements the loop reads, one 16-byte copy where the whole group is read and 16-byte
    aligned, else element by element, with zeros for the elements it does not read."""
    line, depth = o.group_place()

    def var(indent: str) -> list[str]:
        return [f"{indent}const {o.var_type} {o.var} = rs2gpu_start_{o.axis} + {o.position};"] if o.reads_var else []
    if o.k_contiguous and o.stepped:  # along k, from where `_group_sources` found the group's first slice
        head = [f"    const u32 {o.position} = {o.start} + rs2gpu_line;",
                "    const usize rs2gpu_k_group = rs2gpu_k0 + rs2gpu_depth;"]
        copy = [f"    if ({o.sources}_aligned[rs2gpu_l] && rs2gpu_k_group + {GROUP}u <= rs2gpu_k_end) {{",
                f"        rs2gpu_copy16_async(rs2gpu_group_at, {o.sources}[rs2gpu_l] + (rs2gpu_k0 - rs2gpu_k_begin));",
                "        continue;",
                "    }"]
        each = [*var("        "), f"        const usize {k} = rs2gpu_k_group + rs2gpu_w;"]
    elif o.k_contiguous:  # along k, element by element
        head = [f"    const u32 {o.position} = {o.start} + rs2gpu_line;",
                "    const usize rs2gpu_k_group = rs2gpu_k0 + rs2gpu_depth;", *var("    ")]
        copy = []
        each = [f"        const usize {k} = rs2gpu_k_group + rs2gpu_w;"]
    elif o.stepped:  # along the rows (or columns), from where `_group_sources` found the group's first slice
        head = [f"    const usize {k} = rs2gpu_k0 + rs2gpu_depth;",
                f"    const u32 rs2gpu_first = {o.start} + rs2gpu_line;"]
        copy = [f"    if ({o.sources}_aligned[rs2gpu_l] && {k} < rs2gpu_k_end) {{",
                f"        rs2gpu_copy16_async(rs2gpu_group_at, {o.sources}[rs2gpu_l] + "
                f"(isize)((rs2gpu_k0 - rs2gpu_k_begin) / {DEPTH}u) * {o.sources}_step);",
                "        continue;",
                "    }"]
        each = [f"        const u32 {o.position} = rs2gpu_first + rs2gpu_w;", *var("        ")]
    else:  # along the rows (or columns)
        head = [f"    const usize {k} = rs2gpu_k0 + rs2gpu_depth;",
                f"    const u32 rs2gpu_first = {o.start} + rs2gpu_line;"]
        copy = [f"    if ({k} < rs2gpu_k_end && rs2gpu_first + {GROUP}u <= (u32){o.count}) {{",
                f"        const u32 {o.position} = rs2gpu_first;", *var("        "),
                f"        if (rs2gpu_on_lanes_grid(&{o.load}, 0)) {{",
                f"            rs2gpu_copy16_async(rs2gpu_group_at, &{o.load});",
                "            continue;",
                "        }",
                "    }"] if o.vector else []
        each = [f"        const u32 {o.position} = rs2gpu_first + rs2gpu_w;", *var("        ")]
    offset = f"rs2gpu_tile_offset<{_cxx_bool(o.k_contiguous)}, {o.lines}u, {DEPTH}u>(rs2gpu_line, rs2gpu_depth)"
    return ["#pragma unroll",
            f"for (u32 rs2gpu_l = 0; rs2gpu_l < {o.share}u; rs2gpu_l++) {{",
            f"    const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
            f"    const u32 rs2gpu_line = {line}, rs2gpu_depth = {depth};",
            f"    {half}* const rs2gpu_group_at = &{o.tile}[rs2gpu_stage][{offset}];",
            *head, *copy,
            f"    for (u32 rs2gpu_w = 0; rs2gpu_w < {GROUP}u; rs2gpu_w++) {{",
            *each,
            f"        rs2gpu_group_at[rs2gpu_w] = {o.position} < (u32){o.count} && {k} < rs2gpu_k_end ? {o.load} : "
            f"{half}::from_bits(0);",
            "    }",
            "}"]


def _group_sources(o: _Operand, half: str, k: str) -> list[str]:
    """For an operand copied 16 bytes at a time (`_Operand.stepped`): where each of the thread's groups
    starts in memory at the loop's first k, whether its copies are aligned, and, along the rows, how many
    elements on a slice's group is from the one before. Along k that is `DEPTH` (the index adds `k` itself);
    along the rows, `k`'s factor times `DEPTH`, found once as the distance between two k a slice apart. Either
    way a later slice's group is as aligned as the first (`DEPTH` halves are a multiple of 16 bytes), so the
    copies need no index of their own."""
    if not o.stepped:
        return []
    line, depth = o.group_place()
    share = o.share
    var = [f"        const {o.var_type} {o.var} = rs2gpu_start_{o.axis} + {o.position};"] if o.reads_var else []
    whole = f"{o.position} < (u32){o.count}" if o.k_contiguous else f"{o.position} + {GROUP}u <= (u32){o.count}"
    out = [f"    const {half}* {o.sources}[{share}];  // where the thread's groups of the first slice start",
           f"    bool {o.sources}_aligned[{share}];"]
    if not o.k_contiguous:  # the elements from one slice's group to the next: the same for every group
        out += ["    isize " + o.sources + "_step;",
                "    {",
                f"        const u32 {o.position} = {o.start};",
                *var,
                f"        const usize {k} = rs2gpu_k_begin;",
                f"        const {half}* const rs2gpu_here = &{o.load};",
                "        {",
                f"            const usize {k} = rs2gpu_k_begin + {DEPTH}u;",
                f"            {o.sources}_step = &{o.load} - rs2gpu_here;",
                "        }",
                "    }"]
    return out + ["#pragma unroll",
                  f"    for (u32 rs2gpu_l = 0; rs2gpu_l < {share}u; rs2gpu_l++) {{",
                  f"        const u32 rs2gpu_e = rs2gpu_thread + rs2gpu_l * {BLOCK_SIZE}u;",
                  f"        const u32 {o.position} = {o.start} + {line};",
                  f"        const usize {k} = rs2gpu_k_begin + {depth};",
                  *var,
                  f"        {o.sources}[rs2gpu_l] = {whole} ? &{o.load} : nullptr;",
                  f"        {o.sources}_aligned[rs2gpu_l] = {o.sources}[rs2gpu_l] != nullptr && "
                  f"rs2gpu_on_lanes_grid({o.sources}[rs2gpu_l], 0);",
                  "    }"]


def _batch_lines(loop: ParallelLoop, names: LocalNames) -> list[str]:
    """A 3-D nest's outer variable, the block's along z (its grid covers that axis one value a block)."""
    if len(loop.dims) != 3:
        return []
    batch = loop.dims[0].index
    return ["    const u32 rs2gpu_tz = RS2GPU_BLOCK_IDX.z;  // one product per value of the outer variable",
            f"    const {cxx_type(batch.ty)} {names.name(batch)} = rs2gpu_start_z + rs2gpu_tz;"]


def _indented_by(levels: int, lines: list[str]) -> list[str]:
    for _ in range(levels):
        lines = indented(lines)
    return lines


def _cxx_bool(value: bool) -> str:
    return "true" if value else "false"


def _position(axis: str) -> str:
    """The tile's row (`y`) or column (`x`) of the thread's sum (rs2gpu_mi, rs2gpu_ni, rs2gpu_e), as the
    tensor cores' fragments place it."""
    if axis == "y":
        return f"rs2gpu_warp_row + rs2gpu_mi * {MMA_ROWS}u + rs2gpu_group + rs2gpu_e / 2u * 8u"
    return f"rs2gpu_warp_col + rs2gpu_ni * {MMA_COLS}u + rs2gpu_pair + rs2gpu_e % 2u"


def _each_sum(tiles: tuple[int, int], body: list[str]) -> list[str]:
    """`body` (at an indent of four levels) for each of the thread's sums, in its warp's `tiles` (rows, columns)
    of 16 x 8."""
    row_tiles, col_tiles = tiles
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


def _linear_in(index: ir.Expr, var: ir.Binding, line: ir.Binding) -> bool:
    """The index is a sum with one term that reads `var`: `var` itself or `var * f` (`f * var`) with `f`
    free of it and of the operand's row (or column) variable `line`, so that it moves by the same number of
    elements in every row when `var` does."""
    terms = _terms(index)
    with_var = [t for _, t in terms if mentions(t, var)]
    if len(with_var) != 1:
        return False
    term = with_var[0]
    if isinstance(term, ir.Var):
        return term.binding is var
    return isinstance(term, ir.Binary) and term.op == "*" and any(
        isinstance(side, ir.Var) and side.binding is var and not mentions(other, var) and not mentions(other, line)
        for side, other in ((term.lhs, term.rhs), (term.rhs, term.lhs)))


def _terms(index: ir.Expr) -> list[tuple[int, ir.Expr]]:
    """The terms of a sum and difference, with their signs."""
    terms: list[tuple[int, ir.Expr]] = []

    def flatten(e: ir.Expr, sign: int) -> None:
        if isinstance(e, ir.Binary) and e.op in ("+", "-"):
            flatten(e.lhs, sign)
            flatten(e.rhs, sign if e.op == "+" else -sign)
        else:
            terms.append((sign, e))
    flatten(index, 1)
    return terms


def _unit_term(index: ir.Expr, var: ir.Binding) -> bool:
    """The index is a sum with `var` itself as a term and nowhere else: consecutive values of `var` read
    consecutive elements."""
    with_var = [(sign, t) for sign, t in _terms(index) if mentions(t, var)]
    return len(with_var) == 1 and with_var[0][0] == 1 and isinstance(with_var[0][1], ir.Var) \
        and with_var[0][1].binding is var
