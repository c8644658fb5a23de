"""Lowering one function body (or a const initializer) from tree-sitter nodes to typed IR.

Names are resolved through a stack of scopes, so shadowing `let`s become distinct bindings. Types
are inferred with `infer` while the IR is built, then made concrete by `infer.resolve_function`.
Any construct outside the kernel language stops the function with a diagnostic naming it.
"""
from __future__ import annotations

import dataclasses
import math

from tree_sitter import Node

from rs2gpu.frontend import infer
from rs2gpu.ir import walk as irwalk
from rs2gpu.frontend.constants import associated_constant, half_constant, literal_text
from rs2gpu.frontend.checked import CHECKED_FORMS, OPTION_USES, CheckedLowering, checked_call
from rs2gpu.frontend.consteval import NotConstant, evaluate, int_range, round_float
from rs2gpu.frontend.halves import WIDENINGS, half_prefix
from rs2gpu.frontend.infer import InferVar, TypeMismatch, find, may_be_int
from rs2gpu.frontend.items import RawItem, is_kernel
from rs2gpu.frontend.literals import parse_number
from rs2gpu.frontend.loops import SUPPORTED_CHAINS, ElementName, LoopContext, LoopLowering
from rs2gpu.frontend.source import SourceFile, text_of
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.intrinsics import FREE_FUNCTIONS, HALF_CONSTRUCTORS, lookup, method_names
from rs2gpu.ir.types import (BOOL, F32, F64, I32, NEVER, PRIM_NAMES, U32, UNIT, USIZE, ArrayType, NeverType, PrimType,
                             RefType, SliceType, StructType, TupleType, Type)

ARITHMETIC = {"+", "-", "*", "/", "%"}
BITWISE = {"&", "|", "^"}
SHIFTS = {"<<", ">>"}
COMPARISONS = {"==", "!=", "<", "<=", ">", ">="}
LOGICAL = {"&&", "||"}

# Statement-like nodes that never produce a block's value.
_IGNORED = {"line_comment", "block_comment", "empty_statement", "attribute_item", "inner_attribute_item"}
_PATH_PREFIXES = ("std", "core", "crate", "self", "super")
_ASSIGNMENTS = ("assignment_expression", "compound_assignment_expr")
# Types that own heap memory; what kernels write instead.
HEAP_TYPES = ("Vec", "Box", "String", "VecDeque", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "Rc", "Arc")
HEAP_HELP = ("kernels cannot allocate memory: take the buffer as a `&mut [T]` parameter (one more argument of the "
             "call), or use a fixed-size array such as `let mut buf = [0.0; 8];` for a small buffer of each iteration")
# Methods of slices and arrays that make iterators: a kernel iterates only in `for` loops.
ITERATOR_METHODS = ("iter", "iter_mut", "into_iter", "chunks", "chunks_exact", "windows")

_CONSTRUCT_NAMES = {
    "closure_expression": "a closure",
    "macro_invocation": "a macro call",
    "unsafe_block": "an `unsafe` block",
    "async_block": "an `async` block",
    "await_expression": "`.await`",
    "try_expression": "the `?` operator",
    "let_condition": "`if let`",
    "let_chain": "`if let` chains",
    "yield_expression": "`yield`",
    "string_literal": "a string literal",
    "raw_string_literal": "a string literal",
    "char_literal": "a char literal",
    "reference_expression": "taking a reference",
    "generic_function": "explicit type arguments",
    "range_expression": "a range outside a `for` loop",
    "const_block": "a `const` block",
    "gen_block": "a `gen` block",
}
# What to write instead of integer methods that people often call.
_INTEGER_REWRITES = {
    "is_multiple_of": "write `x % m == 0` for `x.is_multiple_of(m)` (with `m` not zero)",
    "abs_diff": "write `if a > b { a.wrapping_sub(b) } else { b.wrapping_sub(a) }` for `a.abs_diff(b)`, cast "
                "`as` the unsigned type where `a` and `b` are signed",
}
# What to write instead of a construct of `_CONSTRUCT_NAMES`, where there is one rewrite.
_CONSTRUCT_HELP = {
    "closure_expression": "write a helper `fn` outside the kernel, and pass it the values the closure captures",
    "let_condition": "test a condition with `if`, or `match` on an integer; `x.get(i)` is "
                     "`if i < x.len() { x[i] } else { ... }`",
    "let_chain": "test a condition with `if`, or `match` on an integer",
}



_LET_PATTERNS = "bind a name (`let x`, `let mut x`), `_`, or a tuple of them (`let (a, mut b) = ...`)"


def _pattern_names(pattern: Node) -> list[Node]:
    """The identifiers a pattern binds, in order."""
    if pattern.type == "identifier":
        return [pattern]
    return [n for child in pattern.named_children for n in _pattern_names(child)]


