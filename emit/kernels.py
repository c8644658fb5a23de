"""From a `KernelPlan` to the template context of one generated file: its helpers, and per launch its
entry points (see `ir.abi.EntryKind`), each with its C++ parameters and body.

The argument layout decided here is the ABI both sides must agree on; `ir.abi.Launch` states it, and
`emit.abi` builds that statement from these contexts.
"""
from __future__ import annotations

import dataclasses
import math

from rs2gpu.emit.covering import (covering_context, covering_pays, has_covering_form, index_declaration,
                                  tiles_context)
from rs2gpu.emit.cxx_stmt import (BEFORE_LOOP, ITERATION, LAUNCH_NUMBER, BodyEmitter, iteration_declaration,
                                  needed_preamble)
from rs2gpu.emit.cxx_types import cxx_type, float_literal, int_literal, tuple_struct_name
from rs2gpu.emit.dialect import RESTRICT
from rs2gpu.emit.names import LocalNames, cxx_name
from rs2gpu.emit.privatize import private_lines, private_name, private_scatter
from rs2gpu.emit.tensor import has_tensor_form
from rs2gpu.emit.l2_adds import l2_adds_plan
from rs2gpu.emit.vector import (VectorPlan, head_end, nest_vector_lines, tail_start, vector_lines,
                               vector_plan)
from rs2gpu.emit.verify import check_lists_in_loop, verify_context
from rs2gpu.emit.warps import split_context, split_kinds, split_plan
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, PRODUCT_STAGING, EntryKind
from rs2gpu.ir.plan import HostLoop, KernelPlan, ParallelLoop, Reduction, Scatter
from rs2gpu.ir.types import ArrayType, PrimType, RefType, SliceType, StructType, TupleType, align_of, size_of
from rs2gpu.ir.walk import walk

OP_NAMES = {"+": "add", "*": "mul", "min": "min", "max": "max", "&": "and", "|": "or", "^": "xor"}


def symbol(kernel: str, index: int) -> str:
    return f"rs2gpu_{kernel}_{index}"


def covering_symbol(kernel: str, index: int) -> str:
    """The entry point of launch `index` for a grid that covers its loop nest (see `emit.covering`)."""
    return symbol(kernel, index) + "_covering"


def param_abi(p: ir.Binding, restrict: bool, names: LocalNames, by_value: bool = False) -> list[dict]:
    """The C++ parameters, and their sizes, that one Rust parameter becomes; `by_value` for a `&[T; N]`
    the transfer plan passes in the launch arguments."""
    name = names.name(p)
    qualifier = f" {RESTRICT}" if restrict else ""
    ty = p.ty
    if by_value:
        # read in place from the argument space (no per-thread copy, even at a computed index)
        array = ty.target
        return [{"name": name, "cxx": f"const RS2GPU_GRID_CONSTANT {cxx_type(array)} {name}", "role": "value",
                 "size": size_of(array), "align": align_of(array)}]
    if isinstance(ty, RefType):
        target = ty.target
        elem = target.elem if isinstance(target, (SliceType, ArrayType)) else target
        const = "" if ty.mutable else "const "
        out = [{"name": name, "cxx": f"{const}{cxx_type(elem)}*{qualifier} {name}", "role": "pointer",
                "size": 8, "align": 8}]
        if isinstance(target, SliceType):
            length = names.length_parameter(p)
            out.append({"name": length, "cxx": f"const usize {length}", "role": "length", "size": 8, "align": 8})
        return out
    const = "" if p.mutable else "const "  # `mut x: f64` may be assigned in the body
    return [{"name": name, "cxx": f"{const}{cxx_type(ty)} {name}", "role": "value", "size": size_of(ty),
             "align": align_of(ty)}]


def uniform_values(plan: KernelPlan) -> frozenset[ir.Binding]:
    """The values every thread of a launch shares: the parameters and the preamble's `let`s."""
    return frozenset(plan.function.params) | {let.binding for let in plan.preamble}


