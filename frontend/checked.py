"""The `checked_*` methods of the integers, in the forms whose `Option` the kernel language can hold:

    a.checked_add(b).unwrap_or(v)              // the sum, or v where it does not fit
    a.checked_div(b).is_some()                 // (and `.is_none()`)
    if let Some(x) = a.checked_sub(b) { .. } else { .. }

Each becomes the IR intrinsic `checked_op(a, b)` (whether the result is `Some`) and the wrapped result,
which that test guards: `if checked_add(a, b) { a.wrapping_add(b) } else { v }`. Operands that are not
plain names or constants are evaluated once, into `let`s, in Rust's order.
"""
from __future__ import annotations

from tree_sitter import Node

from rs2gpu.frontend.infer import InferVar, find
from rs2gpu.frontend.source import text_of
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import BOOL, PrimType

CHECKED_OPERATIONS = ("add", "sub", "mul", "div", "rem")
OPTION_USES = ("unwrap_or", "is_some", "is_none")
CHECKED_FORMS = "`a.checked_add(b).unwrap_or(v)`, `.is_some()`, `.is_none()` and `if let Some(x) = a.checked_add(b)`"


def checked_call(node: Node) -> tuple[str, Node, Node] | None:
    """For `a.checked_add(b)`: ("add", the node of a, the node of b); None for anything else."""
    if node.type != "call_expression":
        return None
    function = node.child_by_field_name("function")
    if function.type != "field_expression":
        return None
    name = text_of(function.child_by_field_name("field"))
    args = [a for a in node.child_by_field_name("arguments").named_children
            if a.type not in ("line_comment", "block_comment")]
    if not name.startswith("checked_") or name.removeprefix("checked_") not in CHECKED_OPERATIONS or len(args) != 1:
        return None
    return name.removeprefix("checked_"), function.child_by_field_name("value"), args[0]


class CheckedLowering:
    """The `checked_*` half of `FunctionLowerer` (which provides `expr`, `unify`, `block`, the scopes, ...)."""

    def _checked(self, node: Node, operation: str, lhs_node: Node, rhs_node: Node, stmts: list):
        """(`checked_op(a, b)`, the wrapped result), with `let`s for the operands added to `stmts`."""
        lhs = self.expr(lhs_node)
        ty = find(lhs.ty)
        name_node = node.child_by_field_name("function").child_by_field_name("field")
        if isinstance(ty, InferVar) and ty.kind == "int":
            self.error(name_node, f"can't call method `checked_{operation}` on ambiguous numeric type `{{integer}}`",
                       code="RG0006", help="give the value a concrete type, like `i32`, with a suffix or a type "
                                           "annotation")
        if not (isinstance(ty, PrimType) and ty.is_int):
            self.error(name_node, f"no method named `checked_{operation}` found for `{ty}` in kernels",
                       "method not found", code="RG0007", help="`checked_*` are methods of the integer types")
        lhs = self._evaluated_once(lhs, "lhs", stmts)
        rhs = self.expr(rhs_node)
        self.unify(ty, rhs.ty, rhs_node)
        rhs = self._evaluated_once(rhs, "rhs", stmts)
        span = self.span(node)
        some = ir.Intrinsic(f"checked_{operation}", (lhs, rhs), BOOL, span)
        if operation in ("div", "rem"):
            value = ir.Binary("/" if operation == "div" else "%", lhs, rhs, ty, span)
        else:
            value = ir.Intrinsic(f"wrapping_{operation}", (lhs, rhs), ty, span)
        return some, value

    def _evaluated_once(self, value, name: str, stmts: list):
        if isinstance(value, (ir.Lit, ir.ConstRef, ir.Var)):
            return value
        binding = ir.Binding(name, value.ty, False, "local", value.span)
        stmts.append(ir.Let(binding, value, value.span))
        return ir.Var(binding, value.span)

    def _option_use(self, node: Node, use: str, checked: tuple[str, Node, Node], arg_nodes: list):
        """`a.checked_op(b).use(..)`, for `use` in OPTION_USES."""
        stmts: list = []
        some, value = self._checked(node.child_by_field_name("function").child_by_field_name("value"), *checked,
                                    stmts)
        span = self.span(node)
        expected = 1 if use == "unwrap_or" else 0
        if len(arg_nodes) != expected:
            self.error(node, f"`{use}` takes {expected} argument(s) but {len(arg_nodes)} were supplied", code="RG0011")
        if use == "is_some":
            result = some
        elif use == "is_none":
            result = ir.Unary("!", some, BOOL, span)
        else:
            fallback = self.expr(arg_nodes[0])
            self.unify(value.ty, fallback.ty, arg_nodes[0])
            fallback = self._evaluated_once(fallback, "fallback", stmts)
            result = ir.If(some, ir.Block((), value, value.ty, span), ir.Block((), fallback, value.ty, span),
                           value.ty, span)
        return _with_lets(stmts, result, span)

    def _if_let_checked(self, node: Node):
        """`if let Some(x) = a.checked_op(b) { .. } else { .. }`."""
        condition = node.child_by_field_name("condition")
        pattern, value_node = condition.child_by_field_name("pattern"), condition.child_by_field_name("value")
        checked = checked_call(value_node)
        parts = [c for c in pattern.children if c.type not in ("(", ")", ",")]
        if checked is None or pattern.type != "tuple_struct_pattern" or len(parts) != 2 \
                or text_of(parts[0]) != "Some" or parts[1].type not in ("identifier", "_"):
            self.unsupported(condition, "`if let`", f"kernels hold an `Option` only as {CHECKED_FORMS}; otherwise "
                             "test a condition with `if`, or `match` on an integer: `x.get(i)` is "
                             "`if i < x.len() { x[i] } else { ... }`")
        stmts: list = []
        some, value = self._checked(value_node, *checked, stmts)
        span = self.span(node)
        scope: dict = {}
        prologue = []
        if parts[1].type == "identifier":
            binding = ir.Binding(text_of(parts[1]), value.ty, False, "local", self.span(parts[1]))
            prologue.append(ir.Let(binding, value, self.span(parts[1])))
            scope[binding.name] = binding
        self.scopes.append(scope)
        try:
            then = self.block(node.child_by_field_name("consequence"))
        finally:
            self.scopes.pop()
        then = ir.Block((*prologue, *then.stmts), then.tail, then.ty, then.span)
        return _with_lets(stmts, self._if_branches(node, some, then), span)


def _with_lets(stmts: list, result, span):
    if not stmts:
        return result
    return ir.BlockExpr(ir.Block(tuple(stmts), result, result.ty, span), span)
