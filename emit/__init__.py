"""Checked IR → text: one C++ file per kernel and target, and the crate's ABI (`ir.abi.CrateABI`).

`emit_crate(checked, targets)` renders every kernel for every dialect in `targets` through the same
templates; the vendor preludes and the `Dialect` table are the only places the targets differ.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import jinja2
from functools import lru_cache

from rs2gpu.emit.dialect import DIALECTS, Dialect
from rs2gpu.emit.abi import kernel_abi
from rs2gpu.emit.kernels import (PanicSites, global_names, helper_context, launch_context, records_panics,
                                 result_words, struct_context, tuple_context)
from rs2gpu.emit.consts import const_context
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.abi import BLOCK_SIZE, TENSOR_STAGING, CrateABI, KernelABI
from rs2gpu.ir.plan import CheckedCrate, HostLoop, KernelPlan
from rs2gpu.ir.types import PRIMITIVES, PrimType, TupleType
from rs2gpu.ir.walk import walk


@dataclass(frozen=True)
class EmittedCrate:
    files: dict[str, str]   # file name → text, e.g. "triad.cu"
    abi: CrateABI           # what the host side needs of every kernel; `manifest.json` is its JSON form


def _environment() -> jinja2.Environment:
    folder = resources.files("rs2gpu.templates")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)
    env.globals["tensor_staging"] = TENSOR_STAGING
    return env


_ENV = None


def environment() -> jinja2.Environment:
    global _ENV
    if _ENV is None:
        _ENV = _environment()
    return _ENV


def _int_types() -> list[dict]:
    from rs2gpu.emit.cxx_types import int_literal

    out = []
    for p in PRIMITIVES.values():
        # isize/usize are the same C++ types as i64/u64: one specialization each
        if not p.is_int or p.name in ("isize", "usize"):
            continue
        ty = PrimType(p.name)
        out.append({"name": p.name, "bits": p.bits, "carrier": "u64" if p.bits == 64 else "u32",
                    "unsigned": "u" + p.name[1:], "min": int_literal(p.min, ty), "max": int_literal(p.max, ty)})
    return out


def reachable_helpers(crate: ir.Crate, *roots) -> list[ir.Function]:
    """The helper fns that the IR under `roots` (a kernel's body, a loop's) calls, directly or not, callees
    first."""
    order: list[ir.Function] = []
    seen: set[str] = set()

    def visit(node) -> None:
        for call in walk(node):
            if isinstance(call, ir.Call) and call.func not in seen:
                seen.add(call.func)
                callee = crate.function(call.func)
                visit(callee.body)
                order.append(callee)

    for root in roots:
        visit(root)
    return order


def _tuple_types(functions) -> list[TupleType]:
    found: dict[TupleType, None] = {}

    def add(ty) -> None:
        if isinstance(ty, TupleType) and ty.elems and ty not in found:
            for t in ty.elems:
                add(t)
            found[ty] = None

    for fn in functions:
        add(fn.ret)
        for node in walk(fn.body):
            add(getattr(node, "ty", None))
    return list(found)


@lru_cache(maxsize=None)
def render_prelude(dialect: Dialect) -> str:
    """The vendor prelude and the shared one: the same text in every file of a dialect, rendered once."""
    return environment().get_template("prelude.j2").render(dialect=dialect, int_types=_int_types())


class CrateContext:
    """What every file of a crate shares, computed once: reserved names, struct and const definitions."""

    def __init__(self, checked: CheckedCrate) -> None:
        crate = checked.crate
        self.checked = checked
        self.reserved = global_names(crate)
        items = environment().get_template("crate_items.j2").module
        self.structs = items.structs([struct_context(s.ty) for s in crate.structs])
        self.consts = items.consts([const_context(c, crate) for c in crate.consts])
        self.const_defs = {c.name: c for c in crate.consts}


def kernel_context(shared: CrateContext, plan: KernelPlan, sites: PanicSites | None) -> dict:
    """Everything one kernel's file holds except the dialect: it is the same C++ for every target.
    `sites` None renders every access and division unchecked (only to measure what the checks cost)."""
    crate = shared.checked.crate
    helpers = reachable_helpers(crate, plan.function.body)
    rendered = _render_helpers(helpers, sites, shared.reserved)
    launches, helper_sites = [], []
    for i, loop in enumerate(plan.loops):
        called = reachable_helpers(crate, loop.body, *(let.init for let in plan.preamble if let.init is not None))
        helper_sites.append({site for f in called for site in rendered[f.name]["sites"]})
        launches.append(launch_context(plan, i, loop, sites, helper_sites[i], shared.reserved, shared.const_defs))
    # a launch in a host loop also runs after the launches of the loop's earlier steps, itself included
    for step in plan.schedule:
        inside = launches_in(step) if isinstance(step, HostLoop) else []
        if any(records_panics(launches[i]) for i in inside):
            for i in inside:
                if not launches[i]["stops"]:
                    launches[i] = launch_context(plan, i, plan.loops[i], sites, helper_sites[i], shared.reserved,
                                                 shared.const_defs, repeated=True)
    return {
        "block_size": BLOCK_SIZE,
        "crate_structs": shared.structs,
        "tuples": [tuple_context(t) for t in _tuple_types([plan.function, *helpers])],
        "crate_consts": shared.consts,
        "helpers": list(rendered.values()),
        "kernel": {
            "name": plan.name,
            "source": str(plan.function.span),
            "params": [{"name": p.binding.name, "rust_type": str(p.binding.ty), "transfer": p.transfer,
                        "reason": p.reason} for p in plan.params],
            "launches": launches,
            "result_words": result_words(plan),
        },
    }


def launches_in(loop: HostLoop) -> list[int]:
    """The launches a host loop runs, at any depth."""
    return [i for step in loop.body for i in (launches_in(step) if isinstance(step, HostLoop) else [step])]


def _render_helpers(helpers: list[ir.Function], sites: PanicSites | None, reserved) -> dict[str, dict]:
    """Every helper's C++, callees first. A helper that checks something takes the caller's iteration, and
    so does one that calls such a helper: the helpers are rendered again until a pass finds no new one, so
    that every call agrees with its callee (one pass more than a cycle of calls needs)."""
    while True:
        known = set(sites.checked_helpers) if sites is not None else set()
        rendered = {}
        for f in helpers:
            rendered[f.name] = helper_context(f, sites, reserved)
            if sites is not None and rendered[f.name]["checks"]:
                sites.checked_helpers.add(f.name)
        if sites is None or sites.checked_helpers == known:
            return rendered


def render_code(context: dict) -> str:
    """The C++ of one kernel after its header and the prelude: the same text for every dialect."""
    return environment().get_template("kernel.j2").render(context)


def render_kernel(context: dict, code: str, dialect: Dialect, version: str) -> str:
    """The file of one kernel for one dialect: its header, the dialect's prelude, then `code` (from
    `render_code`)."""
    header = environment().get_template("kernel_header.j2").render(context, dialect=dialect, version=version,
                                                                   prelude=render_prelude(dialect))
    return header + code


def emit_crate(checked: CheckedCrate, targets: tuple[str, ...] = ("cuda", "hip"), version: str = "0",
               device_checks: bool = True) -> EmittedCrate:
    """`device_checks=False` leaves out every check on the device (bounds, divisions, index-list
    verification): code that is not safe to run, for measuring what the checks cost (bench/check_cost.py)."""
    files: dict[str, str] = {}
    kernels = {}
    shared = CrateContext(checked)
    for plan in checked.kernels:
        kernel_files, kernels[plan.name] = emit_kernel(shared, plan, targets, version, device_checks)
        files.update(kernel_files)
    return EmittedCrate(files, CrateABI(checked.crate.name, version, tuple(targets), kernels))


def emit_kernel(shared: CrateContext, plan: KernelPlan, targets: tuple[str, ...], version: str,
                device_checks: bool = True) -> tuple[dict[str, str], KernelABI]:
    """One kernel's files (one per target) and its ABI; it depends on the rest of the crate only through
    `shared`."""
    sites = PanicSites()
    context = kernel_context(shared, plan, sites if device_checks else None)
    code = render_code(context)
    files, names = {}, {}
    for target in targets:
        dialect = DIALECTS[target]
        file_name = plan.name + dialect.file_suffix
        files[file_name] = render_kernel(context, code, dialect, version)
        names[target] = file_name
    return files, kernel_abi(plan, names, shared.const_defs, sites.sites, context["kernel"]["launches"],
                             shared.reserved)


__all__ = ["emit_crate", "emit_kernel", "CrateContext", "EmittedCrate", "render_kernel"]