def arrays_by_value(plan: KernelPlan) -> frozenset[ir.Binding]:
    """The `&[T; N]` parameters the transfer plan passes by value."""
    return frozenset(pp.binding for pp in plan.params if pp.transfer == "value" and isinstance(pp.binding.ty, RefType))


def global_names(crate: ir.Crate) -> frozenset[str]:
    """The C++ names of the crate's helpers, consts and structs, which no local may hide: Rust allows
    `let square = square(x);`, but in C++ the new `square` is already in scope in its initializer."""
    return frozenset(cxx_name(n) for n in [*(f.name for f in crate.functions if not f.is_kernel),
                                           *(c.name for c in crate.consts), *(s.ty.name for s in crate.structs)])


def parameter_names(fn: ir.Function, reserved=frozenset()) -> LocalNames:
    """The names of `fn`'s parameters and slice lengths, given out before any local's: parameters keep
    their Rust names (mangled where C++ needs it); locals that shadow them get suffixes."""
    names = LocalNames(reserved)
    for p in fn.params:
        names.name(p)
        if isinstance(p.ty, RefType) and isinstance(p.ty.target, SliceType):
            names.length_parameter(p)
    return names


def helper_context(fn: ir.Function, sites: PanicSites | None = None, reserved=frozenset()) -> dict:
    """A helper's C++ function. One that checks something, itself or in the helpers it calls (those
    `sites.checked_helpers` names), takes the iteration its checks record as a last parameter."""
    names = parameter_names(fn, reserved)
    params = []
    for p in fn.params:
        params += [a["cxx"] for a in param_abi(p, restrict=False, names=names)]
    emitter = BodyEmitter(names, indent=1, sites=sites)
    emitter.block(fn.body, "return")
    checks = bool(emitter.used_sites) or emitter.passes_iteration
    if checks:
        params.append(f"const rs2gpu_iteration {ITERATION}")
    signature = f"{cxx_type(fn.ret) if fn.ret != TupleType(()) else 'void'} {cxx_name(fn.name)}({', '.join(params)})"
    return {"rust_name": fn.source_name, "source": str(fn.span), "signature": signature, "body": emitter.lines,
            "sites": sorted(emitter.used_sites), "checks": checks}


def identity(r: Reduction) -> str:
    """The value a thread's private accumulator starts from: combining with it changes nothing."""
    ty: PrimType = r.binding.ty
    t = cxx_type(ty)
    if r.op in ("minloc", "maxloc"):
        r = Reduction(r.binding, "min" if r.op == "minloc" else "max", r.span)
    if r.op == "+" or r.op in ("|", "^"):
        # -0.0, not 0.0: x + -0.0 == x for every float, -0.0 included, so a sum of negative zeros stays one
        return float_literal(-0.0, "-0.0", ty) if ty.is_float else int_literal(0, ty)
    if r.op == "*":
        return float_literal(1.0, "1.0", ty) if ty.is_float else int_literal(1, ty)
    if r.op == "&":
        return f"(({t})~({t})0)"
    if ty.is_float:
        inf = float_literal(math.inf, "inf", ty)
        return inf if r.op == "min" else f"(-{inf})"
    return f"rs2gpu_int<{t}>::{'max' if r.op == 'min' else 'min'}"


def element_seed(plan: KernelPlan, r: Reduction) -> ir.Index | None:
    """The seed of `r` where it is one element of a slice the kernel only reads (`let mut low = x[0];`), at
    an index the host computes without reading elements; else None. The launch's last block reads that
    element on the device, at the address the host passes after checking the index: read on the host, it
    would make the call wait for the device before the launch."""
    init = seed_expr(plan, r.binding)
    if not (isinstance(init, ir.Index) and isinstance(init.base, ir.Var) and init.base.binding.kind == "param"):
        return None
    ty = init.base.binding.ty
    if not (isinstance(ty, RefType) and not ty.mutable and isinstance(ty.target, SliceType)):
        return None
    return None if any(isinstance(node, ir.Index) for node in walk(init.index)) else init


