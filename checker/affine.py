"""Affine forms of index expressions, and the proof that a write index is injective.

An index such as `(k * ny + j) * nx + i + 1` becomes an `Affine`: one coefficient per loop variable
(here i: 1, j: nx, k: ny·nx) plus a rest, each a polynomial in loop-invariant atoms. Invariant atoms
are values every iteration sees the same: scalar parameters, uniform `let`s, consts, slice lengths.
An index that is not of this shape (`i / 2`, `idx[i]`, `i * i`) has no affine form.

Injectivity is proved the way a mixed-radix number is unique: ordering the variables by stride, each
stride must exceed the largest offset all smaller strides can reach,
    c_d ≥ 1 + Σ_{e before d} c_e · (extent_e − 1).
An inequality between polynomials is proven when every coefficient of the difference is non-negative
and every atom is known to be non-negative (lengths, unsigned values); otherwise it becomes a check
the runtime evaluates before the launch.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import ArrayType, PrimType, RefType

Monomial = tuple[str, ...]
Poly = tuple[tuple[Monomial, int], ...]  # sorted (monomial, coefficient) pairs, no zero coefficients


def poly(d: dict) -> Poly:
    return tuple(sorted((k, v) for k, v in d.items() if v != 0))


def constant(value: int) -> Poly:
    return poly({(): value})


def add(a: Poly, b: Poly, sign: int = 1) -> Poly:
    d = dict(a)
    for k, v in b:
        d[k] = d.get(k, 0) + sign * v
    return poly(d)


def sub(a: Poly, b: Poly) -> Poly:
    return add(a, b, -1)


def mul(a: Poly, b: Poly) -> Poly:
    d: dict = {}
    for ka, va in a:
        for kb, vb in b:
            k = tuple(sorted(ka + kb))
            d[k] = d.get(k, 0) + va * vb
    return poly(d)


def constant_value(p: Poly) -> int | None:
    d = dict(p)
    if not d:
        return 0
    return d[()] if set(d) == {()} else None


def degree(p: Poly) -> int:
    return max((len(m) for m, _ in p), default=0)


@dataclass(frozen=True)
class Affine:
    """Σ coeffs[v] · v + rest, with `coeffs` keyed by the loop variable's `node_id` (or a gather's key)
    and sorted."""

    coeffs: tuple[tuple[int, Poly], ...]
    rest: Poly

    def coeff(self, var_id: int) -> Poly:
        return dict(self.coeffs).get(var_id, ())

    def minus(self, other: "Affine") -> "Affine":
        keys = set(dict(self.coeffs)) | set(dict(other.coeffs))
        coeffs = tuple(sorted((k, c) for k in keys if (c := sub(self.coeff(k), other.coeff(k)))))
        return Affine(coeffs, sub(self.rest, other.rest))


def _combine(a: Affine, b: Affine, sign: int) -> Affine:
    keys = set(dict(a.coeffs)) | set(dict(b.coeffs))
    coeffs = tuple(sorted((k, c) for k in keys if (c := add(a.coeff(k), b.coeff(k), sign))))
    return Affine(coeffs, add(a.rest, b.rest, sign))


def _scale(a: Affine, factor: Poly) -> Affine:
    coeffs = tuple(sorted((k, c) for k, v in a.coeffs if (c := mul(v, factor))))
    return Affine(coeffs, mul(a.rest, factor))


@dataclass(frozen=True)
class LoopVar:
    """A loop variable an index may depend on: a thread dimension of the parallel loop, or the variable
    of a sequential loop inside the body. `extent` is its number of values (None when it is not
    invariant, e.g. a triangular `for k in 0..i`)."""

    binding: ir.Binding
    extent: Poly | None
    thread: bool


class AffineAnalysis:
    """Affine forms within one parallel loop body.

    `loop_vars` are the thread dimensions and the enclosed sequential loop variables; `invariant` the
    bindings whose values are the same in every iteration; `definitions` maps immutable locals of the
    body to their initializers, so that `let j = i + 1; a[j]` is seen as `a[i + 1]`.
    """

    def __init__(self, loop_vars: list[LoopVar], invariant: set[ir.Binding],
                 definitions: dict[ir.Binding, ir.Expr], functions: dict[str, ir.Function] | None = None,
                 consts: dict[str, ir.Expr] | None = None) -> None:
        self.functions = functions or {}
        self.consts = consts or {}  # the crate's `const` items by name: their values, as the source writes them
        self.loop_vars = {v.binding.node_id: v for v in loop_vars}
        self.invariant = invariant
        self.definitions = definitions
        self.atoms: dict[str, ir.Expr] = {}  # atom name → an IR expression of its value, for launch checks
        self.gathers: dict[int, Gather] = {}  # pseudo loop variables: values loaded from an index list
        self._names: dict[str, str] = {}
        self.non_negative: set[str] = set()
        self.upper_bounds: dict[str, tuple[Poly, ...]] = {}  # atom → polynomials it never exceeds

    def set_loop_vars(self, loop_vars: list[LoopVar]) -> None:
        """Extents are computed with this analysis before the loop variables are known to it, since a
        bound that mentions a loop variable has no invariant extent."""
        self.loop_vars = {v.binding.node_id: v for v in loop_vars}

    def _atom(self, key: str, expr: ir.Expr, non_negative: bool) -> Affine:
        # Atoms are named in order of first use (`key` tells bindings apart by identity), so the order of
        # factors in the polynomials, and in the manifest, is the same on every run.
        name = self._names.get(key)
        if name is None:
            name = self._names[key] = f"{len(self._names):04d} {key.split('@')[0]}"
        self.atoms.setdefault(name, expr)
        if non_negative:
            self.non_negative.add(name)
        return Affine((), poly({(name,): 1}))

    def form(self, expr: ir.Expr) -> Affine | None:
        if isinstance(expr, ir.Lit) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
            return Affine((), constant(expr.value))
        if isinstance(expr, ir.ConstRef):
            # a const of a known integer value is that value (`HEAD_DIM / 2`), so proofs can use it
            value = self.form(self.consts[expr.name]) if expr.name in self.consts else None
            if value is not None and not value.coeffs and constant_value(value.rest) is not None:
                return value
            return self._atom("const " + expr.name, expr, _unsigned(expr.ty))
        if isinstance(expr, ir.Var):
            b = expr.binding
            if b.node_id in self.loop_vars:
                return Affine(((b.node_id, constant(1)),), ())
            if b in self.invariant:
                return self._atom(f"{b.name}@{b.node_id}", expr, _unsigned(b.ty))
            if b in self.definitions:
                return self.form(self.definitions[b])
            return None
        if isinstance(expr, ir.Intrinsic) and expr.name == "len" and isinstance(_referent(expr.args[0].ty), ArrayType):
            return Affine((), constant(_referent(expr.args[0].ty).length))
        if isinstance(expr, ir.Intrinsic) and expr.name == "len" and isinstance(expr.args[0], ir.Var) \
                and expr.args[0].binding.kind == "param":
            b = expr.args[0].binding
            return self._atom(f"len {b.name}@{b.node_id}", expr, True)
        if isinstance(expr, ir.Field) and isinstance(expr.base, ir.Var) and expr.base.binding in self.invariant:
            b = expr.base.binding
            return self._atom(f"{b.name}@{b.node_id}.{expr.name}", expr, _unsigned(expr.ty))
        if isinstance(expr, ir.Call) and expr.func in self.functions:
            inlined = inline_call(self.functions[expr.func], expr.args)
            return self.form(inlined) if inlined is not None else None
        if isinstance(expr, ir.Cast) and (_is_widening_int_cast(expr) or _is_wrapping_identity(expr)
                                          or self._gather(expr.operand) is not None):
            return self.form(expr.operand)
        if isinstance(expr, ir.Cast) and _is_int(expr.ty) and _is_int(expr.operand.ty):
            return self._invariant_atom("cast", expr, (expr.operand,))
        if isinstance(expr, ir.Intrinsic) and expr.name == "min" and _is_int(expr.ty):
            atom = self._invariant_atom("min", expr, expr.args)
            if atom is not None:  # min(a, b) ≤ a and ≤ b: what proves `zip`'s accesses in bounds
                self.upper_bounds[atom.rest[0][0][0]] = tuple(self.form(a).rest for a in expr.args)
            return atom
        gather = self._gather(expr)
        if gather is not None:
            return Affine(((gather.key, constant(1)),), ())
        if isinstance(expr, ir.Binary) and expr.op in ("+", "-", "*"):
            a, b = self.form(expr.lhs), self.form(expr.rhs)
            if a is None or b is None:
                return None
            if expr.op == "+":
                return _combine(a, b, 1)
            if expr.op == "-":
                return _combine(a, b, -1)
            if a.coeffs and b.coeffs:
                return None  # i * j is not affine
            if b.coeffs:
                a, b = b, a
            return _scale(a, b.rest)
        if isinstance(expr, ir.Binary) and expr.op in ("/", "%") and _is_int(expr.ty):
            a, b = self.form(expr.lhs), self.form(expr.rhs)  # two constants (a const's `N / 2`), as Rust divides
            x = constant_value(a.rest) if a is not None and not a.coeffs else None
            y = constant_value(b.rest) if b is not None and not b.coeffs else None
            if x is not None and y is not None and x >= 0 and y > 0:
                return Affine((), constant(x // y if expr.op == "/" else x % y))
            return None
        if isinstance(expr, ir.BlockExpr) and not expr.block.stmts and expr.block.tail is not None:
            return self.form(expr.block.tail)
        return None

    def _invariant_atom(self, kind: str, expr: ir.Expr, operands) -> Affine | None:
        """`expr`, a function of invariant `operands` that is not itself affine (a narrowing cast, a
        minimum), as an atom of its own: the same value in every iteration, evaluated by the host."""
        forms = [self.form(o) for o in operands]
        if any(f is None or f.coeffs for f in forms):
            return None
        key = f"{kind} {expr.ty} " + " ".join(repr(f.rest) for f in forms)
        return self._atom(key, expr, _unsigned(expr.ty))

    def _gather(self, expr: ir.Expr) -> "Gather | None":
        """`idx[ii + k]` with `idx` a read-only integer slice parameter and one thread variable: the loaded
        value behaves like a loop variable whose values the runtime proves distinct before launch."""
        if not (isinstance(expr, ir.Index) and isinstance(expr.base, ir.Var) and expr.base.binding.kind == "param"
                and isinstance(expr.base.ty, RefType) and not expr.base.ty.mutable
                and isinstance(expr.ty, PrimType) and expr.ty.is_int):
            return None
        position = self.form(expr.index)
        thread = [v for v in self.loop_vars.values() if v.thread]
        if position is None or len(thread) != 1 or position.coeffs != ((thread[0].binding.node_id, constant(1)),):
            return None
        key = hash(("gather", expr.base.binding.node_id, position.rest))
        gather = self.gathers.setdefault(key, Gather(key, expr.base.binding, thread[0].binding, position.rest))
        return gather

    def extent(self, start: ir.Expr, end: ir.Expr, inclusive: bool) -> Poly | None:
        a, b = self.form(start), self.form(end)
        if a is None or b is None or a.coeffs or b.coeffs:
            return None
        return add(sub(b.rest, a.rest), constant(1 if inclusive else 0))

    # ------------------------------------------------------------ injectivity

    def injectivity(self, form: Affine) -> "Injectivity":
        """Whether distinct iterations of the thread dimensions write distinct elements at `form`."""
        gathered = [k for k, _ in form.coeffs if k in self.gathers]
        if gathered:
            if len(form.coeffs) == 1 and constant_value(form.coeffs[0][1]) not in (None, 0):
                return Injectivity(True, index_list=self.gathers[gathered[0]])
            return Injectivity(False)
        thread_vars = [v for v in self.loop_vars.values() if v.thread]
        missing = [v.binding.name for v in thread_vars if not form.coeff(v.binding.node_id)]
        if missing:
            return Injectivity(False, independent_of=missing)
        coeffs = dict(form.coeffs)  # in loop order (not id order), so the choice below is the same every run
        # a variable that takes at most one value (`for j in 0..1`) never tells two iterations apart
        used = [(v, coeffs[k]) for k, v in self.loop_vars.items()
                if k in coeffs and not (v.extent is not None and _at_most_one(v.extent))]
        if len(used) == 1 and used[0][0].thread:
            c = constant_value(used[0][1])
            if c is not None:
                return Injectivity(True)  # c·i + d with a constant c != 0
        if any(any(k < 0 for _, k in c) for _, c in used):
            return Injectivity(False)
        best = None
        for order in permutations(used):
            if any(var.extent is None for var, _ in order[:-1]):
                continue  # the largest stride's extent does not matter; every other one does
            needed = []
            reach: Poly = ()
            for position, (var, coeff) in enumerate(order):
                needed.append(sub(sub(coeff, constant(1)), reach))
                if position + 1 < len(order):
                    reach = add(reach, mul(coeff, sub(var.extent, constant(1))))
            unproven = [p for p in needed if not self._proven_non_negative(p)]
            if not unproven:
                return Injectivity(True)
            candidate = (len(unproven), sum(degree(c) for _, c in order), unproven)
            if best is None or candidate[:2] < best[:2]:
                best = candidate
        if best is None:
            return Injectivity(False)
        return Injectivity(True, launch_checks=tuple(best[2]))

    def paired_injectivity(self, form: Affine, offset: int) -> "Injectivity":
        """Whether two writes of each iteration, at `form` and `form + offset` (`offset` > 0), meet no write
        of another iteration: the same question as `injectivity` of `form + offset * w` with `w` a
        variable of two values (`out[at]` and `out[at + HALF]` of a rotary embedding are `at + HALF * w`)."""
        pair = LoopVar(_PAIR, constant(2), False)
        self.loop_vars[_PAIR.node_id] = pair  # last: the order `injectivity` tries variables in
        try:
            return self.injectivity(Affine(tuple(sorted((*form.coeffs, (_PAIR.node_id, constant(offset))))),
                                           form.rest))
        finally:
            del self.loop_vars[_PAIR.node_id]

    def row_overlap(self, form: Affine) -> "RowOverlap | None":
        """A write `j * w + i` whose stride-1 variable `i` takes more values than the row stride `w`, for
        every value of the sizes: iterations (j, i = start + w) and (j + 1, i = start) write one element as
        soon as `j` takes two values. One of the two is a thread dimension, so two threads write it."""
        coeffs = dict(form.coeffs)
        for inner_key, unit in coeffs.items():
            inner = self.loop_vars.get(inner_key)
            if inner is None or inner.extent is None or constant_value(unit) != 1:
                continue
            for outer_key, stride in coeffs.items():
                outer = self.loop_vars.get(outer_key)
                if outer_key == inner_key or outer is None or not (inner.thread or outer.thread) \
                        or outer.extent is None or _at_most_one(outer.extent):
                    continue  # without a second value of `j`, rows never meet
                if self._proven_non_negative(stride) and \
                        self._proven_non_negative(sub(inner.extent, add(stride, constant(1)))):
                    return RowOverlap(outer.binding.name, inner.binding.name, self.poly_text(stride),
                                      self.poly_text(inner.extent))
        return None

    def poly_text(self, p: Poly) -> str:
        """A polynomial over invariant atoms in Rust's words, as the source spells its parts: `nx + 1`."""
        terms = []
        for monomial, k in sorted(p, key=lambda term: not term[0]):  # the constant last: `nx + 1`
            factors = [_rust_text(self.atoms[atom]) for atom in monomial]
            if not factors:
                text = str(abs(k))
            else:
                text = " * ".join(([str(abs(k))] if abs(k) != 1 else []) + factors)
            terms.append((k < 0, text))
        if not terms:
            return "0"
        out = ("-" if terms[0][0] else "") + terms[0][1]
        return out + "".join(f" {'-' if negative else '+'} {text}" for negative, text in terms[1:])

    def read_disjoint(self, read: Affine, write: Affine, launch_checks: list, span) -> bool:
        """True when a read at `read` can only see the element its own iteration writes at `write`, or
        elements no iteration writes there. Unproven but decidable conditions go to `launch_checks`."""
        if read == write:
            return True
        diff = read.minus(write)
        if diff.coeffs:
            return False  # different strides: the two index sets interleave in ways not analysed here
        used = [(self.loop_vars.get(k), c) for k, c in write.coeffs]
        if any(v is None or v.extent is None for v, _ in used) or any(any(k < 0 for _, k in c) for _, c in used):
            return False
        offset = diff.rest
        fixed = constant_value(offset)
        if fixed is not None and len(used) == 1 and constant_value(used[0][1]) not in (None, 0) \
                and fixed % constant_value(used[0][1]) != 0:
            return True  # c·i + d and c·i + d + δ with δ not a multiple of c never meet
        # every written element lies within [low, low + span); the read must fall outside that run
        span_poly: Poly = constant(1)
        for var, coeff in used:
            span_poly = add(span_poly, mul(coeff, sub(var.extent, constant(1))))
        for side in (offset, mul(offset, constant(-1))):
            if all(k >= 0 for _, k in side):
                needed = sub(side, span_poly)
                if self._proven_non_negative(needed):
                    return True
                if fixed is not None:
                    return False  # a constant offset within a loop of unknown length: a plain race
                launch_checks.append((needed, span))
                return True
        return False

    def proven_non_negative(self, p: Poly) -> bool:
        return self._proven_non_negative(p)

    def _proven_non_negative(self, p: Poly) -> bool:
        if all(k >= 0 for _, k in p) and all(a in self.non_negative for m, _ in p for a in m):
            return True
        # p = q − k·m with m ≤ b (a minimum and one of its operands): p ≥ q − k·b, so that suffices
        for monomial, k in p:
            if k < 0 and len(monomial) == 1 and monomial[0] in self.upper_bounds:
                rest = tuple(term for term in p if term[0] != monomial)
                if any(self._proven_non_negative(add(rest, mul(constant(k), bound)))
                       for bound in self.upper_bounds[monomial[0]]):
                    return True
        return False


