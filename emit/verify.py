"""The checks of a loop's index lists: in the loop itself, and in the kernel that runs after it.

A write `out[scale * list[ii + position] + offset]` is race-free only if the indices it writes at are
distinct, and the body reads through the list (`x[list[ii] + jp]`) and writes at the index without checks
of their own. So each iteration, before its body:
- compares the index it writes with the one the iteration before it writes: indices that rise strictly
  from each iteration to the next (or fall, when the last iteration's index is below the first's) are
  distinct, and RAJAPerf's zone lists, like most lists made by filtering a range, rise. A pair out of
  order stores the call's stamp in the slice's order flag;
- checks its list value against one window per slice it reads through the list (and per scale of the
  value): the values whose reads there are all in bounds, which the host computes for each call from the
  reads' offsets and the slice's length (`runtime/listwindows.py`), exactly, in one comparison however
  many reads there are. A value outside records itself and the iteration skips its body;
- checks the written index, when the write (or an access at its index) happens in every iteration.
The kernel after the loop, launched in the same stream, states for a recorded list value the panic of
the first read Rust fails at (per-read code there, not in the loop, where it would cost registers), and
where the loop flagged a list out of order it finds repeats the slow way: each thread sets the element
it writes in a mark array (one `u32` per element of `out`) to the call's stamp by an atomic exchange, and
finding the stamp already there means another iteration writes the same element: it records an "index
list" panic (the element, and this thread's position in the list). Its blocks return at once when the
lists were in order, or when the loop recorded another panic, which comes first. The order flag is a
word of the readback area, so that after a call's last launch the host can tell from the one copy it
reads back whether that kernel has anything to do (see `runtime.base`).

Writing before the distinctness is known is memory-safe: every index is in bounds when it is written or
read, and where two iterations race on an element, one of their values stays. The call raises the
RaceError before copying anything back, so host arrays are untouched; what the loop left in device
arrays is unspecified then.
"""
from __future__ import annotations

from rs2gpu.emit.cxx_stmt import BEFORE_LOOP, BodyEmitter, needed_preamble
from rs2gpu.emit.cxx_types import int_literal
from rs2gpu.emit.dialect import RESTRICT
from rs2gpu.emit.names import LocalNames
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.plan import IndexListCheck, KernelPlan, ParallelLoop
from rs2gpu.ir.types import PrimType
from rs2gpu.ir.walk import walk

U64 = PrimType("u64")
AXIS = "x"  # a loop with index lists has one dimension (an index list is read at `ii + position`)


def verify_symbol(kernel_symbol: str) -> str:
    return f"{kernel_symbol}_verify"


def list_names(names: LocalNames, target: ir.Binding) -> tuple[str, str, str]:
    """The C++ names of the mark array, the stamp and the order flag of the checks of writes to `target`."""
    name = names.name(target)
    return f"rs2gpu_marks_{name}", f"rs2gpu_stamp_{name}", f"rs2gpu_unordered_{name}"


def read_windows(check: IndexListCheck) -> list[tuple[ir.Binding, int, list]]:
    """The gathers through a list grouped by the slice they read and the list value's scale, in the order
    of their first read: each group is checked against one window of values the host computes."""
    groups: dict[tuple, list] = {}
    for gather in check.gathers:
        groups.setdefault((gather.param, gather.scale), []).append(gather)
    return [(param, scale, gathers) for (param, scale), gathers in groups.items()]


def check_lists_in_loop(loop: ParallelLoop, launch: int, names: LocalNames, params: list[str],
                        body: BodyEmitter) -> None:
    """A loop's own checks of its index lists: the parameters they need (appended to `params`) and the
    checks before each iteration's body (into `body`)."""
    position = names.name(loop.dims[0].index)
    for number, check in enumerate(loop.index_lists):
        _, stamp, unordered = list_names(names, check.target)
        params += [f"u32* {RESTRICT} {unordered}", f"const u32 {stamp}"]
        windows = []
        for param, scale, _ in read_windows(check):
            window = names.fresh(f"window_{names.name(param)}" + (f"_by{scale}" if scale != 1 else ""))
            params += [f"const u64 {window}_low", f"const u64 {window}_width"]
            windows.append((window, scale))
        at, value, index = _written_index(body, check, names, position)
        # the order from the first iteration's index to the last's, read where it is compared: computed once
        # before the grid loop, it stays live through the body and costs registers (MATVEC_3D_STENCIL: 40
        # instead of 32, as without checks)
        first = f"(u64)rs2gpu_start_{AXIS}{_sum(check.position, body)}"
        order = (f"rs2gpu_list_order({_written(check, first, names, body)}, "
                 f"{_written(check, f'{first} + rs2gpu_count_{AXIS} - 1', names, body)})")
        body.hoist(f"if (rs2gpu_t{AXIS} != 0) rs2gpu_check_order({_written(check, f'{at} - 1', names, body)}, "
                   f"{index}, {order}, {unordered}, {stamp});")
        if windows:
            # the kernel after the loop finds the read Rust fails at first, from the value recorded
            site = body.site("index list reads", check.span, launch=launch, list=number)
            for k, (window, scale) in enumerate(windows):
                base = value if scale == 1 else f"{_u64(scale)} * {value}"
                test = f"rs2gpu_in_window({base}, {window}_low, {window}_width)"
                last = k + 1 == len(windows)
                record = f"rs2gpu_record_panic({site}u, {value}, {at}, {body.iteration}); continue;"
                body.hoist(("if (!(" if k == 0 else "      ") + test + (f")) {{ {record} }}" if last else " &&"))
        if check.bounds is not None:
            site = body.site("bounds", check.bounds)
            body.hoist(f"if (!rs2gpu_in_bounds({index}, {body.length_of(ir.Var(check.target, check.span))}, "
                       f"{site}, {body.iteration})) continue;")


