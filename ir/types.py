"""Types of the kernel language.

Every IR node carries one of these. They are frozen and hashable so that they can key caches and
monomorphization tables. Layout facts (size, alignment, field offsets) live here because both the
checker (transfer plan) and the emitter (ABI static_asserts, manifest) need the same numbers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Primitive:
    """The facts about one primitive scalar type that every room needs: its width and kind, the C++
    typedef the generated code declares for it, the numpy type code of its elements and the `struct`
    format code of its bytes (both little-endian, as every GPU and host rs2gpu runs on)."""

    name: str       # Rust's name, also the typedef the kernels' C++ prelude declares
    bits: int
    kind: str       # "bool" | "signed" | "unsigned" | "float" | "half"
    dtype: str      # numpy's type code (bf16's is ml_dtypes' name, which numpy knows once ml_dtypes is imported)
    pack: str       # the `struct` module's format code (of a half type's bits: its values are packed as bits)

    @property
    def size(self) -> int:
        return self.bits // 8

    @property
    def is_int(self) -> bool:
        return self.kind in ("signed", "unsigned")

    @property
    def min(self) -> int:
        """The least value of an integer type."""
        return -(1 << (self.bits - 1)) if self.kind == "signed" else 0

    @property
    def max(self) -> int:
        """The greatest value of an integer type."""
        return (1 << (self.bits - 1)) - 1 if self.kind == "signed" else (1 << self.bits) - 1


# The one table of primitive types: every other room reads it (C++ spellings, numpy dtypes, packing).
PRIMITIVES: dict[str, Primitive] = {p.name: p for p in (
    Primitive("bool", 8, "bool", "?", "?"),
    Primitive("i8", 8, "signed", "i1", "b"),
    Primitive("i16", 16, "signed", "i2", "h"),
    Primitive("i32", 32, "signed", "i4", "i"),
    Primitive("i64", 64, "signed", "i8", "q"),
    Primitive("isize", 64, "signed", "i8", "q"),
    Primitive("u8", 8, "unsigned", "u1", "B"),
    Primitive("u16", 16, "unsigned", "u2", "H"),
    Primitive("u32", 32, "unsigned", "u4", "I"),
    Primitive("u64", 64, "unsigned", "u8", "Q"),
    Primitive("usize", 64, "unsigned", "u8", "Q"),
    Primitive("f32", 32, "float", "f4", "f"),
    Primitive("f64", 64, "float", "f8", "d"),
    # The half-precision types of the support crate (and of the `half` crate): no Rust primitives, but
    # scalars to every room. Arithmetic computes in f32 and rounds once; `as` does not apply to them.
    Primitive("f16", 16, "half", "f2", "H"),
    Primitive("bf16", 16, "half", "bfloat16", "H"),
)}
INT_BITS = {p.name: p.bits for p in PRIMITIVES.values() if p.is_int}
HALF_NAMES = frozenset(p.name for p in PRIMITIVES.values() if p.kind == "half")
PRIM_NAMES = frozenset(PRIMITIVES) - HALF_NAMES  # Rust's own primitive types


@dataclass(frozen=True, slots=True)
class PrimType:
    """A Rust primitive scalar: bool, i8..i64, u8..u64, isize, usize, f32, f64, or a half-precision type,
    f16 or bf16 (see `PRIMITIVES`)."""

    name: str

    @property
    def primitive(self) -> Primitive:
        return PRIMITIVES[self.name]

    @property
    def is_float(self) -> bool:
        return PRIMITIVES[self.name].kind == "float"

    @property
    def is_int(self) -> bool:
        return PRIMITIVES[self.name].is_int

    @property
    def is_half(self) -> bool:
        return PRIMITIVES[self.name].kind == "half"

    @property
    def is_bool(self) -> bool:
        return self.name == "bool"

    @property
    def is_signed(self) -> bool:
        return PRIMITIVES[self.name].kind in ("signed", "float", "half")

    @property
    def bits(self) -> int:
        return PRIMITIVES[self.name].bits

    @property
    def size(self) -> int:
        return PRIMITIVES[self.name].size

    @property
    def align(self) -> int:
        return self.size

    def __str__(self) -> str:
        return self.name


BOOL = PrimType("bool")
F32 = PrimType("f32")
F64 = PrimType("f64")
I32 = PrimType("i32")
I64 = PrimType("i64")
U32 = PrimType("u32")
USIZE = PrimType("usize")


@dataclass(frozen=True, slots=True)
class StructField:
    name: str
    ty: "Type"
    offset: int


@dataclass(frozen=True, slots=True)
class StructType:
    """A `#[repr(C)]` struct. Offsets follow the C layout rules that repr(C) promises."""

    name: str
    fields: tuple[StructField, ...]
    size: int
    align: int

    @staticmethod
    def layout(name: str, members: list[tuple[str, "Type"]]) -> "StructType":
        offset, align = 0, 1
        fields = []
        for field_name, ty in members:
            a = align_of(ty)
            offset = (offset + a - 1) // a * a
            fields.append(StructField(field_name, ty, offset))
            offset += size_of(ty)
            align = max(align, a)
        size = (offset + align - 1) // align * align
        return StructType(name, tuple(fields), size, align)

    def field(self, name: str) -> StructField | None:
        return next((f for f in self.fields if f.name == name), None)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class ArrayType:
    """`[T; N]`: a value of N elements, laid out contiguously."""

    elem: "Type"
    length: int

    def __str__(self) -> str:
        return f"[{self.elem}; {self.length}]"


@dataclass(frozen=True, slots=True)
class SliceType:
    """`[T]`: only ever seen behind a reference."""

    elem: "Type"

    def __str__(self) -> str:
        return f"[{self.elem}]"


@dataclass(frozen=True, slots=True)
class RefType:
    """`&T` or `&mut T`; kernels take slices, arrays and structs this way."""

    target: "Type"
    mutable: bool

    def __str__(self) -> str:
        return f"&{'mut ' if self.mutable else ''}{self.target}"


@dataclass(frozen=True, slots=True)
class TupleType:
    """A tuple; the empty tuple is `()`, the type of statements and of kernels that return nothing."""

    elems: tuple["Type", ...]

    def __str__(self) -> str:
        if len(self.elems) == 1:
            return f"({self.elems[0]},)"
        return "(" + ", ".join(map(str, self.elems)) + ")"


@dataclass(frozen=True, slots=True)
class NeverType:
    """`!`: the type of `break`, `continue` and `return` expressions."""

    def __str__(self) -> str:
        return "!"


Type = Union[PrimType, StructType, ArrayType, SliceType, RefType, TupleType, NeverType]

UNIT = TupleType(())
NEVER = NeverType()


def size_of(ty: Type) -> int:
    if isinstance(ty, PrimType):
        return ty.size
    if isinstance(ty, StructType):
        return ty.size
    if isinstance(ty, ArrayType):
        return size_of(ty.elem) * ty.length
    if isinstance(ty, RefType):
        return 8
    raise TypeError(f"type {ty} has no fixed size")


def align_of(ty: Type) -> int:
    if isinstance(ty, PrimType):
        return ty.align
    if isinstance(ty, StructType):
        return ty.align
    if isinstance(ty, ArrayType):
        return align_of(ty.elem)
    if isinstance(ty, RefType):
        return 8
    raise TypeError(f"type {ty} has no alignment")


def element_type(ty: Type) -> Type | None:
    """The element type of a slice, an array, or a reference to either."""
    if isinstance(ty, RefType):
        ty = ty.target
    if isinstance(ty, (SliceType, ArrayType)):
        return ty.elem
    return None