def _reduction_context(plan: KernelPlan, r: Reduction, names: LocalNames, params: list[str]) -> dict:
    """A reduction's launch parameters (appended to `params`: its seed by value, or the address of the
    element it is (see `element_seed`), then the partials of the blocks and the result, in memory the host
    provides), the declarations of its per-thread accumulator, and its two steps after the loop: the
    block's partial (every block), then the result (in the last block to finish)."""
    name, ty = names.name(r.binding), cxx_type(r.binding.ty)
    start = identity(r)
    if element_seed(plan, r) is not None:
        seed_param, seed = f"const {ty}* {RESTRICT} rs2gpu_seed_element_{name}", f"*rs2gpu_seed_element_{name}"
    else:
        seed_param, seed = f"const {ty} rs2gpu_seed_{name}", f"rs2gpu_seed_{name}"
    if r.location is None:
        params += [seed_param, f"{ty}* {RESTRICT} rs2gpu_partials_{name}", f"{ty}* {RESTRICT} rs2gpu_result_{name}"]
        op = f"rs2gpu_op_{OP_NAMES[r.op]}()"
        return {"declarations": [f"{ty} {name} = {start};"],
                "block": f"rs2gpu_reduce_block<{BLOCK_SIZE}>(rs2gpu_partials_{name}, {name}, {op});",
                "grid": f"rs2gpu_reduce_grid<{BLOCK_SIZE}>(rs2gpu_result_{name}, rs2gpu_partials_{name}, {start}, "
                        f"{seed}, {op});"}
    loc, loc_ty = names.name(r.location), cxx_type(r.location.ty)
    pair = f"rs2gpu_located<{ty}, {loc_ty}>"
    # the identity's location loses every tie: the largest for the first location, the smallest for the last
    no_location = f"rs2gpu_int<{loc_ty}>::{'max' if r.first else 'min'}"
    params += [seed_param, f"const {loc_ty} rs2gpu_seed_{loc}",
               f"{pair}* {RESTRICT} rs2gpu_partials_{name}", f"{ty}* {RESTRICT} rs2gpu_result_{name}",
               f"{loc_ty}* {RESTRICT} rs2gpu_result_{loc}"]
    flags = f"{str(r.op == 'minloc').lower()}, {str(r.first).lower()}"
    return {"declarations": [f"{ty} {name} = {start};", f"{loc_ty} {loc} = {no_location};"],
            "block": f"rs2gpu_reduce_block<{BLOCK_SIZE}>(rs2gpu_partials_{name}, {pair}{{{name}, {loc}}}, "
                     f"rs2gpu_op_location<{flags}>());",
            "grid": f"rs2gpu_reduce_grid_location<{BLOCK_SIZE}, {flags}>(rs2gpu_result_{name}, rs2gpu_result_{loc}, "
                    f"rs2gpu_partials_{name}, {pair}{{{start}, {no_location}}}, {seed}, rs2gpu_seed_{loc});"}


def result_words(plan: KernelPlan) -> int:
    """The 8-byte words of the readback area after the panic record, in launch order: one per reduction
    result, two for a min/max-location reduction (value and location), and one order flag per slice the
    launch writes through an index list (see `emit.verify`)."""
    return sum(sum(1 if r.location is None else 2 for r in loop.reductions)
               + len({check.target for check in loop.index_lists}) for loop in plan.loops)


def signals_done(plan: KernelPlan, index: int) -> bool:
    """Whether launch `index` tells the host when its results are in host memory: the call's last launch,
    where it reduces and no host loop repeats the launches. Its last block sets a word of host memory after
    writing the results, and the host, polling that word, need not wait until the driver has seen the whole
    kernel end (see `DeviceBackend.wait_for_word`)."""
    return bool(plan.loops[index].reductions) and not plan.host_loops and index == len(plan.loops) - 1


MAX_SITES = 1 << 16  # site numbers fit in one 16-bit piece of the panic record (see the prelude)


