"""Type inference: each test states one rule, and rustc, run on the same snippet, must agree.

The `// probe: x, y` line of a snippet names the variables whose types are compared. rustc prints the
types it inferred there (`std::any::type_name_of_val`, which constrains nothing); the frontend's are the
types of the last bindings of those names in the lowered IR.
"""
from __future__ import annotations

import pytest

from rs2gpu.frontend import lower_text
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.walk import walk
from rs2gpu.ir.validate import validate_function


def lower_clean(source: str) -> ir.Crate:
    crate, sink = lower_text(source)
    assert not sink.items, [f"{d.span.line}:{d.span.col} {d.code} {d.message}" for d in sink.items]
    for fn in crate.functions:
        assert validate_function(fn) == []
    return crate


def bindings_of(fn: ir.Function) -> list[ir.Binding]:
    """Parameters, `let`s and `for` variables in source order."""
    found = list(fn.params)
    for node in walk(fn.body):
        if isinstance(node, ir.Let):
            found.append(node.binding)
        elif isinstance(node, ir.For):
            found.append(node.var)
    return found


def frontend_types(crate: ir.Crate, names) -> dict[str, str]:
    types = {}
    for fn in crate.functions:
        for b in bindings_of(fn):
            if b.name in names:
                types[b.name] = str(b.ty)
    return types


@pytest.fixture
def infer(rustc_types):
    """`infer(source, call)`: the frontend's types of the probed names, checked against rustc's."""
    def run(source: str, call: str) -> dict[str, str]:
        expected = rustc_types(source, call)
        assert expected, "the probe line never ran"
        ours = frontend_types(lower_clean(source), expected)
        assert ours == expected, f"rs2gpu infers {ours}, rustc {expected}"
        return ours
    return run


def test_unsuffixed_float_literal_defaults_to_f64(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f32]) {
    let x = 0.0;
    // probe: x
    a[0] = 1.0;
}
""", "k(&mut [0.0; 4])") == {"x": "f64"}


def test_unsuffixed_integer_literal_defaults_to_i32(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [i64]) {
    let n = 3;
    let m = n * 2 + 1;
    // probe: n, m
    a[0] = m as i64;
}
""", "k(&mut [0; 4])") == {"n": "i32", "m": "i32"}


def test_accumulator_takes_the_element_type_of_a_later_compound_assignment(infer):
    assert infer("""
#[kernel]
pub fn k(a: &[f32]) {
    let mut s = 0.0;
    for i in 0..a.len() {
        s += a[i];
    }
    // probe: s
}
""", "k(&[1.0; 4])") == {"s": "f32"}


def test_indexing_makes_an_integer_usize_backwards_through_lets(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let j = 2;
    let k = j + 1;
    a[k] = a[j];
    // probe: j, k
}
""", "k(&mut [0.0; 4])") == {"j": "usize", "k": "usize"}


def test_range_bounds_make_the_loop_variable_usize_through_len(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    for i in 0..a.len() {
        // probe: i
        a[i] = 0.0;
    }
}
""", "k(&mut [0.0; 1])") == {"i": "usize"}


def test_type_annotation_gives_the_literal_its_type(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [u8]) {
    let k: u8 = 3;
    let doubled = k * 2;
    // probe: k, doubled
    a[0] = doubled;
}
""", "k(&mut [0; 1])") == {"k": "u8", "doubled": "u8"}


def test_suffix_fixes_the_literal_type(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let y = 1.0f32;
    let z = 7u16;
    // probe: y, z
    a[0] = y as f64 + z as f64;
}
""", "k(&mut [0.0; 1])") == {"y": "f32", "z": "u16"}


def test_cast_gives_its_target_type_and_leaves_the_operand_to_its_default(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let n = 5;
    let x = n as f64;
    let b = 300.7 as u8;
    // probe: n, x, b
    a[0] = x + b as f64;
}
""", "k(&mut [0.0; 1])") == {"n": "i32", "x": "f64", "b": "u8"}


def test_shift_amount_keeps_its_own_type(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [u64]) {
    let s = 3;
    let v = a[0] << s;
    // probe: s, v
    a[1] = v;
}
""", "k(&mut [1; 2])") == {"s": "i32", "v": "u64"}


def test_associated_constants_have_their_type(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let big = i32::MAX;
    let pi = std::f64::consts::PI;
    let tiny = f32::EPSILON;
    let bits = u16::BITS;
    // probe: big, pi, tiny, bits
    a[0] = big as f64 + pi + tiny as f64 + bits as f64;
}
""", "k(&mut [0.0; 1])") == {"big": "i32", "pi": "f64", "tiny": "f32", "bits": "u32"}


def test_associated_constant_values_fold_to_the_values_rust_prints(rustc):
    crate = lower_clean("""
#[kernel]
pub fn k(a: &mut [f64], b: &mut [i64]) {
    a[0] = std::f64::consts::PI;
    a[1] = core::f32::consts::E as f64;
    b[0] = i32::MAX as i64;
    b[1] = i64::MIN;
}
""")
    stored = [stmt.value for stmt in crate.function("k").body.stmts]
    folded = [(v.operand if isinstance(v, ir.Cast) else v).value for v in stored]
    printed = rustc.run('fn main() { println!("{:?} {:?} {} {}", std::f64::consts::PI, '
                        'std::f32::consts::E as f64, i32::MAX, i64::MIN); }').split()
    assert folded == [float(printed[0]), float(printed[1]), int(printed[2]), int(printed[3])]


def test_if_else_is_an_expression_with_the_branch_type(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f32], n: u8) {
    let c = if n > 2 { 1.0 } else { 2.0 };
    a[0] = c;
    // probe: c
}
""", "k(&mut [0.0; 1], 3)") == {"c": "f32"}


