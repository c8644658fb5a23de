"""The kernel ABI → the typed Rust module of the Cargo hook (`rs2gpu_kernels.rs` and its runtime).

For each kernel `k(a: &mut [f64], b: &[f64], alpha: f64)` the module has

    pub fn k(gpu: &Gpu, a: &mut [f64], b: &[f64], alpha: f64) -> Result<(), Error>
    pub fn k_on(gpu: &Gpu, a: &mut DeviceBuffer<f64>, b: &DeviceBuffer<f64>, alpha: f64) -> Result<(), Error>
    pub fn ranges::k_0(a_len: usize) -> Result<Dim<usize>, RangeError>

`k` stages host data as the transfer plan says, `k_on` launches on data already on the GPU, and
`ranges::k_<n>` computes launch n's iteration space from the loop bounds, with the ABI's host
expressions translated into Rust here (so Rust evaluates them with its own semantics). The runtime
files (`Gpu`, `DeviceBuffer`, the driver loader) are fixed Rust source, `RUNTIME_FILES`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import rs2gpu
from rs2gpu.emit import environment
from rs2gpu.ir.abi import (ArgRole, BoundsCheck, CrateABI, EntryKind, EntryPoint, HostLet, KernelABI, Launch,
                           Layout, Param, ParamKind, Poly, Transfer, host_exprs)
from rs2gpu.ir.types import PRIMITIVES

MODULE_FILE = "rs2gpu_kernels.rs"
# rs2gpu's Rust runtime and the driver loader it includes: Rust source of the package (rs2gpu/rust, where cargo
# tests them), copied unchanged beside the module, which includes the runtime.
RUNTIME_FILES = tuple(Path(rs2gpu.__file__).resolve().parent / "rust" / "src" / name
                      for name in ("rs2gpu_runtime.rs", "rs2gpu_driver.rs"))
INT_TYPES = frozenset(p.name for p in PRIMITIVES.values() if p.is_int)
ARITHMETIC = {"+": "wrapping_add", "-": "wrapping_sub", "*": "wrapping_mul"}
TOO_MANY_ARGUMENTS = 7  # clippy's default limit
LINE_WIDTH = 110


class RustEmitError(ValueError):
    """The ABI holds something the Rust module cannot express (a bug in rs2gpu)."""


@dataclass
class Names:
    """Fresh Rust names for one generated function: the first `x` keeps its name, then `x_1`, `x_2`."""

    taken: set[str] = field(default_factory=set)

    def fresh(self, base: str) -> str:
        candidate, n = base, 0
        while candidate in self.taken:
            n += 1
            candidate = f"{base}_{n}"
        self.taken.add(candidate)
        return candidate


# ------------------------------------------------------------------ host expressions


@dataclass(frozen=True)
class Scope:
    """How a host expression's names read in one generated function, and what follows a fallible call."""

    params: dict[str, str]
    lengths: dict[str, str]
    locals: dict[str, str]
    reductions: dict[str, str]
    fallible: str  # e.g. "?" or ".map_err(|e| K.refused(e))?"


