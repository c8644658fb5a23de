"""The IR validator: internal consistency checks that every pass's output must pass.

It finds bugs in rs2gpu, not in the user's code (that is the checker's job), so it returns plain
messages rather than diagnostics:

    >>> validate_function(fn)
    ['src/lib.rs:4:9: `x` is used outside the scope of its binding']

Checked: every type is a concrete `ir.types` type (no inference variables left), every variable is
used inside the scope of its binding (a parameter, an enclosing `let`, or a `for` variable),
operators agree with their operand types, indices are `usize`, `break`/`continue` sit inside loops,
assignment targets are places, every node and binding has a span, and every binding, index and
assignment has an identity (`node_id`) of its own, and appears once (a binding: is declared once).
`validate_crate` checks each function, and that no two of them share an identity.
"""
from __future__ import annotations

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.intrinsics import HALF_CONSTRUCTORS, INTRINSICS
from rs2gpu.ir.types import (BOOL, PRIMITIVES, UNIT, USIZE, ArrayType, NeverType, PrimType, RefType,
                             SliceType, StructType, TupleType, element_type)

_ARITHMETIC = {"+", "-", "*", "/", "%"}
_BITWISE = {"&", "|", "^"}
_SHIFTS = {"<<", ">>"}
_COMPARISONS = {"==", "!=", "<", "<=", ">", ">="}
_LOGICAL = {"&&", "||"}
_INTRINSIC_NAMES = frozenset(name for _, name in INTRINSICS) | frozenset(HALF_CONSTRUCTORS)


def validate_function(fn: ir.Function) -> list[str]:
    """Every internal inconsistency found in `fn`, as `file:line:col: message` lines; [] when valid."""
    return _Validator(fn, {}).run()


def validate_crate(crate: ir.Crate) -> list[str]:
    """`validate_function` of every function of `crate`, and the identities that two functions share."""
    identities: dict[ir.NodeId, tuple[object, object]] = {}
    return [error for fn in crate.functions for error in _Validator(fn, identities).run()]


def is_concrete(ty: object) -> bool:
    """Whether `ty` is an `ir.types` type with no inference variable anywhere inside it."""
    if isinstance(ty, PrimType):
        return ty.name in PRIMITIVES
    if isinstance(ty, NeverType):
        return True
    if isinstance(ty, (ArrayType, SliceType)):
        return is_concrete(ty.elem)
    if isinstance(ty, RefType):
        return is_concrete(ty.target)
    if isinstance(ty, TupleType):
        return all(is_concrete(t) for t in ty.elems)
    if isinstance(ty, StructType):
        return all(is_concrete(f.ty) for f in ty.fields)
    return False


def _never(ty: object) -> bool:
    return isinstance(ty, NeverType)


def _int(ty: object) -> bool:
    return isinstance(ty, PrimType) and ty.is_int


