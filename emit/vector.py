"""The vector entry point of a loop: each thread runs W consecutive iterations with 16-byte accesses.

A thread of the general entry point reads and writes 8 bytes (4 for `i32`/`f32`) per slice and
iteration. On an H200 a warp of such accesses moves data at 3.73 TB/s where 16-byte ones reach the
device's copy rate, 4.12 TB/s (one read and one write of 10^8 doubles), so a streaming loop such as
COPY stays at 91 % of the copy rate with one element per thread. A single loop whose every slice access
is at the loop variable plus or minus a constant (`c[i] = a[i]`, `a[i - 1] = v`, `x[i] = y[i + 1] - y[i]`),
all of one 4- or 8-byte element type, gets a second grid-stride entry point, `<symbol>_vector`, over
groups of W = 16 / size iterations:

    for (usize rs2gpu_gx = ...; rs2gpu_gx < rs2gpu_groups_x; rs2gpu_gx += ...) {
        const usize rs2gpu_first_x = (usize)rs2gpu_start_x + rs2gpu_gx * 2;
        const rs2gpu_lanes<f64, 2> rs2gpu_lanes_a = rs2gpu_load_lanes<2>(a + rs2gpu_first_x);
        rs2gpu_lanes<f64, 2> rs2gpu_lanes_c;
        { const f64 a_0 = rs2gpu_lanes_a.lane[0]; f64 c_0; c_0 = a_0; rs2gpu_lanes_c.lane[0] = c_0; }
        { ...the same for lane 1... }
        rs2gpu_store_lanes<2>(c + rs2gpu_first_x, rs2gpu_lanes_c);
    }
    ...the iterations after the last whole group, one per thread, as the general entry point runs them

Each lane is one iteration, in order, with the loop's own body: its accesses become the lane's
elements. A slice is loaded when the body may read it before writing it, and stored when the body
writes it; a slice written only by a statement of the body's top level, before any read, is not
loaded (its lanes are all written). A slice is accessed at one offset from the loop variable, or, if the
loop only reads it, at several: then its W lanes are loaded in step with the first stored slice's
(the anchor's) modulo W, from the smallest such offset, and the elements the lanes read outside them
(`y[i + 1]` of the last lane, `y[i - 1]` of the first) one by one. Where those lanes would not lie
between elements the group reads (`xin[i - 1]` alone, in step at `xin[i]`: the last group's second lane
may be past the slice's end), each element the group reads is read on its own: W loads of 8 (or 4) bytes
16 bytes apart, each of which spans twice the lines a warp's loads of one element per thread span. A single
loop without reductions that reads a slice so gets no vector entry point: its covering entry point, whose
warps start at a multiple of 32 iterations (`emit.covering.warp_lead`), reads the slice one element per
thread as a hand-written kernel does (TRIDIAG_ELIM, `xout[i] = z[i] * (y[i] - xin[i - 1])` at 10^6 on an
H200, in CUDA graphs: 4.21-4.22 µs per launch in the vector form, 3.96-4.01 in the covering form so aligned,
the hand kernel 3.87-3.94). A loop with reductions has no covering entry point, and a nest's groups
are covering already, so those keep the element reads. The slices a loop stores
must be in step with each other. A loop that writes a slice it did not load anywhere else (under an
`if`) gets no vector entry point, nor does one with a `continue`, a check on the device, index lists or
scatters.
The lanes are the iterations the general entry point runs, and the race checker already proved that no
iteration touches another's elements, so grouping them changes nothing but the width of the accesses.

Where the loop starts at a literal (`for i in 1..n`), the groups start at the first iteration whose
anchor lane falls on the 512-byte grid of a slice that starts on it (as allocations do), and the
iterations before it (the head, at most 32 W - 1) run one per thread as in the general entry point:
FIRST_SUM writes `x[1..64]` one by one and then `x[64..66]`, ... in groups, so that the 32 groups of a
warp fill four 128-byte lines, as an element-per-thread loop from 0 fills them; from `x[2]` on, every
warp's stores and loads would cross five (in back-to-back launches on data in L2, TRIDIAG_ELIM's
entry point ran 6 % slower shifted by one element). The head is a constant of the kernel: NVRTC splits
the 16-byte store into two 8-byte ones when the groups' first index is a run-time sum of the start and a
head, and merges fewer of the loads beside the lanes.

A single loop with reductions that reads one slice runs two groups per pass, both loads first: a
reduction's grid is capped, so each thread runs many groups, and with one 16-byte load in flight per thread
an i32 stream read 3 % slower on an H200 (93.9 against 90.9 µs for 4e8 bytes). The thread runs the same
groups in the same order as one group per pass would, so its results are the same. (Two groups per pass
for every reduction made REDUCE_STRUCT, which reads two slices, 10 % slower, with 38 registers against 32.)

The host runs it where the accesses are 16-byte aligned: every slice's address plus its first lane's
offset, `(start + head + lane offset) * size`, a multiple of 16 (`LaunchPlan.vector_fits`); otherwise
the covering or the general entry point.

A nest of loops groups the iterations of its innermost loop, row by row: an access is `s[i + row + c]`
for the innermost variable i, a `row` that is the same in every iteration of the innermost loop (outer
loop variables, parameters, the terms of a `let kj = k * jn + j` the index goes through) and a literal c,
and each (slice, row) is a stream of its own, as a slice of a single loop is (`zp[kj + jn - 1]` and
`zp[kj - 1]` are two streams of zp; `b[j + n * k]` and `b[j + k * n]` are one, rows being compared term by
term up to the order of each `+` and `*`); a slice the loop stores has one stream. Where a row starts
depends on the outer variables, so no test of the host's covers every row: each row tests whether its stored
streams' first group lies on the 16-byte grid and then runs its groups, storing them whole
(`rs2gpu_store_group`), or else has none; each group loads a stream it only reads whole where its lanes
are on the grid and element by element elsewhere (`rs2gpu_load_group`). NESTED_INIT's rows of `ni`
doubles are all on the grid when `ni` is even. The nest's form is shaped as its covering entry point
(`nest_vector_lines`): one thread per row and group, so the host runs it only on a grid that covers
them, and nests with reductions (whose grids are capped) have none. (Inside the general entry point's
grid-stride loops it took NESTED_INIT 40 registers against the covering form's 18, and ran slower.)
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from rs2gpu.emit.covering import continues_loop, index_declaration
from rs2gpu.emit.cxx_stmt import BodyEmitter, iteration_declaration
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType, RefType, SliceType, size_of
from rs2gpu.ir.walk import rebuild, same_value, walk

VECTOR_BYTES = 16  # the widest access a thread makes: one 128-bit load or store
WARP_GROUPS = 32  # the groups of one warp: 512 bytes, four 128-byte lines


@dataclass(frozen=True, eq=False)
class Stream:
    """The elements of a slice that its accesses `s[i + row + c]` of one `row` reach (see the module):
    `row` holds the signed terms (+1 or -1, expression) of the index other than the innermost loop's
    variable and literals; it is empty in a single loop. `label` names its lanes and elements."""

    slice: ir.Binding
    row: tuple[tuple[int, ir.Expr], ...]
    label: str


@dataclass(frozen=True)
class VectorPlan:
    """The width of a loop's vector entry point and the streams whose lanes it loads and stores."""

    width: int
    element: PrimType
    loads: tuple[Stream, ...]
    stores: tuple[Stream, ...]
    offsets: tuple[tuple[Stream, tuple[int, ...]], ...]  # per stream, the offsets from the loop variable
    places: dict = field(compare=False)  # each access (ir.Index) of the body, by node_id -> (its stream, offset)
    head: int = 0  # the iterations before the first group (the loop's start is a literal; see the module)
    rows_checked: bool = False  # a nest: its rows and groups test their streams' alignment (see the module)

    @property
    def slices(self) -> tuple[Stream, ...]:
        return tuple(dict.fromkeys(self.loads + self.stores))

    @property
    def anchor(self) -> Stream:
        """The stream the others' lanes keep in step with: the first one stored, else the first one loaded."""
        return (self.stores or self.loads)[0]

    def first_offset(self, s: Stream) -> int:
        """The offset from the loop variable of a group's first lane of `s`: a stored slice's one offset
        (and the anchor's smallest); for a slice only read, the smallest from which its lanes are in step
        with the anchor's modulo W."""
        offsets = dict(self.offsets)[s]
        if s in self.stores or s is self.anchor:
            return min(offsets)
        return min(offsets) + (min(dict(self.offsets)[self.anchor]) - min(offsets)) % self.width

    def whole(self, s: Stream) -> bool:
        """Whether a group accesses the lanes of `s` as one 16-byte load or store: always for a stored slice
        and the anchor; for a slice only read, where its lanes lie between elements the group reads (so in
        bounds), else it reads each element it needs on its own (`y[i + 1]` alone, in step at `y[i + 2]`)."""
        return s in self.stores or s is self.anchor or self.first_offset(s) <= max(dict(self.offsets)[s])

    @property
    def aligned(self) -> tuple[Stream, ...]:
        """The streams whose lanes a group accesses whole, which must be 16-byte aligned."""
        return tuple(s for s in self.slices if self.whole(s))

    def window(self, s: Stream) -> list[int]:
        """The positions, from the first lane's, of the elements of `s` a group accesses: the W lanes (0 to
        W - 1), and those before and after them that some lane reads at another offset."""
        first = self.first_offset(s)
        return sorted({lane + offset - first for lane in range(self.width) for offset in dict(self.offsets)[s]})


