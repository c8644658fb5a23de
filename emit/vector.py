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
loop only reads it, at several: then its W lanes are loaded at the smallest offset, and the elements the
last lanes read beyond them (`y[i + 1]` of the last lane) one by one. A loop that writes a slice it did
not load anywhere else (under an `if`) gets no vector entry point, nor does one with a `continue`, a
check on the device, index lists or scatters. The lanes are the iterations the general entry point
runs, and the race checker already proved that no iteration touches another's elements, so grouping
them changes nothing but the width of the accesses.

The host runs it where the accesses are 16-byte aligned: every slice's address plus its first loaded
element's offset, `(start + offset) * size`, a multiple of 16 (`LaunchPlan.vector_fits`); otherwise
the general entry point.
"""
from __future__ import annotations

from dataclasses import dataclass

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

    @property
    def slices(self) -> tuple[ir.Binding, ...]:
        return tuple(dict.fromkeys(self.loads + self.stores))

    def first_offset(self, s: ir.Binding) -> int:
        """The offset of the first of a group's elements of `s`: its W lanes start there."""
        return min(dict(self.offsets)[s])

    def window(self, s: ir.Binding) -> list[int]:
        """The positions, from the first lane's, of the elements of `s` a group accesses: the W lanes,
        then those after them that some lane reads at a larger offset."""
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
    if any(len(offsets[s]) > 1 for s in stores):
        return None  # its lanes are stored as one group: written at one offset only
    return VectorPlan(VECTOR_BYTES // size_of(element), element, loads, stores,
                      tuple((s, tuple(sorted(offsets[s]))) for s in dict.fromkeys(loads + stores)))


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
    lanes_of = {s: names.fresh(f"lanes_{s.name}") for s in plan.slices}
    pad = "    " * indent
    condition = "rs2gpu_gx < rs2gpu_groups_x"
    if stopped:
        condition = f"!rs2gpu_stopped && {condition}"
    loop_open = [f"{pad}const usize rs2gpu_groups_x = rs2gpu_count_x / {w};  // whole groups of {w} iterations",
                 f"{pad}for (usize rs2gpu_gx = (usize)blockIdx.x * blockDim.x + threadIdx.x; {condition}; "
                 f"rs2gpu_gx += (usize)gridDim.x * blockDim.x) {{",
                 f"{pad}    const usize rs2gpu_first_x = (usize)rs2gpu_start_x + rs2gpu_gx * {w};"]
    extras = {}  # (slice, position) -> the name of an element after the lanes, read on its own
    for s in plan.slices:
        lanes = f"rs2gpu_lanes<{ty}, {w}> {lanes_of[s]}"
        first = plan.first_offset(s)
        if s in plan.loads:
            qualifier = "" if s in plan.stores else "const "
            loop_open.append(f"{pad}    {qualifier}{lanes} = rs2gpu_load_lanes<{w}>({names.name(s)} + "
                             f"{_group_element(first)});")
        else:
            loop_open.append(f"{pad}    {lanes};")
        for position in plan.window(s)[w:]:
            extras[s, position] = names.fresh(f"{s.name}_{position}")
            loop_open.append(f"{pad}    const {ty} {extras[s, position]} = "
                             f"{names.name(s)}[{_group_element(first + position)}];")
    body_lines: list[str] = []
    slices = set(plan.slices)
    for lane in range(w):
        # the lane's element of each access `s[i + offset]`, named by its position in the group's window
        elements = {(s, offset): ir.Binding(f"{s.name}_{lane + offset - plan.first_offset(s)}", plan.element,
                                            s in plan.stores, "local", s.span)
                    for s, offsets in plan.offsets for offset in offsets}
        block = rebuild(loop.body, lambda node: ir.Var(elements[node.base.binding, _offset_from(node, dim.index, slices)],
                                                       node.span) if isinstance(node, ir.Index) else None)
        body = BodyEmitter(names, indent=indent + 2, sites=sites, hoisted=hoisted)
        body.block(block)
        inner = pad + "        "
        body_lines.append(f"{pad}    {{")
        if any(isinstance(n, ir.Var) and n.binding is dim.index for n in walk(block)):
            body_lines += [f"{inner}const usize rs2gpu_tx = rs2gpu_gx * {w} + {lane};",
                           f"{inner}{index_declaration(dim, 'x', names)}"]
        for (s, offset), element in elements.items():
            name = names.name(element)
            position = lane + offset - plan.first_offset(s)
            if s not in plan.loads:
                body_lines.append(f"{inner}{ty} {name};")
            elif position < w:
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


def _group_element(offset: int) -> str:
    """The index of a group's element at `offset` from its first iteration."""
    return "rs2gpu_first_x" if offset == 0 else f"(rs2gpu_first_x {'+' if offset > 0 else '-'} {abs(offset)})"


def tail_start(plan: VectorPlan) -> str:
    """The first iteration the general loop after the groups runs, as an offset from the loop's start."""
    return f"rs2gpu_groups_x * {plan.width} + "