def inline_call(callee: ir.Function, args: tuple[ir.Expr, ...]) -> ir.Expr | None:
    """The value of a call to a helper made only of immutable `let`s and a tail expression, written in
    the caller's terms (`phi_index(dims, z, g, m)` → `m + dims.num_m * (g + dims.num_g * z)`)."""
    from rs2gpu.ir.walk import rebuild

    if callee.body.tail is None or not all(isinstance(s, ir.Let) and not s.binding.mutable and s.init is not None
                                           for s in callee.body.stmts):
        return None
    values: dict[ir.NodeId, ir.Expr] = {p.node_id: a for p, a in zip(callee.params, args)}

    def substitute(expr: ir.Expr) -> ir.Expr:
        return rebuild(expr, lambda n: values.get(n.binding.node_id) if isinstance(n, ir.Var) else None)

    for let in callee.body.stmts:
        values[let.binding.node_id] = substitute(let.init)
    return substitute(callee.body.tail)


@dataclass(frozen=True)
class Gather:
    """The value `list[var + offset]`, for each iteration of the thread variable `var`."""

    key: int
    list_param: ir.Binding
    var: ir.Binding
    offset: Poly


@dataclass(frozen=True)
class Injectivity:
    proven: bool
    launch_checks: tuple[Poly, ...] = ()  # each must be ≥ 0 at launch for the proof to hold
    independent_of: tuple[str, ...] | list = ()
    index_list: Gather | None = None      # proven if the runtime finds this list's values distinct


