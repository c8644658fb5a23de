"""The host's bounds checks of a launch: whether every access that every iteration makes stays in its
slice, and if not, which access Rust's panic names.

The checker gives each such access the range of its indices (`low`, `high`: polynomials of the
arguments) and its index as an affine function of the loop variables (`index`, see `ir.plan.IndexForm`).
The common case, every range inside its slice, is one generated expression. Only when it fails does the
runtime look closer: Rust panics at the first access out of bounds in its sequential run, which is the
earliest iteration of the loop nest (outermost loop slowest) that has one, and in that iteration the
first such access in evaluation order, sequential inner loops included. For each access the runtime
finds its first failing iteration exactly, and the earliest of those is the panic:

- an index is `base + Σ c_j·x_j` over a box of loop offsets `0 <= x_j < n_j` (in Rust's order), out of
  bounds where it is below 0 or at least the length. The lexicographically first offsets with
  `index <= t` (or `>= t`) follow dimension by dimension: the smallest `x_j` for which the rest of the box
  can still reach `t` with its most favourable values. That is a few integer operations per dimension,
  whatever the iteration space.
- an index is usize arithmetic, so Rust computes it modulo 2^64. Where its range crosses a multiple of
  2^64 above zero, or reaches below -2^64 + len, a wrapped value can land back inside the slice; those
  accesses (an index past 2^64 in the Rust code, which no real kernel has) are scanned in Rust's order,
  2^18 iterations at a time with numpy's wrapping uint64 arithmetic, stopping at the first failure: about
  10 ns per iteration scanned, and only on this path, which raises a panic anyway unless the wrap saves it.
"""
from __future__ import annotations

from typing import Callable

from rs2gpu.ir.abi import BoundsCheck, Poly
from rs2gpu.runtime.hostexpr import Environment, evaluate, wrap

U64 = 1 << 64
SCAN_CHUNK = 1 << 18  # iterations one numpy step of the wrapping scan computes


def poly_value(terms: Poly, env: Environment) -> int:
    """Σ coefficient · Π factors with exact integers (the ABI's polynomials)."""
    return sum(t.coefficient * _product(evaluate(f, env) for f in t.factors) for t in terms)


def _product(values) -> int:
    out = 1
    for v in values:
        out *= v
    return out


def simple_source(expr: dict) -> str | None:
    """Python source for the simple host expressions bounds are made of (None: not simple)."""
    if "lit" in expr and isinstance(expr["lit"], int) and not isinstance(expr["lit"], bool):
        return repr(expr["lit"])
    for key, table in (("len", "lengths"), ("param", "params"), ("local", "locals")):
        if key in expr and isinstance(expr[key], str):
            return f"env.{table}[{expr[key]!r}]"
    return None


def _poly_source(terms: Poly) -> str | None:
    """Python source for a polynomial of simple host expressions (None: a factor is not simple)."""
    parts = []
    for t in terms:
        sources = [simple_source(f) for f in t.factors]
        if None in sources:
            return None
        parts.append("*".join([repr(t.coefficient), *sources]))
    return "(" + " + ".join(parts or ["0"]) + ")"


def compile_ranges(bounds: tuple[BoundsCheck, ...]) -> Callable[[Environment], bool] | None:
    """One expression that is true when every access is in bounds (then no check needs a closer look);
    None when some bound is not a plain polynomial of lengths, parameters and preamble values."""
    conditions = []
    for check in bounds:
        low, high = _poly_source(check.low), _poly_source(check.high)
        exact = [(_poly_source(e.bound), e.low, e.high) for e in check.exact]
        if low is None or high is None or any(bound is None for bound, _, _ in exact):
            return None
        conditions += [f"{least} <= {bound} <= {greatest}" for bound, least, greatest in exact]
        conditions.append(f"{low} >= 0 and {high} < env.lengths[{check.param!r}]")
    if not conditions:
        return lambda env: True
    # the accesses of a nest share its loops' bounds: each condition once
    return eval("lambda env: " + " and ".join(dict.fromkeys(conditions)), {})  # noqa: S307 - from the manifest above


def ranges_hold(bounds: tuple[BoundsCheck, ...], env: Environment) -> bool:
    """What `compile_ranges`' expression tells, for bounds that are not plain polynomials of lengths,
    parameters and preamble values (a struct's field, a cast): every access stays in its slice."""
    return all(all(e.low <= poly_value(e.bound, env) <= e.high for e in check.exact)
               and poly_value(check.low, env) >= 0 and poly_value(check.high, env) < env.lengths[check.param]
               for check in bounds)


def may_leave(check: BoundsCheck, env: Environment) -> bool:
    """Whether the range of an access's indices leaves its slice while every loop around it runs, or may
    (a loop bound wraps in its type): for a conditional access, a reason to check it on the device (the
    branch may never run there)."""
    if not all(e.low <= poly_value(e.bound, env) <= e.high for e in check.exact):
        return True
    if not all(poly_value(extent, env) > 0 for extent in check.extents):
        return False
    return poly_value(check.low, env) < 0 or poly_value(check.high, env) >= env.lengths[check.param]


def first_out_of_bounds(bounds: tuple[BoundsCheck, ...], env: Environment, axes: list[str],
                        starts: dict[str, int], counts: dict[str, int]) -> tuple[BoundsCheck, int] | None:
    """The check whose access Rust's panic names, and the index it names; None when every access stays in
    its slice. `axes` are the launch's grid axes, outermost dimension first; `starts` and `counts` its
    iteration space."""
    first = None
    for check in bounds:
        access = _Access(check, env, axes, starts, counts)
        if access.never_runs:
            continue
        offsets = access.first_failure()
        if offsets is None:
            continue
        order = access.order(offsets)
        if first is None or order < first[0]:
            first = (order, check, access.index(offsets))
    return None if first is None else (first[1], first[2])