class PanicSites:
    """Numbers the places of one generated file that can panic, in rendering order (the same for every
    target), and remembers what each one is, for the manifest; `checked_helpers` are the helpers of the
    file whose code checks something (so that their calls pass the caller's iteration)."""

    def __init__(self) -> None:
        self.sites: list[dict] = []
        self._numbers: dict[tuple, int] = {}
        self.checked_helpers: set[str] = set()

    def site(self, kind: str, span, **about) -> int:
        """The number of the check of `kind` at `span`; `about` is what the host needs besides the kind
        and the location to word the panic (for an index list: which launch and which list)."""
        key = (kind, span, tuple(sorted(about.items())))
        if key not in self._numbers:
            if len(self.sites) + 1 >= MAX_SITES:
                raise ValueError(f"more than {MAX_SITES - 1} checks in one kernel's file: the panic record "
                                 f"has room for site numbers below {MAX_SITES}")
            self.sites.append({"site": len(self.sites) + 1, "kind": kind, "source": str(span), **about})
            self._numbers[key] = len(self.sites)
        return self._numbers[key]


AXES = ("x", "y", "z")  # the innermost loop runs along x, so consecutive iterations are adjacent threads


def launch_axes(loop: ParallelLoop) -> list[str]:
    """The grid axis of each dimension, outermost first."""
    return list(reversed(AXES[:len(loop.dims)]))


class LengthParameter(str):
    """The C++ declaration of a slice's length among a launch's parameters, which the launch keeps only
    where its code reads the length (see `passed_parameters`)."""

    slice: ir.Binding

    def __new__(cls, declaration: str, slice_param: ir.Binding) -> "LengthParameter":
        self = super().__new__(cls, declaration)
        self.slice = slice_param
        return self


def passed_parameters(params: list[str], lengths: set[ir.Binding]) -> list[str]:
    """`params` without the lengths of the slices that are not in `lengths`."""
    return [str(p) for p in params if not isinstance(p, LengthParameter) or p.slice in lengths]


def loop_parameters(plan: KernelPlan, loop: ParallelLoop, names: LocalNames, numbered: bool) -> list[str]:
    """The C++ parameters of a launch up to its reduction results: the kernel's parameters (each slice's
    length a `LengthParameter`), each dimension's start and count, the launch's number in the call if
    `numbered`, then the values of the host loops around it that it reads."""
    by_value = arrays_by_value(plan)
    params = [LengthParameter(a["cxx"], p) if a["role"] == "length" else a["cxx"] for p in plan.function.params
              for a in param_abi(p, restrict=True, names=names, by_value=p in by_value)]
    for dim, axis in zip(loop.dims, launch_axes(loop)):
        params += [f"const {cxx_type(dim.index.ty)} rs2gpu_start_{axis}", f"const usize rs2gpu_count_{axis}"]
    if numbered:
        params.append(f"const u32 {LAUNCH_NUMBER}")
    params += [f"const {cxx_type(b.ty)} {names.name(b)}" for b in loop.uniforms]
    return params


def grid_loop(loop: ParallelLoop, names: LocalNames, stopped: bool = False,
              iteration: bool = False, skip: str = "", end: str | None = None) -> tuple[list[str], list[str]]:
    """The lines that open and close the grid-stride loops of a launch, one per dimension; with `stopped`,
    the outermost runs no iteration when `rs2gpu_stopped` is set; with `iteration`, the innermost declares
    the thread's iteration for the checks of the body; `skip` offsets the outermost's first iteration and
    `end` replaces its count (the vector entry point's iterations after and before its whole groups)."""
    loop_open, loop_close = [], []
    for depth, (dim, axis) in enumerate(zip(loop.dims, launch_axes(loop))):
        pad = "    " * (depth + 1)
        t = f"rs2gpu_t{axis}"
        condition = f"{t} < {end if depth == 0 and end is not None else f'rs2gpu_count_{axis}'}"
        if depth == 0 and stopped:
            condition = f"!rs2gpu_stopped && {condition}"
        first = skip if depth == 0 else ""
        loop_open += [f"{pad}for (usize {t} = {first}(usize)RS2GPU_BLOCK_IDX.{axis} * RS2GPU_BLOCK_DIM.{axis} "
                      f"+ RS2GPU_THREAD_IDX.{axis}; {condition}; "
                      f"{t} += (usize)RS2GPU_GRID_DIM.{axis} * RS2GPU_BLOCK_DIM.{axis}) {{",
                      f"{pad}    {index_declaration(dim, axis, names)}"]
        loop_close.insert(0, f"{pad}}}")
    if iteration:
        loop_open.append("    " * (len(loop.dims) + 1) + iteration_declaration(len(loop.dims)))
    return loop_open, loop_close


