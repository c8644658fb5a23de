"""A readable, Rust-like text form of the typed IR, for golden tests and `--emit=ir`.

The text shows every type that is not evident from the syntax:

    fn dot(a: &[f64], b: &[f64]) -> f64 {
        let mut sum: f64 = 0.0f64;
        for i: usize in 0usize..(a.len(): usize) {
            sum += (a[i]: f64 * b[i]: f64);
        }
        sum
    }

- literals carry their type as a suffix (`1.0f64`, `3usize`, `true`);
- `let`, parameters and `for` variables show their binding's type, so variables need no annotation;
- index, field, call, intrinsic and const uses, and `if`/`match`/`loop`/block expressions whose type is
  not `()`, are followed by `: T`; such an operand of a method, cast or unary operator is parenthesized;
- binary operators and casts are always parenthesized, so the tree's shape is never in doubt;
- a name bound more than once in a function gets a suffix from its second binding on (`x`, `x#1`);
- expression statements end with `;` as in Rust (block-like ones of type `()` need none); a block's
  tail, its value, is the last line without one.

Output is deterministic: it depends only on the IR, never on object identities or dict order. Node
identities (`node_id`) are not shown: their values depend on what else the process has lowered.
"""
from __future__ import annotations

from rs2gpu.ir import nodes as ir
from rs2gpu.ir.types import UNIT, StructType

_INDENT = "    "
_ANNOTATED = (ir.Index, ir.Field, ir.Call, ir.Intrinsic, ir.ConstRef)
_BLOCK_LIKE = (ir.If, ir.Match, ir.Loop, ir.BlockExpr, ir.For, ir.While)
# Literal texts of the non-finite associated constants (`f64::NAN`); no Rust literal is spelled so.
_SPECIAL_FLOATS = {"inf": "INFINITY", "-inf": "NEG_INFINITY", "nan": "NAN"}


def format_crate(crate: ir.Crate) -> str:
    """Structs, consts, then functions, in the crate's (dependency) order, separated by blank lines."""
    parts = [_format_struct(s) for s in crate.structs]
    parts += [_format_const(c) for c in crate.consts]
    parts += [format_function(f) for f in crate.functions]
    return "\n".join(parts)


def format_function(fn: ir.Function) -> str:
    return _FunctionPrinter().function(fn)


def _format_struct(struct: ir.StructDef) -> str:
    ty = struct.ty
    if not isinstance(ty, StructType):
        return f"struct {ty}; // not a struct type\n"
    lines = [f"#[repr(C)] // size {ty.size}, align {ty.align}", f"struct {ty.name} {{"]
    lines += [f"{_INDENT}{f.name}: {f.ty}, // offset {f.offset}" for f in ty.fields]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _format_const(const: ir.ConstDef) -> str:
    return f"const {const.name}: {const.ty} = {_FunctionPrinter().expr(const.value)};\n"


def _literal(lit: ir.Lit) -> str:
    if isinstance(lit.value, bool):
        return "true" if lit.value else "false"
    special = _SPECIAL_FLOATS.get(lit.text)
    if special is not None:
        return f"{lit.ty}::{special}"
    return f"{lit.text}{lit.ty}"