def vector_plan(loop: ParallelLoop, params: tuple[ir.Binding, ...]) -> VectorPlan | None:
    """The vector form of `loop` (see the module's docstring), or None where it has none."""
    if loop.index_lists or loop.list_reads or loop.scatters or loop.optional or continues_loop(loop.body) \
            or (len(loop.dims) > 1 and loop.reductions):  # (a nest's form covers its groups: see the module)
        return None
    index = loop.dims[-1].index
    slices = {p for p in params if isinstance(p.ty, RefType) and isinstance(p.ty.target, SliceType)}
    lets = {stmt.binding: stmt.init for stmt in loop.body.stmts
            if isinstance(stmt, ir.Let) and stmt.init is not None and not stmt.binding.mutable}
    declared = {n.binding for n in walk(loop.body) if isinstance(n, ir.Let)} \
        | {n.var for n in walk(loop.body) if isinstance(n, ir.For)}
    accesses = [n for n in walk(loop.body) if isinstance(n, ir.Index)]
    streams: dict[ir.Binding, list[Stream]] = {}
    offsets: dict[Stream, set[int]] = {}
    places = {}
    for node in accesses:
        found = _stream_of(node, index, slices, lets, declared)
        if found is None or (found[0] and len(loop.dims) == 1):  # (a single loop's host tests one alignment)
            return None
        row, offset = found
        of_slice = streams.setdefault(node.base.binding, [])
        stream = next((t for t in of_slice if _same_row(t.row, row)), None)
        if stream is None:
            name = node.base.binding.name
            stream = Stream(node.base.binding, row, f"{name}_row{len(of_slice)}" if of_slice else name)
            of_slice.append(stream)
        offsets.setdefault(stream, set()).add(offset)
        places[node.node_id] = (stream, offset)
    if not accesses:
        return None
    mentions = sum(1 for n in walk(loop.body) if isinstance(n, ir.Var) and n.binding in slices)
    if mentions != len(accesses):  # a slice passed whole (to a helper, to `len()`): not only lanes
        return None
    elements = {n.base.binding.ty.target.elem for n in accesses}
    if len(elements) != 1:
        return None
    element = elements.pop()
    if not isinstance(element, PrimType) or size_of(element) not in (4, 8):
        return None
    order = _lane_order(loop.body)
    if order is None:
        return None
    loaded, stored = order
    if any(len(streams[s]) > 1 for s in stored):
        return None  # a stored slice's lanes are one group: reads of another row would miss its stores
    loads = tuple(t for s in loaded for t in streams[s])
    stores = tuple(streams[s][0] for s in stored)
    width = VECTOR_BYTES // size_of(element)
    if any(len(offsets[s]) > 1 for s in stores) or len({min(offsets[s]) % width for s in stores}) > 1:
        return None  # a stored slice's lanes are one group, at one offset, in step with the others'
    plan = VectorPlan(width, element, loads, stores,
                      tuple((s, tuple(sorted(offsets[s]))) for s in dict.fromkeys(loads + stores)), places,
                      rows_checked=len(loop.dims) > 1)
    if len(loop.dims) == 1 and not loop.reductions and not all(plan.whole(s) for s in plan.slices):
        return None  # its covering entry point reads that slice as a hand-written kernel does (see the module)
    start = loop.dims[-1].start
    if isinstance(start, ir.Lit) and isinstance(start.value, int) and not isinstance(start.value, bool):
        # a single loop's groups start a warp's 512 bytes, a nest's row its 16 (see the module)
        grid = width * (1 if plan.rows_checked else WARP_GROUPS)
        plan = replace(plan, head=-(start.value + plan.first_offset(plan.anchor)) % grid)
    return plan