class HostExpr:
    """Renders one host expression (see `emit/hostexpr.py`) as Rust with the same meaning:
    wrapping integer arithmetic, masked shifts, panicking division, `as` casts, Rust's float min/max."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def render(self, e: dict) -> str:
        text, _ = self._expr(e)
        return text

    def _operand(self, e: dict) -> str:
        """`e` where it is an operand, a receiver or a cast's source: in parentheses unless atomic."""
        text, atomic = self._expr(e)
        return text if atomic else f"({text})"

    def _expr(self, e: dict) -> tuple[str, bool]:
        """The Rust text, and whether it is atomic (binds tighter than any operator)."""
        if "lit" in e:
            return literal(e["lit"], e["type"])
        if "param" in e:
            return self.scope.params[e["param"]], True
        if "len" in e:
            return self.scope.lengths[e["len"]], True
        if "local" in e:
            return self.scope.locals[e["local"]], True
        if "reduction" in e:
            return self.scope.reductions[e["reduction"]], True
        if "field" in e:
            return f"{self._operand(e['of'])}.{e['field']}", True
        if "tuple" in e:
            items = [self.render(x) for x in e["tuple"]]
            return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})", True
        if "cast" in e:
            return f"{self._operand(e['cast'])} as {e['type']}", False
        if "call" in e:
            return self._call(e["call"], e["args"], e["type"]), True
        return self._op(e["op"], e["args"], e["type"])

    def _call(self, name: str, args: list[dict], ty: str) -> str:
        receiver = self._operand(args[0])
        rest = ", ".join(self.render(a) for a in args[1:])
        if name in ("min", "max", "sqrt") or name.startswith("wrapping_"):
            return f"{receiver}.{name}({rest})"
        if name == "abs":
            return f"{receiver}.{'wrapping_abs' if ty in INT_TYPES else 'abs'}()"
        raise RustEmitError(f"no Rust rendering of host function `{name}`")

    def _op(self, op: str, args: list[dict], ty: str) -> tuple[str, bool]:
        if op == "neg":
            if ty in INT_TYPES:
                return f"{self._operand(args[0])}.wrapping_neg()", True
            return f"-{self._operand(args[0])}", False
        if op == "not":
            return f"!{self._operand(args[0])}", False
        a, b = args
        if ty in INT_TYPES:
            if op in ARITHMETIC:
                return f"{self._operand(a)}.{ARITHMETIC[op]}({self.render(b)})", True
            if op in ("/", "%"):
                helper = "div" if op == "/" else "rem"
                return f"runtime::{helper}({self.render(a)}, {self.render(b)}){self.scope.fallible}", True
            if op in ("<<", ">>"):
                method = "wrapping_shl" if op == "<<" else "wrapping_shr"
                return f"{self._operand(a)}.{method}({self._operand(b)} as u32)", True
        return f"{self._operand(a)} {op} {self._operand(b)}", False


def literal(value, ty: str) -> tuple[str, bool]:
    """A typed Rust literal, and whether it is atomic (a negative literal is not)."""
    if ty == "bool":
        return ("true" if value else "false"), True
    if ty in INT_TYPES:
        value = int(value)
        if value == PRIMITIVES[ty].min and value < 0:
            return f"{ty}::MIN", True
        return f"{value}{ty}", value >= 0
    number = float(value)
    if math.isnan(number):
        return f"{ty}::NAN", True
    if math.isinf(number):
        return (f"{ty}::INFINITY", True) if number > 0 else (f"{ty}::NEG_INFINITY", True)
    text = repr(abs(number))
    return (f"-{text}{ty}", False) if math.copysign(1.0, number) < 0 else (f"{text}{ty}", True)


def references(e, kind: str) -> list[str]:
    """The names the host expressions in `e` (an expression, or ABI objects and sequences holding them)
    refer to as `kind` ("param", "len", "local", "reduction", "element"), first use first."""
    out: list[str] = []

    def visit(x) -> None:
        if isinstance(x, dict):
            if kind in x and isinstance(x[kind], str):
                out.append(x[kind])
            for value in x.values():
                visit(value)
        elif isinstance(x, list):
            for value in x:
                visit(value)

    for expr in host_exprs(e):
        visit(expr)
    return list(dict.fromkeys(out))


def needed_locals(preamble: tuple[HostLet, ...], exprs) -> list[HostLet]:
    """The preamble `let`s that `exprs` read, directly or through other `let`s, in order."""
    needed = set(references(exprs, "local"))
    for let in reversed(preamble):
        if let.name in needed:
            needed |= set(references(let.expr, "local"))
    known = {let.name for let in preamble}
    missing = needed - known
    if missing:
        raise RustEmitError(f"host expression reads `{sorted(missing)[0]}`, which the host cannot compute")
    return [let for let in preamble if let.name in needed]


# ------------------------------------------------------------------ types


