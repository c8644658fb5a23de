"""Rendering IR statements and blocks as C++ lines, with `#line` directives back to the .rs file.

`BodyEmitter` owns the output buffer. Control flow maps one to one (Rust `break`/`continue` are C++'s,
since `match` becomes an if-chain, never a `switch`), except:
- an exclusive range loop evaluates its end once, like Rust: `for (T i = a, i_end = b; i < i_end; i++)`;
- an inclusive range loop never steps past its last value, so `0..=T::MAX` terminates;
- a value-producing `if`/`match`/block/`loop` writes into a temporary declared before it;
- an update of a scatter target (`out[bins[i]] += v`) is an atomic `rs2gpu_atomic_add(&out[k], v)`;
- in the L2-adds entry point (`emit.l2_adds`), `y[i] += v` is `rs2gpu_add_in_l2(&y[i], v)`.

Every line is recorded with the Rust line it renders. A C++ compiler numbers the lines after `#line N`
as N, N+1, ...; `lines` inserts a directive wherever that count would name the wrong Rust line, so one
Rust line rendered as several C++ lines maps back to itself. Lines of braces alone carry no location.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_expr import ExprRenderer, _needs_wrapping, WRAPPING_OPS
from rs2gpu.emit.cxx_types import cxx_type
from rs2gpu.emit.names import LocalNames, cxx_name
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import UNIT, ArrayType, NeverType, PrimType, RefType, TupleType
from rs2gpu.ir.walk import place_indices, walk


# The C++ name of the iteration a check inside a launch's loop records (see the prelude's panic record),
# and of the launch's number in the call, a parameter of every launch that can record or stop on a panic.
ITERATION = "rs2gpu_at"
LAUNCH_NUMBER = "rs2gpu_launch"
BEFORE_LOOP = f"rs2gpu_before_loop({LAUNCH_NUMBER})"  # the iteration a check before a launch's loop records


def iteration_declaration(dims: int) -> str:
    """`const rs2gpu_iteration rs2gpu_at = {...};` in a loop nest of `dims` dimensions (the innermost along
    x): the thread's offsets along the axes and the counts that place its iteration in Rust's order, and
    the launch's number in the call."""
    axes = ("z", "y", "x")[-dims:]
    fields = [f"rs2gpu_t{a}" if a in axes else "0" for a in ("z", "y")] + ["rs2gpu_tx"]
    fields += ["rs2gpu_count_y" if "y" in axes else "1", "rs2gpu_count_x", LAUNCH_NUMBER]
    return f"const rs2gpu_iteration {ITERATION} = {{{', '.join(fields)}}};"


def needed_preamble(preamble: tuple[ir.Let, ...], used: set) -> list[ir.Let]:
    """The preamble `let`s a loop reads, directly or through other preamble `let`s, in order."""
    needed = set(used)
    for let in reversed(preamble):
        if let.binding in needed and let.init is not None:
            needed |= {n.binding for n in walk(let.init) if isinstance(n, ir.Var)}
    return [let for let in preamble if let.binding in needed]


# The prelude's atomic update of a scatter target, by combining operation.
ATOMIC_OPS = {"+": "add", "-": "sub", "*": "mul", "min": "min", "max": "max", "&": "and", "|": "or", "^": "xor"}


