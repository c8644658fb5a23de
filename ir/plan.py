"""What the checker proves about a kernel, in a form the emitter and the runtime can use.

A `KernelPlan` splits a kernel into a uniform preamble (scalar `let`s every thread can recompute) and
parallel loops (one GPU launch each), and records for each parameter how its data must travel.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.nodes import Binding, Block, Crate, Expr, Function, Let, Span
from rs2gpu.ir.walk import walk

# Expressions the host can evaluate before a launch (loop bounds) or after one (the result): the
# manifest carries them to the runtime in a small JSON expression language.
HOST_NODES = (ir.Lit, ir.ConstRef, ir.Var, ir.Unary, ir.Binary, ir.Cast, ir.TupleLit, ir.Intrinsic)
HOST_INTRINSICS = {"len", "min", "max", "abs", "sqrt", "wrapping_add", "wrapping_sub", "wrapping_mul"}


def is_host_evaluable(expr: Expr, host_values: set[Binding]) -> bool:
    """True when `expr` uses only literals, consts, parameters, slice lengths and `host_values`."""
    for node in walk(expr):
        if not isinstance(node, HOST_NODES):
            return False
        if isinstance(node, ir.Intrinsic) and node.name not in HOST_INTRINSICS:
            return False
        if isinstance(node, ir.Var) and node.binding.kind != "param" and node.binding not in host_values:
            return False
    return True


@dataclass(frozen=True, slots=True)
class ParamPlan:
    """How one kernel parameter travels.

    transfer: "in" (host→device only), "out" (device→host only: the kernel writes every element
    before reading any), "inout" (both ways), "value" (passed by value in the launch arguments).
    """

    binding: Binding
    transfer: str
    written: bool
    reason: str


@dataclass(frozen=True, slots=True)
class Reduction:
    """A variable declared before a parallel loop and combined across its iterations with `op`."""

    binding: Binding
    op: str  # "+" | "*" | "min" | "max" | "&" | "|" | "^"
    span: Span


@dataclass(frozen=True, slots=True)
class ParallelLoop:
    """One top-level range loop: one launch of `count = end - start` threads (per dimension)."""

    index: Binding
    start: Expr
    end: Expr
    inclusive: bool
    body: Block
    reductions: tuple[Reduction, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class KernelPlan:
    function: Function
    preamble: tuple[Let, ...]
    loops: tuple[ParallelLoop, ...]
    params: tuple[ParamPlan, ...]
    result: Expr | None

    @property
    def name(self) -> str:
        return self.function.name


@dataclass(frozen=True, slots=True)
class CheckedCrate:
    crate: Crate
    kernels: tuple[KernelPlan, ...]