def _same_term(a: ir.Expr, b: ir.Expr) -> bool:
    """Whether two row terms are the same value, up to the order of the operands of each `+` and `*`
    (`n * k` and `k * n`): a row term's integer arithmetic cannot panic (`_row_term`), and wrapping sums and
    products do not depend on that order."""
    if isinstance(a, ir.Binary) and isinstance(b, ir.Binary) and a.op == b.op and a.op in ("+", "*") \
            and same_value(a.ty, b.ty):
        return (_same_term(a.lhs, b.lhs) and _same_term(a.rhs, b.rhs)) \
            or (_same_term(a.lhs, b.rhs) and _same_term(a.rhs, b.lhs))
    if isinstance(a, ir.Cast) and isinstance(b, ir.Cast) and same_value(a.ty, b.ty):
        return _same_term(a.operand, b.operand)
    return same_value(a, b)


def _stream_of(node: ir.Index, index: ir.Binding, slices: set, lets: dict,
               declared: set) -> tuple[tuple, int] | None:
    """(row, c) for an access `s[i + row + c]` of a slice at the loop variable `i` (once, added), terms
    that are the same in every iteration of the innermost loop, and literals c, else None. `lets` are the
    body's `let`s an index may go through, `declared` every binding the body declares."""
    if not (isinstance(node.base, ir.Var) and node.base.binding in slices):
        return None
    terms = _signed_terms(node.index, 1, lets)
    if [sign for sign, t in terms if isinstance(t, ir.Var) and t.binding is index] != [1]:
        return None
    offset, row = 0, []
    for sign, term in terms:
        if isinstance(term, ir.Var) and term.binding is index:
            continue
        if isinstance(term, ir.Lit) and isinstance(term.value, int) and not isinstance(term.value, bool):
            offset += sign * term.value
        elif _row_term(term, index, declared):
            row.append((sign, term))
        else:
            return None
    return tuple(row), offset