def launch_context(plan: KernelPlan, index: int, loop: ParallelLoop, sites: PanicSites | None,
                   helper_sites: set[int], reserved: frozenset[str], consts: dict[str, ir.ConstDef],
                   repeated: bool = False) -> dict:
    """One launch's template context: its entry points (`variants`) and the kernel that verifies its index
    lists (`verify`). A loop with conditional accesses that the host may find out of bounds has two
    entry points rendered from the same body: `symbol`, without checks of those accesses, and
    `symbol_checked`, which checks them. `helper_sites` are the panic sites of the helpers it calls. A
    nest of loops also gets a `covering` entry point (see `emit.covering`) of the first variant's body.

    A launch that runs after code that can panic (an earlier launch, a helper the kernel calls, or,
    `repeated` in a host loop with launches that can, itself, its index lists' verification included, which
    follows it in every iteration) stops when an earlier launch of the call recorded a panic, as Rust stops
    at a panic: without reductions it returns at entry; with them it runs no iteration, because every block
    must still take part in the reductions' last-block protocol. Such a launch, and one that can record a
    panic, is numbered: it takes its number in the call, which the panics it records carry, so that no
    block of it stops on a panic of its own."""
    stops = sites is not None and bool(sites.sites or repeated)
    context = _launch_context(plan, index, loop, sites, helper_sites, reserved, consts, stops, stops)
    if not stops and records_panics(context):
        context = _numbered(context, loop)
    return context


def _numbered(context: dict, loop: ParallelLoop) -> dict:
    """The launch `context`, rendered unnumbered, numbered: its number is the one parameter that differs
    (`loop_parameters`), so each entry point takes it after its last count rather than being rendered again."""
    number = f"const u32 {LAUNCH_NUMBER}"
    after = f"const usize rs2gpu_count_{launch_axes(loop)[-1]}"
    entries = []
    for entry in context["entries"]:
        params = entry["params"]
        if number not in params:  # the verification of index lists always takes it
            at = params.index(after) + 1
            params = [*params[:at], number, *params[at:]]
        entries.append({**entry, "params": params})
    return {**context, "entries": entries, "numbered": True}