@dataclass(frozen=True)
class RowOverlap:
    """Rows of a write `j * w + i` that overlap: `i` takes `trip_count` values, more than the row `stride`."""
    outer: str
    inner: str
    stride: str
    trip_count: str


@dataclass(frozen=True)
class _PairOfWrites:
    """The variable that tells two writes of one iteration apart (`AffineAnalysis.paired_injectivity`)."""

    name: str = "the second write"
    node_id: int = -1  # no IR node's id: those count up from zero


_PAIR = _PairOfWrites()


def _at_most_one(extent: Poly) -> bool:
    value = constant_value(extent)
    return value is not None and value <= 1


def _rust_text(expr: ir.Expr) -> str:
    """An invariant value (an atom of a polynomial) as Rust source spells it."""
    if isinstance(expr, ir.Var):
        return expr.binding.name
    if isinstance(expr, ir.ConstRef):
        return expr.name
    if isinstance(expr, ir.Lit):
        return expr.text
    if isinstance(expr, ir.Field):
        return f"{_rust_text(expr.base)}.{expr.name}"
    if isinstance(expr, ir.Intrinsic):
        receiver, *args = expr.args
        return f"{_rust_text(receiver)}.{expr.name}({', '.join(map(_rust_text, args))})"
    if isinstance(expr, ir.Cast):
        return f"({_rust_text(expr.operand)} as {expr.ty})"
    if isinstance(expr, ir.Binary):
        return f"({_rust_text(expr.lhs)} {expr.op} {_rust_text(expr.rhs)})"
    if isinstance(expr, ir.Unary):
        return f"{expr.op}{_rust_text(expr.operand)}"
    return "_"


