"""Lowering loops: range and iterator `for` loops, `while`, `loop`, `break` and `continue`.

Every `for` becomes an `ir.For` over an integer range, the one loop form the checker and the emitter
know. An iterator loop is the range loop over its positions, with each pattern name standing for an
element access at the loop index:

    for (o, x) in out.iter_mut().zip(inp) { *o = 2.0 * x; }
    // is lowered as
    for i in 0..min(out.len(), inp.len()) { out[i] = 2.0 * inp[i]; }

`zip` stops at its shorter side, so the bound is the minimum of the lengths; `enumerate`'s counter is
the loop index itself. The sources of a chain are slices and arrays named by a place (a variable or a
field of one): `x.iter()`, `x.iter_mut()`, `x` and `&x` / `&mut x` (IntoIterator), combined by `.zip(..)`
or `std::iter::zip`, `.enumerate()`, `.copied()` and `.cloned()`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from tree_sitter import Node

from rs2gpu.frontend import infer
from rs2gpu.frontend.infer import InferVar, find, may_be_int
from rs2gpu.frontend.ranges import RangeLowering, range_chain
from rs2gpu.frontend.source import text_of
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import BOOL, NEVER, UNIT, USIZE, ArrayType, RefType, SliceType
from rs2gpu.ir.walk import same_value

SUPPORTED_CHAINS = ("iterate a slice or array with `.iter()`, `.iter_mut()`, `&x` or `x`, combined with "
                    "`.zip(..)`, `.enumerate()` and `.copied()`; or loop over a range, `for i in 0..n`, "
                    "`(0..n).rev()`, `(0..n).step_by(s)`")
_ZIP_PATHS = ("zip", "iter::zip", "std::iter::zip", "core::iter::zip")
_PUNCTUATION = ("(", ")", ",")
_LABEL_HELP = "set a `bool` variable that the inner loops test, and leave each loop in turn"


@dataclass
class LoopContext:
    break_type: object  # Type or InferVar; None for `for`/`while` (breaks carry no value)
    has_break: bool = False


@dataclass(frozen=True)
class Sequence:
    """A slice or array an iterator walks: its item at position i is `base[i]`, handed out as a shared
    reference ("ref"), a mutable one ("mut") or a copy ("value")."""

    base: ir.Expr
    item: str
    node: Node

    @property
    def length(self) -> ir.Expr:
        ty = find(self.base.ty)
        target = find(ty.target) if isinstance(ty, RefType) else ty
        if isinstance(target, ArrayType):
            return ir.Lit(target.length, str(target.length), USIZE, self.base.span)
        return ir.Intrinsic("len", (self.base,), USIZE, self.base.span)

    def element(self, index: ir.Binding, span: ir.Span) -> ir.Index:
        return ir.Index(self.base, ir.Var(index, span), _element_type(self.base.ty), span)


@dataclass(frozen=True)
class Counter:
    """`enumerate`'s count: the position itself."""

    node: Node


@dataclass(frozen=True)
class Pair:
    """The items of `zip` and `enumerate`: a tuple of two."""

    first: "Item"
    second: "Item"
    node: Node


Item = Sequence | Counter | Pair


@dataclass(frozen=True)
class ElementName:
    """A name a `for` pattern binds to an element: each use is the element access itself. `reference`
    says whether Rust sees a reference (`*o` is then the element), `mutable` whether through it the
    element may be assigned."""

    access: ir.Expr
    reference: bool
    mutable: bool
    name: str

    def at(self, span: ir.Span) -> ir.Expr:
        if isinstance(self.access, ir.Index):  # each use is an access of its own, with facts of its own
            return dataclasses.replace(self.access, span=span, node_id=ir.new_node_id())
        return dataclasses.replace(self.access, span=span)


