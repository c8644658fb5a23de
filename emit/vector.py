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
may be past the slice's end), each element the group reads is read on its own. The slices a loop stores
must be in step with each other. A loop that writes a slice it did not load anywhere else (under an
`if`) gets no vector entry point, nor does one with a `continue`, a check on the device, index lists or
scatters.
The lanes are the iterations the general entry point runs, and the race checker already proved that no
iteration touches another's elements, so grouping them changes nothing but the width of the accesses.

Where the loop starts at a literal (`for i in 1..n`), the groups start at the first iteration whose
anchor lane falls on the 16-byte grid of an aligned slice, and the iterations before it (the head, at
most W - 1) run one per thread as in the general entry point: FIRST_SUM writes `x[1]` on its own and
then `x[2..4]`, ... in groups. The head is a constant of the kernel: NVRTC splits the 16-byte store
into two 8-byte ones when the groups' first index is a run-time sum of the start and a head.

The host runs it where the accesses are 16-byte aligned: every slice's address plus its first lane's
offset, `(start + head + lane offset) * size`, a multiple of 16 (`LaunchPlan.vector_fits`); otherwise
the covering or the general entry point.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from rs2gpu.emit.covering import continues_loop, index_declaration
from rs2gpu.emit.cxx_stmt import BodyEmitter
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType, RefType, SliceType, size_of
from rs2gpu.ir.walk import rebuild, walk

VECTOR_BYTES = 16  # the widest access a thread makes: one 128-bit load or store


@dataclass(frozen=True)
class VectorPlan:
    """The width of a loop's vector entry point and the slices whose lanes it loads and stores."""

    width: int
    element: PrimType
    loads: tuple[ir.Binding, ...]
    stores: tuple[ir.Binding, ...]
    offsets: tuple[tuple[ir.Binding, tuple[int, ...]], ...]  # per slice, the offsets from the loop variable
    head: int = 0  # the iterations before the first group (the loop's start is a literal; see the module)

    @property
    def slices(self) -> tuple[ir.Binding, ...]:
        return tuple(dict.fromkeys(self.loads + self.stores))

    @property
    def anchor(self) -> ir.Binding:
        """The slice the others' lanes keep in step with: the first one stored, else the first one loaded."""
        return (self.stores or self.loads)[0]

    def first_offset(self, s: ir.Binding) -> int:
        """The offset from the loop variable of a group's first lane of `s`: a stored slice's one offset
        (and the anchor's smallest); for a slice only read, the smallest from which its lanes are in step
        with the anchor's modulo W."""
        offsets = dict(self.offsets)[s]
        if s in self.stores or s is self.anchor:
            return min(offsets)
        return min(offsets) + (min(dict(self.offsets)[self.anchor]) - min(offsets)) % self.width

    def whole(self, s: ir.Binding) -> bool:
        """Whether a group accesses the lanes of `s` as one 16-byte load or store: always for a stored slice
        and the anchor; for a slice only read, where its lanes lie between elements the group reads (so in
        bounds), else it reads each element it needs on its own (`y[i + 1]` alone, in step at `y[i + 2]`)."""
        return s in self.stores or s is self.anchor or self.first_offset(s) <= max(dict(self.offsets)[s])

    @property
    def aligned(self) -> tuple[ir.Binding, ...]:
        """The slices whose lanes a group accesses whole, which must be 16-byte aligned."""
        return tuple(s for s in self.slices if self.whole(s))

    def window(self, s: ir.Binding) -> list[int]:
        """The positions, from the first lane's, of the elements of `s` a group accesses: the W lanes (0 to
        W - 1), and those before and after them that some lane reads at another offset."""
        first = self.first_offset(s)
        return sorted({lane + offset - first for lane in range(self.width) for offset in dict(self.offsets)[s]})


def vector_plan(loop: ParallelLoop, params: tuple[ir.Binding, ...]) -> VectorPlan | None:
    """The vector form of `loop` (see the module's docstring), or None where it has none."""
    if len(loop.dims) != 1 or loop.index_lists or loop.list_reads or loop.scatters or loop.optional \
            or continues_loop(loop.body):
        return None
    index = loop.dims[0].index
    slices = {p for p in params if isinstance(p.ty, RefType) and isinstance(p.ty.target, SliceType)}
    accesses = [n for n in walk(loop.body) if isinstance(n, ir.Index)]
    offsets: dict[ir.Binding, set[int]] = {}
    for node in accesses:
        offset = _offset_from(node, index, slices)
        if offset is None:
            return None
        offsets.setdefault(node.base.binding, set()).add(offset)
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
    loads, stores = order
    width = VECTOR_BYTES // size_of(element)
    if any(len(offsets[s]) > 1 for s in stores) or len({min(offsets[s]) % width for s in stores}) > 1:
        return None  # a stored slice's lanes are one group, at one offset, in step with the others'
    plan = VectorPlan(width, element, loads, stores,
                      tuple((s, tuple(sorted(offsets[s]))) for s in dict.fromkeys(loads + stores)))
    start = loop.dims[0].start
    if isinstance(start, ir.Lit) and isinstance(start.value, int) and not isinstance(start.value, bool):
        plan = replace(plan, head=-(start.value + plan.first_offset(plan.anchor)) % width)
    return plan