class _FunctionPrinter:
    def __init__(self) -> None:
        self.names: dict[ir.Binding, str] = {}
        self.seen: dict[str, int] = {}

    # ------------------------------------------------------------ names

    def name(self, binding: ir.Binding) -> str:
        """The binding's display name; the first binding of a name keeps it, later ones get `#n`."""
        shown = self.names.get(binding)
        if shown is None:
            count = self.seen.get(binding.name, 0)
            self.seen[binding.name] = count + 1
            shown = binding.name if count == 0 else f"{binding.name}#{count}"
            self.names[binding] = shown
        return shown

    def declare(self, binding: ir.Binding) -> str:
        mut = "mut " if binding.mutable else ""
        return f"{mut}{self.name(binding)}: {binding.ty}"

    # ------------------------------------------------------------ items

    def function(self, fn: ir.Function) -> str:
        lines = []
        if fn.type_args:
            lines.append(f"// {fn.source_name}::<{', '.join(map(str, fn.type_args))}>")
        if fn.is_kernel:
            lines.append("#[kernel(fast_math)]" if fn.fast_math else "#[kernel]")
        params = ", ".join(self.declare(p) for p in fn.params)
        ret = "" if fn.ret == UNIT else f" -> {fn.ret}"
        lines.append(f"fn {fn.name}({params}){ret} {self.block(fn.body, 0)}")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------ blocks and statements

    def block(self, block: ir.Block, depth: int) -> str:
        if not block.stmts and block.tail is None:
            return "{}"
        inner = _INDENT * (depth + 1)
        lines = ["{"]
        for stmt in block.stmts:
            lines.append(inner + self.stmt(stmt, depth + 1))
        if block.tail is not None:
            lines.append(inner + self.expr(block.tail, depth + 1))
        lines.append(_INDENT * depth + "}")
        return "\n".join(lines)

    def stmt(self, stmt, depth: int) -> str:
        if isinstance(stmt, ir.Let):
            init = "" if stmt.init is None else " = " + self.expr(stmt.init, depth)
            return f"let {self.declare(stmt.binding)}{init};"
        if isinstance(stmt, ir.Assign):
            op = "=" if stmt.op is None else stmt.op + "="
            return f"{self.bare(stmt.target, depth)} {op} {self.expr(stmt.value, depth)};"
        if isinstance(stmt, ir.ExprStmt):
            text = self.expr(stmt.expr, depth)
            return text if isinstance(stmt.expr, _BLOCK_LIKE) and stmt.expr.ty == UNIT else text + ";"
        return f"<unknown statement {type(stmt).__name__}>;"

    # ------------------------------------------------------------ expressions

    def expr(self, e, depth: int = 0) -> str:
        """`e` with its type annotation when the syntax does not show it."""
        text = self.bare(e, depth)
        return f"{text}: {e.ty}" if _annotated(e) else text

    def operand(self, e, depth: int) -> str:
        """`e` where a postfix or prefix operator follows or precedes it: parenthesized if needed."""
        text = self.bare(e, depth)
        if _annotated(e):
            return f"({text}: {e.ty})"
        if isinstance(e, (ir.Unary, ir.Return, ir.Break)) or text.startswith("-"):
            return f"({text})"
        return text

    def bare(self, e, depth: int) -> str:
        method = getattr(self, "_" + type(e).__name__.lower(), None)
        if method is None:
            return f"<unknown expression {type(e).__name__}>"
        return method(e, depth)

    def _lit(self, e: ir.Lit, depth: int) -> str:
        return _literal(e)

    def _var(self, e: ir.Var, depth: int) -> str:
        return self.name(e.binding)

    def _constref(self, e: ir.ConstRef, depth: int) -> str:
        return e.name

    def _unary(self, e: ir.Unary, depth: int) -> str:
        return e.op + self.operand(e.operand, depth)

    def _binary(self, e: ir.Binary, depth: int) -> str:
        return f"({self.expr(e.lhs, depth)} {e.op} {self.expr(e.rhs, depth)})"

    def _cast(self, e: ir.Cast, depth: int) -> str:
        return f"({self.operand(e.operand, depth)} as {e.ty})"

    def _index(self, e: ir.Index, depth: int) -> str:
        return f"{self.place_base(e.base, depth)}[{self.expr(e.index, depth)}]"

    def _field(self, e: ir.Field, depth: int) -> str:
        return f"{self.place_base(e.base, depth)}.{e.name}"

    def place_base(self, e, depth: int) -> str:
        """The base of an index or field: a place chain prints bare, anything else as an operand."""
        if isinstance(e, (ir.Var, ir.Index, ir.Field)):
            return self.bare(e, depth)
        return self.operand(e, depth)

    def _intrinsic(self, e: ir.Intrinsic, depth: int) -> str:
        if not e.args:
            return f"{e.name}()"
        receiver, *rest = e.args
        args = ", ".join(self.expr(a, depth) for a in rest)
        return f"{self.operand(receiver, depth)}.{e.name}({args})"

    def _call(self, e: ir.Call, depth: int) -> str:
        return f"{e.func}({', '.join(self.expr(a, depth) for a in e.args)})"

    def _structlit(self, e: ir.StructLit, depth: int) -> str:
        fields = ", ".join(f"{name}: {self.expr(value, depth)}" for name, value in e.fields)
        return f"{e.struct} {{ {fields} }}"

    def _tuplelit(self, e: ir.TupleLit, depth: int) -> str:
        elems = [self.expr(x, depth) for x in e.elems]
        return f"({elems[0]},)" if len(elems) == 1 else f"({', '.join(elems)})"

    def _arraylit(self, e: ir.ArrayLit, depth: int) -> str:
        if e.repeat is not None:
            return f"[{self.expr(e.elems[0], depth)}; {e.repeat}]"
        return f"[{', '.join(self.expr(x, depth) for x in e.elems)}]"

    def _if(self, e: ir.If, depth: int) -> str:
        text = f"if {self.expr(e.cond, depth)} {self.block(e.then, depth)}"
        orelse = e.orelse
        if orelse is None:
            return text
        if not orelse.stmts and isinstance(orelse.tail, ir.If) and orelse.tail.ty == orelse.ty:
            return f"{text} else {self.bare(orelse.tail, depth)}"
        return f"{text} else {self.block(orelse, depth)}"

    def _match(self, e: ir.Match, depth: int) -> str:
        inner = _INDENT * (depth + 1)
        suffix = str(e.scrutinee.ty)
        lines = [f"match {self.expr(e.scrutinee, depth)} {{"]
        for arm in e.arms:
            patterns = " | ".join(_pattern(p, suffix) for p in arm.patterns) if arm.patterns else "_"
            lines.append(f"{inner}{patterns} => {self.expr(arm.body, depth + 1)},")
        lines.append(_INDENT * depth + "}")
        return "\n".join(lines)

    def _blockexpr(self, e: ir.BlockExpr, depth: int) -> str:
        return self.block(e.block, depth)

    def _for(self, e: ir.For, depth: int) -> str:
        dots = "..=" if e.inclusive else ".."
        return (f"for {self.declare(e.var)} in {self.operand(e.start, depth)}{dots}{self.operand(e.end, depth)} "
                f"{self.block(e.body, depth)}")

    def _while(self, e: ir.While, depth: int) -> str:
        return f"while {self.expr(e.cond, depth)} {self.block(e.body, depth)}"

    def _loop(self, e: ir.Loop, depth: int) -> str:
        return f"loop {self.block(e.body, depth)}"

    def _break(self, e: ir.Break, depth: int) -> str:
        return "break" if e.value is None else f"break {self.expr(e.value, depth)}"

    def _continue(self, e: ir.Continue, depth: int) -> str:
        return "continue"

    def _return(self, e: ir.Return, depth: int) -> str:
        return "return" if e.value is None else f"return {self.expr(e.value, depth)}"


def _annotated(e) -> bool:
    return isinstance(e, _ANNOTATED) or (isinstance(e, _BLOCK_LIKE) and e.ty != UNIT)


def _pattern(p: int | tuple[int, int], suffix: str) -> str:
    if isinstance(p, tuple):
        return f"{p[0]}{suffix}..={p[1]}{suffix}"
    return f"{p}{suffix}"


__all__ = ["format_crate", "format_function"]