def _unsigned(ty) -> bool:
    return isinstance(ty, PrimType) and ty.is_int and not ty.is_signed


def _referent(ty):
    return ty.target if isinstance(ty, RefType) else ty


def _is_int(ty) -> bool:
    return isinstance(ty, PrimType) and ty.is_int


def _is_wrapping_identity(cast: ir.Cast) -> bool:
    """`x as usize` (or `as u64`) of a signed integer is x modulo 2^64, the arithmetic every affine form
    already stands for: a negative x becomes an index past any slice's end, which is the panic Rust
    raises. For a 64-bit x that holds after any wrapping arithmetic inside it; a narrower x wraps at its
    own width first, so only a plain variable (`i as usize` with `i: i32`) is the same number."""
    src, dst = cast.operand.ty, cast.ty
    if not (_is_int(src) and src.is_signed and _is_int(dst) and not dst.is_signed and dst.bits == 64):
        return False
    return src.bits == 64 or isinstance(cast.operand, ir.Var)


def _is_widening_int_cast(cast: ir.Cast) -> bool:
    src, dst = cast.operand.ty, cast.ty
    return (isinstance(src, PrimType) and isinstance(dst, PrimType) and src.is_int and dst.is_int
            and dst.bits >= src.bits and (not src.is_signed or dst.is_signed))
