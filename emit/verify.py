"""The kernel that verifies a loop's index lists on the device before the loop runs.

A write `out[scale * list[ii + position] + offset]` is race-free only if the values it writes at are
distinct. The verification kernel runs over the loop's iteration space in the same stream, just before
the loop's own launch: each thread computes its iteration's written index, sets that element of a mark
array (one `u32` per element of `out`) to this verification's stamp with `atomicExch`, and finding the
stamp already there means another iteration writes the same element: it records an "index list" panic
(the element, and this thread's position in the list). The runtime gives every verification a new stamp,
so the marks need zeroing only when the stamp wraps. It also checks, from the same list values, the
indices the loop would otherwise check itself: the written index (when the write, or an access at its
index, happens in every iteration) and the gathers through the list (`x[list[ii] + jp]`): the gathers' offsets are the same in every thread,
so their smallest and largest and the shortest of the slices they read, computed before the grid loop,
clear all of them in two comparisons per list value (a value they do not clear has its gathers checked
one by one, in Rust's order); the runtime launches fewer threads
than the loop has iterations (`VERIFY_ITERATIONS_PER_THREAD`), each taking several list values. A failure
is recorded in the module's panic record, and the loop's kernel then returns at entry, writing nothing.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_stmt import BodyEmitter
from rs2gpu.emit.cxx_types import int_literal
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import IndexListCheck, KernelPlan, ParallelLoop
from rs2gpu.ir.types import PrimType
from rs2gpu.ir.walk import walk

U64 = PrimType("u64")


def verify_symbol(kernel_symbol: str) -> str:
    return f"{kernel_symbol}_verify"


def mark_names(names: LocalNames, target: ir.Binding) -> tuple[str, str]:
    """The C++ names of the mark array and the stamp of the verification of writes to `target`."""
    name = names.name(target)
    return f"rs2gpu_marks_{name}", f"rs2gpu_stamp_{name}"


def list_targets(loop: ParallelLoop) -> list[ir.Binding]:
    """The slices written through index lists, each once, in the order of the lists: one mark array each."""
    return list(dict.fromkeys(check.target for check in loop.index_lists))


def verify_context(plan: KernelPlan, index: int, loop: ParallelLoop, sites, reserved) -> dict:
    from rs2gpu.emit.kernels import BEFORE_LOOP, grid_loop, loop_parameters, needed_preamble, parameter_names, symbol

    names = parameter_names(plan.function, reserved)
    params = loop_parameters(plan, loop, names, numbered=True)
    for target in list_targets(loop):
        marks, stamp = mark_names(names, target)
        params += [f"u32* __restrict__ {marks}", f"const u32 {stamp}"]
    emitter = BodyEmitter(names, indent=1, sites=sites, iteration=BEFORE_LOOP)
    used = {n.binding for check in loop.index_lists for terms in _polys(check) for _, factors in terms
            for factor in factors for n in walk(factor) if isinstance(n, ir.Var)}
    for let in needed_preamble(plan.preamble, used):
        emitter.statement(let)
    loop_open, loop_close = grid_loop(loop, names, iteration=True)
    body = BodyEmitter(names, indent=2, sites=sites)
    position = names.name(loop.dims[0].index)
    for number, check in enumerate(loop.index_lists):
        ranges = _read_ranges(emitter, check, names)
        _verify_list(body, check, names, position, index, number, ranges)
    summary = "; ".join(_summary(check) for check in loop.index_lists)
    return {"symbol": verify_symbol(symbol(plan.name, index)), "params": params, "summary": summary,
            "preamble": emitter.lines, "loop_open": loop_open, "loop_close": loop_close, "body": body.lines,
            "checks": sorted(emitter.used_sites | body.used_sites)}


def _polys(check: IndexListCheck):
    yield check.position
    yield check.offset
    for gather in check.gathers:
        yield gather.offset


def _read_ranges(emitter: BodyEmitter, check: IndexListCheck, names: LocalNames) -> list[tuple[str, int, str]]:
    """Before the grid loop (the same in every thread): for the gathers through the list at one scale, the
    range of their offsets and the shortest of the slices they read. Returns (the range's name, the scale,
    the shortest length's name)."""
    groups: dict[int, list] = {}
    for gather in check.gathers:
        groups.setdefault(gather.scale, []).append(gather)
    ranges = []
    for scale, gathers in groups.items():
        offsets, name, length = names.fresh("gather_offsets"), names.fresh("gathers"), names.fresh("gather_len")
        emitter.locate(gathers[0].span)
        items = ", ".join(f"(i64)(0ULL{_sum(g.offset, emitter)})" for g in gathers)
        emitter.hoist(f"const i64 {offsets}[] = {{{items}}};")
        emitter.hoist(f"const rs2gpu_offsets {name} = rs2gpu_offset_range({offsets});")
        lengths = list(dict.fromkeys(emitter.length_of(ir.Var(g.param, g.span)) for g in gathers))
        shortest = lengths[0]
        for other in lengths[1:]:
            shortest = f"rs2gpu_min({shortest}, {other})"
        emitter.hoist(f"const u64 {length} = {shortest};")
        ranges.append((name, scale, length))
    return ranges


def _verify_list(body: BodyEmitter, check: IndexListCheck, names: LocalNames, position: str, launch: int,
                 number: int, ranges: list[tuple[str, int, str]]) -> None:
    list_name = names.name(check.list_param)
    at = names.fresh("position")
    value = names.fresh("value")
    body.locate(check.span)
    body.hoist(f"const u64 {at} = (u64){position}{_sum(check.position, body)};")
    body.hoist(f"const u64 {value} = (u64){list_name}[{at}];")
    if check.gathers:
        # the common case in a few instructions; only an index that may be out of bounds takes the reads one by
        # one, in Rust's order, so that the first one out of bounds is the one recorded
        fast = " && ".join(f"rs2gpu_reads_in_bounds({value if scale == 1 else f'{_u64(scale)} * {value}'}, "
                           f"{name}, {length})" for name, scale, length in ranges)  # into the shortest slice
        body.hoist(f"if (!({fast})) {{")
        body.indent += 1
        for gather in check.gathers:
            body.locate(gather.span)
            site = body.site("bounds", gather.span)
            body.hoist(f"rs2gpu_in_bounds({_index(gather.scale, value, gather.offset, body)}, "
                       f"{body.length_of(ir.Var(gather.param, gather.span))}, {site}, {body.iteration});")
        body.indent -= 1
        body.hoist_brace("}")
    body.locate(check.span)
    marks, stamp = mark_names(names, check.target)
    bounds_site = body.site("bounds", check.bounds) if check.bounds is not None else 0
    repeat_site = body.site("index list", check.span, launch=launch, list=number)
    body.hoist(f"rs2gpu_mark_index({marks}, {_index(check.scale, value, check.offset, body)}, "
               f"{body.length_of(ir.Var(check.target, check.span))}, {stamp}, {bounds_site}u, {repeat_site}u, "
               f"{at}, {body.iteration});")


def _index(scale: int, value: str, offset, body: BodyEmitter) -> str:
    """`scale * value + offset` in u64 arithmetic, which wraps as Rust's usize arithmetic does."""
    return (value if scale == 1 else f"{_u64(scale)} * {value}") + _sum(offset, body)


def _sum(terms, body: BodyEmitter) -> str:
    """Σ coefficient · Π factors in u64, as terms to append to an expression (" + jp - 2ULL * kp")."""
    text = ""
    for coefficient, factors in terms:
        parts = [f"(u64){body.expr(factor)}" for factor in factors]
        if abs(coefficient) != 1 or not parts:
            parts.insert(0, _u64(abs(coefficient)))
        text += f" {'-' if coefficient < 0 else '+'} {' * '.join(parts)}"
    return text


def _u64(value: int) -> str:
    return int_literal(value % (1 << 64), U64)


def _summary(check: IndexListCheck) -> str:
    what = f"the values of `{check.list_param.name}` must index `{check.target.name}` "
    what += "in bounds and at most once" if check.bounds is not None else "at most once (where in bounds)"
    if check.gathers:
        what += f", and the {len(check.gathers)} reads through them in bounds"
    return what