def _signed_terms(e: ir.Expr, sign: int, lets: dict) -> list[tuple[int, ir.Expr]]:
    """The terms of a sum `a + b - c` (through the `let`s it names), each with its sign."""
    if isinstance(e, ir.Binary) and e.op in ("+", "-"):
        return _signed_terms(e.lhs, sign, lets) + _signed_terms(e.rhs, sign if e.op == "+" else -sign, lets)
    if isinstance(e, ir.Var) and e.binding in lets:
        return _signed_terms(lets[e.binding], sign, lets)
    return [(sign, e)]


def _row_term(term: ir.Expr, index: ir.Binding, declared: set) -> bool:
    """Whether a group can compute `term` before its lanes, as the same value for each: integer
    arithmetic that cannot panic, of values declared outside the body (not the innermost variable)."""
    for node in walk(term):
        if isinstance(node, ir.Var):
            if node.binding is index or node.binding in declared:
                return False
        elif isinstance(node, ir.Binary):
            if node.op not in ("+", "-", "*"):
                return False
        elif isinstance(node, ir.Cast):
            if not (isinstance(node.ty, PrimType) and node.ty.is_int and isinstance(node.operand.ty, PrimType)
                    and node.operand.ty.is_int):
                return False
        elif not isinstance(node, (ir.Lit, ir.ConstRef)):
            return False
    return True


