"""`#[repr(C)]` struct layout: sizes, alignments and field offsets must be the ones rustc uses.

The host and the GPU exchange these structs byte for byte, so the expected numbers come from a Rust
program that prints `size_of`, `align_of` and `offset_of!` for the very structs the frontend lowered.
"""
from __future__ import annotations

from rs2gpu.frontend import lower_text
from rs2gpu.ir.types import F64, StructType, U32

STRUCTS = """
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Small {
    a: u8,
    b: f64,
    c: u16,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Flags {
    on: bool,
    level: i8,
    count: u32,
    tail: u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Nested {
    tag: u16,
    inner: Small,
    xs: [f32; 3],
    pair: [Flags; 2],
    last: i64,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Wide {
    x: usize,
    y: isize,
    z: f32,
}

#[kernel]
pub fn k(out: &mut [Nested], f: &Wide) {
    out[0].tag = f.z as u16;
}
"""


def lowered_structs() -> dict[str, StructType]:
    crate, sink = lower_text(STRUCTS)
    assert not sink.items, [d.message for d in sink.items]
    return {s.ty.name: s.ty for s in crate.structs}


def rust_layout_program(structs: dict[str, StructType]) -> str:
    lines = []
    for name, ty in structs.items():
        lines.append(f'    println!("{name} size {{}} align {{}}", std::mem::size_of::<{name}>(), '
                     f'std::mem::align_of::<{name}>());')
        for f in ty.fields:
            lines.append(f'    println!("{name}.{f.name} offset {{}}", core::mem::offset_of!({name}, {f.name}));')
    return STRUCTS + "\nfn main() {\n" + "\n".join(lines) + "\n}\n"


def frontend_layout(structs: dict[str, StructType]) -> str:
    lines = []
    for name, ty in structs.items():
        lines.append(f"{name} size {ty.size} align {ty.align}")
        lines += [f"{name}.{f.name} offset {f.offset}" for f in ty.fields]
    return "\n".join(lines) + "\n"


def test_every_struct_a_kernel_uses_is_lowered() -> None:
    assert sorted(lowered_structs()) == ["Flags", "Nested", "Small", "Wide"]


def test_repr_c_layout_matches_rustc(rustc) -> None:
    structs = lowered_structs()
    assert frontend_layout(structs) == rustc.run(rust_layout_program(structs))


def test_layout_pads_fields_to_their_alignment_and_the_size_to_the_struct_alignment() -> None:
    ty = StructType.layout("S", [("a", U32), ("b", F64), ("c", U32)])
    assert [(f.name, f.offset) for f in ty.fields] == [("a", 0), ("b", 8), ("c", 16)]
    assert (ty.size, ty.align) == (24, 8)


def test_structs_are_listed_before_the_structs_that_contain_them() -> None:
    crate, _ = lower_text(STRUCTS)
    order = [s.ty.name for s in crate.structs]
    assert order.index("Small") < order.index("Nested")
    assert order.index("Flags") < order.index("Nested")
