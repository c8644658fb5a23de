"""Affine forms of index expressions, the basis of the race-freedom proofs.

An index such as `2 * i + off + 1` becomes `Affine(coeff=2, rest={("off",): 1, (): 1})`: the
coefficient of the parallel loop variable `i`, plus a polynomial of loop-invariant atoms. Invariant
atoms are values every iteration sees the same: scalar parameters, uniform `let`s, consts, and slice
lengths. An index that is not of this shape (`i / 2`, `idx[i]`, anything involving a value that
changes between iterations in a way we cannot see) has no affine form.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import PrimType

Poly = tuple[tuple[tuple[str, ...], int], ...]  # sorted ((monomial atoms), coefficient) pairs


def _poly(d: dict) -> Poly:
    return tuple(sorted((k, v) for k, v in d.items() if v != 0))


@dataclass(frozen=True)
class Affine:
    """coeff * i + rest. `coeff` is a polynomial in invariant atoms too (`w * i` has coeff {("w",): 1})."""

    coeff: Poly
    rest: Poly

    @property
    def constant_coeff(self) -> int | None:
        d = dict(self.coeff)
        if not d:
            return 0
        if set(d) == {()}:
            return d[()]
        return None

    def minus(self, other: "Affine") -> "Affine":
        return Affine(_sub(self.coeff, other.coeff), _sub(self.rest, other.rest))

    def constant_rest(self) -> int | None:
        d = dict(self.rest)
        if not d:
            return 0
        if set(d) == {()}:
            return d[()]
        return None

    def __str__(self) -> str:
        return f"{_fmt(self.coeff)}*i + {_fmt(self.rest)}"


def _fmt(p: Poly) -> str:
    if not p:
        return "0"
    return " + ".join(f"{c}{'*' + '*'.join(m) if m else ''}" for m, c in p)


def _add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    d = dict(a)
    for k, v in b:
        d[k] = d.get(k, 0) + sign * v
    return _poly(d)


def _sub(a: Poly, b: Poly) -> Poly:
    return _add(a, b, -1)


def _mul(a: Poly, b: Poly) -> Poly:
    d: dict = {}
    for ka, va in a:
        for kb, vb in b:
            k = tuple(sorted(ka + kb))
            d[k] = d.get(k, 0) + va * vb
    return _poly(d)


class AffineAnalysis:
    """Computes affine forms within one parallel loop body.

    `index_var` is the loop variable; `invariant` the bindings whose values are the same in every
    iteration; `definitions` maps immutable locals of the body to their initializers, so that
    `let j = i + 1; a[j]` is seen as `a[i + 1]`.
    """

    def __init__(self, index_var: ir.Binding, invariant: set[ir.Binding],
                 definitions: dict[ir.Binding, ir.Expr]) -> None:
        self.index_var = index_var
        self.invariant = invariant
        self.definitions = definitions

    def form(self, expr: ir.Expr) -> Affine | None:
        if isinstance(expr, ir.Lit) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
            return Affine((), _poly({(): expr.value}))
        if isinstance(expr, ir.ConstRef):
            return Affine((), _poly({("const " + expr.name,): 1}))
        if isinstance(expr, ir.Var):
            b = expr.binding
            if b is self.index_var:
                return Affine(_poly({(): 1}), ())
            if b in self.invariant:
                return Affine((), _poly({(f"{b.name}@{id(b)}",): 1}))
            if b in self.definitions:
                return self.form(self.definitions[b])
            return None
        if isinstance(expr, ir.Intrinsic) and expr.name == "len" and isinstance(expr.args[0], ir.Var) \
                and expr.args[0].binding.kind == "param":
            b = expr.args[0].binding
            return Affine((), _poly({(f"len {b.name}@{id(b)}",): 1}))
        if isinstance(expr, ir.Cast) and _is_widening_int_cast(expr):
            return self.form(expr.operand)
        if isinstance(expr, ir.Binary) and expr.op in ("+", "-", "*"):
            a, b = self.form(expr.lhs), self.form(expr.rhs)
            if a is None or b is None:
                return None
            if expr.op == "+":
                return Affine(_add(a.coeff, b.coeff), _add(a.rest, b.rest))
            if expr.op == "-":
                return Affine(_sub(a.coeff, b.coeff), _sub(a.rest, b.rest))
            if a.coeff and b.coeff:
                return None  # i * i is not affine
            if b.coeff:
                a, b = b, a
            return Affine(_mul(a.coeff, b.rest), _mul(a.rest, b.rest))
        if isinstance(expr, ir.BlockExpr) and not expr.block.stmts and expr.block.tail is not None:
            return self.form(expr.block.tail)
        return None

    def depends_on_index(self, expr: ir.Expr) -> bool:
        from rs2gpu.ir.walk import walk

        for node in walk(expr):
            if isinstance(node, ir.Var):
                if node.binding is self.index_var:
                    return True
                if node.binding in self.definitions and self.depends_on_index(self.definitions[node.binding]):
                    return True
                if node.binding not in self.invariant and node.binding not in self.definitions:
                    return True
        return False


def _is_widening_int_cast(cast: ir.Cast) -> bool:
    """A cast that keeps distinct values distinct and offsets intact: to a type at least as wide. From a
    signed type that is sign extension, then a reinterpretation modulo 2^bits (`-1i32 as usize` is
    `usize::MAX`, which `0usize - 1` also is), so `(i - 1) as usize` and `i as usize - 1` agree."""
    src, dst = cast.operand.ty, cast.ty
    return (isinstance(src, PrimType) and isinstance(dst, PrimType) and src.is_int and dst.is_int
            and dst.bits >= src.bits)