def _same_row(a: tuple, b: tuple) -> bool:
    """Whether two rows hold the same terms with the same signs, in any order."""
    rest = list(b)
    for sign, term in a:
        match = next((k for k, (s, t) in enumerate(rest) if s == sign and _same_term(t, term)), None)
        if match is None:
            return False
        rest.pop(match)
    return not rest


def _lane_order(body: ir.Block) -> tuple[tuple, tuple] | None:
    """(loads, stores) of the body's slices, in the order the body first touches them, or None when it
    writes, under a condition, a slice that it neither read before nor wrote at its top level."""
    loads: dict = {}
    stores: dict = {}
    defined: set = set()  # slices whose lanes hold the iteration's value: loaded or written whole
    for stmt in body.stmts + ((ir.ExprStmt(body.tail, body.span),) if body.tail is not None else ()):
        whole = isinstance(stmt, ir.Assign) and stmt.op is None and isinstance(stmt.target, ir.Index)
        for node in walk(stmt.value if whole else stmt):
            if isinstance(node, ir.Assign) and isinstance(node.target, ir.Index):
                target = node.target.base.binding
                stores[target] = None
                if node.op is not None and target not in defined:
                    loads[target] = None
                    defined.add(target)
                elif target not in defined:
                    return None  # its other lanes would be stored unset
            elif isinstance(node, ir.Index) and not _is_target_of(node, stmt):
                read = node.base.binding
                if read not in defined:
                    loads[read] = None
                    defined.add(read)
        if whole:
            stores[stmt.target.base.binding] = None
            defined.add(stmt.target.base.binding)
    return tuple(loads), tuple(stores)


def _is_target_of(node: ir.Index, stmt) -> bool:
    """Whether `node` is the place a plain assignment inside `stmt` writes (not a read)."""
    return any(isinstance(a, ir.Assign) and a.op is None and a.target is node for a in walk(stmt))


