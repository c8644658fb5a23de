"""`for` loops over a range adapted by `.rev()` and `.step_by(s)`.

They are lowered to the one loop form the checker and the emitter know, a range loop over positions,
with the pattern's name bound to the value at each position:

    for i in (a..b).step_by(s) { ... }
    // is lowered as
    for k in 0..w / s + min(w % s, 1) { let i = a + k * s; ... }      // w = max(b, a) - a
    for i in (a..b).rev() { ... }
    // is lowered as
    for k in a..b { let i = a + (b - 1 - k); ... }

so an index such as `x[i]` stays an affine function of the loop variable, and a parallel loop's writes
are proved injective as before. A bound is lowered anew for each use: range bounds are expressions
without side effects in kernels (calls of helpers that write are not allowed there).
"""
from __future__ import annotations

from tree_sitter import Node

from rs2gpu.frontend import infer
from rs2gpu.frontend.infer import may_be_int
from rs2gpu.frontend.source import text_of
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import USIZE

RANGE_ADAPTERS = ("rev", "step_by")
_CHAINS = (("rev",), ("step_by",), ("rev", "step_by"), ("step_by", "rev"))
SUPPORTED_RANGES = "loop over `a..b`, `a..=b`, `(a..b).rev()`, `(a..=b).rev()`, `(a..b).step_by(s)` and " \
                   "`(a..b).rev().step_by(s)`"


def range_chain(value: Node) -> tuple[Node, list[tuple[str, Node, list[Node]]]] | None:
    """For `(a..b).rev().step_by(2)`: the range and its adapters in order, each (name, the name's node,
    the arguments); None where `value` is not a range with adapters of RANGE_ADAPTERS."""
    adapters = []
    node = value
    while node.type == "call_expression":
        function = node.child_by_field_name("function")
        if function.type != "field_expression":
            return None
        name_node = function.child_by_field_name("field")
        if text_of(name_node) not in RANGE_ADAPTERS:
            return None
        args = [a for a in node.child_by_field_name("arguments").named_children
                if a.type not in ("line_comment", "block_comment")]
        adapters.append((text_of(name_node), name_node, args))
        node = function.child_by_field_name("value")
        while node.type == "parenthesized_expression" and node.named_children:
            node = node.named_children[0]
    if node.type != "range_expression" or not adapters:
        return None
    return node, adapters[::-1]


class RangeLowering:
    """The `.rev()` / `.step_by()` half of `LoopLowering` (which provides `expr`, `unify`, `_loop_body`, ...)."""

    def _adapted_range_loop(self, node, pattern, range_node: Node, adapters) -> ir.For:
        if pattern.type != "identifier" and text_of(pattern) != "_":
            self.unsupported(pattern, "a pattern in a `for` loop over a range", "loop over a range with one index "
                                                                                 "variable")
        names = tuple(name for name, _, _ in adapters)
        if names not in _CHAINS:
            self.unsupported(adapters[-1][1], f"`.{names[-1]}()` after `.{names[-2]}()` on a range", SUPPORTED_RANGES)
        for name, name_node, args in adapters:
            self._arity(name_node, name, args, 1 if name == "step_by" else 0)
        bounds = range_node.named_children
        inclusive = next(c.type for c in range_node.children if c.type in ("..", "..=", "...")) != ".."
        if len(bounds) != 2:
            self.unsupported(range_node, "an open range", "give both bounds, `start..end`")
        start, end = self.expr(bounds[0]), self.expr(bounds[1])
        self.unify(start.ty, end.ty, range_node)
        if not may_be_int(start.ty):
            self.error(range_node, f"`{infer.display(start.ty)}` is not an integer range", code="RG0005")
        ty, span = start.ty, self.span(range_node)
        def relowered(bound: Node):
            value = self.expr(bound)
            self.unify(ty, value.ty, bound)
            return value

        lo, hi = (lambda: relowered(bounds[0])), (lambda: relowered(bounds[1]))

        def lit(value: int):
            return ir.Lit(value, str(value), ty, span)

        def op(symbol: str, a, b):
            return ir.Binary(symbol, a, b, ty, span)

        name = text_of(pattern)
        position = ir.Binding(f"{name}_position" if name != "_" else "position", ty, False, "loop",
                              self.span(pattern))
        k = ir.Var(position, span)
        if "step_by" not in names:
            last = hi() if inclusive else op("-", hi(), lit(1))
            value = op("+", lo(), op("-", last, k))
            loop_start, loop_end, loop_inclusive = start, end, inclusive
        else:
            if inclusive:
                self.unsupported(range_node, "`.step_by()` on an inclusive range",
                                 "step over the exclusive range `a..b + 1`")
            step_node = adapters[names.index("step_by")][2][0]

            def step():
                given = self.expr(step_node)
                self.unify(USIZE, given.ty, step_node)
                return ir.Cast(given, ty, self.span(step_node))

            def width():
                return op("-", ir.Intrinsic("max", (hi(), lo()), ty, span), lo())

            def count():  # ceil(width / step), without the overflow of `(width + step - 1) / step`
                return op("+", op("/", width(), step()), ir.Intrinsic("min", (op("%", width(), step()), lit(1)),
                                                                     ty, span))
            if names == ("step_by",):
                value = op("+", lo(), op("*", k, step()))
            elif names == ("rev", "step_by"):
                value = op("-", op("-", hi(), lit(1)), op("*", k, step()))
            else:  # `.step_by(s).rev()`: the stepped positions, last first
                value = op("+", lo(), op("*", op("-", op("-", count(), lit(1)), k), step()))
            loop_start, loop_end, loop_inclusive = lit(0), count(), False
        prologue, scope = [], {}
        if name != "_":
            binding = ir.Binding(name, ty, False, "local", self.span(pattern))
            prologue.append(ir.Let(binding, value, self.span(pattern)))
            scope[name] = binding
        body = self._loop_body(node, scope, prologue)
        return ir.For(position, loop_start, loop_end, loop_inclusive, body, self.span(node))
