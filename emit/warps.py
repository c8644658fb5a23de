"""The entry points of a loop whose iterations run inner loops that split those inner loops over several
threads per iteration: a warp (`warps`), a block (`blocks`), or a block's warps for each of a warp's width
of iterations (`columns`).

    for i in 0..rows {                                  // one warp per i
        let mut s = 0.0f32;                             // in every lane: pure `let`s and assignments of locals
        for j in 0..cols { s += a[i * cols + j]; }      // lane l takes j = l, l + W, ...; `s` combined
        *o = s;                                         // lane 0: writes to slices outside the inner loops
    }

One thread per iteration reads `a[i * cols + j]` with the stride of a whole row between the threads of a
warp, and a loop of few iterations leaves most of the GPU idle. The warps entry point gives each iteration
a warp, whose lanes read consecutive elements of its row. An inner loop whose body only declares `let`s,
combines locals declared before it (`s += e`, `*=`, `&=`, `|=`, `^=`, `m = m.max(e)`, `.min(e)`, under
`if`s, with `continue`), and writes slice elements at an index `j + c` (softmax's last pass,
`out[i * n + j] = ...`), is split: each lane combines its share of the iterations from the operation's
identity, then the warp combines the lanes' values with shuffles into every lane (`rs2gpu_warp_all`), and
the variable takes its value before the loop combined with that. Every lane then holds the same values of
the iteration's locals, so the statements after the loop compute the same in every lane, and a write
outside the inner loops is lane 0's alone. An inner loop that writes nothing reads its rows 16 bytes at a
time where they start on the 16-byte grid: each lane takes W consecutive `j` at a time (`_render_groups`).
Where a warp per iteration would leave the device partly idle
(fewer iterations than it holds warps), the blocks entry point gives each iteration a block instead, its
threads combined through the block's reduction (`rs2gpu_block_all`), thread 0 writing.

Where the inner loops already read consecutive elements from one iteration to the next (a column sum,
`a[j * cols + i]`), a warp per iteration would scatter its lanes' reads over the rows; one thread per
iteration is coalesced, but a loop of fewer iterations than the GPU holds threads leaves it partly idle.
The columns entry point gives a block `COLUMN_WIDTH` iterations, one per lane of each group of that many
threads, and splits each one's inner loops over the block's groups instead: the lanes of each group still
read consecutive elements, the groups' shares are combined through shared memory (`rs2gpu_lane_all`), and
group 0 writes. The host runs it only where the loop has fewer iterations than the device holds threads.

The results are the sequential loop's, bit for bit, except float sums and products, which the threads
reassociate: the rule of every float reduction (docs/kernels.md states the bound). Integer operations wrap
and commute; min and max pick the same element in any order. An element one inner loop writes is read and
written again only by the same thread (the same index in the same position of loops with the same start),
and a slice written outside the inner loops is touched only there, by the writing thread.

Rust's panics keep their order: the inner loops split here make no check on the device (the host checked
their accesses before the launch), and a check of the writing thread's statements comes after every check
the other threads make in the iteration, so the first failure of an iteration in Rust's order is the one
it records. The host runs these entry points where the covering one could run (every conditional access
in bounds), on grids of `threads` threads per iteration, striding over the rest (`ir.abi.SplitIterations`).
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.emit.consts import integer_value
from rs2gpu.emit.covering import continues_loop, index_declaration
from rs2gpu.emit.cxx_stmt import BodyEmitter, iteration_declaration
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.dialect import DIALECTS
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, EntryKind, InnerLoop
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import PrimType, RefType, SliceType, size_of
from rs2gpu.ir.walk import place_indices, rebuild, same_value, walk

# The threads the host gives each iteration: the narrowest warp of the targets (a wider one strides over
# more iterations with fewer warps).
LANES = min(d.warp_size for d in DIALECTS.values())
LANE = "rs2gpu_lane"
UNROLL = 4  # iterations of a thread's share of an inner loop per step of its C++ loop
# The iterations a block of the columns form runs: 8 four-byte elements fill a 32-byte memory sector, so a
# warp's reads of a row are as few sectors as they can be, and a loop of a few thousand iterations gets
# several blocks per multiprocessor (a warp's width per block left most of an H100 idle on 4096 columns).
COLUMN_WIDTH = 8
COMBINING = {"+": "add", "*": "mul", "min": "min", "max": "max", "&": "and", "|": "or", "^": "xor"}
# the types a warp shuffle moves in one piece
SHUFFLED = frozenset({"i32", "u32", "i64", "u64", "isize", "usize", "f32", "f64"})
_EFFECTS = (ir.Assign, ir.For, ir.While, ir.Loop, ir.Break, ir.Continue, ir.Return)


@dataclass(frozen=True)
class _Split:
    loop: ir.For
    combined: tuple[tuple[ir.Binding, str], ...]  # (local, operation) in order of first update
    writes: tuple[str, ...]                       # the slices it writes, by name


@dataclass(frozen=True)
class SplitPlan:
    """A loop body as the threads of an iteration run it: each statement in every thread ("all"), in the
    writing thread ("lane0"), or split over them ("split"). `strided`: an inner loop reads a row apart from
    one iteration to the next (the blocks and warps forms), else consecutive elements (the columns form)."""

    steps: tuple[tuple[str, object], ...]  # ("all" | "lane0", statement) or ("split", _Split)
    strided: bool

    @property
    def passes(self) -> int:
        """The split loops, one after another: each reads the iteration's row once more."""
        return sum(1 for kind, _ in self.steps if kind == "split")

    @property
    def reassociates(self) -> bool:
        """Whether the threads combine a float sum or product (in another order than Rust's)."""
        return any(op in ("+", "*") and b.ty.is_float for kind, step in self.steps if kind == "split"
                   for b, op in step.combined)