def vector_lines(plan: VectorPlan, loop: ParallelLoop, names: LocalNames, sites, hoisted: frozenset,
                 stopped: bool) -> tuple[list[str], list[str], list[str], list[str]]:
    """(groups, loop_open, body, loop_close) of a single loop: the count of whole groups, and the vector
    entry point's grid-stride loop over them, which the caller follows with the general loop over the
    iterations after them (`tail_start`)."""
    w, head = plan.width, plan.head
    condition = "rs2gpu_gx < rs2gpu_groups_x"
    if stopped:
        condition = f"!rs2gpu_stopped && {condition}"
    count = f"rs2gpu_count_x / {w}" if not head else f"rs2gpu_count_x > {head} ? (rs2gpu_count_x - {head}) / {w} : 0"
    groups = [f"    const usize rs2gpu_groups_x = {count};  // whole groups of {w} "
              f"{'after the head' if head else 'iterations'}"]

    def first_of(group: str) -> str:
        return f"(usize)rs2gpu_start_x + {f'{head} + ' if head else ''}{group} * {w}"

    group_open, body, group_close = _group_lines(plan, loop, names, sites, hoisted, 2)
    tid = "(usize)RS2GPU_BLOCK_IDX.x * RS2GPU_BLOCK_DIM.x + RS2GPU_THREAD_IDX.x"
    if not (loop.reductions and len(plan.slices) == 1):
        loop_open = [f"    for (usize rs2gpu_gx = {tid}; {condition}; "
                     f"rs2gpu_gx += (usize)RS2GPU_GRID_DIM.x * RS2GPU_BLOCK_DIM.x) {{",
                     f"        const usize rs2gpu_first_x = {first_of('rs2gpu_gx')};", *group_open]
        return groups, loop_open, body, group_close + ["    }"]
    # a reduction's grid is capped, so its threads run many groups: one slice read one group at a time keeps
    # one 16-byte load per thread in flight, and an i32 stream read so ran 3 % slower on an H200 than two
    # groups per pass with both loads first (the same groups in the same order, so the same results)
    second_open, second_body, second_close = _group_lines(plan, loop, names, sites, hoisted, 2,
                                                          "rs2gpu_second_x", "rs2gpu_gy")
    paired = condition.replace("rs2gpu_gx <", "rs2gpu_gx + rs2gpu_stride_x <")
    loop_open = ["    const usize rs2gpu_stride_x = (usize)RS2GPU_GRID_DIM.x * RS2GPU_BLOCK_DIM.x;",
                 f"    usize rs2gpu_gx = {tid};",
                 f"    for (; {paired}; rs2gpu_gx += 2 * rs2gpu_stride_x) {{  // two groups per pass",
                 f"        const usize rs2gpu_first_x = {first_of('rs2gpu_gx')};",
                 "        const usize rs2gpu_gy = rs2gpu_gx + rs2gpu_stride_x;",
                 f"        const usize rs2gpu_second_x = {first_of('rs2gpu_gy')};", *group_open, *second_open]
    last_open, last_body, last_close = _group_lines(plan, loop, names, sites, hoisted, 2)
    loop_close = [*group_close, *second_close, "    }", f"    if ({condition}) {{  // the last group alone",
                  f"        const usize rs2gpu_first_x = {first_of('rs2gpu_gx')};", *last_open, *last_body,
                  *last_close, "    }"]
    return groups, loop_open, body + second_body, loop_close


def nest_vector_lines(plan: VectorPlan, loop: ParallelLoop, axes: list[str], names: LocalNames, sites,
                      hoisted: frozenset) -> list[str]:
    """The vector entry point of a nest, after its preamble: one thread per row (the outer axes) and group
    of W iterations of the row, behind one `if`, as the covering entry point runs one per iteration, so
    the host runs it only on a grid that covers the groups (see `emit.covering`). A row runs its groups
    where its stored streams' lanes lie on the 16-byte grid; the threads after its groups run the
    iterations outside them (before them, after them, or the whole row where it is off the grid), W each,
    one after another."""
    w, head = plan.width, plan.head
    outer = list(zip(loop.dims[:-1], axes[:-1]))
    lines = ["    // One thread per row and group of iterations: this entry point runs only on a grid that covers them."]
    lines += [f"    const u32 rs2gpu_t{axis} = RS2GPU_BLOCK_IDX.{axis} * RS2GPU_BLOCK_DIM.{axis} "
              f"+ RS2GPU_THREAD_IDX.{axis};" for _, axis in outer]
    lines.append("    const u32 rs2gpu_gx = RS2GPU_BLOCK_IDX.x * RS2GPU_BLOCK_DIM.x + RS2GPU_THREAD_IDX.x;")
    inside = " && ".join([f"rs2gpu_t{axis} < (u32)rs2gpu_count_{axis}" for _, axis in outer]
                         + [f"rs2gpu_gx < (u32)((rs2gpu_count_x + {w - 1}) / {w})"])
    lines.append(f"    if ({inside}) {{")
    lines += [f"        {index_declaration(dim, axis, names)}" for dim, axis in outer]
    count = f"(u32)rs2gpu_count_x / {w}" if not head else \
        f"(rs2gpu_count_x > {head} ? (u32)(rs2gpu_count_x - {head}) / {w} : 0u)"
    if plan.stores:
        first_group = f"((usize)rs2gpu_start_x + {head})" if head else "(usize)rs2gpu_start_x"
        on_grid = " && ".join(f"rs2gpu_on_lanes_grid({names.name(s.slice)}, "
                              f"{_group_element(plan.first_offset(s), _row_base(s, names, first_group))})"
                              for s in plan.stores)
        lines += ["        // the row's stores on the 16-byte grid, or no groups: its threads run it W iterations each",
                  f"        const u32 rs2gpu_groups_x = {on_grid} ? {count} : 0u;"]
    else:
        lines.append(f"        const u32 rs2gpu_groups_x = {count};")
    group_open, body, group_close = _group_lines(plan, loop, names, sites, hoisted, 3)
    lines += ["        if (rs2gpu_gx < rs2gpu_groups_x) {",
              f"            const usize rs2gpu_first_x = (usize)rs2gpu_start_x + {f'{head} + ' if head else ''}"
              f"(usize)rs2gpu_gx * {w};", *group_open, *body, *group_close]
    # the row's other iterations: the head, then those after the groups, W per thread
    general = BodyEmitter(names, indent=4, sites=sites, hoisted=hoisted)
    general.block(loop.body)
    first = f"(rs2gpu_gx - rs2gpu_groups_x) * {w}"
    position = f"rs2gpu_q < {head} ? rs2gpu_q : rs2gpu_q + rs2gpu_groups_x * {w}" if head else \
        f"rs2gpu_q + rs2gpu_groups_x * {w}"
    lines += ["        } else {",
              f"            for (u32 rs2gpu_q = {first}; rs2gpu_q < {first} + {w} && "
              f"rs2gpu_q < (u32)rs2gpu_count_x - rs2gpu_groups_x * {w}; rs2gpu_q++) {{",
              f"                const u32 rs2gpu_tx = {position};",
              f"                {index_declaration(loop.dims[-1], 'x', names)}"]
    if general.used_sites or general.passes_iteration:
        lines.append(f"                {iteration_declaration(len(loop.dims))}")
    lines += [*general.lines, "            }", "        }", "    }"]
    return lines


