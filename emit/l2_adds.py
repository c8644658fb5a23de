"""The L2-adds entry point of a loop: `y[i] += v` as an atomic add that the L2 performs.

A thread of the general entry point runs DAXPY's `y[i] += a * x[i]` as a load of y[i], a load of x[i],
an add and a store. RAJAPerf's DAXPY_ATOMIC adds `a * x[i]` to y[i] with an atomic add instead, whose result
it does not use, so NVCC makes it a reduction (`RED.E.ADD.F64`): the thread loads x[i] and posts the add,
which the L2 applies to its copy of y[i]; y never travels to the SM. Where the loop's data fit in the L2,
that is faster: on an H200 (a 60 MiB L2; events after the bench's flush, so every line comes from DRAM)

    elements      250k   500k    1M     2M     4M     8M     16M    100M
    loads, µs      5.2    6.5    9.0   13.8   23.4   44.1   87.7   547.4
    adds,  µs      4.6    5.7    7.9   11.8   21.4   46.6   96.9   633.1

and beyond it slower: the L2's read-modify-writes then wait for DRAM one line at a time. (The adds with
16-byte loads of x, two or four iterations per thread, were slower at every size: each add instruction
of a warp then spans two or four times the lines.)

A single loop gets `<symbol>_l2_adds` when
- it has the vector entry point's shape (every slice access at the loop variable plus a constant, one
  element type; see `emit.vector`), no check on the device, no reductions and no scatters;
- that type is f64, and some slice is updated only by one statement of the body's top level,
  `y[i] += v` or `y[i] -= v`, its only access in the body: that statement becomes
  `rs2gpu_add_in_l2(&y[i], v)` (`y[i] - v` as `y[i] + -v`, the same IEEE operation).
An f64 atomic add rounds to nearest and keeps subnormals, as `+` does, and no other thread touches y[i]
(the race checker proved it), so the result is the same bits. (f32 atomic adds flush subnormal results to
zero, and integer `+=` is not measured: neither gets the form.)

The host runs it where the slices' elements the loop touches, `count * bytes_per_iteration`, fit in the
device's L2 (`LaunchPlan.l2_adds_fit`), before the vector entry point; a backend that reports no L2 size
for this (HIP's: an atomic add of a double is a compare-and-swap loop there unless hipcc is given
-munsafe-fp-atomics) never runs it.
"""
from __future__ import annotations

from dataclasses import dataclass

from rs2gpu.emit.vector import VectorPlan
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import ParallelLoop
from rs2gpu.ir.types import F64, size_of

UPDATES = ("+", "-")


@dataclass(frozen=True)
class L2AddsPlan:
    """The statements of a loop body that become L2 adds, and the bytes an iteration touches."""

    updates: frozenset[ir.NodeId]  # the ir.Assign statements
    bytes_per_iteration: int


def l2_adds_plan(loop: ParallelLoop, vector: VectorPlan | None) -> L2AddsPlan | None:
    """The L2-adds form of `loop` (see the module's docstring), given its vector plan; None where it has
    none."""
    if vector is None or len(loop.dims) > 1 or loop.reductions or loop.scatters or vector.element != F64:
        return None
    accesses: dict[ir.Binding, int] = {}
    for stream, _ in vector.places.values():
        accesses[stream.slice] = accesses.get(stream.slice, 0) + 1
    updates = frozenset(
        stmt.node_id for stmt in loop.body.stmts
        if isinstance(stmt, ir.Assign) and stmt.op in UPDATES and isinstance(stmt.target, ir.Index)
        and stmt.target.node_id in vector.places and accesses[stmt.target.base.binding] == 1)
    if not updates:
        return None
    return L2AddsPlan(updates, size_of(vector.element) * len(accesses))
