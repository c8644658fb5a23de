"""Crate-level lowering: item tables, type syntax, consts, structs, and helper monomorphization.

`lower_crate(name, files)` is the frontend's door: parsed files in, an `ir.Crate` (and diagnostics)
out. Function bodies are lowered by `lower_body.FunctionLowerer`.
"""
from __future__ import annotations

from contextlib import contextmanager

from tree_sitter import Node

from rs2gpu.frontend import infer
from rs2gpu.frontend.consteval import NotConstant, evaluate
from rs2gpu.frontend.generics import UnknownBound, check_bounds, is_open, type_param_bounds, witness
from rs2gpu.frontend.halves import half_named
from rs2gpu.frontend.items import (RawItem, attribute_options, collect_items, generic_names, is_kernel, is_repr_c,
                                   kernel_attribute, token_list)
from rs2gpu.frontend.lower_body import HEAP_HELP, HEAP_TYPES, FunctionLowerer
from rs2gpu.frontend.source import SourceFile, text_of
from rs2gpu.frontend.uses import Uses
from rs2gpu.ir import nodes
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.nodes import Span
from rs2gpu.ir.walk import walk
from rs2gpu.ir.types import (PRIM_NAMES, UNIT, ArrayType, PrimType, RefType, SliceType, StructType,
                             TupleType, Type)


class LoweringError(Exception):
    """Stops lowering the current item after a diagnostic has been recorded."""