def test_match_is_an_expression_and_one_suffixed_arm_types_all_arms(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f32], n: u8) {
    let w = match n {
        0 => 1u16,
        1 | 2 => 2,
        3..=9 => 3,
        _ => 4,
    };
    // probe: w
    a[0] = w as f32;
}
""", "k(&mut [0.0; 1], 5)") == {"w": "u16"}


def test_block_tail_if_without_semicolon_is_the_block_value(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [i64], x: i64) {
    let y = {
        let t = x * 2;
        if t > 10 { t } else { -t }
    };
    // probe: y
    a[0] = y;
}
""", "k(&mut [0; 1], 3)") == {"y": "i64"}


def test_loop_has_the_type_of_the_values_its_breaks_carry(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [u64], limit: u64) {
    let mut i = 0;
    let found = loop {
        i += 1;
        if i * i > limit {
            break i;
        }
    };
    let two = loop {
        break 2;
    };
    // probe: found, two
    a[0] = found + two;
}
""", "k(&mut [0; 1], 10)") == {"found": "u64", "two": "u64"}


def test_unconstrained_loop_break_value_defaults_like_a_literal(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let v = loop {
        break 1.5;
    };
    // probe: v
    a[0] = v;
}
""", "k(&mut [0.0; 1])") == {"v": "f64"}


def test_shadowing_creates_distinct_bindings_with_their_own_types():
    crate = lower_clean("""
#[kernel]
pub fn k(a: &mut [f64], x: f64) {
    let x = x as f32;
    let x = x as i32;
    a[0] = x as f64;
}
""")
    xs = [b for b in bindings_of(crate.function("k")) if b.name == "x"]
    assert [(b.kind, str(b.ty)) for b in xs] == [("param", "f64"), ("local", "f32"), ("local", "i32")]
    assert len({id(b) for b in xs}) == 3


def test_shadowed_use_refers_to_the_innermost_binding():
    crate = lower_clean("""
#[kernel]
pub fn k(a: &mut [f64], x: f64) {
    let x = x * 2.0;
    a[0] = x;
}
""")
    fn = crate.function("k")
    let = fn.body.stmts[0]
    inner_use = let.init.lhs
    store = fn.body.stmts[1]
    assert inner_use.binding is fn.params[1]
    assert store.value.binding is let.binding


def test_helper_fn_is_lowered_once_and_before_its_caller():
    crate = lower_clean("""
fn square(x: f64) -> f64 {
    x * x
}

#[kernel]
pub fn k(a: &mut [f64]) {
    a[0] = square(a[1]) + square(2.0);
}
""")
    assert [f.name for f in crate.functions] == ["square", "k"]
    assert not crate.function("square").is_kernel


def test_generic_helper_is_monomorphized_per_type_argument():
    crate = lower_clean("""
fn sq<T: Copy + core::ops::Mul<Output = T>>(x: T) -> T {
    x * x
}

#[kernel]
pub fn k(a: &mut [f32], b: &mut [i64]) {
    a[0] = sq(a[1]);
    b[0] = sq(b[1]);
}
""")
    instances = {f.name: (f.source_name, tuple(map(str, f.type_args)), str(f.ret)) for f in crate.functions
                 if not f.is_kernel}
    assert instances == {"sq_f32": ("sq", ("f32",), "f32"), "sq_i64": ("sq", ("i64",), "i64")}


def test_generic_type_argument_comes_from_the_callers_later_constraints(infer):
    assert infer("""
fn sq<T: Copy + core::ops::Mul<Output = T>>(x: T) -> T {
    x * x
}

#[kernel]
pub fn k(a: &mut [f32]) {
    let y: f32 = sq(2.0);
    let mut s = 0.0;
    let z = sq(s);
    s += a[0];
    // probe: y, s, z
    a[0] = y + z + s;
}
""", "k(&mut [1.0; 1])") == {"y": "f32", "s": "f32", "z": "f32"}
    crate = lower_clean("""
fn sq<T: Copy + core::ops::Mul<Output = T>>(x: T) -> T {
    x * x
}

#[kernel]
pub fn k(a: &mut [f32]) {
    let y: f32 = sq(2.0);
    a[0] = y;
}
""")
    assert [f.name for f in crate.functions] == ["sq_f32", "k"]


def test_const_items_have_their_declared_type_and_fold_in_array_lengths(infer):
    source = """
mod sizes {
    pub const BASE: usize = 4;
    pub const LEN: usize = BASE * 2;
}
const SCALE: f32 = 0.5;

#[kernel]
pub fn k(a: &mut [f32], table: &[f32; sizes::LEN]) {
    let s = SCALE;
    let n = sizes::BASE;
    // probe: s, n
    a[0] = s * table[n];
}
"""
    assert infer(source, "k(&mut [0.0; 1], &[1.0; 8])") == {"s": "f32", "n": "usize"}
    crate = lower_clean(source)
    assert str(crate.function("k").params[1].ty) == "&[f32; 8]"
    assert {c.name: str(c.ty) for c in crate.consts} == {"SCALE": "f32", "BASE": "usize", "LEN": "usize"}


def test_tuple_and_array_element_types(infer):
    assert infer("""
#[kernel]
pub fn k(a: &mut [f64]) {
    let pair = (1, 2.0);
    let table = [1.0, 2.0, 4.0];
    let zeros = [0u32; 4];
    a[0] = pair.1 + table[pair.0] + zeros[0] as f64;
    // probe: pair, table, zeros
}
""", "k(&mut [0.0; 1])") == {"pair": "(usize, f64)", "table": "[f64; 3]", "zeros": "[u32; 4]"}