class _Refused(Exception):
    """The loop body cannot be split; the message says why."""


def split_plan(loop: ParallelLoop, consts: dict[str, ir.ConstDef]) -> tuple[SplitPlan | None, tuple[InnerLoop, ...]]:
    """How the threads of an iteration of `loop` split its inner loops (None where they cannot), and a note on
    each of its inner loops; `consts` are the crate's, by name."""
    stmts = loop.body.stmts + ((ir.ExprStmt(loop.body.tail, loop.body.tail.span),) if loop.body.tail else ())
    nested = [n for n in walk(loop.body) if isinstance(n, (ir.For, ir.While, ir.Loop))]
    if not nested or len(loop.dims) > 1:  # a nest's threads are its iterations (its body may be tiled)
        return None, ()
    try:
        steps = _steps(loop, stmts, consts)
    except _Refused as why:
        return None, tuple(InnerLoop(str(n.span), False, f"sequential in each thread: {why}") for n in nested)
    splits = [step for kind, step in steps if kind == "split"]
    plan = SplitPlan(steps, any(_strided(s.loop, loop, stmts) for s in splits))
    return plan, tuple(InnerLoop(str(s.loop.span), True, _describe(s, plan)) for s in splits)


def _describe(split: _Split, plan: SplitPlan) -> str:
    """What the blocks and warps (`plan.strided`) or the columns entry point do with a split loop."""
    parts = [f"combines `{b.name}` ({op})" for b, op in split.combined]
    parts += [f"writes `{name}` spread over them" for name in split.writes]
    if not plan.strided:
        where = (f"the groups of {COLUMN_WIDTH} threads of a block, where the loop has fewer iterations than the GPU "
                 "has threads")
    elif plan.passes > 1:
        where = "a block's threads, the row staying in the L1 from one of the loops reading it to the next"
    else:
        where = "a warp's lanes, or a block's threads where a warp per iteration would leave the GPU partly idle"
    return f"split over {where}: " + ", ".join(parts)