def _launch_context(plan: KernelPlan, index: int, loop: ParallelLoop, sites: PanicSites | None,
                    helper_sites: set[int], reserved, consts, stops: bool, numbered: bool) -> dict:
    name = symbol(plan.name, index)
    fast = loop.hoisted | loop.optional
    variants = [_variant(plan, index, loop, name, fast, sites, helper_sites, reserved, stops, numbered)]
    if loop.optional and sites is not None:
        variants.append(_variant(plan, index, loop, f"{name}_checked", loop.hoisted, sites, helper_sites, reserved,
                                 stops, numbered))
    plan_of_lanes = vector_plan(loop, plan.function.params)
    vector = None
    if plan_of_lanes is not None and not variants[0]["checks"]:
        vector = _variant(plan, index, loop, f"{name}_vector", fast, sites, helper_sites, reserved, stops, numbered,
                          vector=plan_of_lanes)
        vector["plan"] = plan_of_lanes
    plan_of_adds = l2_adds_plan(loop, plan_of_lanes) if not variants[0]["checks"] else None
    l2_adds = None
    if plan_of_adds is not None:
        l2_adds = _variant(plan, index, loop, f"{name}_l2_adds", fast, sites, helper_sites, reserved, stops,
                           numbered, l2_adds=plan_of_adds.updates)
        l2_adds["plan"] = plan_of_adds
    scatter = private_scatter(loop)
    private = None if scatter is None else _variant(plan, index, loop, f"{name}_private", fast, sites, helper_sites,
                                                    reserved, stops, numbered, scatter)
    proven = None
    if (loop.index_lists or loop.list_reads) and has_covering_form(loop) and sites is not None:
        # one thread per iteration, like the covering entry point (ZONAL_ACCUMULATION_3D: 28 registers
        # instead of the grid-stride loop's 32); where no grid covers the loop, the checking one runs. A
        # loop with reductions has no such form: its threads combine many iterations
        names = parameter_names(plan.function, reserved)
        preamble = _preamble(plan, loop, names, sites)
        proven = covering_context(loop, launch_axes(loop), names, sites, f"{name}_proven", uniform_values(plan),
                                  fast | loop.listed, BLOCK_SIZE)
        proven["checks"] = sorted(set(proven["checks"]) | preamble.used_sites | helper_sites)
        proven["lengths_read"] = names.lengths_read
    verify = None
    if loop.index_lists and sites is not None:
        names = parameter_names(plan.function, reserved)
        verify = verify_context(plan, name, index, loop, sites, names, loop_parameters(plan, loop, names, numbered=True))
        verify["loop_open"], verify["loop_close"] = grid_loop(loop, names, iteration=True)
    covering = None
    # the lists' checks need the grid-stride loop
    if has_covering_form(loop) and covering_pays(loop) and not (loop.index_lists and sites is not None):
        names = parameter_names(plan.function, reserved)
        _preamble(plan, loop, names, sites)  # the same names as the variants', given out in the same order
        covering = covering_context(loop, launch_axes(loop), names, sites, covering_symbol(plan.name, index),
                                    uniform_values(plan), fast, BLOCK_SIZE)
        covering["checks"] = variants[0]["checks"]  # the same body with the same accesses checked
        covering["lengths_read"] = names.lengths_read
    tiles = None
    if covering is not None and (covering["staging"] == PRODUCT_STAGING
                                 or (not covering["staging"] and has_tensor_form(loop, uniform_values(plan)))):
        names = parameter_names(plan.function, reserved)
        _preamble(plan, loop, names, sites)  # the same names as the variants', given out in the same order
        tiles = tiles_context(loop, launch_axes(loop), names, sites, f"{name}_{EntryKind.TILES.value}",
                              uniform_values(plan), fast)
        if tiles is not None:
            tiles["checks"] = covering["checks"]
            tiles["lengths_read"] = names.lengths_read
    splits: list[tuple[EntryKind, dict]] = []
    shape, inner_loops = split_plan(loop, consts)
    for kind in split_kinds(shape) if shape is not None else ():
        names = parameter_names(plan.function, reserved)
        _preamble(plan, loop, names, sites)  # the same names as the variants', given out in the same order
        split, why = split_context(loop, shape, kind, names, sites, fast, f"{name}_{kind.value}",
                                   lambda b, op: identity(Reduction(b, op, loop.span)))
        if split is None:
            inner_loops = tuple(dataclasses.replace(note, split=False, detail=f"sequential in each thread: {why}")
                                for note in inner_loops)
            splits = []
            break
        split["lengths_read"] = names.lengths_read
        splits.append((kind, split))
    # the entry points share one argument buffer: it holds the lengths that any of them reads
    contexts = [*variants, private, proven, tiles, covering, vector, l2_adds, verify, *(split for _, split in splits)]
    read = set().union(*(c["lengths_read"] for c in contexts if c is not None))
    for c in [*variants, private, vector, l2_adds, verify]:
        if c is not None:
            c["params"] = passed_parameters(c["params"], read)
    general = variants[0]
    entries = [entry_context(EntryKind.GENERAL, general)]
    if len(variants) > 1:
        entries.append(entry_context(EntryKind.CHECKED, variants[1]))
    for kind, context in ((EntryKind.PRIVATE, private), (EntryKind.VECTOR, vector), (EntryKind.L2_ADDS, l2_adds)):
        if context is not None:
            entries.append(entry_context(kind, context))
    for kind, shaped in ((EntryKind.TILES, tiles), (EntryKind.COVERING, covering), (EntryKind.PROVEN, proven),
                         *splits):
        if shaped is not None:  # the first variant's arguments and preamble, on a grid that covers the loop
            entries.append(entry_context(kind, shaped, params=general["params"], guard=general["guard"],
                                         preamble=general["preamble"], body=shaped["lines"]))
    if verify is not None:
        entries.append(entry_context(EntryKind.VERIFY, verify, records_panics=True))
    order = list(EntryKind)
    entries.sort(key=lambda e: order.index(e["kind"]))
    return {"lengths": [p.name for p in plan.function.params if p in read], "source": str(loop.span),
            "entries": entries, "iteration": general["iteration"], "stops": stops, "numbered": numbered,
            "inner_loops": inner_loops,
            "host_loops": [f"`{h.var.name}` at {h.span}" for h in host_loops_around(plan.schedule, index) or ()]}