class LoopLowering(RangeLowering):
    """The loop half of `FunctionLowerer` (which provides `expr`, `block`, `unify`, the scopes, ...)."""

    # ------------------------------------------------------------ for

    def _expr_for_expression(self, node):
        pattern = node.child_by_field_name("pattern")
        value = node.child_by_field_name("value")
        if value.type == "range_expression":
            return self._range_loop(node, pattern, value)
        chain = range_chain(value)
        if chain is not None:
            return self._adapted_range_loop(node, pattern, *chain)
        return self._iterator_loop(node, pattern, value)

    def _range_loop(self, node, pattern, value):
        if pattern.type != "identifier" and text_of(pattern) != "_":
            self.unsupported(pattern, "a pattern in a `for` loop over a range", "loop over a range with one index "
                                                                                 "variable")
        bounds = [c for c in value.named_children]
        operator = next(c.type for c in value.children if c.type in ("..", "..=", "..."))
        if len(bounds) != 2:
            self.unsupported(value, "an open range", "give both bounds, `start..end`")
        start, end = self.expr(bounds[0]), self.expr(bounds[1])
        self.unify(start.ty, end.ty, value)
        if not may_be_int(start.ty):
            self.error(value, f"`{infer.display(start.ty)}` is not an integer range", code="RG0005")
        var = ir.Binding(text_of(pattern), start.ty, False, "loop", self.span(pattern))
        body = self._loop_body(node, {var.name: var}, [])
        return ir.For(var, start, end, operator != "..", body, self.span(node))

    def _iterator_loop(self, node, pattern, value):
        item = self._iterable(value)
        counter = _counter_node(pattern, item)
        index = ir.Binding(text_of(counter), USIZE, False, "loop", self.span(counter)) if counter is not None \
            else ir.Binding("i", USIZE, False, "loop", self.span(pattern))
        names: dict[str, object] = {}
        prologue: list[ir.Let] = []
        self._bind_pattern(pattern, item, index, names, prologue)
        body = self._loop_body(node, names, prologue)
        zero = ir.Lit(0, "0", USIZE, self.span(value))
        return ir.For(index, zero, _shortest(item, self.span(value)), False, body, self.span(node))

    def _loop_body(self, node, names: dict, prologue: list[ir.Let]) -> ir.Block:
        body_node = node.child_by_field_name("body")
        self.scopes.append(names)
        self.loops.append(LoopContext(None))
        try:
            body = self.block(body_node)
        finally:
            self.loops.pop()
            self.scopes.pop()
        self.unify(UNIT, body.ty, body_node)
        if prologue:
            body = ir.Block((*prologue, *body.stmts), body.tail, body.ty, body.span)
        return body

    # ------------------------------------------------------------ iterator chains

    def _iterable(self, node) -> Item:
        """The item tree of an iterator expression."""
        if node.type == "parenthesized_expression":
            return self._iterable(node.named_children[0])
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            args = [a for a in node.child_by_field_name("arguments").named_children
                    if a.type not in ("line_comment", "block_comment")]
            if function.type == "field_expression":
                return self._adapter(node, text_of(function.child_by_field_name("field")),
                                     function.child_by_field_name("value"), args, function.child_by_field_name("field"))
            path = text_of(function).replace(" ", "")
            crate_zip = path == "zip" and "zip" in self.crate.items and self.crate.items["zip"].kind == "fn"
            if path in _ZIP_PATHS and not crate_zip:
                self._arity(node, "zip", args, 2)
                return Pair(self._iterable(args[0]), self._iterable(args[1]), node)
        if node.type == "reference_expression":
            return self._borrowed(node)
        if node.type == "range_expression":
            self.unsupported(node, "a range inside an iterator chain", "count positions with `.enumerate()`")
        if node.type in ("identifier", "field_expression", "scoped_identifier"):
            return self._into_iter(node, self.expr(node))
        self.unsupported(node, "this iterator", SUPPORTED_CHAINS)

    def _adapter(self, node, method: str, receiver: Node, args: list, method_node: Node) -> Item:
        if method in ("iter", "iter_mut"):
            self._arity(node, method, args, 0)
            base = self._sequence_base(receiver, self.expr(receiver), method == "iter_mut", node)
            return Sequence(base, "mut" if method == "iter_mut" else "ref", node)
        if method == "zip":
            self._arity(node, method, args, 1)
            return Pair(self._iterable(receiver), self._iterable(args[0]), node)
        if method == "enumerate":
            self._arity(node, method, args, 0)
            return Pair(Counter(node), self._iterable(receiver), node)
        if method in ("copied", "cloned"):
            self._arity(node, method, args, 0)
            inner = self._iterable(receiver)
            if not (isinstance(inner, Sequence) and inner.item == "ref"):
                self.unsupported(method_node, f"`.{method}()` here",
                                 f"call `.{method}()` directly on `x.iter()`: it copies shared elements")
            return Sequence(inner.base, "value", node)
        self.unsupported(method_node, f"the iterator method `.{method}()`", SUPPORTED_CHAINS)

    def _borrowed(self, node) -> Sequence:
        """`&x` / `&mut x` as the thing iterated: an array (or `*slice`), by reference."""
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        operand = node.child_by_field_name("value")
        if operand.type == "unary_expression" and operand.children[0].type == "*":
            operand = operand.named_children[0]  # `&*a`, `&mut *a`: a reborrow of the slice a
            value = self.expr(operand)
        else:
            value = self.expr(operand)
            if isinstance(find(value.ty), RefType):
                self.error(node, f"`&{infer.display(value.ty)}` is not an iterator", code="RG0005",
                           help=f"`{text_of(operand)}` is a reference already: iterate `{text_of(operand)}` or "
                                f"`{text_of(operand)}.iter{'_mut' if mutable else ''}()`")
        base = self._sequence_base(operand, value, mutable, node)
        return Sequence(base, "mut" if mutable else "ref", node)

    def _into_iter(self, node, value) -> Sequence:
        """A slice reference iterated directly (`for x in a`): its items are references like `a.iter()`'s."""
        ty = find(value.ty)
        if isinstance(ty, RefType) and isinstance(ty.target, (SliceType, ArrayType)):
            base = self._sequence_base(node, value, ty.mutable, node)
            return Sequence(base, "mut" if ty.mutable else "ref", node)
        if isinstance(ty, ArrayType):
            self.unsupported(node, "iterating an array by value", f"iterate `{text_of(node)}.iter()`")
        self.error(node, f"`{infer.display(ty)}` is not an iterator", code="RG0005", help=SUPPORTED_CHAINS)

    def _sequence_base(self, node, base, mutable: bool, use) -> ir.Expr:
        """Check that `base` names a slice or array the loop may walk (and write, if `mutable`)."""
        ty = find(base.ty)
        target = ty.target if isinstance(ty, RefType) else ty
        if not isinstance(target, (SliceType, ArrayType)):
            self.error(node, f"`{infer.display(ty)}` is not a slice or an array", code="RG0005",
                       help=SUPPORTED_CHAINS)
        root = base
        while isinstance(root, ir.Field):
            root = root.base
        if not isinstance(root, (ir.Var, ir.ConstRef)):
            self.unsupported(node, "iterating a temporary value", "iterate a variable or a field of one")
        if mutable and isinstance(root, ir.ConstRef):
            self.unsupported(use, f"mutating a temporary copy of the constant `{root.name}`",
                             "the writes would be lost: iterate it with `.iter()`")
        if mutable:
            behind = next((e.ty for e in _place_chain(base) if isinstance(e.ty, RefType)), None)
            if behind is not None and not behind.mutable:
                self.error(use, f"cannot borrow `{text_of(node)}` as mutable, as it is behind a `&` reference",
                           code="RG0008", help="take the parameter as `&mut` to write to it")
            if behind is None and not root.binding.mutable:
                self.error(use, f"cannot borrow `{text_of(node)}` as mutable, as it is not declared as mutable",
                           code="RG0008", help=f"declare it with `let mut {root.binding.name}`")
        return base

    def _arity(self, node, name: str, args: list, count: int) -> None:
        if len(args) != count:
            self.error(node, f"`{name}` takes {count} argument(s) but {len(args)} were supplied", code="RG0011")

    # ------------------------------------------------------------ patterns

    def _bind_pattern(self, pattern, item: Item, index: ir.Binding, names: dict, prologue: list) -> None:
        kind = pattern.type
        if kind == "_" or text_of(pattern) == "_":
            return
        if kind == "tuple_pattern":
            parts = [c for c in pattern.children if c.type not in _PUNCTUATION]
            if not isinstance(item, Pair):
                self._pattern_mismatch(pattern, item)
            if len(parts) != 2 or any(p.type == "remaining_field_pattern" for p in parts):
                self.error(pattern, f"mismatched types: this pattern has {len(parts)} fields, but the item "
                                    "is a pair", code="RG0005")
            self._bind_pattern(parts[0], item.first, index, names, prologue)
            self._bind_pattern(parts[1], item.second, index, names, prologue)
            return
        if kind == "reference_pattern":
            mutable = any(c.type == "mutable_specifier" for c in pattern.children)
            if not (isinstance(item, Sequence) and item.item == ("mut" if mutable else "ref")):
                self._pattern_mismatch(pattern, item)
            inner = pattern.named_children[-1]
            self._bind_pattern(inner, Sequence(item.base, "value", item.node), index, names, prologue)
            return
        if kind not in ("identifier", "mut_pattern"):
            self.unsupported(pattern, "this pattern in a `for` loop", "bind names, `_`, tuples `(a, b)` and `&x`")
        mutable = kind == "mut_pattern"
        name_node = pattern.named_children[-1] if mutable else pattern
        name = text_of(name_node)
        if isinstance(item, Pair):
            self.unsupported(pattern, "binding a pair of items to one name", "destructure the pair: `(a, b)`")
        span = self.span(name_node)
        value = ir.Var(index, span) if isinstance(item, Counter) else item.element(index, span)
        if mutable:
            if isinstance(item, Sequence) and item.item != "value":
                self.unsupported(pattern, "a `mut` binding of an element reference",
                                 "write through the reference instead: `*x = ...`")
            local = ir.Binding(name, value.ty, True, "local", span)
            prologue.append(ir.Let(local, value, span))
            names[name] = local
        elif isinstance(item, Counter) and index.span == span:
            names[name] = index  # the counter that names the loop variable
        else:
            reference = isinstance(item, Sequence) and item.item != "value"
            names[name] = ElementName(value, reference, isinstance(item, Sequence) and item.item == "mut", name)

    def _pattern_mismatch(self, pattern, item: Item) -> None:
        found = {Pair: "a pair", Counter: "`usize`"}.get(type(item))
        if found is None:
            elem = infer.display(_element_type(item.base.ty))
            found = {"ref": f"`&{elem}`", "mut": f"`&mut {elem}`", "value": f"`{elem}`"}[item.item]
        self.error(pattern, f"mismatched types: the item is {found}, which this pattern does not match",
                   code="RG0005")

    # ------------------------------------------------------------ names bound by patterns

    def element_name(self, node) -> ElementName | None:
        """The element a pattern name stands for, if `node` is such a name."""
        if node.type != "identifier":
            return None
        found = self.lookup_var(text_of(node))
        return found if isinstance(found, ElementName) else None

    # ------------------------------------------------------------ while, loop, break, continue

    def _expr_while_expression(self, node):
        cond_node = node.child_by_field_name("condition")
        if cond_node.type in ("let_condition", "let_chain"):
            self.unsupported(cond_node, "`while let`", "use `while` with a condition, or `loop` with `break`")
        cond = self.expr(cond_node)
        self.unify(BOOL, cond.ty, cond_node)
        self.loops.append(LoopContext(None))
        try:
            body = self.block(node.child_by_field_name("body"))
        finally:
            self.loops.pop()
        self.unify(UNIT, body.ty, node.child_by_field_name("body"))
        return ir.While(cond, body, self.span(node))

    def _expr_loop_expression(self, node):
        context = LoopContext(InferVar("any"))
        self.loops.append(context)
        try:
            body = self.block(node.child_by_field_name("body"))
        finally:
            self.loops.pop()
        ty = context.break_type if context.has_break else NEVER
        return ir.Loop(body, ty, self.span(node))

    def _expr_break_expression(self, node):
        if not self.loops:
            self.error(node, "`break` outside of a loop", code="RG0005")
        if any(c.type == "label" for c in node.named_children):
            self.unsupported(node, "a labeled `break`", _LABEL_HELP)
        value_nodes = node.named_children
        context = self.loops[-1]
        context.has_break = True
        value = self.expr(value_nodes[0]) if value_nodes else None
        if context.break_type is None:
            if value is not None:
                self.error(node, "`break` with value from a `for` or `while` loop", code="RG0005")
        else:
            self.unify(context.break_type, value.ty if value is not None else UNIT, node)
        return ir.Break(value, NEVER, self.span(node))

    def _expr_continue_expression(self, node):
        if not self.loops:
            self.error(node, "`continue` outside of a loop", code="RG0005")
        if node.named_children:
            self.unsupported(node, "a labeled `continue`", _LABEL_HELP)
        return ir.Continue(NEVER, self.span(node))