class CrateLowerer:
    def __init__(self, crate_name: str, files: list[SourceFile],
                 instances: dict[str, list[tuple[str, ...]]] | None = None) -> None:
        self.crate_name = crate_name
        # the instantiations a caller names for generic kernels without `types(...)` (see generics.py)
        self._requested = instances or {}
        self.files = files
        self.diagnostics = DiagnosticSink()
        self.items: dict[str, RawItem] = {}
        self.structs: dict[str, StructType] = {}
        self.struct_defs: list[nodes.StructDef] = []
        self.consts: dict[str, nodes.ConstDef] = {}
        self.const_values: dict[str, int | float | bool] = {}
        self.functions: dict[str, nodes.Function] = {}
        self._in_progress: set[str] = set()  # structs and consts being lowered
        self._lowering: dict[str, RawItem] = {}  # the functions being lowered, by IR name, callers first
        self._failed: set[str] = set()
        self._failed_items: set[tuple[str, str]] = set()
        self._duplicates: list[tuple[RawItem, RawItem]] = []
        self._used: set[tuple[str, str]] = set()  # (kind, name) of every item kernels reach
        self._kernel_options: dict[str, dict] = {}
        self.uses = Uses(files)
        self._index_items(collect_items(files))

    # ------------------------------------------------------------ items

    def _index_items(self, raw: list[RawItem]) -> None:
        for item in raw:
            previous = self.items.get(item.name)
            if previous is not None and previous.kind == item.kind:
                self._duplicates.append((item, previous))
                continue
            self.items[item.name] = item

    def _report_duplicates(self) -> None:
        """Two items of one kind and name (in different modules) are an error once kernels use the name;
        host code beside the kernels may reuse names freely."""
        for item, previous in self._duplicates:
            if is_kernel(item) or is_kernel(previous) or (item.kind, item.name) in self._used:
                self.diagnostics.error(
                    "RG0010", f"the name `{item.name}` is defined multiple times",
                    item.file.span(item.node.child_by_field_name("name")), f"`{item.name}` redefined here",
                    notes=(nodes_note("previous definition here", previous),),
                    help="rs2gpu puts every kernel, helper, const and struct of a crate in one namespace; "
                         "rename one of them")

    def kernel_items(self) -> list[RawItem]:
        return [i for i in self.items.values() if is_kernel(i)]

    def lower(self) -> nodes.Crate:
        for item in self.kernel_items():
            try:
                for type_args in self.kernel_instances(item):
                    try:
                        self.lower_function(item, type_args, as_kernel=True)
                    except LoweringError:
                        pass
            except LoweringError:
                pass
        for fn in self.functions.values():
            if is_open(fn):
                check_bounds(fn, self.diagnostics)
        self._report_duplicates()
        ordered = tuple(self.functions.values())
        return nodes.Crate(self.crate_name, "", tuple(self.struct_defs), tuple(self.consts.values()),
                           ordered, {f.name: f.text for f in self.files})

    # ------------------------------------------------------------ functions

    def lower_function(self, item: RawItem, type_args: tuple[Type, ...], as_kernel: bool = False,
                       arrays: tuple[tuple[int, int], ...] = ()) -> str:
        """Lower `item` for `type_args` (once) and return the IR name of that instantiation. `arrays`: the
        (position, length) of each `&[T]` parameter that the call passes an array `&[T; N]` to (rustc's
        unsizing coercion): that instantiation takes the array, whose length it knows."""
        ir_name = item.name if not type_args else item.name + "_" + "_".join(map(_type_token, type_args))
        ir_name += "".join(f"_p{position}len{length}" for position, length in arrays)
        self._used.add(("fn", item.name))
        taken = self.functions.get(ir_name)
        other = self.items.get(ir_name)
        if taken is not None and taken.source_name != item.name or (type_args or arrays) and other is not None \
                and other.kind == "fn" and (is_kernel(other) or ("fn", ir_name) in self._used):
            self.diagnostics.error(
                "RG0010", f"`{item.name}::<{', '.join(map(str, type_args))}>` and the fn `{ir_name}` would have "
                          f"one name in the generated code", item.file.span(item.node.child_by_field_name("name")),
                f"instantiated as `{ir_name}`", help=f"rename the fn `{ir_name}`")
            raise LoweringError()
        if ir_name in self.functions or ir_name in self._failed:
            return ir_name  # a failed function was reported once; its callers just stop
        self._lowering[ir_name] = item
        fn = None
        try:
            lowerer = FunctionLowerer(self, item, type_args, ir_name, as_kernel, arrays=dict(arrays))
            fn = lowerer.lower()
        finally:
            del self._lowering[ir_name]
            if fn is None:
                self._failed.add(ir_name)
        if fn is not None:
            self.functions[ir_name] = fn
        return ir_name

    def lower_callee(self, item: RawItem, type_args: tuple[Type, ...], arrays: tuple[tuple[int, int], ...] = ()) -> str:
        """The IR name of the instantiation of `item` for `type_args` that a call names, lowered if it was not;
        LoweringError where its lowering failed (its error was reported then: the caller just stops)."""
        ir_name = self.lower_function(item, type_args, arrays=arrays)
        if ir_name not in self.functions:
            raise LoweringError()
        return ir_name

    def reject_recursion(self, callee: RawItem, call: Node, file: SourceFile) -> None:
        """RG0016 where a call in the function being lowered calls a function still being lowered, whatever
        its type arguments: the call closes a cycle of helpers, and a GPU thread's stack is too small for
        recursion whose depth depends on the data."""
        chain = list(self._lowering.values())
        first = next((k for k, item in enumerate(chain) if item is callee), None)
        if first is None:
            return
        cycle = [item.name for item in chain[first:]]
        if len(cycle) == 1:
            message, label = f"recursive helper `{callee.name}` calls itself", "recursive call"
        else:
            names = ", ".join(f"`{name}`" for name in cycle[:-1]) + f" and `{cycle[-1]}`"
            message = f"recursive helpers {names} call each other"
            label = "this call closes the cycle " + " -> ".join(f"`{name}`" for name in [*cycle, callee.name])
        self.error("RG0016", message, file, call, label,
                   help="write a loop instead (keeping pending work in a fixed-size array where it needs a stack): "
                        "a GPU thread has a small stack, which deep recursion overflows",
                   notes=(nodes_note(f"`{callee.name}` is defined here", callee),))

    def kernel_options(self, item: RawItem) -> dict:
        """The arguments of `#[kernel(...)]`: `fast_math`, and `types(...)`, the instantiations of a generic
        kernel (each a type, or a parenthesized list of types for several type parameters)."""
        if item.name in self._kernel_options:
            return self._kernel_options[item.name]
        attr = kernel_attribute(item)
        options = {"fast_math": False, "types": None}
        for name, value in attribute_options(attr) if attr is not None else ():
            if name == "fast_math" and value is None:
                options["fast_math"] = True
            elif name == "types" and value is not None:
                options["types"] = [self._instance_types(entry, item) for entry in value]
            else:
                self.diagnostics.error("RG0002", f"unknown kernel option `{name}`", item.file.span(attr),
                                       help="the options are `fast_math` and `types(...)`")
        self._kernel_options[item.name] = options
        return options

    def kernel_instances(self, item: RawItem) -> list[tuple[Type, ...]]:
        """The type arguments of each instantiation of a kernel: `[()]` for a kernel that is not generic."""
        type_params = generic_names(item.node)
        instances = self.kernel_options(item)["types"]
        name = item.file.span(item.node.child_by_field_name("name"))
        if not type_params and instances is None:
            return [()]
        if not type_params:
            self.diagnostics.error("RG0014", f"kernel `{item.name}` lists `types(...)` but has no type parameter",
                                   name, help="remove `types(...)`, or make the kernel generic")
            raise LoweringError()
        if instances is None:
            requested = self._requested.get(item.name)
            if requested is None:
                return [self._checked_generically(item, type_params)]
            instances = [tuple(self._requested_type(t, item) for t in types) for types in requested]
        if not instances:
            example = ", ".join(["f32"] * len(type_params))
            example = example if len(type_params) == 1 else f"({example})"
            self.diagnostics.error(
                "RG0014", f"generic kernel `{item.name}` lists no instantiation in `types()`", name,
                help=f"list the instantiations in the attribute, e.g. `#[kernel(types({example}, ...))]`, "
                     f"or leave `types(...)` out to instantiate it at its calls")
            raise LoweringError()
        seen = []
        for types in instances:
            if len(types) != len(type_params):
                self.diagnostics.error(
                    "RG0014", f"kernel `{item.name}` has {len(type_params)} type parameter(s), but an instantiation "
                              f"lists {len(types)} type(s)", name,
                    help=f"give each instantiation one type per parameter ({', '.join(type_params)})")
                raise LoweringError()
            if types in seen:
                self.diagnostics.error("RG0014", f"kernel `{item.name}` is instantiated twice with "
                                                 f"`{', '.join(map(str, types))}`", name)
                raise LoweringError()
            seen.append(types)
        return seen

    def _checked_generically(self, item: RawItem, type_params: list[str]) -> tuple[Type, ...]:
        """The type arguments that check a generic kernel's body for every type its bounds admit."""
        try:
            bounds = type_param_bounds(item.node, type_params)
        except UnknownBound as unknown:
            self.diagnostics.error(
                "RG0014", f"the bound `{unknown.bound}` of kernel `{item.name}` is not one rs2gpu can check",
                item.file.span(unknown.node), "a trait whose implementations rs2gpu does not know",
                help="bound the type parameters with std traits of the primitive types (Copy, PartialOrd, "
                     "Add<Output = T>, ...), or list the instantiations with `#[kernel(types(...))]`")
            raise LoweringError()
        witnesses = tuple(witness(param, bounds[param]) for param in type_params)
        for param, found in zip(type_params, witnesses):
            if found is None:
                self.diagnostics.error(
                    "RG0014", f"no primitive type satisfies the bounds of `{param}` in kernel `{item.name}`",
                    item.file.span(item.node.child_by_field_name("type_parameters")),
                    help="list the instantiations with `#[kernel(types(...))]`")
                raise LoweringError()
        return witnesses

    def _requested_type(self, name: str, item: RawItem) -> Type:
        """A type a caller names for a generic kernel's instantiation: a primitive type or a struct."""
        if name in PRIM_NAMES:
            return PrimType(name)
        where = item.node.child_by_field_name("name")
        return half_named(self, name.split("::"), item.file, where) or self.struct_type(name, item.file, where)

    def _instance_types(self, entry: list[Node], item: RawItem) -> tuple[Type, ...]:
        """One instantiation of `types(...)`: a type, or `(T1, T2)` for several type parameters."""
        if len(entry) == 1 and entry[0].type == "token_tree":
            return tuple(self._instance_types(part, item)[0] for part in token_list(entry[0]))
        text = " ".join(text_of(t) for t in entry)
        if len(entry) == 1 and entry[0].type == "primitive_type" and text in PRIM_NAMES:
            return (PrimType(text),)
        if len(entry) == 1 and entry[0].type in ("identifier", "type_identifier"):
            return (half_named(self, [text], item.file, entry[0]) or self.struct_type(text, item.file, entry[0]),)
        self.diagnostics.error("RG0003", f"`{text}` cannot instantiate a kernel", item.file.span(entry[0]),
                               help="instantiate kernels with primitive types and #[repr(C)] structs")
        raise LoweringError()

    # ------------------------------------------------------------ types

    def lower_type(self, node: Node, file: SourceFile, generics: dict[str, Type]) -> Type:
        kind = node.type
        if kind == "primitive_type":
            name = text_of(node)
            if name in PRIM_NAMES:
                return PrimType(name)
            self.unsupported(file, node, f"the type `{name}`",
                             "use bool, i8..i64, u8..u64, isize, usize, f32 or f64, or rs2gpu's f16 or bf16")
        if kind == "reference_type":
            mutable = any(c.type == "mutable_specifier" for c in node.children)
            if any(c.type == "lifetime" for c in node.children):
                pass  # lifetimes do not change what the GPU sees
            return RefType(self.lower_type(node.child_by_field_name("type"), file, generics), mutable)
        if kind == "array_type":
            elem = self.lower_type(node.child_by_field_name("element"), file, generics)
            length = node.child_by_field_name("length")
            if length is None:
                return SliceType(elem)
            return ArrayType(elem, self.const_usize(length, file))
        if kind == "tuple_type":
            return TupleType(tuple(self.lower_type(c, file, generics) for c in node.named_children))
        if kind == "unit_type":
            return UNIT
        if kind == "type_identifier":
            name = text_of(node)
            if name in generics:
                return generics[name]
            return half_named(self, [name], file, node) or self.struct_type(name, file, node)
        if kind == "scoped_type_identifier":
            half = half_named(self, text_of(node).replace(" ", "").split("::"), file, node)
            return half or self.struct_type(text_of(node.child_by_field_name("name")), file, node)
        base = node.child_by_field_name("type") if kind == "generic_type" else None
        if base is not None and text_of(base).split("::")[-1] in HEAP_TYPES:
            self.unsupported(file, node, f"the type `{text_of(node)}`", HEAP_HELP)
        self.unsupported(file, node, f"the type `{text_of(node)}`",
                         "kernels use primitive types, slices, fixed-size arrays, tuples and #[repr(C)] structs")

    def struct_type(self, name: str, file: SourceFile, use: Node) -> StructType:
        if name not in self.structs and (name not in self.items or self.items[name].kind != "struct"):
            imported = self.uses.path(name, file, use)  # `use crate::m::Particle as P;`
            name = imported[-1] if imported is not None else name
        if name in self.structs:
            return self.structs[name]
        item = self.items.get(name)
        if item is None or item.kind != "struct":
            self.error("RG0004", f"cannot find type `{name}` in this crate", file, use, "not found")
        self._used.add(("struct", name))
        with self._reported_once(("struct", name)):
            return self._lower_struct(name, item)

    def _lower_struct(self, name: str, item: RawItem) -> StructType:
        if not is_repr_c(item):
            self.error("RG0009", f"struct `{name}` is not `#[repr(C)]`", item.file,
                       item.node.child_by_field_name("name"), "used by a kernel here",
                       help=f"add `#[repr(C)]` above `struct {name}` so that the host and the GPU agree on its layout")
        if name in self._in_progress:
            self.error("RG0003", f"struct `{name}` contains itself", item.file, item.node)
        self._in_progress.add(name)
        try:
            members = []
            body = item.node.child_by_field_name("body")
            if body is None or body.type != "field_declaration_list":
                self.unsupported(item.file, item.node, "a tuple or unit struct", "use a struct with named fields")
            for f in body.named_children:
                if f.type != "field_declaration":
                    continue
                members.append((text_of(f.child_by_field_name("name")),
                                self.lower_type(f.child_by_field_name("type"), item.file, {})))
        finally:
            self._in_progress.discard(name)
        for field_name, ty in members:
            if not isinstance(ty, (PrimType, StructType, ArrayType)):
                self.unsupported(item.file, item.node, f"a struct field of type `{ty}`",
                                 "struct fields are scalars, arrays or other #[repr(C)] structs")
        ty = StructType.layout(name, members)
        self.structs[name] = ty
        self.struct_defs.append(nodes.StructDef(ty, item.file.span(item.node)))
        return ty

    # ------------------------------------------------------------ consts

    def const(self, name: str) -> nodes.ConstDef | None:
        if name in self.consts:
            return self.consts[name]
        item = self.items.get(name)
        if item is None or item.kind != "const":
            return None
        self._used.add(("const", name))
        with self._reported_once(("const", name)):
            if f"const {name}" in self._in_progress:
                self.error("RG0003", f"cycle detected when evaluating constant `{name}`", item.file,
                           item.node.child_by_field_name("name"), "its value depends on itself")
            self._in_progress.add(f"const {name}")
            try:
                ty = self.lower_type(item.node.child_by_field_name("type"), item.file, {})
                lowerer = FunctionLowerer.for_const(self, item)
                value = lowerer.lower_const_value(item.node.child_by_field_name("value"), ty)
            finally:
                self._in_progress.discard(f"const {name}")
        const = nodes.ConstDef(name, ty, self._folded(value), item.file.span(item.node))
        self.consts[name] = const
        return const

    def _folded(self, value: nodes.Expr) -> nodes.Expr:
        """A constant's value that calls `const fn`s, as the integer or `bool` literal rustc computes, where
        it can: the host evaluates the constants of loop bounds, and cannot call the device's functions."""
        if not any(isinstance(n, nodes.Call) for n in walk(value)):
            return value
        try:
            result = evaluate(value, self)
        except NotConstant:
            return value
        if isinstance(result, float):
            return value
        return nodes.Lit(result, str(result).lower(), value.ty, value.span)

    def const_usize(self, node: Node, file: SourceFile) -> int:
        """Evaluate an array length or similar `usize` constant expression."""
        value = FunctionLowerer.for_file(self, file).lower_const_value(node, PrimType("usize"))
        try:
            result = evaluate(value, self)
        except NotConstant:  # a call, or arithmetic that divides by zero or overflows
            result = None
        if not isinstance(result, int):
            self.error("RG0003", "this array length is not a constant integer", file, node)
        return result

    # ------------------------------------------------------------ diagnostics

    @contextmanager
    def _reported_once(self, key: tuple[str, str]):
        """Lower an item whose errors are reported once: later uses of a failed item stop silently."""
        if key in self._failed_items:
            raise LoweringError()
        try:
            yield
        except LoweringError:
            self._failed_items.add(key)
            raise

    def error(self, code: str, message: str, file: SourceFile, node: Node, label: str = "", help: str = "",
              notes=()) -> None:
        """Record an error and stop lowering the current item."""
        self.diagnostics.error(code, message, file.span(node), label, help, notes)
        raise LoweringError()

    def stop(self) -> None:
        """Stop lowering the current item, whose errors have been recorded."""
        raise LoweringError()

    def unsupported(self, file: SourceFile, node: Node, what: str, help: str = "") -> None:
        self.error("RG0002", f"{what} is not supported in kernels", file, node, "not supported by rs2gpu", help)


def nodes_note(message: str, item: RawItem):
    return Note(message, item.file.span(item.node.child_by_field_name("name")))


def _type_token(ty: Type) -> str:
    return str(infer.zonk(ty)).replace("&mut ", "mut_").replace("&", "ref_").replace("[", "").replace("]", "") \
        .replace("; ", "x").replace("(", "").replace(")", "").replace(", ", "_")


def lower_crate(crate_name: str, files: list[SourceFile],
                instances: dict[str, list[tuple[str, ...]]] | None = None) -> tuple[nodes.Crate, DiagnosticSink]:
    """`instances`: for generic kernels without `types(...)`, by name, the type arguments of each
    instantiation to make (each kernel not named there is checked once, for every type its bounds admit)."""
    lowerer = CrateLowerer(crate_name, files, instances)
    crate = lowerer.lower()
    return crate, lowerer.diagnostics


__all__ = ["lower_crate", "CrateLowerer", "LoweringError", "Span"]