ENTRY_PARTS = ("guard", "preamble", "reductions", "before_loop", "loop_open", "body", "loop_close", "after_loop")


def entry_context(kind: EntryKind, context: dict, records_panics: bool | None = None, **parts) -> dict:
    """The template context of one entry point: its kind, its symbol and parameters, the parts of its body
    (`ENTRY_PARTS`, any of them empty) and what the ABI says of it (`context` keeps the rest: its plan,
    block shape, lead). `records_panics`: whether its code can record a panic (by default, where it checks
    something)."""
    out = {**context, **{part: [] for part in ENTRY_PARTS if part not in context}, **parts, "kind": kind}
    out["records_panics"] = bool(context["checks"]) if records_panics is None else records_panics
    out.setdefault("signals_done", False)
    return out


def records_panics(context: dict) -> bool:
    """Whether some code of a launch (its entry points, its verification) can record a panic."""
    return any(e["records_panics"] for e in context["entries"])


def host_loops_around(schedule, index: int, around: tuple[HostLoop, ...] = ()) -> tuple[HostLoop, ...] | None:
    """The host loops launch `index` runs in, outermost first (None if the schedule does not hold it)."""
    for step in schedule:
        if isinstance(step, HostLoop):
            found = host_loops_around(step.body, index, (*around, step))
            if found is not None:
                return found
        elif step == index:
            return around
    return None