class Types:
    """Rust spellings of the ABI's layouts; `#[repr(C)]` structs by their path in the crate."""

    def __init__(self, struct_paths: dict[str, str]) -> None:
        self.struct_paths = struct_paths
        self.structs: dict[str, Layout] = {}  # path → layout, every struct met, nested ones included
        self.halves: set[str] = set()  # the paths of the half types met

    def of(self, layout: Layout) -> str:
        if layout.is_struct:
            path = self.struct_paths.get(layout.type, f"crate::{layout.type}")
            self.structs.setdefault(path, layout)
            for f in layout.fields:
                self.of(f.layout)
            return path
        if layout.elem is not None:
            return f"[{self.of(layout.elem)}; {layout.length}]"
        if PRIMITIVES[layout.type].kind == "half":
            path = f"::rs2gpu::{layout.type}"  # the support crate's, which the crate depends on
            self.halves.add(path)
            return path
        return layout.type


# ------------------------------------------------------------------ one kernel


def static_name(kernel: str) -> str:
    return kernel.upper()


def abi_sizes(entry: KernelABI, launch: Launch) -> list[int]:
    """The byte size of each argument of one launch, in the order the kernel takes them: the parameters
    (a slice's length where the launch reads it), each dimension's start and count, the launch's number
    in the call (when it can record or stop on a panic), whether an earlier launch can have panicked (a launch that stops after a panic), then per
    reduction its seed and the pointers to the blocks' partials and to its result, and the pointer to the
    done word (a launch that sets it)."""
    sizes = [part.size for p in entry.params for part in launch_abi(p, launch)]
    for dim in launch.dims:
        sizes += [PRIMITIVES[dim.index_type].size, 8]
    if launch.numbered:
        sizes.append(4)
    if launch.stops:
        sizes.append(1)
    for r in launch.reductions:
        sizes += [PRIMITIVES[r.type].size, 8, 8]
    if launch.signals_done:
        sizes.append(8)
    return sizes


def launch_abi(p: Param, launch: Launch) -> list:
    """The arguments parameter `p` becomes in `launch`: its parts, less a slice's length the launch does not
    read."""
    return [part for part in p.parts if part.role != ArgRole.LENGTH or p.name in launch.lengths]


def dims_type(launch: Launch) -> str:
    types = [f"Dim<{d.index_type}>" for d in launch.dims]
    return types[0] if len(types) == 1 else f"({', '.join(types)})"