class FunctionLowerer(LoopLowering, CheckedLowering):
    def __init__(self, crate, item: RawItem | None, type_args: tuple, ir_name: str, as_kernel: bool,
                 file: SourceFile | None = None, arrays: dict[int, int] | None = None) -> None:
        self.crate = crate
        self.item = item
        self.file = file if file is not None else item.file
        self.ir_name = ir_name
        self.as_kernel = as_kernel
        self.type_args = type_args
        self.arrays = arrays or {}  # position of a `&[T]` parameter → the length of the array it takes
        self.generics: dict[str, Type] = {}
        self.scopes: list[dict[str, ir.Binding]] = [{}]
        self.loops: list[LoopContext] = []
        self.ret: object = UNIT
        self.generic_calls: dict[str, tuple[RawItem, list]] = {}
        self.deferred: set[ir.Binding] = set()  # `let x;`: immutable, but initialized by a later `x = ...`
        self.cast_targets: dict[int, PrimType] = {}  # literal node id → the type a cast gives it

    @classmethod
    def for_const(cls, crate, item: RawItem) -> "FunctionLowerer":
        return cls(crate, item, (), item.name, False)

    @classmethod
    def for_file(cls, crate, file: SourceFile) -> "FunctionLowerer":
        return cls(crate, None, (), "", False, file)

    # ------------------------------------------------------------ entry points

    def lower(self) -> ir.Function | None:
        node = self.item.node
        errors_before = len(self.crate.diagnostics.items)
        self._bind_generics(node.child_by_field_name("type_parameters"))
        params = tuple(self._param(p, position) for position, p in enumerate(
            p for p in node.child_by_field_name("parameters").named_children
            if p.type not in ("line_comment", "block_comment", "attribute_item")))
        ret_node = node.child_by_field_name("return_type")
        self.ret = self.type(ret_node) if ret_node is not None else UNIT
        if not self.as_kernel and isinstance(self.ret, RefType) and isinstance(self.ret.target, SliceType):
            self.unsupported(ret_node, "a helper returning a slice",
                             "pass the slice to the code that reads it, with the offset it starts at")
        if self.as_kernel and not self._check_kernel_signature(params, ret_node):
            # The body is not lowered: what it does with a parameter that cannot cross (`*n += 1` with
            # `n: &mut u64`) is valid Rust, and would only repeat the one problem in other words.
            self.crate.stop()
        for p in params:
            self.scopes[0][p.name] = p
        body_node = node.child_by_field_name("body")
        if body_node is None:
            self.error(node, "a function without a body", code="RG0002")
        body = self.block(body_node)
        tail_node = next((c for c in reversed(body_node.named_children) if c.type not in _IGNORED), body_node)
        if body.tail is not None:
            self.coerce(self.ret, body.tail, tail_node)
        else:
            self.unify(self.ret, body.ty, body_node)
        options = self.crate.kernel_options(self.item) if self.as_kernel else {"fast_math": False}
        fn = ir.Function(self.ir_name, self.item.name, self.type_args, params, self.ret, body,
                         self.as_kernel, options["fast_math"], self.span(node), self.item.module)
        if len(self.crate.diagnostics.items) > errors_before:
            return None
        try:
            fn = infer.resolve_function(self._instantiate_generic_calls(fn))
        except TypeMismatch:
            self.error(node, "type annotations needed", code="RG0005")
        self._check_literal_ranges(fn)
        return fn

    def lower_const_value(self, node: Node, ty: Type) -> ir.Expr:
        value = self.expr(node)
        self.unify(ty, value.ty, node)
        resolved = infer.resolve_function(self._instantiate_generic_calls(
            ir.Function("", "", (), (), UNIT, ir.Block((), value, ty, value.span), False, False, value.span)))
        self._check_literal_ranges(resolved.body)
        return resolved.body.tail

    # ------------------------------------------------------------ signature

    def _bind_generics(self, node: Node | None) -> None:
        if node is None:
            return
        names = [text_of(p.child_by_field_name("name") or p) for p in node.named_children
                 if p.type in ("type_parameter", "type_identifier")]
        others = [p for p in node.named_children if p.type not in ("type_parameter", "type_identifier")]
        if others:
            self.unsupported(others[0], "lifetime and const generic parameters")
        if len(names) != len(self.type_args):
            self.error(node, "wrong number of type arguments", code="RG0011")
        self.generics = dict(zip(names, self.type_args))

    def _param(self, node: Node, position: int) -> ir.Binding:
        if node.type == "self_parameter":
            self.unsupported(node, "a `self` parameter", "kernels and helpers are free functions")
        pattern = node.child_by_field_name("pattern")
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        if pattern is None or pattern.type != "identifier":
            self.unsupported(pattern or node, "a pattern in a parameter", "name each parameter")
        ty = self.type(node.child_by_field_name("type"))
        if position in self.arrays:
            ty = RefType(ArrayType(ty.target.elem, self.arrays[position]), ty.mutable)
        return ir.Binding(text_of(pattern), ty, mutable, "param", self.span(pattern))

    def _check_kernel_signature(self, params: tuple[ir.Binding, ...], ret_node: Node | None) -> bool:
        """Report each parameter and result type that cannot cross to the GPU; whether there is none."""
        errors_before = len(self.crate.diagnostics.items)
        for p in params:
            ty = p.ty
            ok = isinstance(ty, (PrimType, StructType)) or (
                isinstance(ty, RefType) and (
                    (isinstance(ty.target, (SliceType, ArrayType)) and isinstance(ty.target.elem, (PrimType, StructType)))
                    or (isinstance(ty.target, StructType) and not ty.mutable)))
            if not ok:
                scalar_out = isinstance(ty, RefType) and ty.mutable and isinstance(ty.target, PrimType)
                self.crate.diagnostics.error(
                    "RG0013", f"kernel parameter `{p.name}` has type `{ty}`, which cannot cross to the GPU",
                    p.span, "unsupported parameter type",
                    help=f"a kernel gives a scalar back as its result: return it (`-> {ty.target}`), or take a "
                         f"`&mut [{ty.target}]` of length 1" if scalar_out else
                    "kernel parameters are scalars, #[repr(C)] structs, `&T` structs, and `&[T]`, `&mut [T]`, "
                    "`&[T; N]` of scalars or structs")
        ret = self.ret
        elems = ret.elems if isinstance(ret, TupleType) else (ret,)
        if not all(isinstance(t, PrimType) for t in elems) and ret != UNIT:
            self.crate.diagnostics.error("RG0013", f"a kernel cannot return `{ret}`", self.span(ret_node),
                                         "unsupported return type",
                                         help="kernels return nothing, a scalar, or a tuple of scalars")
        return len(self.crate.diagnostics.items) == errors_before

    # ------------------------------------------------------------ helpers

    def span(self, node: Node) -> ir.Span:
        return self.file.span(node)

    def error(self, node: Node, message: str, label: str = "", help: str = "", code: str = "RG0002"):
        self.crate.error(code, message, self.file, node, label, help)

    def unsupported(self, node: Node, what: str, help: str = ""):
        self.crate.unsupported(self.file, node, what, help)

    def type(self, node: Node) -> Type:
        return self.crate.lower_type(node, self.file, self.generics)

    def unify(self, expected, found, node: Node) -> None:
        if isinstance(find(expected), NeverType) or isinstance(find(found), NeverType):
            return
        try:
            infer.unify(expected, found)
        except TypeMismatch:
            self.error(node, "mismatched types", f"expected `{infer.display(expected)}`, found "
                       f"`{infer.display(found)}`", code="RG0005")

    def coerce(self, expected, value, node: Node):
        """`value` at a site whose type rustc knows (an argument, a typed `let`, a returned value), with
        the coercion rustc applies there: `&mut T` where `&T` is expected is a reborrow, the same pointer
        read-only (the IR keeps the value; a C++ `T*` converts to `const T*` the same way). `&T` where
        `&mut T` is expected is still a mismatch, as in rustc."""
        want, have = find(expected), find(value.ty)
        if isinstance(want, RefType) and isinstance(have, RefType) and have.mutable and not want.mutable:
            self.unify(want, RefType(have.target, False), node)
        else:
            self.unify(expected, value.ty, node)
        return value

    def join(self, a, b, node: Node):
        """The type of an `if`/`match` whose branches have types a and b."""
        if isinstance(find(a), NeverType):
            return b
        if isinstance(find(b), NeverType):
            return a
        self.unify(a, b, node)
        return a

    def lookup_var(self, name: str) -> ir.Binding | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    # ------------------------------------------------------------ blocks and statements

    def block(self, node: Node, new_scope: bool = True) -> ir.Block:
        if node.type != "block":
            self.unsupported(node, _describe(node), _CONSTRUCT_HELP.get(node.type, ""))
        if new_scope:
            self.scopes.append({})
        try:
            children = [c for c in node.named_children if c.type not in _IGNORED]
            for c in node.named_children:
                if c.type == "label":
                    self.unsupported(c, "a labeled block")
            stmts: list = []
            tail = None
            for i, child in enumerate(children):
                last = i == len(children) - 1
                if child.type == "let_declaration":
                    stmts += self.let(child)
                elif child.type == "expression_statement":
                    inner = child.named_children[0]
                    has_semicolon = child.children[-1].type == ";" or _followed_by_semicolon(child)
                    if last and not has_semicolon and inner.type not in _ASSIGNMENTS:
                        tail = self.expr(inner)
                    else:
                        stmts.append(self.statement(inner))
                        if not has_semicolon and isinstance(stmts[-1], ir.ExprStmt):
                            # `if c { 1 } else { 2 }` followed by more statements must be `()`.
                            self.unify(UNIT, stmts[-1].expr.ty, inner)
                elif child.type.endswith("_item"):
                    self.unsupported(child, "an item declared inside a function",
                                     "move it to the top level of the crate")
                elif last and child.type in _ASSIGNMENTS:
                    stmts.append(self.statement(child))
                elif last:
                    tail = self.expr(child)
                else:
                    self.error(child, "expected `;`", code="RG0001")
            ty = tail.ty if tail is not None else UNIT
            if tail is None and any(_diverges(s) for s in stmts):
                ty = NEVER  # rustc: a block whose statements diverge has type `!`, whatever follows
            return ir.Block(tuple(stmts), tail, ty, self.span(node))
        finally:
            if new_scope:
                self.scopes.pop()

    def let(self, node: Node) -> list[ir.Let]:
        """A `let`'s statements: its one `ir.Let`, or those of a tuple pattern (`_destructure`)."""
        pattern = node.child_by_field_name("pattern")
        mutable = any(c.type == "mutable_specifier" for c in node.children)
        if pattern.type == "mut_pattern":
            mutable, pattern = True, pattern.named_children[0]
        if node.child_by_field_name("alternative") is not None:
            self.unsupported(node, "`let ... else`")
        if pattern.type == "tuple_pattern" and not mutable:
            return self._destructure(node, pattern)
        if pattern.type == "struct_pattern":
            self.unsupported(pattern, "a struct pattern in a `let`",
                             "bind the struct to a name, `let v = ...;`, then its fields `v.x`")
        if pattern.type != "identifier" and text_of(pattern) != "_":
            self.unsupported(pattern, "this `let` pattern", _LET_PATTERNS)
        annotated = node.child_by_field_name("type")
        ty = self.type(annotated) if annotated is not None else InferVar("any")
        value_node = node.child_by_field_name("value")
        init = None
        if value_node is not None:
            init = self.coerce(ty, self.expr(value_node), value_node)
            held = find(ty)
            if isinstance(held, RefType) and isinstance(find(held.target), SliceType):
                self.unsupported(pattern, "a local variable holding a slice",
                                 f"use `{text_of(value_node)}` itself where `{text_of(pattern)}` is used")
        binding = ir.Binding(text_of(pattern), ty, mutable, "local", self.span(pattern))
        self.scopes[-1][binding.name] = binding
        if init is None and not mutable:
            self.deferred.add(binding)
        return [ir.Let(binding, init, self.span(node))]

    def _destructure(self, node: Node, pattern: Node) -> list[ir.Let]:
        """`let (a, (b, mut c), _) = e;` as rustc runs it: `e` once, into a local of its own (named after
        the pattern's names), then each name bound to its element; the names come into scope after `e`,
        so `let (x, y) = (y, x);` swaps."""
        value_node = node.child_by_field_name("value")
        if value_node is None:
            self.unsupported(pattern, "a destructuring `let` without a value", "give each name its own `let`")
        annotated = node.child_by_field_name("type")
        ty = self.type(annotated) if annotated is not None else InferVar("any")
        init = self.coerce(ty, self.expr(value_node), value_node)
        names = [text_of(n) for n in _pattern_names(pattern)]
        whole = ir.Binding("_".join(names) or "unused", init.ty, False, "local", self.span(pattern))
        lets = [ir.Let(whole, init, self.span(node))]
        bound: dict[str, ir.Binding] = {}
        self._bind_elements(pattern, ir.Var(whole, whole.span), lets, bound)
        self.scopes[-1].update(bound)
        return lets

    def _bind_elements(self, pattern: Node, value, lets: list, bound: dict) -> None:
        parts = [c for c in pattern.children if c.type not in ("(", ")", ",") and c.type not in _IGNORED]
        ty = find(value.ty)
        if any(p.type == "remaining_field_pattern" for p in parts):
            self.unsupported(pattern, "`..` in a tuple pattern", "name each element, `_` for those not used")
        if not isinstance(ty, TupleType) or len(ty.elems) != len(parts):
            self.error(pattern, "mismatched types", f"expected `{infer.display(value.ty)}`, found a tuple of "
                                                    f"{len(parts)} elements", code="RG0005")
        for position, (part, elem) in enumerate(zip(parts, ty.elems)):
            element = ir.Field(value, str(position), elem, self.span(part))
            if part.type == "tuple_pattern":
                self._bind_elements(part, element, lets, bound)
                continue
            if text_of(part) == "_":
                continue
            mutable = part.type == "mut_pattern"
            name_node = part.named_children[-1] if mutable else part
            if name_node.type != "identifier":
                self.unsupported(part, "this pattern in a `let`", _LET_PATTERNS)
            name = text_of(name_node)
            if name in bound:
                self.error(name_node, f"identifier `{name}` is bound more than once in the same pattern",
                           code="RG0010", help="give each element its own name, `_` for those not used")
            bound[name] = ir.Binding(name, elem, mutable, "local", self.span(name_node))
            lets.append(ir.Let(bound[name], element, self.span(part)))

    def statement(self, node: Node):
        if node.type == "assignment_expression":
            return self.assign(node, None)
        if node.type == "compound_assignment_expr":
            op = text_of(node.child_by_field_name("operator"))[:-1]
            return self.assign(node, op)
        return ir.ExprStmt(self.expr(node), self.span(node))

    def assign(self, node: Node, op: str | None) -> ir.Assign:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        target = self.place(left, initializing=op is None)
        value = self.expr(right)
        if op is None:
            self.unify(target.ty, value.ty, right)
        else:
            self._check_binary(op, target, value, node)
        return ir.Assign(target, value, op, self.span(node))

    def place(self, node: Node, initializing: bool = False):
        """An assignable expression; checks mutability the way rustc's borrow checker would.

        `initializing`: a plain `=`, which may give a `let x;` its value (rustc checks that this happens
        once on every path; rs2gpu leaves that to rustc's build of the same source)."""
        element = self.element_name(node)
        if element is not None and element.reference:
            self.error(node, f"cannot assign to `{element.name}`, a reference to an element", code="RG0008",
                       help=f"assign to the element through it: `*{element.name} = ...`")
        if element is not None:
            self.error(node, f"cannot assign twice to immutable variable `{element.name}`", code="RG0008",
                       help=f"bind it with `mut {element.name}` in the `for` pattern")
        target = self.expr(node)
        root = target
        while isinstance(root, (ir.Index, ir.Field)):
            base_ty = find(root.base.ty)
            if isinstance(base_ty, RefType):
                if not base_ty.mutable:
                    self.error(node, f"cannot assign through `{infer.display(base_ty)}`",
                               "this data is behind a shared reference",
                               help="take the parameter as `&mut` to write to it", code="RG0008")
                return target
            root = root.base
        if not isinstance(root, ir.Var):
            self.error(node, "invalid left-hand side of assignment", code="RG0008")
        if not root.binding.mutable and not (initializing and root is target and root.binding in self.deferred):
            self.error(node, f"cannot assign twice to immutable variable `{root.binding.name}`",
                       help=f"declare it with `let mut {root.binding.name}`", code="RG0008")
        return target

    # ------------------------------------------------------------ expressions

    def expr(self, node: Node):
        method = getattr(self, "_expr_" + node.type, None)
        if method is None:
            is_vec = node.type == "macro_invocation" and text_of(node.child_by_field_name("macro")) == "vec"
            self.unsupported(node, _describe(node), HEAP_HELP if is_vec else _CONSTRUCT_HELP.get(node.type, ""))
        return method(node)

    def _expr_parenthesized_expression(self, node):
        return self.expr(node.named_children[0])

    def _expr_integer_literal(self, node):
        return self._number(node, text_of(node))

    _expr_float_literal = _expr_integer_literal

    def _number(self, node, text: str, negate: bool = False):
        try:
            lit = parse_number(text)
        except ValueError as e:
            self.error(node, f"invalid number literal: {e}", code="RG0001")
        target = self.cast_targets.get(node.id)
        if lit.suffix is not None:
            ty = PrimType(lit.suffix)
        elif target is not None and (target.is_float if lit.is_float else target.is_int):
            ty = target  # rustc: `300 as u8` is a u8 literal (out of range), `0.1 as f32` an f32 one
        else:
            ty = InferVar("float" if lit.is_float else "int")
        value = -lit.value if negate else lit.value
        text_out = ("-" + lit.text) if negate else lit.text
        return ir.Lit(value, text_out, ty, self.span(node))

    def _expr_boolean_literal(self, node):
        value = text_of(node) == "true"
        return ir.Lit(value, text_of(node), BOOL, self.span(node))

    def _expr_identifier(self, node):
        name = text_of(node)
        binding = self.lookup_var(name)
        if isinstance(binding, ElementName):
            return binding.at(self.span(node))
        if binding is not None:
            return ir.Var(binding, self.span(node))
        const = self.crate.const(name)
        if const is not None:
            return ir.ConstRef(name, const.ty, self.span(node))
        path = self.crate.uses.path(name, self.file, node)
        for imported in [path] if path is not None else [(*g, name) for g in self.crate.uses.globs(self.file, node)]:
            value = self._path_value(list(imported), node)
            if value is not None:
                return value
        item = self.crate.items.get(name)
        if item is not None and item.kind == "fn":
            self.unsupported(node, "a function used as a value", "call it instead")
        self.error(node, f"cannot find value `{name}` in this scope", "not found in this scope", code="RG0004")

    def _expr_scoped_identifier(self, node):
        parts = [p for p in text_of(node).replace(" ", "").split("::") if p]
        imported = self.crate.uses.path(parts[0], self.file, node) if parts[0] not in _PATH_PREFIXES else None
        value = self._path_value([*imported, *parts[1:]] if imported is not None else parts, node)
        if value is None:
            self.error(node, f"cannot find `{text_of(node)}`", "not a known constant", code="RG0004")
        return value

    def _path_value(self, parts: list[str], node):
        """The constant a path names (`std::f64::consts::PI`, `i32::MAX`, `crate::m::LIMIT`), or None."""
        while parts and parts[0] in _PATH_PREFIXES:
            parts = parts[1:]
        half = half_prefix(self.crate, parts, self.file, node)
        if half is not None:
            value = half_constant(half[0].name, half[1])
            return ir.Lit(value, literal_text(value), half[0], self.span(node)) if value is not None else None
        if parts and parts[0] in PRIM_NAMES and parts[0] != "bool" and len(parts) > 1:
            value = associated_constant(parts[0], parts[1:])
            if value is not None:
                ty = PrimType(parts[0]) if parts[1:] != ["BITS"] else U32
                return ir.Lit(value, literal_text(value), ty, self.span(node))
        if parts:
            const = self.crate.const(parts[-1])
            if const is not None:
                return ir.ConstRef(parts[-1], const.ty, self.span(node))
        return None

    def _expr_unary_expression(self, node):
        op = node.children[0].type
        operand_node = node.named_children[0]
        if op == "-" and operand_node.type in ("integer_literal", "float_literal"):
            return self._number(node, text_of(operand_node), negate=True)
        element = self.element_name(operand_node)
        if op == "*" and element is not None:
            if not element.reference:
                self.error(node, f"type `{infer.display(element.access.ty)}` cannot be dereferenced", code="RG0005")
            return element.at(self.span(node))
        operand = self.expr(operand_node)
        ty = find(operand.ty)
        if op == "*":
            if isinstance(ty, RefType) and isinstance(ty.target, (PrimType, StructType)):
                return operand
            self.unsupported(node, "dereferencing this value")
        if op == "-" and (isinstance(ty, PrimType) and (not ty.is_signed or ty.is_bool)):
            self.error(node, f"cannot apply unary operator `-` to type `{ty}`", code="RG0005",
                       help="unsigned values cannot be negated; use `wrapping_neg()`" if ty.is_int else "")
        if op == "!" and (isinstance(ty, PrimType) and (ty.is_float or ty.is_half)
                          or isinstance(ty, InferVar) and ty.kind == "float"):
            self.error(node, f"cannot apply unary operator `!` to type `{infer.display(ty)}`", code="RG0005")
        return ir.Unary(op, operand, operand.ty, self.span(node))

    def _expr_binary_expression(self, node):
        op = text_of(node.child_by_field_name("operator"))
        lhs = self.expr(node.child_by_field_name("left"))
        rhs = self.expr(node.child_by_field_name("right"))
        ty = self._check_binary(op, lhs, rhs, node)
        return ir.Binary(op, lhs, rhs, ty, self.span(node))

    def _check_binary(self, op: str, lhs, rhs, node: Node):
        if op in LOGICAL:
            self.unify(BOOL, lhs.ty, node.child_by_field_name("left"))
            self.unify(BOOL, rhs.ty, node.child_by_field_name("right"))
            return BOOL
        if op in SHIFTS:
            for side in (lhs, rhs):
                if not may_be_int(side.ty):
                    self.error(node, f"no implementation for `{infer.display(lhs.ty)} {op} "
                               f"{infer.display(rhs.ty)}`", code="RG0005")
            return lhs.ty
        self.unify(lhs.ty, rhs.ty, node)
        ty = find(lhs.ty)
        if op in COMPARISONS:
            return BOOL
        is_bool = isinstance(ty, PrimType) and ty.is_bool
        is_float = (isinstance(ty, PrimType) and (ty.is_float or ty.is_half)) or \
            (isinstance(ty, InferVar) and ty.kind == "float")
        if (op in ARITHMETIC and is_bool) or (op in BITWISE and is_float) or \
                not isinstance(ty, (PrimType, InferVar)):
            self.error(node, f"no implementation for `{infer.display(ty)} {op} {infer.display(ty)}`",
                       code="RG0005")
        return lhs.ty

    def _expr_type_cast_expression(self, node):
        target = self.type(node.child_by_field_name("type"))
        literal = _cast_literal(node.child_by_field_name("value"))
        if literal is not None and isinstance(target, PrimType):
            self.cast_targets[literal.id] = target
        operand = self.expr(node.child_by_field_name("value"))
        source = find(operand.ty)
        if not isinstance(target, PrimType) or not isinstance(source, (PrimType, InferVar)) or \
                target.is_half or (isinstance(source, PrimType) and source.is_half) or \
                (target.is_bool and source != BOOL) or \
                (isinstance(source, PrimType) and source.is_bool and target.is_float):
            half = next((t for t in (target, source) if isinstance(t, PrimType) and t.is_half), None)
            self.error(node, f"casting `{infer.display(source)}` as `{target}` is invalid", code="RG0005",
                       help=f"`{half}` is no primitive type: convert with `{half}::from_f32`, `{half}::from_f64` "
                            f"and `.to_f32()`, `.to_f64()`" if half is not None else
                       "`as` converts between numeric types, and from bool to integers")
        return ir.Cast(operand, target, self.span(node))

    def _expr_reference_expression(self, node):
        operand = node.child_by_field_name("value")
        if operand is not None and operand.type == "index_expression" and \
                operand.named_children[-1].type == "range_expression":
            self._expr_index_expression(operand)  # reports `&a[i..j]` as sub-slicing
        self.unsupported(node, _describe(node))

    def _expr_index_expression(self, node):
        base_node, index_node = node.named_children[0], node.named_children[1]
        base = self.expr(base_node)
        if index_node.type == "range_expression":
            self.unsupported(index_node, "sub-slicing (`a[i..j]`)", "index single elements")
        index = self.expr(index_node)
        self.unify(USIZE, index.ty, index_node)
        elem = _element_type(find(base.ty))
        if elem is None:
            self.error(base_node, f"cannot index into a value of type `{infer.display(base.ty)}`", code="RG0005")
        return ir.Index(base, index, elem, self.span(node))

    def _expr_field_expression(self, node):
        base = self.expr(node.child_by_field_name("value"))
        name = text_of(node.child_by_field_name("field"))
        ty = find(base.ty)
        if isinstance(ty, RefType):
            ty = ty.target
        if isinstance(ty, StructType):
            field = ty.field(name)
            if field is None:
                self.error(node.child_by_field_name("field"), f"no field `{name}` on type `{ty}`", code="RG0004")
            return ir.Field(base, name, field.ty, self.span(node))
        if isinstance(ty, TupleType) and name.isdigit() and int(name) < len(ty.elems):
            return ir.Field(base, name, ty.elems[int(name)], self.span(node))
        self.error(node, f"no field `{name}` on type `{infer.display(ty)}`", code="RG0004")

    # ------------------------------------------------------------ calls

    def _expr_call_expression(self, node):
        function = node.child_by_field_name("function")
        arg_nodes = [a for a in node.child_by_field_name("arguments").named_children
                     if a.type not in ("line_comment", "block_comment")]
        if function.type == "field_expression":
            name = text_of(function.child_by_field_name("field"))
            checked = checked_call(function.child_by_field_name("value"))
            if checked is not None and name in OPTION_USES:
                return self._option_use(node, name, checked, arg_nodes)
            if checked_call(node) is not None:
                self.unsupported(function.child_by_field_name("field"), f"`{name}` used as an `Option` here",
                                 f"kernels hold an `Option` only as {CHECKED_FORMS}; `.unwrap()` is not "
                                 "supported: write `.unwrap_or(v)`, or `wrapping_*` where the result may wrap")
            receiver = self.expr(function.child_by_field_name("value"))
            return self._method_call(node, name, receiver, arg_nodes, function.child_by_field_name("value"))
        if function.type == "scoped_identifier":
            parts = [p for p in text_of(function).replace(" ", "").split("::") if p]
            while parts and parts[0] in _PATH_PREFIXES:
                parts = parts[1:]
            half = half_prefix(self.crate, parts, self.file, function)
            if half is not None and len(half[1]) == 1:
                return self._half_function(node, half[0], half[1][0], arg_nodes)
            if len(parts) == 2 and parts[0] in WIDENINGS and parts[1] == "from" and len(arg_nodes) == 1:
                return self._widening(node, parts[0], arg_nodes[0])
            if len(parts) == 2 and parts[0] in PRIM_NAMES and arg_nodes:
                receiver = self.expr(arg_nodes[0])
                self.unify(PrimType(parts[0]), receiver.ty, arg_nodes[0])
                return self._method_call(node, parts[1], receiver, arg_nodes[1:], arg_nodes[0])
            if len(parts) == 2 and parts[0] == "cmp" and parts[1] in FREE_FUNCTIONS:
                return self._free_min_max(node, parts[1], arg_nodes)
            if len(parts) == 2 and self.crate.items.get(parts[0]) is not None \
                    and self.crate.items[parts[0]].kind == "struct":
                self.unsupported(function, f"an associated function of an `impl` block, `{parts[0]}::{parts[1]}`",
                                 f"write a helper `fn` outside the `impl` block, or a struct literal "
                                 f"`{parts[0]} {{ ... }}`")
            heap = next((p for p in parts if p in HEAP_TYPES), None)
            if heap is not None and heap not in self.crate.items:
                self.unsupported(function, f"`{text_of(function)}` (a `{heap}` allocates on the heap)", HEAP_HELP)
            if parts:
                return self._helper_call(node, parts[-1], function, arg_nodes)
        if function.type == "identifier":
            name = text_of(function)
            if name in FREE_FUNCTIONS and (name not in self.crate.items or self.crate.items[name].kind != "fn"):
                return self._free_min_max(node, name, arg_nodes)
            return self._helper_call(node, name, function, arg_nodes)
        self.unsupported(function, "calling this kind of expression")

    def _half_function(self, node, ty: PrimType, name: str, arg_nodes):
        """`f16::from_f32(x)` and the other constructors, or a method called by its path (`f16::sqrt(x)`)."""
        if name not in HALF_CONSTRUCTORS:
            if not arg_nodes:
                self.error(node, f"no function `{ty}::{name}` in kernels", code="RG0007",
                           help=f"`{ty}` values are made by {', '.join(f'`{ty}::{c}`' for c in HALF_CONSTRUCTORS)}")
            receiver = self.expr(arg_nodes[0])
            self.unify(ty, receiver.ty, arg_nodes[0])
            return self._method_call(node, name, receiver, arg_nodes[1:], arg_nodes[0])
        if len(arg_nodes) != 1:
            self.error(node, f"`{ty}::{name}` takes 1 argument but {len(arg_nodes)} were supplied", code="RG0011")
        arg = self.expr(arg_nodes[0])
        self.unify(PrimType(HALF_CONSTRUCTORS[name]), arg.ty, arg_nodes[0])
        return ir.Intrinsic(name, (arg,), ty, self.span(node))

    def _widening(self, node, target: str, arg_node):
        """`f32::from(x)` of a half value is `x.to_f32()`; of anything else, not supported here."""
        arg = self.expr(arg_node)
        ty = find(arg.ty)
        if not (isinstance(ty, PrimType) and ty.is_half):
            self.unsupported(node, f"`{target}::from` of `{infer.display(ty)}`", f"write `x as {target}`")
        return ir.Intrinsic(WIDENINGS[target], (arg,), PrimType(target), self.span(node))

    def _free_min_max(self, node, name, arg_nodes):
        if len(arg_nodes) != 2:
            self.error(node, f"`{name}` takes 2 arguments but {len(arg_nodes)} were supplied", code="RG0011")
        first = self.expr(arg_nodes[0])
        second = self.expr(arg_nodes[1])
        self.unify(first.ty, second.ty, arg_nodes[1])
        if not may_be_int(first.ty):
            self.error(node, f"`std::cmp::{name}` needs an `Ord` type", code="RG0005",
                       help=f"for floats use `a.{name}(b)`")
        return ir.Intrinsic(FREE_FUNCTIONS[name], (first, second), first.ty, self.span(node))

    def _method_call(self, node, name: str, receiver, arg_nodes, receiver_node):
        function = node.child_by_field_name("function")
        # rustc points at the method's name: `x.sqrt()` at `sqrt`, `f64::sqrt(x)` at the path.
        name_node = function.child_by_field_name("field") if function.type == "field_expression" else function
        ty = find(receiver.ty)
        if isinstance(ty, InferVar) and ty.kind in ("int", "float"):
            self.error(name_node,
                       f"can't call method `{name}` on ambiguous numeric type `{ty}`", code="RG0006",
                       help=f"give the value a concrete type, like `{'f64' if ty.kind == 'float' else 'i32'}`, "
                            "with a suffix or a type annotation")
        kinds = _receiver_kinds(ty)
        sig = lookup(kinds, name)
        if sig is None and isinstance(ty, StructType):
            self.error(name_node, f"no method named `{name}` found for `{ty.name}` in kernels", "method not found",
                       code="RG0007", help=f"methods of `impl` blocks are not supported: write a helper function "
                                           f"that takes the struct by value, `fn {name}(v: {ty.name}, ...)`")
        if sig is None and kinds == ("seq",) and name not in ITERATOR_METHODS:
            self.error(name_node, f"no method named `{name}` found for `{infer.display(ty)}` in kernels",
                       "method not found", code="RG0007",
                       help="slices have only `len()` in kernels: write an iterator chain as a loop, "
                            "`for i in 0..x.len()`, accumulating into a variable declared before it, "
                            "`let mut s = 0.0; ... s += x[i];`")
        if sig is None:
            self.error(name_node,
                       f"no method named `{name}` found for `{infer.display(ty)}` in kernels",
                       "method not found", code="RG0007", help=_methods_help(ty, kinds, name))
        if len(arg_nodes) != len(sig.operands):
            self.error(node, f"`{name}` takes {len(sig.operands)} argument(s) but {len(arg_nodes)} were supplied",
                       code="RG0011")
        args = [receiver]
        for operand, arg_node in zip(sig.operands, arg_nodes):
            arg = self.expr(arg_node)
            expected = {"self": receiver.ty, "i32": I32, "u32": U32}[operand]
            self.unify(expected, arg.ty, arg_node)
            args.append(arg)
        result = {"self": receiver.ty, "bool": BOOL, "usize": USIZE, "u32": U32, "u16": PrimType("u16"), "f32": F32,
                  "f64": F64}[sig.result]
        return ir.Intrinsic(name, tuple(args), result, self.span(node))

    def _helper_call(self, node, name: str, name_node, arg_nodes):
        item = self.crate.items.get(name)
        path = self.crate.uses.path(name, self.file, name_node) if item is None or item.kind != "fn" else None
        if path is not None:  # a name a `use` gives: `use crate::m::f as g;`, `use std::cmp::max;`
            if path[-2:-1] == ("cmp",) and path[-1] in FREE_FUNCTIONS:
                return self._free_min_max(node, path[-1], arg_nodes)
            item = self.crate.items.get(path[-1])
        if item is None or item.kind != "fn":
            self.error(name_node, f"cannot find function `{name}` in this crate", "not found", code="RG0004")
        if is_kernel(item):
            self.unsupported(name_node, "calling a kernel from a kernel", "move the shared code into a helper fn")
        self.crate.reject_recursion(item, node, self.file)
        params = item.node.child_by_field_name("parameters").named_children
        params = [p for p in params if p.type == "parameter"]
        if len(params) != len(arg_nodes):
            self.error(node, f"this function takes {len(params)} argument(s) but {len(arg_nodes)} were supplied",
                       code="RG0011")
        type_params = item.node.child_by_field_name("type_parameters")
        names = [text_of(p.child_by_field_name("name") or p) for p in type_params.named_children] \
            if type_params is not None else []
        generic_vars = {n: InferVar("any") for n in names}
        args, arrays = [], []
        for position, (param, arg_node) in enumerate(zip(params, arg_nodes)):
            arg = self.expr(arg_node)
            expected = self.crate.lower_type(param.child_by_field_name("type"), item.file, generic_vars)
            length = _unsized_length(expected, arg.ty)
            if length is not None:  # `&[T; N]` → `&[T]`: the callee is instantiated for the array
                self.unify(find(expected).target.elem, find(arg.ty).target.elem, arg_node)
                arrays.append((position, length))
            args.append(self.coerce(expected, arg, arg_node) if length is None else arg)
        ret_node = item.node.child_by_field_name("return_type")
        ret = self.crate.lower_type(ret_node, item.file, generic_vars) if ret_node else UNIT
        if names:
            # The type arguments are known only once the caller's inference is done (`let y: f32 =
            # sq(2.0)` makes T = f32), so the call names a placeholder until `_instantiate_generic_calls`.
            placeholder = f"{item.name}<{len(self.generic_calls)}>"
            self.generic_calls[placeholder] = (item, [generic_vars[n] for n in names], tuple(arrays))
            return ir.Call(placeholder, tuple(args), ret, self.span(node))
        return ir.Call(self.crate.lower_callee(item, (), tuple(arrays)), tuple(args), ret, self.span(node))

    def _instantiate_generic_calls(self, root):
        """`root` with each generic call naming its instantiation, now that the caller's types are known."""
        if not self.generic_calls:
            return root
        names = {placeholder: self.crate.lower_callee(item, tuple(infer.zonk(v) for v in type_vars), arrays)
                 for placeholder, (item, type_vars, arrays) in self.generic_calls.items()}
        return irwalk.rebuild(root, lambda n: dataclasses.replace(n, func=names[n.func])
                            if isinstance(n, ir.Call) and n.func in names else None)

    # ------------------------------------------------------------ control flow

    def _expr_block(self, node):
        block = self.block(node)
        return ir.BlockExpr(block, self.span(node))

    def _expr_if_expression(self, node):
        if node.child_by_field_name("condition").type == "let_condition":
            return self._if_let_checked(node)
        cond = self.expr(node.child_by_field_name("condition"))
        self.unify(BOOL, cond.ty, node.child_by_field_name("condition"))
        return self._if_branches(node, cond, self.block(node.child_by_field_name("consequence")))

    def _if_branches(self, node, cond, then: ir.Block):
        """The `if` of `node` with its condition and first branch lowered: the `else` branch, and the type."""
        alt = node.child_by_field_name("alternative")
        if alt is None:
            self.unify(UNIT, then.ty, node.child_by_field_name("consequence"))
            return ir.If(cond, then, None, UNIT, self.span(node))
        inner = alt.named_children[0]
        if inner.type == "block":
            orelse = self.block(inner)
        else:
            nested = self.expr(inner)
            orelse = ir.Block((), nested, nested.ty, nested.span)
        ty = self.join(then.ty, orelse.ty, node)
        return ir.If(cond, then, orelse, ty, self.span(node))

    def _expr_match_expression(self, node):
        scrutinee = self.expr(node.child_by_field_name("value"))
        if not may_be_int(scrutinee.ty):
            self.unsupported(node.child_by_field_name("value"), f"`match` on `{infer.display(scrutinee.ty)}`",
                             "kernels match on integers")
        arms = []
        ty = NEVER
        for arm in node.child_by_field_name("body").named_children:
            if arm.type != "match_arm":
                continue
            pattern = arm.child_by_field_name("pattern")
            if pattern.child_by_field_name("condition") is not None:
                self.unsupported(pattern, "a match guard")
            patterns = self._patterns(pattern.named_children[0] if pattern.named_children else pattern,
                                      scrutinee.ty)
            body = self.expr(arm.child_by_field_name("value"))
            ty = self.join(ty, body.ty, arm)
            arms.append(ir.MatchArm(tuple(patterns), body, self.span(arm)))
        if not any(not a.patterns for a in arms):
            if not arms or not _covers_every_value(arms, scrutinee.ty):
                self.error(node.child_by_field_name("value"), "non-exhaustive patterns: `_` not covered",
                           code="RG0005", help="add a `_ => ...` arm")
            # Arms that cover every value (`0..=127`, `128..=255` on u8): the last takes what is left.
            # Its patterns are dropped here, so they are range-checked now (`256 =>` on a u8 is an error).
            for pattern in arms[-1].patterns:
                for value in pattern if isinstance(pattern, tuple) else (pattern,):
                    self._check_literal(value, str(value), find(scrutinee.ty), arms[-1].span)
            arms[-1] = ir.MatchArm((), arms[-1].body, arms[-1].span)
        return ir.Match(scrutinee, tuple(arms), ty, self.span(node))

    def _patterns(self, node, ty) -> list:
        if node.type == "match_pattern" or text_of(node) == "_":
            if text_of(node) == "_":
                return []
        if node.type == "or_pattern":
            out = []
            for child in node.named_children:
                out += self._patterns(child, ty)
            return out
        if node.type == "range_pattern":
            return [self._range_pattern(node, ty)]
        return [self._pattern_value(node, ty)]

    def _range_pattern(self, node, ty) -> tuple[int, int]:
        """`lo..=hi`, `lo..hi`, `lo..` and `..=hi` as the inclusive range they cover."""
        text = text_of(node).replace(" ", "")
        bounds = [self._pattern_value(c, ty) for c in node.named_children]
        inclusive = "..=" in text
        open_ended = len(bounds) == 1 and (text.endswith("..") or text.startswith("..="))
        if len(bounds) == 2:
            lo, hi = bounds[0], bounds[1] if inclusive else bounds[1] - 1
        elif open_ended and isinstance(find(ty), PrimType):
            lo, hi = int_range(find(ty))
            if text.endswith(".."):
                lo = bounds[0]
            else:
                hi = bounds[0]
        else:
            self.unsupported(node, "this range pattern", "use `lo..=hi`")
        if lo > hi:
            relation = "less than or equal to" if inclusive else "less than"
            self.error(node, f"lower bound for range pattern must be {relation} upper bound", code="RG0005")
        return lo, hi

    def _pattern_value(self, node, ty) -> int:
        if node.type in ("integer_literal", "negative_literal"):
            text = text_of(node).replace(" ", "")
            negate = text.startswith("-")
            lit = self._number(node, text.lstrip("-"), negate)
        elif node.type == "identifier":
            # A name in a pattern is a constant if one is in scope, and otherwise a new binding.
            const = self.crate.const(text_of(node))
            if const is None:
                self.unsupported(node, "a binding pattern", "match integer constants, ranges, or `_`")
            lit = ir.ConstRef(const.name, const.ty, self.span(node))
        elif node.type == "scoped_identifier":
            lit = self.expr(node)
        else:
            self.unsupported(node, f"the pattern `{text_of(node)}`", "match integer constants, ranges, or `_`")
        self.unify(ty, lit.ty, node)
        try:
            return evaluate(lit, self.crate)
        except NotConstant:
            self.error(node, "this pattern is not a constant", code="RG0005")

    def _expr_return_expression(self, node):
        value = self.expr(node.named_children[0]) if node.named_children else None
        if value is not None:
            self.coerce(self.ret, value, node)
        else:
            self.unify(self.ret, UNIT, node)
        return ir.Return(value, NEVER, self.span(node))

    # ------------------------------------------------------------ aggregates

    def _expr_struct_expression(self, node):
        name_node = node.child_by_field_name("name")
        ty = self.crate.struct_type(text_of(name_node).split("::")[-1], self.file, name_node)
        given = {}
        for init in node.child_by_field_name("body").named_children:
            if init.type == "shorthand_field_initializer":
                field_name = text_of(init)
                value = self._expr_identifier(init.named_children[0] if init.named_children else init)
            elif init.type == "field_initializer":
                field_name = text_of(init.child_by_field_name("field"))
                value = self.expr(init.child_by_field_name("value"))
            elif init.type == "base_field_initializer":
                self.unsupported(init, "struct update syntax (`..base`)")
            else:
                continue
            field = ty.field(field_name)
            if field is None:
                self.error(init, f"struct `{ty.name}` has no field named `{field_name}`", code="RG0004")
            self.unify(field.ty, value.ty, init)
            given[field_name] = value
        missing = [f.name for f in ty.fields if f.name not in given]
        if missing:
            self.error(node, f"missing field(s) {', '.join(f'`{m}`' for m in missing)} in initializer of "
                             f"`{ty.name}`", code="RG0005")
        return ir.StructLit(ty.name, tuple((f.name, given[f.name]) for f in ty.fields), ty, self.span(node))

    def _expr_tuple_expression(self, node):
        elems = tuple(self.expr(c) for c in node.named_children if c.type not in _IGNORED)
        return ir.TupleLit(elems, TupleType(tuple(e.ty for e in elems)), self.span(node))

    def _expr_unit_expression(self, node):
        return ir.TupleLit((), UNIT, self.span(node))

    def _expr_array_expression(self, node):
        children = [c for c in node.named_children if c.type not in _IGNORED]
        if any(c.type == ";" for c in node.children):
            value = self.expr(children[0])
            count = self.crate.const_usize(children[1], self.file)
            return ir.ArrayLit((value,), count, ArrayType(value.ty, count), self.span(node))
        elems = [self.expr(c) for c in children]
        if not elems:
            self.unsupported(node, "an empty array")
        for e, c in zip(elems[1:], children[1:]):
            self.unify(elems[0].ty, e.ty, c)
        return ir.ArrayLit(tuple(elems), None, ArrayType(elems[0].ty, len(elems)), self.span(node))

    # ------------------------------------------------------------ checks after inference

    def _check_literal_ranges(self, root) -> None:
        """rustc's `overflowing_literals` (deny by default), and E0600 for negated unsigned literals and
        for unary operators on operands whose type inference decided (`let z = 5; let w: u32 = -z;`)."""
        for node in irwalk.preorder(root, (ir.Lit, ir.Match, ir.Unary)):
            if isinstance(node, ir.Lit) and isinstance(node.ty, PrimType) and not node.ty.is_bool:
                self._check_literal(node.value, node.text, node.ty, node.span)
            elif isinstance(node, ir.Unary):
                ty = node.operand.ty
                ok = isinstance(ty, NeverType) or isinstance(ty, PrimType) and (
                    ty.is_signed if node.op == "-" else ty.is_int or ty.is_bool)
                if not ok:
                    self.crate.diagnostics.error("RG0005", f"cannot apply unary operator `{node.op}` to type `{ty}`",
                                                 node.span)
            elif isinstance(node, ir.Match) and isinstance(node.scrutinee.ty, PrimType):
                for arm in node.arms:
                    for pattern in arm.patterns:
                        for value in pattern if isinstance(pattern, tuple) else (pattern,):
                            self._check_literal(value, str(value), node.scrutinee.ty, arm.span)

    def _check_literal(self, value, text: str, ty: PrimType, span: ir.Span) -> None:
        if ty.is_half:
            return  # only the types' own constants: no literal is of a half type
        if ty.is_float:
            if text not in ("inf", "-inf", "nan") and math.isinf(round_float(value, ty)):
                self.crate.diagnostics.error(
                    "RG0012", f"literal out of range for `{ty}`", span,
                    help=f"the literal `{text}` does not fit into the type `{ty}` and would become infinity")
            return
        lo, hi = int_range(ty)
        if value < 0 and not ty.is_signed:
            self.crate.diagnostics.error("RG0005", f"cannot apply unary operator `-` to type `{ty}`", span,
                                         help="unsigned values cannot be negated")
        elif isinstance(value, float) or not lo <= value <= hi:
            self.crate.diagnostics.error(
                "RG0012", f"literal out of range for `{ty}`", span,
                help=f"the literal `{text}` does not fit into the type `{ty}` whose range is `{lo}..={hi}`")