class _Validator:
    def __init__(self, fn: ir.Function, identities: dict) -> None:
        self.fn = fn
        self.identities = identities  # node_id -> (its node, where), shared by the functions of a crate
        self.errors: list[str] = []
        self.scopes: list[set[ir.Binding]] = []
        self.loops: list[object] = []  # per enclosing loop: the type its `break`s carry (None: no value)

    def run(self) -> list[str]:
        fn = self.fn
        self.span_of(fn, "function")
        self.concrete(fn.ret, fn.span, "the return type")
        self.scopes.append(set())
        for p in fn.params:
            self.binding(p)
            self.scopes[-1].add(p)
        self.block(fn.body)
        self.scopes.pop()
        if not self.same(fn.body.ty, fn.ret):
            self.report(fn.body.span, f"the body has type `{fn.body.ty}` but `{fn.name}` returns `{fn.ret}`")
        return self.errors

    # ------------------------------------------------------------ helpers

    def report(self, span: object, message: str) -> None:
        where = str(span) if isinstance(span, ir.Span) else "<no span>"
        self.errors.append(f"{where}: {message}")

    def span_of(self, node: object, what: str) -> ir.Span | None:
        span = getattr(node, "span", None)
        if not isinstance(span, ir.Span):
            self.report(None, f"{what} `{type(node).__name__}` has no span")
            return None
        return span

    def concrete(self, ty: object, span: object, what: str) -> bool:
        if not is_concrete(ty):
            self.report(span, f"{what} has the non-concrete type `{ty!r}`")
            return False
        return True

    def same(self, found: object, expected: object) -> bool:
        """Types agree; a diverging value (`!`) fits anywhere."""
        return found == expected or _never(found)

    def binding(self, b: ir.Binding) -> None:
        if not isinstance(b, ir.Binding):
            self.report(None, f"expected a binding, found `{type(b).__name__}`")
            return
        self.span_of(b, "binding")
        self.concrete(b.ty, b.span, f"binding `{b.name}`")
        if b.kind not in ("param", "local", "loop"):
            self.report(b.span, f"binding `{b.name}` has the unknown kind `{b.kind}`")
        self.identity(b, b.span, f"binding `{b.name}`")

    def identity(self, node: object, span: object, what: str) -> None:
        """The checker's facts are keyed by `node_id`: a fact about one node must not apply to another."""
        node_id = getattr(node, "node_id", None)
        if type(node_id) is not int:
            self.report(span, f"{what} has no identity")
            return
        seen = self.identities.get(node_id)
        if seen is None:
            self.identities[node_id] = (node, span)
        elif seen[0] is node:
            self.report(span, f"{what} appears twice (node {node_id})")
        else:
            self.report(span, f"{what} has the identity of another node (node {node_id}, at {seen[1]})")

    def in_scope(self, b: ir.Binding) -> bool:
        return any(b in scope for scope in self.scopes)

    # ------------------------------------------------------------ blocks and statements

    def block(self, block: ir.Block) -> None:
        span = self.span_of(block, "block")
        self.concrete(block.ty, span, "block")
        self.scopes.append(set())
        for stmt in block.stmts:
            self.stmt(stmt)
        if block.tail is not None:
            self.expr(block.tail)
        self.scopes.pop()
        if block.tail is not None:
            if block.ty != block.tail.ty and not _never(block.tail.ty):
                self.report(span, f"block has type `{block.ty}` but its tail has type `{block.tail.ty}`")
        elif block.ty != UNIT and not _never(block.ty):
            self.report(span, f"block without a tail has type `{block.ty}`")

    def stmt(self, stmt: object) -> None:
        if isinstance(stmt, ir.Let):
            span = self.span_of(stmt, "let")
            if stmt.init is not None:
                self.expr(stmt.init)
                if not self.same(stmt.init.ty, stmt.binding.ty):
                    self.report(span, f"`let {stmt.binding.name}: {stmt.binding.ty}` is initialized with a "
                                      f"`{stmt.init.ty}`")
            self.binding(stmt.binding)
            self.scopes[-1].add(stmt.binding)
        elif isinstance(stmt, ir.Assign):
            self.assign(stmt)
        elif isinstance(stmt, ir.ExprStmt):
            self.span_of(stmt, "statement")
            self.expr(stmt.expr)
        else:
            self.report(getattr(stmt, "span", None), f"`{type(stmt).__name__}` is not a statement")

    def assign(self, stmt: ir.Assign) -> None:
        span = self.span_of(stmt, "assignment")
        self.identity(stmt, span, "assignment")
        self.expr(stmt.target)
        self.expr(stmt.value)
        root = stmt.target
        while isinstance(root, (ir.Index, ir.Field)):
            root = root.base
        if not isinstance(root, ir.Var):
            self.report(span, f"assignment target is not a place (it is rooted at `{type(root).__name__}`)")
        target, value = stmt.target.ty, stmt.value.ty
        if stmt.op is None:
            if not self.same(value, target):
                self.report(span, f"assigning a `{value}` to a place of type `{target}`")
        elif stmt.op in _SHIFTS:
            if not (_int(target) and (_int(value) or _never(value))):
                self.report(span, f"`{stmt.op}=` needs integers, found `{target}` and `{value}`")
        elif stmt.op in _ARITHMETIC | _BITWISE:
            if not self.same(value, target):
                self.report(span, f"`{target} {stmt.op}= {value}`: the operand types differ")
        else:
            self.report(span, f"unknown compound assignment `{stmt.op}=`")

    # ------------------------------------------------------------ expressions

    def expr(self, e: object) -> None:
        method = getattr(self, "_" + type(e).__name__.lower(), None)
        if method is None:
            self.report(getattr(e, "span", None), f"`{type(e).__name__}` is not an expression")
            return
        span = self.span_of(e, "expression")
        if self.concrete(e.ty, span, type(e).__name__):
            method(e, span)

    def _lit(self, e: ir.Lit, span) -> None:
        ok = (isinstance(e.value, bool) and e.ty == BOOL) or \
             (isinstance(e.value, int) and not isinstance(e.value, bool) and _int(e.ty)) or \
             (isinstance(e.value, float) and isinstance(e.ty, PrimType) and e.ty.is_float)
        if not ok:
            self.report(span, f"literal `{e.text}` ({type(e.value).__name__}) has type `{e.ty}`")

    def _var(self, e: ir.Var, span) -> None:
        if not isinstance(e.binding, ir.Binding):
            self.report(span, "variable without a binding")
        elif not self.in_scope(e.binding):
            self.report(span, f"`{e.binding.name}` is used outside the scope of its binding")

    def _constref(self, e: ir.ConstRef, span) -> None:
        if not e.name:
            self.report(span, "constant without a name")

    def _unary(self, e: ir.Unary, span) -> None:
        self.expr(e.operand)
        ty = e.operand.ty
        if e.op == "-":
            ok = isinstance(ty, PrimType) and ty.is_signed
        elif e.op == "!":
            ok = isinstance(ty, PrimType) and (ty.is_int or ty.is_bool)
        else:
            self.report(span, f"unknown unary operator `{e.op}`")
            return
        if not ok and not _never(ty):
            self.report(span, f"unary `{e.op}` applied to `{ty}`")
        if e.ty != ty and not _never(ty):
            self.report(span, f"unary `{e.op}` on `{ty}` has type `{e.ty}`")

    def _binary(self, e: ir.Binary, span) -> None:
        self.expr(e.lhs)
        self.expr(e.rhs)
        lhs, rhs = e.lhs.ty, e.rhs.ty
        if _never(lhs) or _never(rhs):
            return
        if e.op in _SHIFTS:
            if not (_int(lhs) and _int(rhs)):
                self.report(span, f"`{lhs} {e.op} {rhs}`: shifts need integer operands")
            expected = lhs
        elif e.op in _LOGICAL:
            if lhs != BOOL or rhs != BOOL:
                self.report(span, f"`{lhs} {e.op} {rhs}`: logical operators need `bool` operands")
            expected = BOOL
        elif e.op in _ARITHMETIC | _BITWISE | _COMPARISONS:
            if lhs != rhs:
                self.report(span, f"`{lhs} {e.op} {rhs}`: the operand types differ")
            if e.op in _ARITHMETIC and not (isinstance(lhs, PrimType) and not lhs.is_bool):
                self.report(span, f"arithmetic `{e.op}` on `{lhs}`")
            if e.op in _BITWISE and not (isinstance(lhs, PrimType) and not lhs.is_float):
                self.report(span, f"bitwise `{e.op}` on `{lhs}`")
            expected = BOOL if e.op in _COMPARISONS else lhs
        else:
            self.report(span, f"unknown binary operator `{e.op}`")
            return
        if e.ty != expected:
            self.report(span, f"`{lhs} {e.op} {rhs}` has type `{e.ty}`, expected `{expected}`")

    def _cast(self, e: ir.Cast, span) -> None:
        self.expr(e.operand)
        if not isinstance(e.ty, PrimType) or not isinstance(e.operand.ty, (PrimType, NeverType)):
            self.report(span, f"cast from `{e.operand.ty}` to `{e.ty}`: only primitive types cast")

    def _index(self, e: ir.Index, span) -> None:
        self.identity(e, span, "index")
        self.expr(e.base)
        self.expr(e.index)
        if e.index.ty != USIZE and not _never(e.index.ty):
            self.report(span, f"index has type `{e.index.ty}`, expected `usize`")
        elem = element_type(e.base.ty)
        if elem is None:
            self.report(span, f"indexing into `{e.base.ty}`")
        elif elem != e.ty:
            self.report(span, f"element of `{e.base.ty}` has type `{elem}`, not `{e.ty}`")

    def _field(self, e: ir.Field, span) -> None:
        self.expr(e.base)
        ty = e.base.ty.target if isinstance(e.base.ty, RefType) else e.base.ty
        if isinstance(ty, StructType):
            field = ty.field(e.name)
            expected = field.ty if field is not None else None
        elif isinstance(ty, TupleType) and e.name.isdigit() and int(e.name) < len(ty.elems):
            expected = ty.elems[int(e.name)]
        else:
            expected = None
        if expected is None:
            self.report(span, f"`{ty}` has no field `{e.name}`")
        elif expected != e.ty:
            self.report(span, f"field `{e.name}` of `{ty}` has type `{expected}`, not `{e.ty}`")

    def _intrinsic(self, e: ir.Intrinsic, span) -> None:
        for a in e.args:
            self.expr(a)
        if e.name not in _INTRINSIC_NAMES:
            self.report(span, f"unknown intrinsic `{e.name}`")
        if not e.args:
            self.report(span, f"intrinsic `{e.name}` without a receiver")

    def _call(self, e: ir.Call, span) -> None:
        for a in e.args:
            self.expr(a)
        if not e.func or not e.func.replace("_", "a").isalnum():
            self.report(span, f"call to the invalid function name `{e.func}`")

    def _structlit(self, e: ir.StructLit, span) -> None:
        for _, value in e.fields:
            self.expr(value)
        if not isinstance(e.ty, StructType) or e.ty.name != e.struct:
            self.report(span, f"struct literal `{e.struct}` has type `{e.ty}`")
            return
        names = [name for name, _ in e.fields]
        if names != [f.name for f in e.ty.fields]:
            self.report(span, f"struct literal `{e.struct}` gives the fields {names}")
        for name, value in e.fields:
            field = e.ty.field(name)
            if field is not None and not self.same(value.ty, field.ty):
                self.report(value.span, f"field `{name}: {field.ty}` is given a `{value.ty}`")

    def _tuplelit(self, e: ir.TupleLit, span) -> None:
        for x in e.elems:
            self.expr(x)
        if e.ty != TupleType(tuple(x.ty for x in e.elems)):
            self.report(span, f"tuple literal has type `{e.ty}`")

    def _arraylit(self, e: ir.ArrayLit, span) -> None:
        for x in e.elems:
            self.expr(x)
        length = e.repeat if e.repeat is not None else len(e.elems)
        if e.repeat is not None and len(e.elems) != 1:
            self.report(span, "a repeat array literal `[v; n]` holds exactly one value")
        if not isinstance(e.ty, ArrayType) or e.ty.length != length:
            self.report(span, f"array literal of {length} elements has type `{e.ty}`")
        elif any(not self.same(x.ty, e.ty.elem) for x in e.elems):
            self.report(span, f"array literal of type `{e.ty}` holds elements of other types")

    def _if(self, e: ir.If, span) -> None:
        self.condition(e.cond, "`if`")
        self.block(e.then)
        if e.orelse is None:
            if e.ty != UNIT or not self.same(e.then.ty, UNIT):
                self.report(span, f"`if` without `else` has type `{e.ty}` (its block: `{e.then.ty}`)")
            return
        self.block(e.orelse)
        for branch in (e.then, e.orelse):
            if not self.same(branch.ty, e.ty):
                self.report(branch.span, f"a branch of type `{branch.ty}` in an `if` of type `{e.ty}`")

    def _match(self, e: ir.Match, span) -> None:
        self.expr(e.scrutinee)
        if not _int(e.scrutinee.ty):
            self.report(span, f"`match` on `{e.scrutinee.ty}`: only integers are matched")
        if not any(not arm.patterns for arm in e.arms):
            self.report(span, "`match` without a `_` arm")
        for arm in e.arms:
            self.span_of(arm, "match arm")
            for p in arm.patterns:
                ok = isinstance(p, int) or (isinstance(p, tuple) and len(p) == 2 and all(isinstance(v, int) for v in p))
                if not ok or isinstance(p, bool):
                    self.report(arm.span, f"pattern `{p!r}` is not an integer or an inclusive range")
            self.expr(arm.body)
            if not self.same(arm.body.ty, e.ty):
                self.report(arm.span, f"an arm of type `{arm.body.ty}` in a `match` of type `{e.ty}`")

    def _blockexpr(self, e: ir.BlockExpr, span) -> None:
        self.block(e.block)

    def _for(self, e: ir.For, span) -> None:
        self.expr(e.start)
        self.expr(e.end)
        self.binding(e.var)
        if not _int(e.var.ty):
            self.report(span, f"`for` variable of type `{e.var.ty}`: ranges are over integers")
        for bound in (e.start, e.end):
            if not self.same(bound.ty, e.var.ty):
                self.report(bound.span, f"range bound of type `{bound.ty}` for a `{e.var.ty}` variable")
        self.loop_body(e.body, {e.var}, None)
        self.unit_loop(e, span)

    def _while(self, e: ir.While, span) -> None:
        self.condition(e.cond, "`while`")
        self.loop_body(e.body, set(), None)
        self.unit_loop(e, span)

    def _loop(self, e: ir.Loop, span) -> None:
        self.loop_body(e.body, set(), e.ty)
        if not self.same(e.body.ty, UNIT):
            self.report(e.body.span, f"loop body has type `{e.body.ty}`, expected `()`")

    def _break(self, e: ir.Break, span) -> None:
        if e.value is not None:
            self.expr(e.value)
        self.in_loop(e, span, "break")
        if self.loops:
            carried, value = self.loops[-1], UNIT if e.value is None else e.value.ty
            if carried is None and e.value is not None:
                self.report(span, "`break` with a value out of a `for` or `while` loop")
            elif carried is not None and not _never(carried) and not self.same(value, carried):
                self.report(span, f"`break` of a `{value}` out of a loop of type `{carried}`")

    def _continue(self, e: ir.Continue, span) -> None:
        self.in_loop(e, span, "continue")

    def _return(self, e: ir.Return, span) -> None:
        value = UNIT
        if e.value is not None:
            self.expr(e.value)
            value = e.value.ty
        if not self.same(value, self.fn.ret):
            self.report(span, f"`return` of a `{value}` from a function returning `{self.fn.ret}`")
        if not _never(e.ty):
            self.report(span, f"`return` has type `{e.ty}`, expected `!`")

    # ------------------------------------------------------------ pieces

    def condition(self, cond, what: str) -> None:
        self.expr(cond)
        if not self.same(cond.ty, BOOL):
            self.report(cond.span, f"{what} condition has type `{cond.ty}`, expected `bool`")

    def loop_body(self, body: ir.Block, bindings: set[ir.Binding], carried: object) -> None:
        self.scopes.append(bindings)
        self.loops.append(carried)
        self.block(body)
        self.loops.pop()
        self.scopes.pop()

    def unit_loop(self, e, span) -> None:
        if e.ty != UNIT:
            self.report(span, f"`{type(e).__name__.lower()}` loop has type `{e.ty}`, expected `()`")
        if not self.same(e.body.ty, UNIT):
            self.report(e.body.span, f"loop body has type `{e.body.ty}`, expected `()`")

    def in_loop(self, e, span, what: str) -> None:
        if not self.loops:
            self.report(span, f"`{what}` outside of a loop")
        if not _never(e.ty):
            self.report(span, f"`{what}` has type `{e.ty}`, expected `!`")


__all__ = ["validate_function", "validate_crate", "is_concrete"]