def _steps(loop: ParallelLoop, stmts: tuple, consts: dict) -> tuple[tuple[str, object], ...]:
    if loop.reductions or loop.scatters or loop.index_lists or loop.list_reads:
        raise _Refused("the loop reduces, scatters or writes through an index list")
    if continues_loop(loop.body):
        raise _Refused("a `continue` of the parallel loop")
    jump = next((n for n in walk(loop.body) if isinstance(n, (ir.Break, ir.Return))), None)
    if jump is not None:
        raise _Refused(f"the `{'break' if isinstance(jump, ir.Break) else 'return'}` at {jump.span}")
    steps: list[tuple[str, object]] = []
    for stmt in stmts:
        if isinstance(stmt, ir.Let):
            if stmt.init is None or not _pure(stmt.init):
                raise _Refused(f"the `let` at {stmt.span} has effects or no value")
            steps.append(("all", stmt))
        elif isinstance(stmt, ir.Assign) and isinstance(stmt.target, ir.Var) and stmt.target.binding.kind == "local":
            if not _pure(stmt.value):
                raise _Refused(f"the assignment at {stmt.span} has effects")
            steps.append(("all", stmt))
        elif isinstance(stmt, ir.Assign) and _written_slice(stmt.target) is not None:
            if not (_pure(stmt.value) and all(_pure(i.index) for i in place_indices(stmt.target))):
                raise _Refused(f"the assignment at {stmt.span} has effects")
            steps.append(("lane0", stmt))
        elif isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.For):
            steps.append(("split", _split(stmt.expr, consts)))
        else:
            raise _Refused(f"the statement at {stmt.span} is neither a `let`, an assignment nor a range loop")
    _check_slices(steps)
    return tuple(steps)


def _split(f: ir.For, consts: dict) -> _Split:
    """An inner loop's split form: its iterations independent but for the combined locals."""
    if f.inclusive:
        raise _Refused(f"the loop at {f.span} is an inclusive range")
    if not (isinstance(f.var.ty, PrimType) and f.var.ty.is_int) or not (_pure(f.start) and _pure(f.end)):
        raise _Refused(f"the bounds of the loop at {f.span} have effects")
    start, end = integer_value(f.start, consts), integer_value(f.end, consts)
    # A fixed window of a few taps (a filter, a stencil) is no inner loop worth a warp: the outer loop has
    # the parallelism, and its float sums keep Rust's order.
    if start is not None and end is not None and end - start <= LANES:
        raise _Refused(f"the loop at {f.span} always has {max(end - start, 0)} iterations, too few to share")
    split = _SplitBody(f)
    split.block(f.body)
    for b in split.combined:  # each lane's share is combined once, after the loop
        if sum(_mentions_count(u, b) for u in split.updates) != _mentions_count(f.body, b):
            raise _Refused(f"the loop at {f.span} reads `{b.name}` besides combining into it")
    return _Split(f, tuple(split.combined.items()), tuple(split.writes))


class _SplitBody:
    """The statements a split loop's body may hold: `let`s and assignments of its own locals, one combining
    operation per local declared before it, writes at `j + c`, `if`s of them and `continue` (the lane's next
    iteration)."""

    def __init__(self, f: ir.For) -> None:
        self.f = f
        self.own = {n.binding for n in walk(f.body) if isinstance(n, ir.Let)}
        self.combined: dict[ir.Binding, str] = {}
        self.updates: list[ir.Assign] = []
        self.writes: dict[str, None] = {}

    def block(self, block: ir.Block) -> None:
        for stmt in block.stmts + ((ir.ExprStmt(block.tail, block.tail.span),) if block.tail else ()):
            self.statement(stmt)

    def statement(self, stmt) -> None:
        if isinstance(stmt, ir.Let) and stmt.init is not None and _pure(stmt.init):
            return
        if isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.Continue):
            return
        if isinstance(stmt, ir.ExprStmt) and isinstance(stmt.expr, ir.If) and _pure(stmt.expr.cond):
            self.block(stmt.expr.then)
            if stmt.expr.orelse is not None:
                self.block(stmt.expr.orelse)
            return
        if isinstance(stmt, ir.Assign) and isinstance(stmt.target, ir.Var):
            self.assign_local(stmt, stmt.target.binding)
            return
        if isinstance(stmt, ir.Assign) and _written_slice(stmt.target) is not None:
            if not (_pure(stmt.value) and _unit_step(place_indices(stmt.target)[-1].index, self.f.var, self.own)):
                raise _Refused(f"the write at {stmt.span} is not at `j + c` of the loop variable `j`")
            self.writes[_written_slice(stmt.target).name] = None
            return
        raise _Refused(f"the statement at {stmt.span} is neither a `let`, a combining update, a write, an `if` "
                       f"of them nor `continue`")

    def assign_local(self, stmt: ir.Assign, b: ir.Binding) -> None:
        if b in self.own:
            if not _pure(stmt.value):
                raise _Refused(f"the assignment at {stmt.span} has effects")
            return
        op = _combining(stmt, b)
        if op is None or self.combined.get(b, op) != op:
            raise _Refused(f"`{b.name}` is assigned at {stmt.span} other than by one combining operation")
        if not (isinstance(b.ty, PrimType) and b.ty.name in SHUFFLED):
            raise _Refused(f"`{b.name}` is a {b.ty}, which a warp shuffle does not move")
        self.combined[b] = op
        self.updates.append(stmt)