class KernelModule:
    """The Rust text of one kernel's functions."""

    def __init__(self, name: str, entry: KernelABI, types: Types) -> None:
        self.name = name
        self.entry = entry
        self.static = static_name(name)
        self.params = entry.params
        self.types = types
        self.refused = f".map_err(|e| {self.static}.refused(e))?"

    # -------------------------------------------------------------- signatures

    def host_type(self, p: Param) -> str:
        mut = "mut " if p.mutable else ""
        if p.kind == ParamKind.SLICE:
            return f"&{mut}[{self.types.of(p.layout)}]"
        if p.kind == ParamKind.ARRAY:
            return f"&{mut}[{self.types.of(p.layout)}; {p.length}]"
        if p.kind == ParamKind.STRUCT_REF:
            return f"&{mut}{self.types.of(p.layout)}"
        return self.types.of(p.layout)

    def device_type(self, p: Param) -> str:
        if by_value(p):  # travels in the launch arguments: the host array itself
            return self.host_type(p)
        if p.in_memory:
            mut = "mut " if p.mutable else ""
            return f"&{mut}DeviceBuffer<{self.types.of(p.layout)}>"
        return self.types.of(p.layout)

    def returns(self) -> str:
        return self.entry.returns.type if self.entry.returns else "()"

    # -------------------------------------------------------------- ranges::<kernel>_<n>

    def range_function(self, index: int, launch: Launch, conditional: bool = False) -> dict:
        """`ranges::<kernel>_<index>`: the launch's iteration space after the host's checks of its
        unconditional accesses; with `conditional`, `ranges::<kernel>_<index>_in_bounds` instead: whether
        every access the loop makes only under a condition stays in bounds too."""
        bounds = launch.guarded_bounds if conditional else launch.bounds
        checks = () if conditional else launch.stride_checks
        exprs = [launch.dims, checks, [b.index for b in bounds]]
        lets = needed_locals(self.entry.preamble, exprs)
        used = references([exprs, lets], "param")
        lengths = references([exprs, lets, [{"len": b.param} for b in bounds]], "len")
        names = Names({p.name for p in self.params} | {let.name for let in lets})
        length_names = {p: names.fresh(f"{p}_len") for p in lengths}
        arguments = []  # (what the caller passes: "len" or "param", the kernel parameter, the Rust parameter)
        for p in self.params:
            if p.name in lengths:
                arguments.append(("len", p.name, f"{length_names[p.name]}: usize"))
            if p.name in used:
                arguments.append(("param", p.name, f"{p.name}: {self.host_type(p)}"))
        inputs = [declaration for _, _, declaration in arguments]
        scope = Scope({p: p for p in used}, length_names, {let.name: let.name for let in lets}, {}, "?")
        render = HostExpr(scope).render
        body = [f"let {let.name}: {let.type} = {render(let.expr)};" for let in lets]

        def poly(terms: Poly) -> str:
            """Σ coefficient · Π factors in i128: plain arithmetic when linear (no overflow: each factor is
            at most 64 bits), `runtime::poly` (checked) when a term multiplies factors."""
            if any(len(t.factors) > 1 for t in terms):
                items = ", ".join(f"({t.coefficient}, &[{', '.join(f'runtime::wide({render(f)})' for f in t.factors)}])"
                                  for t in terms)
                return f"runtime::poly(&[{items}])?"
            constant = sum(t.coefficient for t in terms if not t.factors)
            text = ""
            for t in terms:
                if t.factors:
                    c = t.coefficient
                    term = f"runtime::wide({render(t.factors[0])})"
                    term = term if abs(c) == 1 else f"{abs(c)} * {term}"
                    text += (f"-{term}" if c < 0 else term) if not text else (f" - {term}" if c < 0 else f" + {term}")
            if not text:
                return str(constant)
            return text if constant == 0 else f"{text} {'-' if constant < 0 else '+'} {abs(constant)}"

        for check in checks:
            body.append(f"runtime::require_disjoint({poly(check.poly)}, {json_str(check.source)})?;")
        dims, spans = [], []
        for d in launch.dims:
            var = names.fresh(d.index)
            dims.append(var)
            body.append(f"let {var} = ({render(d.start)}, {render(d.end)});")
            count = f"runtime::wide({var}.1) - runtime::wide({var}.0){' + 1' if d.inclusive else ''}"
            spans.append(f"(runtime::wide({var}.0), ({count}).max(0))")
        accesses = [self.host_access(b, length_names[b.param], poly) for b in bounds]
        loops = ", ".join(f"`{d.index}`" for d in launch.dims)
        if conditional:
            body.append(f"Ok(runtime::first_out_of_bounds(&[{', '.join(accesses)}], &[{', '.join(spans)}]).is_ok())")
            name, returns = f"{self.name}_{index}_in_bounds", "bool"
            doc = (f"Whether every access that launch {index} of `{self.name}` (the loop over {loops} at "
                   f"{launch.source}) makes only under a condition stays in bounds.")
        else:
            if bounds:
                body.append("// the accesses every iteration makes: Rust's panic names the first one out of bounds")
                body.append(f"runtime::first_out_of_bounds(&[{', '.join(accesses)}], &[{', '.join(spans)}])?;")
            for var, d in zip(dims, launch.dims):
                body.append(f"let {var} = runtime::range({var}.0, {var}.1, {'true' if d.inclusive else 'false'})?;")
            body.append(f"Ok({dims[0]})" if len(dims) == 1 else f"Ok(({', '.join(dims)}))")
            name, returns = f"{self.name}_{index}", dims_type(launch)
            doc = f"Launch {index} of `{self.name}`: the loop over {loops} at {launch.source}."
        return {"name": name, "signature": signature(name, inputs, f"Result<{returns}, RangeError>", "    "),
                "body": body,
                "arguments": [(kind, param) for kind, param, _ in arguments],
                "call_args": [f"{param}.len()" if kind == "len" else param for kind, param, _ in arguments],
                "doc": doc}

    @staticmethod
    def host_access(check: BoundsCheck, length: str, poly) -> str:
        """A host-checked access as the runtime's `HostAccess`."""
        index = check.index
        loops = []
        for lp in index.loops:  # Rust computes the bounds in the loop variable's type
            start, end = (f"runtime::wide(({poly(bound)}) as {lp.type})" for bound in (lp.start, lp.end))
            extent = f"({end} - {start}{' + 1' if lp.inclusive else ''}).max(0)"
            loops.append(f"runtime::AccessLoop {{ extent: {extent}, coefficient: {poly(lp.coefficient)}, "
                         f"start: {start}, at: {place(lp.at)} }}")
        loops = ", ".join(loops)
        return (f"runtime::HostAccess {{ len: {length}, rest: {poly(index.rest)}, "
                f"axes: &[{', '.join(poly(a) for a in index.axes)}], loops: &[{loops}], at: {place(index.at)}, "
                f"source: {json_str(check.source)} }}")

    # -------------------------------------------------------------- <kernel>_on

    def device_function(self) -> dict:
        entry = self.entry
        launches = entry.launches
        seeds = [[r.init for r in launch.reductions] for launch in launches]
        result = entry.returns.expr if entry.returns else None
        lets = needed_locals(entry.preamble, [seeds, result])
        names = Names({p.name for p in self.params} | {let.name for let in lets})
        gpu = names.fresh("gpu")
        kernel = names.fresh("kernel")
        args = names.fresh("args")
        scope = Scope({p.name: p.name for p in self.params},
                      {p.name: f"{p.name}.len()" for p in self.params if p.kind == ParamKind.SLICE},
                      {let.name: let.name for let in lets}, {}, self.refused)
        body = []
        ranges = []
        in_bounds = {}  # per launch with a variant that checks its conditional accesses: whether they stay in bounds
        for index, launch in enumerate(launches):
            spec = self.range_function(index, launch)
            dims = [names.fresh(d.index) for d in launch.dims]
            pattern = dims[0] if len(dims) == 1 else f"({', '.join(dims)})"
            body.append(f"let {pattern} = ranges::{spec['name']}({', '.join(spec['call_args'])}){self.refused};")
            ranges.append(dims)
            if launch.entry(EntryKind.CHECKED):
                spec = self.range_function(index, launch, conditional=True)
                in_bounds[index] = names.fresh("in_bounds")
                body.append(f"let {in_bounds[index]} = ranges::{spec['name']}({', '.join(spec['call_args'])})"
                            f"{self.refused};")
        body += [f"let {let.name}: {let.type} = {HostExpr(scope).render(let.expr)};" for let in lets]
        call = names.fresh("call")
        body += [f"let {kernel} = {gpu}.kernel(&{self.static})?;", f"let mut {call} = {kernel}.call({gpu});"]
        results: list[tuple[int, object]] = []  # (result word, reduction), in launch order
        for index, (launch, dims) in enumerate(zip(launches, ranges)):
            loops = ", ".join(d.index for d in launch.dims)
            loops = f"({loops})" if len(launch.dims) > 1 else f"`{loops}`"
            body += ["", f"// Launch {index}: the loop at {launch.source}, one thread per {loops}."]
            body.append(f"let mut {args} = {call}.args({index});")
            for p in self.params:
                body.append(self._push(args, p, launch))
            body += [f"{args}.dim(&{d});" for d in dims]
            if launch.numbered:
                body.append(f"{args}.number(); // which launch of the call records a panic")
            if index in in_bounds:
                body.append(f"{args}.conditional_in_bounds({in_bounds[index]}); // then its checks are left out")
            if launch.stops:
                # whether an earlier launch's entry point that checks everything can record a panic decides
                # whether this one must look at the panic record first
                may_stop = any(earlier.last_resort.records_panics for earlier in launches[:index])
                body.append(f"{args}.value(&{str(may_stop).lower()}); // an earlier launch can have panicked")
            for r in launch.reductions:
                seed = HostExpr(scope).render(r.init)
                body.append(f"{args}.reduction::<{r.type}>(&{seed}); "
                            f"// `{r.name}` starts here and combines by `{r.op}`")
                results.append((len(results), r))
            body.append(f"{args}.launch()?;")
        reductions: dict[str, str] = {}
        if entry.panics or results:
            what = " and ".join(w for w, needed in (("the panic the device recorded", entry.panics),
                                                    ("the results", results)) if needed)
            body += ["", f"// Wait for the launches, reading back {what} with one copy."]
            readback = names.fresh("results")
            body.append(f"let {readback} = {call}.finish()?;" if results else f"{call}.finish()?;")
            for word, r in results:
                value = names.fresh(r.name)
                reductions[r.name] = value
                body.append(f"let {value}: {r.type} = {readback}.value({word});")
        if result is None:
            body.append("Ok(())")
        else:
            result_scope = Scope(scope.params, scope.lengths, scope.locals, reductions, self.refused)
            body.append(f"Ok({HostExpr(result_scope).render(result)})")
        params = [f"{gpu}: &Gpu"] + [f"{p.name}: {self.device_type(p)}" for p in self.params]
        fixed = [f"`{p.name}` must hold {p.length or 1} element{'s' if (p.length or 1) != 1 else ''}"
                 for p in self.params if p.kind in (ParamKind.ARRAY, ParamKind.STRUCT_REF) and not by_value(p)]
        return {"name": f"{self.name}_on", "signature": signature(f"{self.name}_on", params, f"Result<{self.returns()}, Error>"),
                "body": body, "many": len(params) > TOO_MANY_ARGUMENTS,
                "note": f" ({', '.join(fixed)})" if fixed else ""}

    def _push(self, args: str, p: Param, launch: Launch) -> str:
        name, kind = p.name, p.kind
        if by_value(p):
            return f"{args}.value({name});"
        if kind == ParamKind.SLICE:
            push = "slice" if name in launch.lengths else "slice_pointer"
            return f"{args}.{push}({json_str(name)}, {name})?;"
        if kind == ParamKind.ARRAY:
            return f"{args}.fixed({json_str(name)}, {name}, {p.length})?;"
        if kind == ParamKind.STRUCT_REF:
            return f"{args}.fixed({json_str(name)}, {name}, 1)?;"
        return f"{args}.value(&{name});"

    # -------------------------------------------------------------- <kernel>

    def host_function(self) -> dict:
        names = Names({p.name for p in self.params})
        gpu = names.fresh("gpu")
        body, call, downloads = [], [gpu], []
        for p in self.params:
            name, kind = p.name, p.kind
            if not p.in_memory or by_value(p):
                call.append(name)
                continue
            staged = names.fresh(f"{name}_dev")
            mutable = p.mutable
            whole = f"std::slice::from_ref({name})" if kind == ParamKind.STRUCT_REF else name
            if p.transfer == Transfer.OUT:
                length = {ParamKind.SLICE: f"{name}.len()", ParamKind.ARRAY: str(p.length),
                          ParamKind.STRUCT_REF: "1"}[kind]
                body.append(f"let mut {staged} = DeviceBuffer::zeroed({gpu}, {length})?; "
                            f"// the kernel writes all of `{name}`: not uploaded")
            else:
                body.append(f"let {'mut ' if mutable else ''}{staged} = DeviceBuffer::from_slice({gpu}, {whole})?;")
            call.append(f"&mut {staged}" if mutable else f"&{staged}")
            if p.transfer in (Transfer.OUT, Transfer.INOUT):
                target = f"std::slice::from_mut({name})" if kind == ParamKind.STRUCT_REF else name
                downloads.append(f"{staged}.download({target})?;")
        invocation = f"{self.name}_on({', '.join(call)})"
        if not downloads:
            body.append(invocation if self.entry.returns else f"{invocation}?;")
            if not self.entry.returns:
                body.append(f"{gpu}.synchronize()")
        else:
            result = names.fresh("result")
            body.append(f"let {result} = {invocation}?;" if self.entry.returns else f"{invocation}?;")
            body += downloads
            body.append(f"Ok({result})" if self.entry.returns else "Ok(())")
        params = [f"{gpu}: &Gpu"] + [f"{p.name}: {self.host_type(p)}" for p in self.params]
        return {"name": self.name, "signature": signature(self.name, params, f"Result<{self.returns()}, Error>"), "body": body,
                "many": len(params) > TOO_MANY_ARGUMENTS}

    def context(self) -> dict:
        entry = self.entry
        transfers = [f"`{p.name}` {p.transfer.value}" for p in self.params if p.in_memory]
        return {
            "name": self.name, "static": self.static, "source": entry.source, "rust_path": entry.rust_path,
            "file": entry.files["cuda"], "fast_math": "true" if entry.fast_math else "false",
            "launches": [{"source": launch.source, "entries": [entry_source(entry, entry_abi, launch)
                                                               for entry_abi in launch.entry_points
                                                               if entry_abi.kind in RUST_ENTRY_KINDS],
                          "arguments": ", ".join(str(s) for s in abi_sizes(entry, launch)),
                          "reductions": len(launch.reductions),
                          "signals_done": str(launch.signals_done).lower()}
                         for launch in entry.launches],
            "result_words": entry.result_words,
            "ranges": [spec for i, launch in enumerate(entry.launches)
                       for spec in [self.range_function(i, launch)]
                       + ([self.range_function(i, launch, conditional=True)] if launch.entry(EntryKind.CHECKED)
                          else [])],
            "panics": [{"site": p.site, "kind": p.kind, "source": p.source} for p in entry.panics],
            "device": self.device_function(), "host": self.host_function(),
            "transfers": ", ".join(transfers) or "none",
        }