def _offset_from(node: ir.Index, index: ir.Binding, slices: set) -> int | None:
    """c for an access `s[i + c]` or `s[i - c]` of a slice at the loop variable `i` and a literal c, else None."""
    if not (isinstance(node.base, ir.Var) and node.base.binding in slices):
        return None
    at = node.index
    if isinstance(at, ir.Var) and at.binding is index:
        return 0
    if isinstance(at, ir.Binary) and at.op in ("+", "-"):
        loop_var, constant = (at.lhs, at.rhs) if at.op == "-" or isinstance(at.lhs, ir.Var) else (at.rhs, at.lhs)
        if isinstance(loop_var, ir.Var) and loop_var.binding is index and isinstance(constant, ir.Lit) \
                and isinstance(constant.value, int) and not isinstance(constant.value, bool):
            return constant.value if at.op == "+" else -constant.value
    return None


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
                 indent: int, stopped: bool) -> tuple[list[str], list[str], list[str]]:
    """(loop_open, body, loop_close) of the vector entry point's loop over whole groups, which the
    caller follows with the general loop over the iterations after them (`tail_start`)."""
    w = plan.width
    dim = loop.dims[0]
    ty = cxx_type(plan.element)
    lanes_of = {s: names.fresh(f"lanes_{s.name}") for s in plan.aligned}
    pad = "    " * indent
    condition = "rs2gpu_gx < rs2gpu_groups_x"
    if stopped:
        condition = f"!rs2gpu_stopped && {condition}"
    head = plan.head
    groups = f"rs2gpu_count_x / {w};  // whole groups of {w} iterations" if not head else \
        f"rs2gpu_count_x > {head} ? (rs2gpu_count_x - {head}) / {w} : 0;  // whole groups of {w} after the head"
    loop_open = [f"{pad}const usize rs2gpu_groups_x = {groups}",
                 f"{pad}for (usize rs2gpu_gx = (usize)blockIdx.x * blockDim.x + threadIdx.x; {condition}; "
                 f"rs2gpu_gx += (usize)gridDim.x * blockDim.x) {{",
                 f"{pad}    const usize rs2gpu_first_x = (usize)rs2gpu_start_x + {f'{head} + ' if head else ''}"
                 f"rs2gpu_gx * {w};"]
    extras = {}  # (slice, position) -> the name of an element outside the lanes, read on its own
    for s in plan.slices:
        first = plan.first_offset(s)
        if s in plan.loads and plan.whole(s):
            qualifier = "" if s in plan.stores else "const "
            loop_open.append(f"{pad}    {qualifier}rs2gpu_lanes<{ty}, {w}> {lanes_of[s]} = "
                             f"rs2gpu_load_lanes<{w}>({names.name(s)} + {_group_element(first)});")
        elif s not in plan.loads:
            loop_open.append(f"{pad}    rs2gpu_lanes<{ty}, {w}> {lanes_of[s]};")
        for position in plan.window(s):
            if not (0 <= position < w and plan.whole(s)):
                extras[s, position] = names.fresh(_position_name(s, position))
                loop_open.append(f"{pad}    const {ty} {extras[s, position]} = "
                                 f"{names.name(s)}[{_group_element(first + position)}];")
    body_lines: list[str] = []
    slices = set(plan.slices)
    for lane in range(w):
        # the lane's element of each access `s[i + offset]`, named by its position in the group's window
        elements = {(s, offset): ir.Binding(_position_name(s, lane + offset - plan.first_offset(s)), plan.element,
                                            s in plan.stores, "local", s.span)
                    for s, offsets in plan.offsets for offset in offsets}
        block = rebuild(loop.body, lambda node: ir.Var(
            elements[node.base.binding, _offset_from(node, dim.index, slices)], node.span)
            if isinstance(node, ir.Index) else None)
        body = BodyEmitter(names, indent=indent + 2, sites=sites, hoisted=hoisted)
        body.block(block)
        inner = pad + "        "
        body_lines.append(f"{pad}    {{")
        if any(isinstance(n, ir.Var) and n.binding is dim.index for n in walk(block)):
            body_lines += [f"{inner}const usize rs2gpu_tx = {f'{head} + ' if head else ''}rs2gpu_gx * {w} + {lane};",
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
        body_lines.append(f"{pad}    }}")
    loop_close = [f"{pad}    rs2gpu_store_lanes<{w}>({names.name(s)} + {_group_element(plan.first_offset(s))}, "
                  f"{lanes_of[s]});" for s in plan.stores]
    loop_close.append(f"{pad}}}")
    return loop_open, body_lines, loop_close


def _position_name(s: ir.Binding, position: int) -> str:
    """The name of the element at `position` of a group's window of `s` (`y_0`, `y_2`, `y_before1`)."""
    return f"{s.name}_{position}" if position >= 0 else f"{s.name}_before{-position}"


def _group_element(offset: int) -> str:
    """The index of a group's element at `offset` from its first iteration."""
    return "rs2gpu_first_x" if offset == 0 else f"(rs2gpu_first_x {'+' if offset > 0 else '-'} {abs(offset)})"


def head_end(plan: VectorPlan) -> str | None:
    """Where the general loop before the groups stops (None: there is no head)."""
    return f"rs2gpu_min((usize){plan.head}, (usize)rs2gpu_count_x)" if plan.head else None


def tail_start(plan: VectorPlan) -> str:
    """The first iteration the general loop after the groups runs, as an offset from the loop's start."""
    return f"{f'{plan.head} + ' if plan.head else ''}rs2gpu_groups_x * {plan.width} + "