def _group_lines(plan: VectorPlan, loop: ParallelLoop, names: LocalNames, sites, hoisted: frozenset,
                 level: int, first: str = "rs2gpu_first_x",
                 group: str = "rs2gpu_gx") -> tuple[list[str], list[str], list[str]]:
    """(open, body, close) of the group numbered `group`, at `level` of indentation, after `first` (its first
    iteration) is declared: the loads of its lanes and of the elements read outside them, each lane's
    body, and the stores. In a nest, a stream only read is loaded whole where the group's lanes of it lie
    on the 16-byte grid and element by element elsewhere."""
    w = plan.width
    dim = loop.dims[-1]
    ty = cxx_type(plan.element)
    lanes_of = {s: names.fresh(f"lanes_{s.label}") for s in plan.aligned}
    pad = "    " * level
    group_open: list[str] = []
    element_of = {}  # stream -> the index of a group's element at a position from the stream's first lane
    whole_here = {}  # stream -> (a nest, a stream only read) whether the group's lanes of it are on the grid
    for s in plan.slices:
        offset = plan.first_offset(s)
        if plan.rows_checked:
            at = names.fresh(f"at_{s.label}")
            group_open.append(f"{pad}const usize {at} = {_group_element(offset, _row_base(s, names))};")
            element_of[s] = lambda position, at=at: _group_element(position, at)
            if plan.whole(s) and s not in plan.stores:
                whole_here[s] = names.fresh(f"whole_{s.label}")
                group_open.append(f"{pad}const bool {whole_here[s]} = "
                                  f"rs2gpu_on_lanes_grid({names.name(s.slice)}, {at});")
        else:
            element_of[s] = lambda position, offset=offset: _group_element(offset + position, first)
    extras = {}  # (stream, position) -> the name of an element outside the lanes, read on its own
    for s in plan.slices:
        pointer = names.name(s.slice)
        if s in plan.loads and plan.whole(s):
            qualifier = "" if s in plan.stores else "const "
            load = f"rs2gpu_load_group<{w}>({pointer} + {element_of[s](0)}, {whole_here[s]})" if s in whole_here \
                else f"rs2gpu_load_lanes<{w}>({pointer} + {element_of[s](0)})"
            group_open.append(f"{pad}{qualifier}rs2gpu_lanes<{ty}, {w}> {lanes_of[s]} = {load};")
        elif s not in plan.loads:
            group_open.append(f"{pad}rs2gpu_lanes<{ty}, {w}> {lanes_of[s]};")
        for position in plan.window(s):
            if not (0 <= position < w and plan.whole(s)):
                extras[s, position] = names.fresh(_position_name(s, position))
                group_open.append(f"{pad}const {ty} {extras[s, position]} = {pointer}[{element_of[s](position)}];")
    body_lines: list[str] = []
    first_iteration = f"{f'{plan.head} + ' if plan.head else ''}{group} * {w}"
    for lane in range(w):
        # the lane's element of each access `s[i + offset]`, named by its position in the group's window
        elements = {(s, offset): ir.Binding(_position_name(s, lane + offset - plan.first_offset(s)), plan.element,
                                            s in plan.stores, "local", s.slice.span)
                    for s, offsets in plan.offsets for offset in offsets}
        block = rebuild(loop.body, lambda node: ir.Var(elements[plan.places[node.node_id]], node.span)
                        if isinstance(node, ir.Index) else None)
        body = BodyEmitter(names, indent=level + 1, sites=sites, hoisted=hoisted)
        body.block(block)
        inner = pad + "    "
        body_lines.append(f"{pad}{{")
        if any(isinstance(n, ir.Var) and n.binding is dim.index for n in walk(block)):
            index_type = "u32" if plan.rows_checked else "usize"
            body_lines += [f"{inner}const {index_type} rs2gpu_tx = {first_iteration} + {lane};",
                           f"{inner}{index_declaration(dim, 'x', names)}"]
        for (s, offset), element in elements.items():
            name = names.name(element)
            position = lane + offset - plan.first_offset(s)
            if s not in plan.loads:
                body_lines.append(f"{inner}{ty} {name};")
            elif 0 <= position < w and plan.whole(s):
                qualifier = "" if s in plan.stores else "const "
                body_lines.append(f"{inner}{qualifier}{ty} {name} = {lanes_of[s]}.lane[{position}];")
            else:
                body_lines.append(f"{inner}const {ty} {name} = {extras[s, position]};")
        body_lines += body.lines
        body_lines += [f"{inner}{lanes_of[s]}.lane[{lane}] = {names.name(element)};"
                       for (s, _), element in elements.items() if s in plan.stores]
        body_lines.append(f"{pad}}}")
    store = "rs2gpu_store_group" if plan.rows_checked else "rs2gpu_store_lanes"
    group_close = [f"{pad}{store}<{w}>({names.name(s.slice)} + {element_of[s](0)}, {lanes_of[s]});"
                   for s in plan.stores]
    return group_open, body_lines, group_close