# The entry points the Rust runtime launches (its `EntryKind`), by their kind in the ABI; it runs the others'
# loops on the general one.
RUST_ENTRY_KINDS = {EntryKind.L2_ADDS: "L2Adds", EntryKind.VECTOR: "Vector", EntryKind.BLOCKS: "Blocks",
                    EntryKind.WARPS: "Warps", EntryKind.COLUMNS: "Columns", EntryKind.TILES: "Tiles",
                    EntryKind.COVERING: "Covering",
                    EntryKind.GENERAL: "General", EntryKind.CHECKED: "Checked"}


def entry_source(entry: KernelABI, point: EntryPoint, launch: Launch) -> str:
    """The `Entry` of one entry point: its kind, symbol, whether it can record a panic, the grid that covers
    the loop where it needs one, a vector entry point's lanes (the arguments that are the pointers to check
    for alignment, each one's first lane's offset from the loop variable, and the argument that is the
    loop's first index, the first after the parameters'), an L2-adds one's bytes per iteration, the threads per
    iteration of one that splits the inner loops and where it runs (`ir.abi.SplitIterations`)."""
    grid = "None"
    if point.grid is not None:
        block = ", ".join(str(b) for b in point.grid.block or (0, 0, 0))
        tile = ", ".join(str(t) for t in point.grid.tile)
        grid = (f"Some(Grid {{ block: [{block}], count_limit: {point.grid.count_limit}, lead: {point.grid.lead}, "
                f"tile: [{tile}], fill: {point.grid.fill} }})")
    lanes = "None"
    if point.vector is not None:
        positions, pointers, offsets = 0, [], []
        offset_of = {s.slice: s.offset for s in point.vector.aligned}
        for p in entry.params:
            for part in launch_abi(p, launch):
                if p.name in offset_of and part.role == ArgRole.POINTER:
                    pointers.append(positions)
                    offsets.append(offset_of[p.name])
                positions += 1
        lanes = (f"Some(Lanes {{ width: {point.vector.width}, pointers: &[{', '.join(map(str, pointers))}], "
                 f"offsets: &[{', '.join(map(str, offsets))}], start: {positions} }})")
    per_iteration = point.l2_adds.bytes_per_iteration if point.l2_adds is not None else 0
    threads, fill = (point.split.threads, point.split.fill) if point.split is not None else (0, 0)
    return (f'Entry {{ kind: EntryKind::{RUST_ENTRY_KINDS[point.kind]}, symbol: "{point.symbol}", '
            f'records_panics: {str(point.records_panics).lower()}, grid: {grid}, lanes: {lanes}, '
            f'bytes_per_iteration: {per_iteration}, threads_per_iteration: {threads}, fill: {fill} }}')