def _counter_node(pattern, item: Item) -> Node | None:
    """The first name the pattern gives `enumerate`'s counter: it names the loop variable itself."""
    if isinstance(item, Counter):
        return pattern if pattern.type == "identifier" else None
    if isinstance(item, Pair) and pattern.type == "tuple_pattern":
        parts = [c for c in pattern.children if c.type not in _PUNCTUATION]
        if len(parts) == 2:
            return _counter_node(parts[0], item.first) or _counter_node(parts[1], item.second)
    return None


def _sequences(item: Item) -> list[Sequence]:
    if isinstance(item, Sequence):
        return [item]
    if isinstance(item, Pair):
        return _sequences(item.first) + _sequences(item.second)
    return []


def _shortest(item: Item, span: ir.Span) -> ir.Expr:
    """The number of items: the minimum of the sources' lengths (each length once; array lengths folded)."""
    lengths: list[ir.Expr] = []
    for sequence in _sequences(item):
        length = sequence.length
        if not any(same_value(length, seen) for seen in lengths):
            lengths.append(length)
    constants = [e for e in lengths if isinstance(e, ir.Lit)]
    if len(constants) > 1:
        least = min(constants, key=lambda e: e.value)
        lengths = [e for e in lengths if not isinstance(e, ir.Lit)] + [least]
    bound = lengths[0]
    for length in lengths[1:]:
        bound = ir.Intrinsic("min", (bound, length), USIZE, span)
    return bound


def _place_chain(expr: ir.Expr) -> list[ir.Expr]:
    """`expr` and the bases it is a field of, outermost first."""
    chain = [expr]
    while isinstance(chain[-1], ir.Field):
        chain.append(chain[-1].base)
    return chain


def _element_type(ty):
    ty = find(ty)
    if isinstance(ty, RefType):
        ty = find(ty.target)
    return ty.elem