def verify_context(plan: KernelPlan, launch_symbol: str, index: int, loop: ParallelLoop, sites, names: LocalNames,
                   params: list[str]) -> dict:
    """The kernel after the loop: it states the panic of a list value the loop found outside the windows
    of its reads, and marks the indices written through the lists the loop found out of order. It takes
    the launch's parameters (`params`, named by `names`), then its own; the launch's grid loop runs the
    loop's iterations (`loop_open` and `loop_close`, which the caller adds)."""
    emitter = BodyEmitter(names, indent=1, sites=sites, iteration=BEFORE_LOOP)
    used = {n.binding for check in loop.index_lists for terms in _polys(check) for _, factors in terms
            for factor in factors for n in walk(factor) if isinstance(n, ir.Var)}
    for let in needed_preamble(plan.preamble, used):
        emitter.statement(let)
    for number, check in enumerate(loop.index_lists):
        if check.gathers:
            _state_read_panic(emitter, check, names, index, number)
    wanted = []
    for check in loop.index_lists:
        emitter.locate(check.span)
        marks, stamp, unordered = list_names(names, check.target)
        params += [f"u32* {RESTRICT} {marks}", f"const u32 {stamp}", f"const u32* {RESTRICT} {unordered}"]
        wanted.append(names.fresh(f"out_of_order_{names.name(check.target)}"))
        emitter.hoist(f"const bool {wanted[-1]} = *{unordered} == {stamp};")
    emitter.hoist(f"if (rs2gpu_panicked() || !({' || '.join(wanted)})) return;  // a panic came first, or "
                  f"the indices were in order")
    body = BodyEmitter(names, indent=2, sites=sites)
    position = names.name(loop.dims[0].index)
    for number, (check, unordered) in enumerate(zip(loop.index_lists, wanted)):
        at, _, written = _written_index(body, check, names, position)
        marks, stamp, _ = list_names(names, check.target)
        site = body.site("index list", check.span, launch=index, list=number)
        body.hoist(f"if ({unordered}) rs2gpu_mark_index({marks}, {written}, "
                   f"{body.length_of(ir.Var(check.target, check.span))}, {stamp}, {site}u, {at}, {body.iteration});")
    summary = "; ".join(f"the values of `{c.list_param.name}` must index `{c.target.name}` at most once"
                        for c in loop.index_lists)
    return {"symbol": verify_symbol(launch_symbol), "params": params, "summary": summary,
            "preamble": emitter.lines, "body": body.lines,
            "checks": sorted(emitter.used_sites | body.used_sites), "lengths_read": names.lengths_read}


def _state_read_panic(emitter: BodyEmitter, check: IndexListCheck, names: LocalNames, launch: int,
                      number: int) -> None:
    """Where the loop recorded a value of the list outside the windows of its reads, the panic of the
    first read Rust fails at for that value (one thread computes it; every block then stops)."""
    value, site, index, length = (names.fresh(n) for n in ("read_value", "read_site", "read_index", "read_len"))
    emitter.locate(check.span)
    recorded = emitter.site("index list reads", check.span, launch=launch, list=number)
    emitter.hoist(f"u64 {value};")
    emitter.hoist(f"if (rs2gpu_recorded({recorded}u, {value})) {{  // outside the windows of the reads through "
                  f"`{check.list_param.name}`")
    emitter.indent += 1
    emitter.hoist("if (RS2GPU_BLOCK_IDX.x == 0 && RS2GPU_THREAD_IDX.x == 0) {")
    emitter.indent += 1
    emitter.hoist(f"u32 {site} = 0u;")
    emitter.hoist(f"u64 {index} = 0, {length} = 0;")
    for gather in check.gathers:  # in Rust's order
        emitter.locate(gather.span)
        read_len = emitter.length_of(ir.Var(gather.param, gather.span))
        emitter.hoist(f"rs2gpu_first_out_of_bounds({site}, {index}, {length}, "
                      f"{_index(gather.scale, value, gather.offset, emitter)}, {read_len}, "
                      f"{emitter.site('bounds', gather.span)}u);")
    emitter.hoist(f"rs2gpu_restate_panic({site}, {index}, {length});")
    emitter.indent -= 1
    emitter.hoist_brace("}")
    emitter.hoist("return;")
    emitter.indent -= 1
    emitter.hoist_brace("}")


def _polys(check: IndexListCheck):
    yield check.position
    yield check.offset
    for gather in check.gathers:
        yield gather.offset


def _written_index(body: BodyEmitter, check: IndexListCheck, names: LocalNames,
                   position: str) -> tuple[str, str, str]:
    """Declares the iteration's position in the list, the value there and the index written at it;
    returns their names."""
    at, value, index = names.fresh("position"), names.fresh("value"), names.fresh("index")
    body.locate(check.span)
    body.hoist(f"const u64 {at} = (u64){position}{_sum(check.position, body)};")
    body.hoist(f"const u64 {value} = (u64){names.name(check.list_param)}[{at}];")
    body.hoist(f"const u64 {index} = {_index(check.scale, value, check.offset, body)};")
    return at, value, index


def _written(check: IndexListCheck, at: str, names: LocalNames, body: BodyEmitter) -> str:
    """The index written at the list's value at position `at`."""
    return _index(check.scale, f"(u64){names.name(check.list_param)}[{at}]", check.offset, body)


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