def _row_base(s: Stream, names: LocalNames, first: str = "rs2gpu_first_x") -> str:
    """The index of a row's element at the iteration `first`: `first` plus the row's terms."""
    emitter = BodyEmitter(names)
    terms = "".join(f" {'+' if sign > 0 else '-'} {emitter.expr(term)}" for sign, term in s.row)
    return f"({first}{terms})" if terms else first


def _position_name(s: Stream, position: int) -> str:
    """The name of the element at `position` of a group's window of `s` (`y_0`, `y_2`, `y_before1`)."""
    return f"{s.label}_{position}" if position >= 0 else f"{s.label}_before{-position}"


def _group_element(offset: int, base: str = "rs2gpu_first_x") -> str:
    """The index of a group's element at `offset` from `base` (its first iteration's)."""
    return base if offset == 0 else f"({base} {'+' if offset > 0 else '-'} {abs(offset)})"


def head_end(plan: VectorPlan) -> str | None:
    """Where the general loop before the groups stops (None: there is no head)."""
    return f"rs2gpu_min((usize){plan.head}, (usize)rs2gpu_count_x)" if plan.head else None


def tail_start(plan: VectorPlan) -> str:
    """The first iteration the general loop after the groups runs, as an offset from the loop's start."""
    return f"{f'{plan.head} + ' if plan.head else ''}rs2gpu_groups_x * {plan.width} + "