def _combining(stmt: ir.Assign, b: ir.Binding) -> str | None:
    """The operation of `b op= e` or `b = b.max(e)` (`.min`), where e does not read b; else None."""
    if stmt.op in ("+", "*", "&", "|", "^") and not _mentions(stmt.value, b) and _pure(stmt.value):
        return stmt.op
    value = stmt.value
    if stmt.op is None and isinstance(value, ir.Intrinsic) and value.name in ("min", "max") and len(value.args) == 2:
        first, second = value.args
        other = second if isinstance(first, ir.Var) and first.binding is b else \
            first if isinstance(second, ir.Var) and second.binding is b else None
        if other is not None and not _mentions(other, b) and _pure(other):
            return value.name
    return None


def _check_slices(steps) -> None:
    """Every slice the body writes is touched either only inside split loops, by the same lane at every
    access (one index, one loop start), or only outside them, and there only by lane 0."""
    accesses: dict[ir.Binding, list] = {}
    written: set[ir.Binding] = set()
    for kind, step in steps:
        for node in walk(step.loop if kind == "split" else step):
            if isinstance(node, ir.Index) and isinstance(node.base, ir.Var) and node.base.binding.kind == "param":
                accesses.setdefault(node.base.binding, []).append((kind, step, node))
            if isinstance(node, ir.Assign) and _written_slice(node.target) is not None:
                written.add(_written_slice(node.target))
    for kind, step in steps:
        for call in walk(step.loop if kind == "split" else step):
            if isinstance(call, ir.Call) and any(_mentions(a, p) for a in call.args for p in written):
                raise _Refused(f"the call at {call.span} may read a slice the loop writes at any element")
    for param in sorted(written, key=lambda b: b.name):
        found = accesses[param]
        kinds = {kind for kind, _, _ in found}
        if kinds == {"lane0"}:
            continue
        if kinds != {"split"}:
            raise _Refused(f"`{param.name}` is written and also read outside lane 0's statements")
        _, first_split, first_node = found[0]
        canonical = _canonical(first_node.index, first_split.loop.var)
        for _, split, node in found:
            if not (same_value(_canonical(node.index, split.loop.var), canonical)
                    and same_value(split.loop.start, first_split.loop.start)):
                raise _Refused(f"`{param.name}` is accessed at {node.span} where another lane may have written it")


_J = ir.Binding("j", PrimType("usize"), False, "loop", ir.Span("", 0, 0, 0, 0))


def _canonical(e: ir.Expr, var: ir.Binding) -> ir.Expr:
    """`e` with the loop variable `var` renamed to one shared binding, to compare indices across loops."""
    return rebuild(e, lambda n: ir.Var(_J, n.span) if isinstance(n, ir.Var) and n.binding is var else None)


def _strided(f: ir.For, loop: ParallelLoop, stmts) -> bool:
    """Whether an access of the inner loop at an index made of both loop variables multiplies the outer one
    (`a[i * cols + j]`): threads of consecutive iterations then read a row apart."""
    outer = loop.dims[0].index
    values = {s.binding: s.init for s in stmts if isinstance(s, ir.Let) and s.init is not None}

    def scaled(e, depth: int = 0) -> bool:
        for node in walk(e):
            if isinstance(node, ir.Binary) and node.op in ("*", "<<") and _mentions_through(node, outer, values):
                return True
            if isinstance(node, ir.Var) and node.binding in values and depth < 8 \
                    and scaled(values[node.binding], depth + 1):
                return True
        return False
    return any(isinstance(n, ir.Index) and _mentions(n.index, f.var) and scaled(n.index) for n in walk(f.body))