def by_value(p: Param) -> bool:
    """A `&[T; N]` the kernel takes in its launch arguments (see the transfer plan)."""
    return p.kind == ParamKind.ARRAY and p.transfer == Transfer.VALUE


def signature(name: str, params: list[str], returns: str, indent: str = "") -> list[str]:
    """`pub fn name(params) -> returns {`, one parameter per line when that is long."""
    one_line = f"{indent}pub fn {name}({', '.join(params)}) -> {returns} {{"
    if len(one_line) <= LINE_WIDTH:
        return [one_line]
    return [f"{indent}pub fn {name}(", *[f"{indent}    {p}," for p in params], f"{indent}) -> {returns} {{"]


def place(at: tuple[int, int]) -> str:
    """A (line, column) of the evaluation order as one number, as the runtime compares them."""
    return f"{at[0] << 32 | at[1]}"


def unsupported(entry: KernelABI) -> str | None:
    """Why the Rust module cannot launch this kernel yet (None when it can)."""
    if entry.schedule is not None:
        return "a host loop around its parallel loops"
    for launch in entry.launches:
        if any(r.location is not None for r in launch.reductions):
            return "a min/max-location reduction"
        if launch.index_lists:
            return "writes through an index list"
    if references([entry.preamble, entry.launches, entry.returns], "element"):
        return "a value read from a slice before the loop"
    return None