class BodyEmitter(ExprRenderer):
    def __init__(self, names: LocalNames, indent: int = 1, line_directives: bool = True,
                 sites=None, hoisted: frozenset = frozenset(), scatters: tuple = (),
                 iteration: str = ITERATION, private: dict | None = None,
                 l2_adds: frozenset = frozenset()) -> None:
        """`sites` (a `kernels.PanicSites`) numbers the places that can panic (None: render without checks,
        as for consts); `hoisted` holds the accesses not to check (the host or an index list's verification
        checks them); `scatters` (`ir.plan.Scatter`s) are the slices whose updates are atomics. `used_sites`
        collects the panic sites of the rendered code. A check records `iteration`, the C++ expression of
        the `rs2gpu_iteration` it runs in (the loop's `rs2gpu_at`, `rs2gpu_before_loop(..)` before the loop,
        or a helper's parameter), which a call passes on to a helper that checks something
        (`sites.checked_helpers`); `passes_iteration` tells whether one did. `private` maps a scatter
        target to the C++ name of the block's copy its updates go to (see `emit.privatize`); `l2_adds` holds
        the `y[i] += v` statements (by `node_id`) to render as adds the L2 performs (see `emit.l2_adds`)."""
        self.sites = sites
        self.hoisted = hoisted
        self.iteration = iteration
        self.passes_iteration = False
        self.scatter_updates = {u.assign.node_id: u for s in scatters for u in s.updates}
        self.private = private or {}
        self.l2_adds = l2_adds
        self.used_sites: set[int] = set()
        self.names = names
        self.indent = indent
        self.line_directives = line_directives
        self._out: list[tuple[str, tuple[str, int] | None]] = []  # (text, the Rust file and line it renders)
        self._where: tuple[str, int] | None = None
        self._loop_results: list[str | None] = []

    # ------------------------------------------------------------ output

    @property
    def lines(self) -> list[str]:
        """The C++ lines, with the `#line` directives that keep each one mapped to its Rust line."""
        out: list[str] = []
        presumed: tuple[str, int] | None = None  # what the C++ compiler will call the next line
        for text, where in self._out:
            if where is not None and self.line_directives and where != presumed:
                out.append(f'#line {where[1]} "{where[0]}"')
                presumed = where
            out.append(text)
            if presumed is not None:
                presumed = (presumed[0], presumed[1] + 1)
        return out

    def hoist(self, text: str) -> None:
        self._out.append(("    " * self.indent + text, self._where))

    def hoist_brace(self, text: str) -> None:
        """A line of braces (`}`, `} else {`): no code an error could point at, so no location."""
        self._out.append(("    " * self.indent + text, None))

    def hoist_raw(self, line) -> None:
        """Re-emit a line that `capture` returned, with its location."""
        self._out.append(line)

    def locate(self, span: ir.Span) -> None:
        """The lines emitted from now on render the Rust line where `span` starts."""
        self._where = (span.file, span.line)

    def capture(self, render):
        """Run `render` with a fresh buffer; return (the lines it emitted, its result)."""
        saved, saved_where = self._out, self._where
        self._out = []
        try:
            result = render()
            return self._out, result
        finally:
            self._out, self._where = saved, saved_where

    def temp(self, ty, init: str | None = None) -> str:
        name = self.names.fresh("tmp")
        self.hoist(f"{cxx_type(ty)} {name}{' = ' + init if init is not None else ''};")
        return name

    # ------------------------------------------------------------ statements

    def block(self, block: ir.Block, target: str | None = None) -> None:
        """Emit a block's statements; its tail value is assigned to `target` (or returned when
        `target` is "return")."""
        for stmt in block.stmts:
            self.statement(stmt)
        if block.tail is not None:
            self.tail(block.tail, target)

    def tail(self, expr, target: str | None) -> None:
        self.locate(expr.span)
        if isinstance(expr.ty, NeverType) or target is None or expr.ty == UNIT:
            self.statement_expr(expr, None)
            if target == "return" and expr.ty == UNIT:
                self.hoist("return;")
            return
        if _is_control(expr):
            self.statement_expr(expr, target)
            return
        value = self.expr(expr)
        self.hoist(f"return {value};" if target == "return" else f"{target} = {value};")

    def statement(self, stmt) -> None:
        self.locate(stmt.span)
        if isinstance(stmt, ir.Let):
            self.let(stmt)
        elif isinstance(stmt, ir.Assign):
            self.assign(stmt)
        else:
            self.statement_expr(stmt.expr, None)

    def let(self, stmt: ir.Let) -> None:
        b = stmt.binding
        name = self.names.name(b)
        ty = cxx_type(b.ty)
        if stmt.init is None:
            self.hoist(f"{ty} {name};")
        elif _is_control(stmt.init) and not _inline_if(stmt.init):
            self.hoist(f"{ty} {name};")
            self.statement_expr(stmt.init, name)
        else:
            value = self.expr(stmt.init)
            const = "" if b.mutable or isinstance(b.ty, ArrayType) else "const "
            self.hoist(f"{const}{ty} {name} = {value};")

    def assign(self, stmt: ir.Assign) -> None:
        update = self.scatter_updates.get(stmt.node_id)
        if update is not None:
            self._scatter(stmt, update)
            return
        value = self._value_before_place(stmt.value, stmt.target)
        guards: list[str] = []
        target = self._place(stmt.target, guards)
        self._open_guards(guards)
        if stmt.node_id in self.l2_adds:
            self.hoist(f"rs2gpu_{ATOMIC_OPS[stmt.op]}_in_l2(&{target}, {value});")
        else:
            self._store(stmt, target, value)
        self._close_guards(guards)

    def _value_before_place(self, value: ir.Expr, place: ir.Expr) -> str:
        """Rust evaluates the value of an assignment before its place."""
        text = self.expr(value)
        if self._checks_on_device(place) and not isinstance(value, (ir.Lit, ir.Var)):
            text = self.temp(value.ty, text)  # so a panic in the value is recorded before the place's
        return text

    def _open_guards(self, guards: list[str]) -> None:
        if guards:
            # an out-of-bounds write is recorded and skipped, so it cannot corrupt memory
            self.hoist(f"if ({' && '.join(guards)}) {{")
            self.indent += 1

    def _close_guards(self, guards: list[str]) -> None:
        if guards:
            self.indent -= 1
            self.hoist("}")

    def _scatter(self, stmt: ir.Assign, update) -> None:
        """`target op= value` as an atomic update of the element, after the checks Rust makes, in its
        order: `t[e] += v` evaluates v, then checks e; `t[e] = t[e].min(v)` checks e (where the element
        is read, so that a panic names that place) before it evaluates v."""
        guards: list[str] = []
        spans = {}
        if update.element is not None:
            spans = {t.node_id: e.span for t, e in zip(place_indices(stmt.target), place_indices(update.element))}
        if update.element_first:
            target = self._place(stmt.target, guards, spans)
            self._open_guards(guards)
            value = self.expr(update.value)
        else:
            value = self._value_before_place(update.value, stmt.target)
            target = self._place(stmt.target, guards, spans)
            self._open_guards(guards)
        self.hoist(f"rs2gpu_atomic_{ATOMIC_OPS[update.op]}(&{target}, {value});")
        self._close_guards(guards)

    def _checks_on_device(self, target) -> bool:
        while isinstance(target, (ir.Index, ir.Field)):
            if isinstance(target, ir.Index) and self.sites is not None and target.node_id not in self.hoisted:
                return True
            target = target.base
        return False

    def _place(self, e, guards: list[str], spans: dict | None = None) -> str:
        """Render an assignment target; each device-checked index is computed once into a temporary and
        its check added to `guards` (reported at `spans[index.node_id]` if given, else where it is written)."""
        if isinstance(e, ir.Index):
            copy = self.private.get(e.base.binding) if isinstance(e.base, ir.Var) else None
            base = copy or self._place(e.base, guards, spans)
            if self.sites is None or e.node_id in self.hoisted:
                return f"{base}[{self.expr(e.index)}]"
            slot = self.names.fresh("index")
            self.hoist(f"const usize {slot} = {self.expr(e.index)};")
            guards.append(f"rs2gpu_in_bounds({slot}, {self.length_of(e.base)}, "
                          f"{self.site('bounds', (spans or {}).get(e.node_id, e.span))}, {self.iteration})")
            return f"{base}[{slot}]"
        if isinstance(e, ir.Field):
            base = self._place(e.base, guards, spans)
            if isinstance(e.base.ty, TupleType):
                return f"{base}.f{e.name}"
            return f"{base}{'->' if isinstance(e.base.ty, RefType) else '.'}{cxx_name(e.name)}"
        return self.expr(e)

    def _store(self, stmt: ir.Assign, target: str, value: str) -> None:
        ty = stmt.target.ty
        op = stmt.op
        if op is None:
            self.hoist(f"{target} = {value};")
        elif op in ("<<", ">>"):
            self.hoist(f"{target} = rs2gpu_{'shl' if op == '<<' else 'shr'}({target}, {value});")
        elif isinstance(ty, PrimType) and ty.is_float and op == "%":
            self.hoist(f"{target} = {'fmodf' if ty.name == 'f32' else 'fmod'}({target}, {value});")
        elif op in WRAPPING_OPS and _needs_wrapping(ty):
            self.hoist(f"{target} = rs2gpu_wrapping_{WRAPPING_OPS[op]}({target}, {value});")
        elif op in ("/", "%") and isinstance(ty, PrimType) and ty.is_int:
            self.hoist(f"{target} = {self.int_division(op, target, value, stmt.span, stmt.value, ty)};")
        elif isinstance(ty, PrimType) and ty.bits < 32 and not ty.is_bool:
            self.hoist(f"{target} = ({cxx_type(ty)})({target} {op} {value});")
        else:
            self.hoist(f"{target} {op}= {value};")

    # ------------------------------------------------------------ control flow

    def statement_expr(self, e, target: str | None) -> None:
        """Emit an expression in statement position; a value it produces goes to `target`."""
        where = self._where
        self._statement_expr(e, target)
        self._where = where  # the lines that follow render the statement this one is part of

    def _statement_expr(self, e, target: str | None) -> None:
        if isinstance(e, ir.If):
            self._if(e, target)
        elif isinstance(e, ir.Match):
            self._match(e, target)
        elif isinstance(e, ir.BlockExpr):
            self.hoist_brace("{")
            self.indent += 1
            self.block(e.block, target)
            self.indent -= 1
            self.hoist_brace("}")
        elif isinstance(e, ir.For):
            self._for(e)
        elif isinstance(e, ir.While):
            self._while(e)
        elif isinstance(e, ir.Loop):
            self._loop(e, target)
        elif isinstance(e, ir.Break):
            self._break(e)
        elif isinstance(e, ir.Continue):
            self.hoist("continue;")
        elif isinstance(e, ir.Return):
            self.hoist("return;" if e.value is None else f"return {self.expr(e.value)};")
        else:
            value = self.expr(e)
            if target is not None:
                self.hoist(f"{target} = {value};")
            elif value != "((void)0)":
                self.hoist(f"{value};")

    def _branch(self, block: ir.Block, target: str | None) -> None:
        self.indent += 1
        self.block(block, target)
        self.indent -= 1

    def _if(self, e: ir.If, target: str | None) -> None:
        self.locate(e.cond.span)
        self.hoist(f"if ({self.expr(e.cond)}) {{")
        self._branch(e.then, target)
        orelse = e.orelse
        while orelse is not None and not orelse.stmts and isinstance(orelse.tail, ir.If) \
                and not self.capture(lambda: self.expr(orelse.tail.cond))[0]:
            nested = orelse.tail
            self.locate(nested.cond.span)
            self.hoist(f"}} else if ({self.expr(nested.cond)}) {{")
            self._branch(nested.then, target)
            orelse = nested.orelse
        if orelse is not None:
            self.hoist_brace("} else {")
            self._branch(orelse, target)
        self.hoist_brace("}")

    def _match(self, e: ir.Match, target: str | None) -> None:
        self.locate(e.scrutinee.span)
        scrutinee = self.temp(e.scrutinee.ty, self.expr(e.scrutinee))
        ty = e.scrutinee.ty
        from rs2gpu.emit.cxx_types import int_literal

        first = True
        for arm in e.arms:
            if not arm.patterns:
                self.hoist_brace("{" if first else "} else {")
            else:
                tests = []
                for p in arm.patterns:
                    if isinstance(p, tuple):
                        tests.append(f"({scrutinee} >= {int_literal(p[0], ty)} && {scrutinee} <= {int_literal(p[1], ty)})")
                    else:
                        tests.append(f"{scrutinee} == {int_literal(p, ty)}")
                self.locate(arm.span)
                self.hoist(f"{'if' if first else '} else if'} ({' || '.join(tests)}) {{")
            self.indent += 1
            self.tail(arm.body, target)
            self.indent -= 1
            first = False
            if not arm.patterns:
                break
        self.hoist_brace("}")

    def _for(self, e: ir.For) -> None:
        var = self.names.name(e.var)
        ty = cxx_type(e.var.ty)
        start, end = self.expr(e.start), self.expr(e.end)
        if not e.inclusive:
            end_name = self.names.fresh(f"{var}_end")
            self.hoist(f"for ({ty} {var} = {start}, {end_name} = {end}; {var} < {end_name}; {var}++) {{")
        else:
            last, go = self.names.fresh(f"{var}_last"), self.names.fresh(f"{var}_go")
            self.hoist(f"for ({ty} {var} = {start}, {last} = {end}, {go} = ({var} <= {last}); {go}; "
                       f"{go} = ({var} != {last}), {var} += {go}) {{")
        self._loop_results.append(None)
        self._branch(e.body, None)
        self._loop_results.pop()
        self.hoist_brace("}")

    def _while(self, e: ir.While) -> None:
        cond_lines, cond = self.capture(lambda: self.expr(e.cond))
        self._loop_results.append(None)
        if not cond_lines:
            self.hoist(f"while ({cond}) {{")
            self._branch(e.body, None)
        else:
            self.hoist("while (true) {")
            self.indent += 1
            cond = self.expr(e.cond)
            self.hoist(f"if (!({cond})) break;")
            self.indent -= 1
            self._branch(e.body, None)
        self._loop_results.pop()
        self.hoist_brace("}")

    def _loop(self, e: ir.Loop, target: str | None) -> None:
        self._loop_results.append(target)
        self.hoist("while (true) {")
        self._branch(e.body, None)
        self.hoist_brace("}")
        self._loop_results.pop()

    def _break(self, e: ir.Break) -> None:
        target = self._loop_results[-1] if self._loop_results else None
        if e.value is not None and target is not None:
            self.hoist(f"{target} = {self.expr(e.value)};")
        self.hoist("break;")


def _is_control(e) -> bool:
    return isinstance(e, (ir.If, ir.Match, ir.BlockExpr, ir.Loop, ir.For, ir.While))


def _inline_if(e) -> bool:
    """An if/else whose branches are single expressions renders as `c ? a : b`."""
    return isinstance(e, ir.If) and e.orelse is not None and not e.then.stmts and not e.orelse.stmts \
        and e.then.tail is not None and e.orelse.tail is not None \
        and not _is_control(e.then.tail) and not _is_control(e.orelse.tail)