def _mentions_through(e, b: ir.Binding, values: dict, depth: int = 0) -> bool:
    for node in walk(e):
        if isinstance(node, ir.Var) and (node.binding is b or (node.binding in values and depth < 8
                                                               and _mentions_through(values[node.binding], b, values,
                                                                                     depth + 1))):
            return True
    return False


def _unit_step(index: ir.Expr, var: ir.Binding, own: set) -> bool:
    """`index` is `j + c`, `c + j` or `j - c` (nested sums) with c free of `j` and of the loop's own
    `let`s: distinct for distinct j."""
    if isinstance(index, ir.Var) and index.binding is var:
        return True
    if isinstance(index, ir.Binary) and index.op in ("+", "-"):
        for with_j, other in ((index.lhs, index.rhs), (index.rhs, index.lhs) if index.op == "+" else (None, None)):
            if with_j is not None and _unit_step(with_j, var, own) and not _mentions(other, var) \
                    and not any(isinstance(n, ir.Var) and n.binding in own for n in walk(other)):
                return True
    return False


def _written_slice(target) -> ir.Binding | None:
    """The `&mut` slice parameter a place `p[e]`, `p[e].f` is an element of, else None."""
    indices = place_indices(target)
    if not indices:
        return None
    base = indices[-1].base
    if isinstance(base, ir.Var) and base.binding.kind == "param" and isinstance(base.ty, RefType) \
            and base.ty.mutable and isinstance(base.ty.target, SliceType):
        return base.binding
    return None


def _pure(e) -> bool:
    """Computes a value without writing anything: no assignments, loops or jumps, no `&mut` passed on."""
    for node in walk(e):
        if isinstance(node, _EFFECTS):
            return False
        if isinstance(node, ir.Call) and any(isinstance(a.ty, RefType) and a.ty.mutable for a in node.args):
            return False
    return True


def _mentions(e, b: ir.Binding) -> bool:
    return any(isinstance(n, ir.Var) and n.binding is b for n in walk(e))


def _mentions_count(e, b: ir.Binding) -> int:
    return sum(1 for n in walk(e) if isinstance(n, ir.Var) and n.binding is b)


# ------------------------------------------------------------------ rendering


@dataclass(frozen=True)
class _Threads:
    """How the threads of an entry point share an iteration: `share` is a thread's place among them (C++),
    `sharers` their number, `combine` the prelude's function that gives every one of them the combination
    of their shares, `writer` the condition of the one that runs the writes outside the split loops; the
    host launches `threads` threads per iteration where the count times `fill` is below the threads the
    device holds (`ir.abi.SplitIterations`)."""

    share: str
    sharers: str
    combine: str
    writer: str
    opening: tuple[str, ...]  # the loop over iterations, down to `rs2gpu_tx`
    threads: int
    fill: int
    groups: bool  # whether a thread's share may be runs of consecutive iterations (`_render_groups`)