def _describe(node: Node) -> str:
    if node.type == "macro_invocation":
        return f"the macro `{text_of(node.child_by_field_name('macro'))}!`"
    return _CONSTRUCT_NAMES.get(node.type, f"the construct `{node.type.replace('_', ' ')}`")


def _cast_literal(node: Node) -> Node | None:
    """The literal whose type a cast decides. rustc passes the cast's type down to an unsuffixed literal
    through parentheses, `-`, `!` and a block's tail (not through operators, `if` or `match`); returns
    the node `_number` lowers (for `-1`, the unary expression)."""
    while True:
        if node.type in ("integer_literal", "float_literal"):
            return node
        if node.type == "unary_expression" and node.children[0].type in ("-", "!"):
            operand = node.named_children[0]
            if node.children[0].type == "-" and operand.type in ("integer_literal", "float_literal"):
                return node
            node = operand
        elif node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
        elif node.type == "block":
            children = [c for c in node.named_children if c.type not in _IGNORED]
            if not children:
                return None
            node = children[-1]
            if node.type == "expression_statement":
                if node.children[-1].type == ";":
                    return None
                node = node.named_children[0]
        else:
            return None


def _covers_every_value(arms, ty) -> bool:
    ty = find(ty)
    if not isinstance(ty, PrimType) or not ty.is_int:
        return False
    lo, hi = int_range(ty)
    ranges = sorted(p if isinstance(p, tuple) else (p, p) for arm in arms for p in arm.patterns)
    for start, end in ranges:
        if start > lo:
            return False
        lo = max(lo, end + 1)
    return lo > hi