def _place(at: tuple[int, int]) -> int:
    """A (line, column) of the evaluation order as one comparable number."""
    return at[0] << 32 | at[1]


class _Access:
    """One check's access with this call's values: its index is `base + Σ coefficients[j] · x_j` for the
    loop offsets `0 <= x_j < extents[j]`, the thread dimensions first (outermost first), then the
    sequential loops around the access (outermost first)."""

    def __init__(self, check: BoundsCheck, env: Environment, axes: list[str], starts: dict[str, int],
                 counts: dict[str, int]) -> None:
        index = check.index
        self.length = env.lengths[check.param]
        self.dims = len(axes)
        firsts, self.extents = [starts[axis] for axis in axes], [counts[axis] for axis in axes]
        for loop in index.loops:  # Rust computes the bounds in the loop variable's type
            first, end = (wrap(poly_value(bound, env), loop.type) for bound in (loop.start, loop.end))
            firsts.append(first)
            self.extents.append(max(0, end - first + (1 if loop.inclusive else 0)))
        self.never_runs = not all(n > 0 for n in self.extents)
        self.coefficients = [poly_value(c, env) for c in index.axes] + \
            [poly_value(loop.coefficient, env) for loop in index.loops]
        self.base = poly_value(index.rest, env) + sum(c * s for c, s in zip(self.coefficients, firsts))
        self.places = [_place(loop.at) for loop in index.loops] + [_place(index.at)]

    def index(self, offsets: list[int]) -> int:
        """The index Rust computes (usize arithmetic wraps) at these offsets."""
        return (self.base + sum(c * x for c, x in zip(self.coefficients, offsets))) % U64

    def order(self, offsets: list[int]) -> list[int]:
        """Where the access at these offsets comes in Rust's run: the iteration of the nest, then the
        place of each loop around it and its offset, then the place of the access."""
        key = offsets[:self.dims]
        for place, offset in zip(self.places, offsets[self.dims:]):
            key += [place, offset]
        return key + [self.places[-1]]

    def first_failure(self) -> list[int] | None:
        """The first offsets (in Rust's order) at which the index is out of bounds, or None."""
        return first_failing_offsets(self.base, self.coefficients, self.extents, self.length)


def first_failing_offsets(base: int, coefficients: list[int], extents: list[int], length: int) -> list[int] | None:
    """The lexicographically first offsets `0 <= x_j < extents[j]` at which the index
    `(base + Σ coefficients[j] · x_j) mod 2^64` is at least `length`, or None."""
    spans = [c * (n - 1) for c, n in zip(coefficients, extents)]
    low = base + sum(min(0, s) for s in spans)
    high = base + sum(max(0, s) for s in spans)
    if low >= 0 and high < length:
        return None
    if low < length - U64 or high >= U64:  # some wrapped index may be inside the slice
        return _scan(base % U64, [c % U64 for c in coefficients], extents, length)
    # no index wraps back inside: out of bounds is below 0 (an index past the end once wrapped) or past it
    candidates = [_first_at_most(base, coefficients, extents, -1),
                  _first_at_most(-base, [-c for c in coefficients], extents, -length)]
    found = [c for c in candidates if c is not None]
    return min(found) if found else None


def _first_at_most(base: int, coefficients: list[int], extents: list[int], bound: int) -> list[int] | None:
    """The lexicographically first offsets in the box with `base + Σ c_j·x_j <= bound`, or None."""
    reach = [0] * (len(extents) + 1)  # reach[j]: the least the dimensions from j on can add
    for j in reversed(range(len(extents))):
        reach[j] = reach[j + 1] + min(0, coefficients[j] * (extents[j] - 1))
    if base + reach[0] > bound:
        return None
    offsets = []
    for j, c in enumerate(coefficients):
        room = bound - base - reach[j + 1]  # c·x_j may be at most this, the later dimensions doing their least
        x = 0 if c >= 0 else max(0, -(-room // c))  # for c < 0: the least x with c·x <= room
        offsets.append(x)
        base += c * x
    return offsets


def _scan(base: int, coefficients: list[int], extents: list[int], length: int) -> list[int] | None:
    """The first offsets at which `(base + Σ c_j·x_j) mod 2^64 >= length`, every value already modulo
    2^64, by computing the indices in Rust's order (chunks of the innermost dimensions at a time)."""
    import numpy as np

    def first(j: int, base: int) -> list[int] | None:
        inner = _product(extents[j:])
        if inner <= SCAN_CHUNK or j == len(extents) - 1:
            for begin in range(0, inner, SCAN_CHUNK):
                linear = np.arange(begin, min(inner, begin + SCAN_CHUNK), dtype=np.uint64)
                index = np.full(linear.size, base, dtype=np.uint64)
                rest = linear.copy()
                for k in reversed(range(j, len(extents))):
                    index += np.uint64(coefficients[k]) * (rest % np.uint64(extents[k]))
                    rest //= np.uint64(extents[k])
                out = np.flatnonzero(index >= np.uint64(length))
                if out.size:
                    return _digits(begin + int(out[0]), extents[j:])
            return None
        for x in range(extents[j]):
            found = first(j + 1, (base + coefficients[j] * x) % U64)
            if found is not None:
                return [x] + found
        return None

    return first(0, base)


def _digits(linear: int, extents: list[int]) -> list[int]:
    """The offsets of the `linear`-th point of a box in lexicographic order."""
    out = []
    for n in reversed(extents):
        linear, x = divmod(linear, n)
        out.append(x)
    return out[::-1]