def _variant(plan: KernelPlan, index: int, loop: ParallelLoop, name: str, hoisted: frozenset,
             sites: PanicSites | None, helper_sites: set[int], reserved, stops: bool, numbered: bool,
             private: Scatter | None = None, vector: VectorPlan | None = None,
             l2_adds: frozenset = frozenset()) -> dict:
    """One entry point of launch `index`: the loop's body with every access but `hoisted` checked on the
    device, after the checks of its index lists; `numbered`, it takes its number in the call; with `stops`,
    it does nothing after a panic of an earlier launch; with `private`, the updates of that scatter target
    go to the block's copy of it (see `emit.privatize`); with `vector`, whole groups of iterations run in
    the lanes of 16-byte accesses before the general loop runs the rest (see `emit.vector`); the statements
    `l2_adds` names are adds the L2 performs (see `emit.l2_adds`). The launch that `signals_done` takes the
    done word's address last and sets it after its results."""
    names = parameter_names(plan.function, reserved)
    params = loop_parameters(plan, loop, names, numbered)
    reduction_params: list[str] = []  # the last parameters, after those of the index lists' checks
    reductions = [_reduction_context(plan, r, names, reduction_params) for r in loop.reductions]
    preamble = _preamble(plan, loop, names, sites)
    copies = {private.param: private_name(private, names)} if private is not None else None
    body = BodyEmitter(names, indent=len(loop.dims) + 1, sites=sites, hoisted=hoisted, scatters=loop.scatters,
                       private=copies, l2_adds=l2_adds)
    if loop.index_lists and sites is not None:
        check_lists_in_loop(loop, index, names, params, body)
    guard = []
    if stops:
        # the host says whether code launched before this one in the call can have recorded a panic: when
        # none can, the record is clear and the launch need not read it
        params.append("const bool rs2gpu_may_stop")
        stopped = f"rs2gpu_may_stop && rs2gpu_stopped_before({LAUNCH_NUMBER})"
        guard = [f"    const bool rs2gpu_stopped = {stopped};  // Rust stopped at an earlier panic" if reductions
                 else f"    if ({stopped}) return;  // Rust stopped at an earlier panic"]
    params += reduction_params
    signals = signals_done(plan, index)
    if signals:
        params.append(f"u32* {RESTRICT} rs2gpu_done")
    body.block(loop.body)
    stopped = stops and bool(reductions)
    iteration = bool(body.used_sites) or body.passes_iteration
    body_lines = body.lines
    if vector is None:
        loop_open, loop_close = grid_loop(loop, names, stopped=stopped, iteration=iteration)
    elif len(loop.dims) > 1:  # one thread per row and group, on a grid that covers them
        loop_open, body_lines, loop_close = nest_vector_lines(vector, loop, launch_axes(loop), names, sites,
                                                              hoisted), [], []
    else:
        groups, groups_open, body_lines, groups_close = vector_lines(vector, loop, names, sites, hoisted, stopped)
        loop_open = groups
        if vector.head:  # the iterations before the first group, as the general entry point runs them
            head_open, head_close = grid_loop(loop, names, stopped=stopped, iteration=iteration, end=head_end(vector))
            loop_open += head_open + body.lines + head_close
        loop_open += groups_open
        tail_open, tail_close = grid_loop(loop, names, stopped=stopped, iteration=iteration, skip=tail_start(vector))
        loop_close = groups_close + tail_open + body.lines + tail_close
    before_loop, after_loop = [], []
    if private is not None:
        before_loop, after_loop = private_lines(private, names, body.length_of(ir.Var(private.param, loop.span)),
                                                BLOCK_SIZE)
    return {"symbol": name, "params": params, "preamble": preamble.lines, "reductions": reductions, "guard": guard,
            "signals_done": signals,
            "loop_open": loop_open, "loop_close": loop_close, "body": body_lines, "before_loop": before_loop,
            "after_loop": after_loop,
            "checks": sorted(preamble.used_sites | body.used_sites | helper_sites),
            "lengths_read": names.lengths_read,
            "iteration": ", ".join(names.name(d.index) for d in loop.dims)}


def _preamble(plan: KernelPlan, loop: ParallelLoop, names: LocalNames, sites) -> BodyEmitter:
    """The preamble `let`s the loop needs, recomputed by every thread."""
    preamble = BodyEmitter(names, indent=1, sites=sites, iteration=BEFORE_LOOP)
    used = {n.binding for n in walk(loop.body) if isinstance(n, ir.Var)}
    for let in needed_preamble((*plan.preamble, *loop.lets), used):
        preamble.statement(let)
    return preamble


def seed_expr(plan: KernelPlan, binding) -> ir.Expr:
    """The value a reduction (or its location) starts from: its `let`'s initializer."""
    for stmt in plan.function.body.stmts:
        if isinstance(stmt, ir.Let) and stmt.binding is binding:
            return stmt.init
    raise KeyError(binding.name)


def struct_context(ty: StructType) -> dict:
    return {"name": cxx_name(ty.name), "rust_name": ty.name, "size": ty.size, "align": ty.align,
            "fields": [{"name": cxx_name(f.name), "rust_name": f.name, "type": cxx_type(f.ty), "offset": f.offset}
                       for f in ty.fields]}


def tuple_context(ty: TupleType) -> dict:
    return {"name": tuple_struct_name(ty),
            "fields": [{"name": f"f{i}", "type": cxx_type(t)} for i, t in enumerate(ty.elems)]}
