"""Constant evaluation (`const` items, array lengths, match patterns) computes what rustc computes.

Each constant below is evaluated by the frontend and printed by a Rust program built with rustc;
floats are compared bit for bit (NaNs only as NaNs: their payload is not specified).
"""
from __future__ import annotations

import math
import struct

import pytest

from rs2gpu import pipeline
from rs2gpu.frontend.consteval import NotConstant, evaluate
from rs2gpu.frontend.lower_crate import CrateLowerer
from rs2gpu.frontend.source import parse_text

CONSTS = {
    # integer division and remainder truncate toward zero; the remainder has the dividend's sign
    "DIV_NEG": ("i32", "-7 / 2"),
    "REM_NEG_DIVIDEND": ("i32", "-7 % 3"),
    "REM_NEG_DIVISOR": ("i32", "7 % -3"),
    "REM_BOTH_NEG": ("i32", "-7 % -3"),
    "REM_LARGE": ("i64", "-9223372036854775807 % 1000000007"),
    "REM_U64_MAX": ("u64", "u64::MAX % 1000000007"),
    "DIV_LARGE": ("i64", "i64::MAX / -3"),
    # shifts and bit operations
    "SHL": ("u8", "1u8 << 7"),
    "SHR_SIGNED": ("i32", "-8 >> 1"),
    "NOT_UNSIGNED": ("u16", "!0x00ffu16"),
    "XOR": ("u32", "0xf0f0 ^ 0x0ff0"),
    # casts: integers wrap, floats saturate and NaN becomes 0
    "WRAP_TO_U32": ("u32", "-1i32 as u32"),
    "TRUNC_TO_I8": ("i8", "300i32 as i8"),
    "SAT_HIGH": ("u8", "300.7f64 as u8"),
    "SAT_LOW": ("u8", "-1.5f64 as u8"),
    "NAN_TO_INT": ("i32", "f64::NAN as i32"),
    "INF_TO_INT": ("i64", "f64::INFINITY as i64"),
    "BOOL_TO_INT": ("u8", "true as u8"),
    # float division by zero gives infinities and NaN, with IEEE signs
    "DIV_BY_ZERO": ("f64", "1.0 / 0.0"),
    "NEG_DIV_BY_ZERO": ("f64", "-1.0 / 0.0"),
    "DIV_BY_NEG_ZERO": ("f64", "1.0 / -0.0"),
    "ZERO_DIV_ZERO": ("f64", "0.0 / 0.0"),
    "NAN_DIV_ZERO": ("f64", "f64::NAN / 0.0"),
    "F32_DIV_BY_NEG_ZERO": ("f32", "-2.0f32 / -0.0"),
    # float remainder is fmod; by zero or of infinity it is NaN
    "FREM": ("f64", "5.5 % 2.0"),
    "FREM_NEG": ("f64", "-5.5 % 2.0"),
    "FREM_BY_ZERO": ("f64", "1.0 % 0.0"),
    "FREM_OF_INF": ("f64", "f64::INFINITY % 2.0"),
    "FREM_BY_INF": ("f64", "3.0 % f64::INFINITY"),
    # f32 arithmetic rounds every result to single precision
    "F32_SUM": ("f32", "0.1f32 + 0.2f32"),
    "F32_THIRD": ("f32", "1.0f32 / 3.0 * 3.0"),
    "F32_FROM_F64": ("f32", "0.1f64 as f32"),
    "F32_OVERFLOW_TO_INF": ("f32", "3.0e38f32 * 10.0"),
    "F64_SUM": ("f64", "0.1 + 0.2"),
    "INT_TO_F32": ("f32", "16777217i32 as f32"),
    # calls to `const fn`s whose body is one expression, nested and with arguments computed
    "CONST_FN_CALL": ("usize", "twice(half(9)) + 1"),
    "CONST_FN_CASTS": ("u8", "half(300 + 1) as u8"),
}
CONST_FNS = "const fn half(n: usize) -> usize { n / 2 }\nconst fn twice(n: usize) -> usize { 2 * n }\n"

SOURCE = CONST_FNS + "".join(f"const {name}: {ty} = {expr};\n" for name, (ty, expr) in CONSTS.items())


def _bits(ty: str, value) -> str:
    if ty == "f64":
        return "nan" if math.isnan(value) else hex(struct.unpack("<Q", struct.pack("<d", value))[0])
    if ty == "f32":
        return "nan" if math.isnan(value) else hex(struct.unpack("<I", struct.pack("<f", value))[0])
    return str(int(value))


def frontend_values() -> dict[str, str]:
    lowerer = CrateLowerer("consts", [parse_text("src/lib.rs", SOURCE)])
    values = {name: _bits(ty, evaluate(lowerer.const(name).value, lowerer)) for name, (ty, _) in CONSTS.items()}
    assert not lowerer.diagnostics.items, [d.message for d in lowerer.diagnostics.items]
    return values


def rustc_values(rustc) -> dict[str, str]:
    prints = []
    for name, (ty, _) in CONSTS.items():
        if ty in ("f32", "f64"):
            value = f'if {name}.is_nan() {{ "nan".to_string() }} else {{ format!("{{:#x}}", {name}.to_bits()) }}'
        else:
            value = name
        prints.append(f'    println!("{name}={{}}", {value});')
    output = rustc.run(SOURCE + "\nfn main() {\n" + "\n".join(prints) + "\n}\n")
    return dict(line.split("=", 1) for line in output.splitlines())


def test_constants_evaluate_to_what_rustc_computes(rustc) -> None:
    ours, theirs = frontend_values(), rustc_values(rustc)
    differing = {name: (ours[name], theirs[name]) for name in CONSTS if ours[name] != theirs[name]}
    assert not differing, differing


def test_integer_remainder_is_exact_for_values_beyond_float_precision() -> None:
    values = frontend_values()
    assert values["REM_LARGE"] == str(-(9223372036854775807 % 1000000007))


@pytest.mark.parametrize("expr", ["1 / 0", "1 % 0", "i32::MIN / -1", "i32::MIN % -1"])
def test_integer_division_that_panics_is_not_a_constant(expr: str) -> None:
    lowerer = CrateLowerer("consts", [parse_text("src/lib.rs", f"const X: i32 = {expr};\n")])
    with pytest.raises(NotConstant):
        evaluate(lowerer.const("X").value, lowerer)


def test_const_computed_by_const_fns_is_a_literal_the_host_can_evaluate(tmp_path) -> None:
    """Such a const bounding a parallel loop made the host serialize a call, and raised ValueError."""
    path = tmp_path / "lib.rs"
    path.write_text("use rs2gpu::kernel;\n" + CONST_FNS + "const R: usize = twice(half(3));\n"
                    "#[kernel]\npub fn k(out: &mut [f64], x: &[f64]) {\n"
                    "    for i in R..x.len() - R { out[i] = x[i - R]; }\n}\n")
    [launch] = pipeline.translate(path).emitted.abi.kernels["k"].launches
    assert launch.dims[0].start == {"lit": 2, "type": "usize"}


def test_const_fn_with_statements_is_not_evaluated() -> None:
    lowerer = CrateLowerer("consts", [parse_text("src/lib.rs", "const fn f(n: usize) -> usize { let m = n; m }\n"
                                                                 "const X: usize = f(3);\n")])
    with pytest.raises(NotConstant):
        evaluate(lowerer.const("X").value, lowerer)