THREAD = "rs2gpu_thread"
GROUP = "rs2gpu_group"
FORMS = {
    EntryKind.BLOCKS: _Threads(
        THREAD, f"{BLOCK_SIZE}u", f"rs2gpu_block_all<{BLOCK_SIZE}>", f"{THREAD} == 0u",
        ("    // One block per iteration: its threads split the inner loops and combine what they reduce.",
         f"    const u32 {THREAD} = RS2GPU_THREAD_IDX.x;",
         "    for (usize rs2gpu_tx = RS2GPU_BLOCK_IDX.x; rs2gpu_tx < rs2gpu_count_x; rs2gpu_tx += RS2GPU_GRID_DIM.x) {"),
        BLOCK_SIZE, LANES, True),
    EntryKind.WARPS: _Threads(
        LANE, "RS2GPU_WARP_SIZE", "rs2gpu_warp_all", f"{LANE} == 0u",
        ("    // One warp per iteration: its lanes split the inner loops and combine what they reduce.",
         f"    const u32 {LANE} = RS2GPU_THREAD_IDX.x % RS2GPU_WARP_SIZE;",
         "    for (usize rs2gpu_tx = ((usize)RS2GPU_BLOCK_IDX.x * RS2GPU_BLOCK_DIM.x + RS2GPU_THREAD_IDX.x) "
         "/ RS2GPU_WARP_SIZE; rs2gpu_tx < rs2gpu_count_x; "
         "rs2gpu_tx += (usize)RS2GPU_GRID_DIM.x * RS2GPU_BLOCK_DIM.x / RS2GPU_WARP_SIZE) {"),
        LANES, 0, True),
    EntryKind.COLUMNS: _Threads(
        GROUP, f"{BLOCK_SIZE // COLUMN_WIDTH}u", f"rs2gpu_lane_all<{BLOCK_SIZE}, {COLUMN_WIDTH}>",
        f"rs2gpu_writes && {GROUP} == 0u",
        (f"    // {COLUMN_WIDTH} iterations per block, one per lane of each group of {COLUMN_WIDTH} threads: the "
         f"block's {BLOCK_SIZE // COLUMN_WIDTH} groups",
         "    // split each iteration's inner loops and combine what they reduce through shared memory.",
         f"    const u32 {LANE} = RS2GPU_THREAD_IDX.x % {COLUMN_WIDTH}u, {GROUP} = RS2GPU_THREAD_IDX.x / {COLUMN_WIDTH}u;",
         f"    for (usize rs2gpu_first = (usize)RS2GPU_BLOCK_IDX.x * {COLUMN_WIDTH}u; rs2gpu_first < rs2gpu_count_x; "
         f"rs2gpu_first += (usize)RS2GPU_GRID_DIM.x * {COLUMN_WIDTH}u) {{",
         "        // a lane past the last iteration runs the last one again without writing, to meet the barriers",
         f"        const bool rs2gpu_writes = rs2gpu_first + {LANE} < rs2gpu_count_x;",
         f"        const usize rs2gpu_tx = rs2gpu_writes ? rs2gpu_first + {LANE} : rs2gpu_count_x - 1;"),
        BLOCK_SIZE // COLUMN_WIDTH, 1, False),
}


def split_kinds(plan: SplitPlan) -> tuple[EntryKind, ...]:
    """The entry points of a loop of `plan`'s form, in the order the host tries them. A row that several
    split loops read in turn (a softmax, a norm) gets a block per row however many rows there are: the 8 rows
    a multiprocessor then has in flight stay in its L1 from one pass to the next, where the 64 of a warp per
    row would not, and every pass would read them from memory again."""
    if not plan.strided:
        return (EntryKind.COLUMNS,)
    return (EntryKind.BLOCKS,) if plan.passes > 1 else (EntryKind.BLOCKS, EntryKind.WARPS)


def split_context(loop: ParallelLoop, plan: SplitPlan, kind: EntryKind, names: LocalNames, sites,
                  hoisted: frozenset, symbol: str, identity) -> tuple[dict | None, str | None]:
    """The lines of the `kind` entry point (`FORMS`) after the preamble, or None and why not: where a split
    loop would check something on the device, or a check of the writing thread's statements would come
    before one that every thread makes (which may then be recorded first). `identity(b, op)` is the value a
    thread's share of the combined local `b` starts from."""
    threads = FORMS[kind]
    body = BodyEmitter(names, indent=2, sites=sites, hoisted=hoisted)
    writer_checked = False
    for role, step in plan.steps:
        before = set(body.used_sites)
        if role == "all":
            body.statement(step)
        elif role == "lane0":
            body.hoist_brace(f"if ({threads.writer}) {{")
            body.indent += 1
            body.statement(step)
            body.indent -= 1
            body.hoist_brace("}")
        elif not _render_split(body, step, names, identity, threads):
            return None, f"the loop at {step.loop.span} checks an access or a division on the device"
        checked = body.used_sites != before or _calls_checking_helper(step.loop if role == "split" else step, sites)
        if checked and role != "lane0" and writer_checked:
            where = step.span if role == "all" else step.loop.span
            return None, f"a check before the one at {where} is the writing thread's alone"
        writer_checked |= checked and role == "lane0"
    lines = [*threads.opening, f"        {index_declaration(loop.dims[0], 'x', names)}"]
    if body.used_sites or body.passes_iteration:
        lines.append(f"        {iteration_declaration(1)}")
    lines += body.lines + ["    }"]
    fill = 0 if kind == EntryKind.BLOCKS and plan.passes > 1 else threads.fill  # see `split_kinds`
    return {"symbol": symbol, "lines": lines, "checks": sorted(body.used_sites),
            "split": {"threads": threads.threads, "fill": fill, "reassociates": plan.reassociates}}, None


def _render_split(body: BodyEmitter, split: _Split, names: LocalNames, identity, threads: _Threads) -> bool:
    """Emit one split loop into `body`; False where its body checks something on the device."""
    f = split.loop
    body.locate(f.span)
    var, ty = names.name(f.var), cxx_type(f.var.ty)
    shares = {b: ir.Binding(f"{b.name}_share", b.ty, True, "local", b.span) for b, _ in split.combined}
    first, end = names.fresh(f"{var}_first"), names.fresh(f"{var}_end")
    k, count = names.fresh(f"{var}_k"), names.fresh(f"{var}_count")
    start_text = body.expr(f.start)
    end_text = body.expr(f.end)  # Rust evaluates the end once, after the start
    body.hoist_brace("{")
    body.indent += 1
    for b, op in split.combined:
        body.hoist(f"{cxx_type(b.ty)} {names.name(shares[b])} = {identity(b, op)};  // this thread's share")
    # thread t of the iteration's runs j = start + t, start + t + T, ...: a warp's lanes read consecutive
    # elements (or, in the columns form, the lanes' iterations do); unrolled, each thread has several loads
    # in flight (its operations stay in order)
    body.hoist_brace(f"const {ty} {first} = {start_text}, {end} = {end_text};")
    body.hoist(f"const u64 {count} = {first} < {end} ? (u64){end} - (u64){first} : 0ULL;")
    renamed = rebuild(f.body, lambda n: ir.Var(shares[n.binding], n.span)
                      if isinstance(n, ir.Var) and n.binding in shares else None)
    checked = set(body.used_sites)
    streams = _streams(f) if threads.groups and not split.writes else {}
    rest = threads.share  # where a thread's iterations one at a time begin
    if streams:
        rest = _render_groups(body, f, renamed, streams, names, threads, first, count)
    body.hoist_raw((f"#pragma unroll {UNROLL}", None))
    body.hoist_brace(f"for (u64 {k} = {rest}; {k} < {count}; {k} += {threads.sharers}) {{")
    body.indent += 1
    body.hoist_brace(f"const {ty} {var} = ({ty})((u64){first} + {k});")
    body.block(renamed)
    if body.used_sites != checked or _calls_checking_helper(f.body, body.sites):
        return False
    body.indent -= 1
    body.hoist_brace("}")
    body.locate(f.span)
    for b, op in split.combined:
        combine = f"rs2gpu_op_{COMBINING[op]}()"
        body.hoist(f"{names.name(b)} = {combine}({names.name(b)}, {threads.combine}({names.name(shares[b])}, "
                   f"{combine}));")
    body.indent -= 1
    body.hoist_brace("}")
    return True


def _streams(f: ir.For) -> dict[tuple, list[ir.Index]]:
    """The reads of the split loop's body at `s[c + j]` of a slice parameter `s` of primitive elements,
    grouped by slice and index, that a thread reads W consecutive elements of in one 16-byte load."""
    own = {n.binding for n in walk(f.body) if isinstance(n, ir.Let)}
    streams: dict[tuple, list[ir.Index]] = {}
    for node in walk(f.body):
        if isinstance(node, ir.Index) and isinstance(node.base, ir.Var) and node.base.binding.kind == "param" \
                and isinstance(node.base.ty, RefType) and isinstance(node.base.ty.target, SliceType) \
                and isinstance(node.ty, PrimType) and _unit_step(node.index, f.var, own):
            key = next((key for key in streams if key[0] is node.base.binding and same_value(key[1], node.index)),
                       (node.base.binding, node.index))
            streams.setdefault(key, []).append(node)
    # a group is 16 bytes of each stream of the widest element: narrower ones stay element reads, since
    # their group would be less than a 16-byte load (whose type has 16-byte alignment, so size too)
    widest = max((size_of(reads[0].ty) for reads in streams.values()), default=16)
    if widest > 8:
        return {}
    return {key: reads for key, reads in streams.items() if size_of(reads[0].ty) == widest}


def _render_groups(body: BodyEmitter, f: ir.For, renamed: ir.Block, streams: dict, names: LocalNames,
                   threads: _Threads, first: str, count: str) -> str:
    """Emit the groups of a split loop whose body reads `streams`, and return the C++ expression of the
    first iteration a thread runs one at a time after them. Where each stream's element at the loop's
    first iteration lies on the 16-byte grid, a thread runs W consecutive iterations at a time (W elements
    of a stream fill 16 bytes) with one 16-byte load per stream, so a warp's lanes read 512 consecutive
    bytes with a load each, where one iteration per lane read them 2 to 8 bytes at a time. The iterations
    after the last whole group (all of them where a stream is off the grid) run one per thread as before.
    A thread's share is then other iterations, so only reassociated combinations (float sums and
    products) can come out otherwise: the split's rule."""
    var, ty = names.name(f.var), cxx_type(f.var.ty)
    width = 16 // max(size_of(reads[0].ty) for reads in streams.values())
    start, group_first = (ir.Binding(f"{f.var.name}_{role}", f.var.ty, False, "local", f.var.span)
                          for role in ("start", "group"))

    def at(key, binding: ir.Binding) -> str:  # the stream's index where the loop variable is `binding`
        return body.expr(rebuild(key[1], lambda n: ir.Var(binding, n.span)
                                 if isinstance(n, ir.Var) and n.binding is f.var else None))
    grouped, step, lane = names.fresh(f"{var}_grouped"), names.fresh(f"{var}_g"), names.fresh(f"{var}_lane")
    body.hoist(f"const {ty} {names.name(start)} = {first};")
    on_grid = " && ".join(f"rs2gpu_on_lanes_grid({names.name(key[0])}, {at(key, start)})" for key in streams)
    body.hoist(f"const u64 {grouped} = {on_grid} ? {count} / {width}u * {width}u : 0ULL;")
    # two groups per step, both loads first: one 16-byte load in flight per thread leaves the memory idle
    body.hoist_raw(("#pragma unroll 2", None))
    body.hoist_brace(f"for (u64 {step} = (u64){threads.share} * {width}u; {step} < {grouped}; "
                     f"{step} += (u64){threads.sharers} * {width}u) {{")
    body.indent += 1
    body.hoist(f"const {ty} {names.name(group_first)} = ({ty})((u64){first} + {step});")
    elements = {}
    for key, reads in streams.items():
        lanes = names.fresh(f"lanes_{key[0].name}")
        element = cxx_type(reads[0].ty)
        body.hoist(f"const rs2gpu_lanes<{element}, {width}> {lanes} = "
                   f"rs2gpu_load_lanes<{width}>({names.name(key[0])} + {at(key, group_first)});")
        elements[key] = (lanes, ir.Binding(f"{key[0].name}_element", reads[0].ty, False, "local", key[0].span))
    body.hoist_raw(("#pragma unroll", None))
    body.hoist_brace(f"for (u32 {lane} = 0; {lane} < {width}u; {lane}++) {{")
    body.indent += 1
    replaced = {}
    for key, reads in streams.items():
        lanes, binding = elements[key]
        body.hoist(f"const {cxx_type(binding.ty)} {names.name(binding)} = {lanes}.lane[{lane}];")
        replaced.update({read.node_id: binding for read in reads})
    lane_body = rebuild(renamed, lambda n: ir.Var(replaced[n.node_id], n.span)
                        if isinstance(n, ir.Index) and n.node_id in replaced else None)
    if _mentions(lane_body, f.var):
        body.hoist(f"const {ty} {var} = ({ty})({names.name(group_first)} + {lane});")
    body.block(lane_body)
    body.indent -= 1
    body.hoist_brace("}")
    body.indent -= 1
    body.hoist_brace("}")
    return f"{grouped} + {threads.share}"


def _calls_checking_helper(node, sites) -> bool:
    """Whether `node` calls a helper that checks something on the device (`sites.checked_helpers`)."""
    return sites is not None and any(isinstance(n, ir.Call) and n.func in sites.checked_helpers for n in walk(node))