def _followed_by_semicolon(node: Node) -> bool:
    """tree-sitter parses the `;` after a block-like expression (`if c { 1 } else { 2 };`) as a
    separate empty statement; for Rust it ends the expression statement all the same."""
    sibling = node.next_named_sibling
    while sibling is not None and sibling.type in ("line_comment", "block_comment"):
        sibling = sibling.next_named_sibling
    return sibling is not None and sibling.type == "empty_statement"


def _methods_help(ty, kinds: tuple[str, ...], name: str) -> str:
    """What the RG0007 help says: the methods the receiver has in kernels (all of them, from the table of
    ir/intrinsics.py), or, for a receiver without methods, which receivers have some."""
    if kinds == ("seq",) and name in ITERATOR_METHODS:
        return (f"in kernels an iterator is only the sequence of a `for` loop: {SUPPORTED_CHAINS}; adapters such as "
                "`.map()` and `.sum()` become the loop's body (`let mut s = 0.0; for x in a.iter() { s += x; }`)")
    if not kinds:
        return "kernels call methods on numbers (the math methods of f32/f64, the integer methods) and " \
               "`len()` on slices and arrays"
    listed = ", ".join(f"`{m}`" for m in method_names(kinds))
    extra = f"; and {CHECKED_FORMS}; {_INTEGER_REWRITES.get(name, 'write other operations with operators and `if`')}" \
        if "int" in kinds else ""
    return f"the methods of `{infer.display(ty)}` in kernels are {listed}{extra}"