def json_str(text: str) -> str:
    """A Rust string literal (JSON escapes are valid Rust escapes for these texts)."""
    import json

    return json.dumps(text)


# ------------------------------------------------------------------ the module


def render_rust_module(crate: CrateABI, struct_paths: dict[str, str] | None = None,
                       version: str = "0") -> dict[str, str]:
    """The files of the Rust module for `crate`'s kernels: `rs2gpu_kernels.rs` and its runtime.

    `struct_paths` maps each `#[repr(C)]` struct's name to its path in the crate (default `crate::Name`).
    """
    if "cuda" not in crate.targets:
        raise RustEmitError("the Rust module launches the CUDA kernels: translate with the cuda target")
    types = Types(struct_paths or {})
    kernels = []
    functions: dict[str, str] = {}
    for name, entry in crate.kernels.items():
        if unsupported(entry):
            continue
        module = KernelModule(name, entry, types)
        context = module.context()
        for fn in (context["host"]["name"], context["device"]["name"]):
            if fn in functions:
                raise RustEmitError(f"kernels `{functions[fn]}` and `{name}` would both define `{fn}`; rename one")
            functions[fn] = name
        kernels.append(context)
    structs = [{"path": path, "size": layout.size, "align": layout.align, "name": layout.type}
               for path, layout in types.structs.items()]
    env = environment()
    context = {"version": version, "crate": crate.crate, "kernels": kernels, "structs": structs,
               "halves": sorted(types.halves),
               "block_size": crate.block_size, "module_file": MODULE_FILE,
               "reductions": any(launch.reductions for k in crate.kernels.values() if not unsupported(k)
                                 for launch in k.launches)}
    files = {MODULE_FILE: env.get_template("rust_kernels.j2").render(context)}
    for path in RUNTIME_FILES:
        files[path.name] = path.read_text(encoding="utf-8")
    return files


__all__ = ["render_rust_module", "unsupported", "MODULE_FILE", "RustEmitError", "HostExpr", "Scope", "literal"]