def _unsized_length(expected, found) -> int | None:
    """The length N where an argument `&[T; N]` (or `&mut [T; N]`) meets a parameter `&[T]` (`&mut [T]`
    only from a `&mut` array): rustc's unsizing coercion. None where there is none."""
    want, have = find(expected), find(found)
    if isinstance(want, RefType) and isinstance(have, RefType) and (have.mutable or not want.mutable) \
            and isinstance(find(want.target), SliceType) and isinstance(find(have.target), ArrayType):
        return find(have.target).length
    return None


def _receiver_kinds(ty) -> tuple[str, ...]:
    if isinstance(ty, PrimType):
        if ty.is_float:
            return ("float", "signed")
        if ty.is_int:
            return ("int", "signed") if ty.is_signed else ("int",)
        if ty.is_half:
            return ("half",)
        return ()
    if isinstance(ty, RefType):
        ty = ty.target
    if isinstance(ty, (SliceType, ArrayType)):
        return ("seq",)
    return ()


def _element_type(ty):
    if isinstance(ty, RefType):
        ty = find(ty.target)
    if isinstance(ty, (SliceType, ArrayType)):
        return ty.elem
    return None


def _diverges(stmt) -> bool:
    """Whether control never goes past `stmt`: `return;`, `break;`, `loop {}` without a `break`, an
    `if` whose branches all return, `let x = return;`."""
    value = stmt.expr if isinstance(stmt, ir.ExprStmt) else stmt.init if isinstance(stmt, ir.Let) else None
    return value is not None and isinstance(find(value.ty), NeverType)
