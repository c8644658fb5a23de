"""The host evaluator computes the manifest's expressions (loop bounds, reduction seeds, results) the way
a release build of the Rust code does.

Every expected value below was printed by a program compiled with `rustc -O -C overflow-checks=off`,
with the operands behind `std::hint::black_box` so that nothing is folded at compile time.
"""
from __future__ import annotations

import math

import pytest

from rs2gpu.ir import abi
from rs2gpu.runtime.callplan import CallPlan
from rs2gpu.runtime.hostexpr import Environment, HostPanic, evaluate

U64_MAX = 2**64 - 1
I32_MIN = -(2**31)


def lit(value, ty: str) -> dict:
    return {"lit": value, "type": ty}


def binary(op: str, lhs, rhs, ty: str) -> dict:
    return {"op": op, "args": [lhs, rhs], "type": ty}


def cast(value: dict, src: str, dst: str) -> dict:
    return {"cast": value, "from": src, "type": dst}


def call(name: str, args: list, ty: str) -> dict:
    return {"call": name, "args": args, "type": ty}


def run(expr: dict, **lengths: int):
    return evaluate(expr, Environment(lengths=lengths))


# ---------------------------------------------------------------- integer arithmetic wraps


def test_usize_subtraction_below_zero_wraps_to_usize_max() -> None:
    # 0usize - 1 == 18446744073709551615
    assert run(binary("-", lit(0, "usize"), lit(1, "usize"), "usize")) == U64_MAX


def test_i32_multiplication_wraps_to_zero_at_two_to_the_32() -> None:
    # 65536i32 * 65536i32 == 0
    assert run(binary("*", lit(65536, "i32"), lit(65536, "i32"), "i32")) == 0


def test_i32_multiplication_keeps_the_low_32_bits_as_a_signed_value() -> None:
    # 100000i32 * 100000i32 == 1410065408
    assert run(binary("*", lit(100000, "i32"), lit(100000, "i32"), "i32")) == 1410065408


def test_u8_addition_wraps() -> None:
    # 200u8 + 100u8 == 44
    assert run(binary("+", lit(200, "u8"), lit(100, "u8"), "u8")) == 44


def test_negating_i32_min_gives_i32_min() -> None:
    # -i32::MIN == -2147483648
    assert run({"op": "neg", "args": [lit(I32_MIN, "i32")], "type": "i32"}) == I32_MIN


def test_bitwise_not_is_the_complement_at_the_type_width() -> None:
    # !0u8 == 255, !5i32 == -6
    assert run({"op": "not", "args": [lit(0, "u8")], "type": "u8"}) == 255
    assert run({"op": "not", "args": [lit(5, "i32")], "type": "i32"}) == -6


def test_abs_of_i8_min_wraps_to_itself() -> None:
    # (-128i8).abs() == -128
    assert run(call("abs", [lit(-128, "i8")], "i8")) == -128


def test_wrapping_methods_wrap() -> None:
    # 250u8.wrapping_add(10) == 4, 3u32.wrapping_sub(5) == 4294967294
    assert run(call("wrapping_add", [lit(250, "u8"), lit(10, "u8")], "u8")) == 4
    assert run(call("wrapping_sub", [lit(3, "u32"), lit(5, "u32")], "u32")) == 4294967294


def test_signed_division_truncates_toward_zero() -> None:
    # -7i32 / 2 == -3, -7i32 % 2 == -1, 7i32 % -2 == 1
    assert run(binary("/", lit(-7, "i32"), lit(2, "i32"), "i32")) == -3
    assert run(binary("%", lit(-7, "i32"), lit(2, "i32"), "i32")) == -1
    assert run(binary("%", lit(7, "i32"), lit(-2, "i32"), "i32")) == 1


# ---------------------------------------------------------------- shifts are masked


def test_u32_shift_amount_is_taken_modulo_32() -> None:
    # 1u32 << 33 == 2
    assert run(binary("<<", lit(1, "u32"), lit(33, "u32"), "u32")) == 2


def test_i32_right_shift_is_arithmetic_and_masked() -> None:
    # -16i32 >> 34 == -4
    assert run(binary(">>", lit(-16, "i32"), lit(34, "u32"), "i32")) == -4


def test_i64_shift_amount_is_taken_modulo_64() -> None:
    # 1i64 << 65 == 2
    assert run(binary("<<", lit(1, "i64"), lit(65, "u32"), "i64")) == 2


# ---------------------------------------------------------------- casts


@pytest.mark.parametrize(
    ("value", "target", "expected"),
    [
        (300.7, "u8", 255),                   # 300.7f64 as u8
        (-5.5, "u32", 0),                     # -5.5f64 as u32
        (-5.9, "i32", -5),                    # -5.9f64 as i32: truncation
        (math.inf, "i64", 2**63 - 1),         # f64::INFINITY as i64
        (-math.inf, "i16", -32768),           # f64::NEG_INFINITY as i16
        (1e20, "usize", U64_MAX),             # 1e20f64 as usize
    ],
)
def test_float_to_int_cast_saturates(value: float, target: str, expected: int) -> None:
    assert run(cast(lit(value, "f64"), "f64", target)) == expected


def test_nan_cast_to_int_is_zero() -> None:
    # f64::NAN as i32 == 0 (NaN travels in the manifest as the string "nan")
    assert run(cast(lit("nan", "f64"), "f64", "i32")) == 0


@pytest.mark.parametrize(
    ("value", "src", "dst", "expected"),
    [
        (-1, "i64", "u64", U64_MAX),          # -1i64 as u64
        (300, "i32", "u8", 44),               # 300i32 as u8
        (-1, "i8", "u32", 4294967295),        # -1i8 as u32: sign-extends, then reinterprets
    ],
)
def test_int_to_int_cast_keeps_the_low_bits(value: int, src: str, dst: str, expected: int) -> None:
    assert run(cast(lit(value, src), src, dst)) == expected


def test_u64_to_f32_cast_rounds_once_to_nearest() -> None:
    # (18014399583223809u64 as f32) as u64 == 18014400656965632: 2^54 + 2^30 + 1 is just above the
    # midpoint between two f32 neighbours, so it rounds up (a detour through f64 would land on the midpoint
    # and round down to 2^54)
    assert run(cast(lit(2**54 + 2**30 + 1, "u64"), "u64", "f32")) == 18014400656965632


def test_f64_to_f32_cast_rounds_to_nearest_and_overflows_to_infinity() -> None:
    # (0.1f64 as f32) as f64 == 0.10000000149011612, 1e39f64 as f32 == inf
    assert run(cast(lit(0.1, "f64"), "f64", "f32")) == 0.10000000149011612
    assert run(cast(lit(1e39, "f64"), "f64", "f32")) == math.inf


# ---------------------------------------------------------------- float arithmetic


def test_f32_addition_rounds_to_f32() -> None:
    # (0.1f32 + 0.2f32) as f64 == 0.30000001192092896, 16777216f32 + 1f32 == 16777216
    assert run(binary("+", lit(0.1, "f32"), lit(0.2, "f32"), "f32")) == 0.30000001192092896
    assert run(binary("+", lit(16777216.0, "f32"), lit(1.0, "f32"), "f32")) == 16777216.0


def test_float_division_by_zero_follows_ieee() -> None:
    # 1.0 / 0.0 == inf, 1.0 / -0.0 == -inf, 0.0 / 0.0 is NaN
    assert run(binary("/", lit(1.0, "f64"), lit(0.0, "f64"), "f64")) == math.inf
    assert run(binary("/", lit(1.0, "f64"), lit(-0.0, "f64"), "f64")) == -math.inf
    assert math.isnan(run(binary("/", lit(0.0, "f64"), lit(0.0, "f64"), "f64")))


def test_float_remainder_takes_the_sign_of_the_dividend() -> None:
    # 7.5 % 2.0 == 1.5, -7.5 % 2.0 == -1.5
    assert run(binary("%", lit(7.5, "f64"), lit(2.0, "f64"), "f64")) == 1.5
    assert run(binary("%", lit(-7.5, "f64"), lit(2.0, "f64"), "f64")) == -1.5


def test_float_overflow_is_infinity() -> None:
    # 1e300 * 1e10 == inf
    assert run(binary("*", lit(1e300, "f64"), lit(1e10, "f64"), "f64")) == math.inf


def test_sqrt_of_a_negative_number_is_nan() -> None:
    # (-2.0f64).sqrt() is NaN
    assert math.isnan(run(call("sqrt", [lit(-2.0, "f64")], "f64")))


def test_min_and_max_ignore_a_nan_operand() -> None:
    # f32::NAN.min(1.5) == 1.5, 2.0f64.max(f64::NAN) == 2, f64::NAN.max(f64::NAN) is NaN
    assert run(call("min", [lit("nan", "f32"), lit(1.5, "f32")], "f32")) == 1.5
    assert run(call("max", [lit(2.0, "f64"), lit("nan", "f64")], "f64")) == 2.0
    assert math.isnan(run(call("max", [lit("nan", "f64"), lit("nan", "f64")], "f64")))


def test_non_finite_literals_travel_as_text() -> None:
    assert run(lit("inf", "f64")) == math.inf
    assert run(lit("-inf", "f32")) == -math.inf


# ---------------------------------------------------------------- panics


def test_integer_division_by_zero_panics() -> None:
    with pytest.raises(HostPanic, match="^attempt to divide by zero$"):
        run(binary("/", lit(5, "u32"), lit(0, "u32"), "u32"))


def test_integer_remainder_by_zero_panics() -> None:
    with pytest.raises(HostPanic, match="^attempt to calculate the remainder with a divisor of zero$"):
        run(binary("%", lit(5, "usize"), lit(0, "usize"), "usize"))


def test_i32_min_divided_by_minus_one_panics_even_in_release() -> None:
    # the only signed quotient that does not fit; rustc checks it whatever overflow-checks says
    with pytest.raises(HostPanic, match="^attempt to divide with overflow$"):
        run(binary("/", lit(I32_MIN, "i32"), lit(-1, "i32"), "i32"))


def test_i32_min_remainder_by_minus_one_panics_even_in_release() -> None:
    with pytest.raises(HostPanic, match="^attempt to calculate the remainder with overflow$"):
        run(binary("%", lit(I32_MIN, "i32"), lit(-1, "i32"), "i32"))


def test_and_does_not_evaluate_its_right_side_when_the_left_is_false() -> None:
    # false && (1 / 0 == 0) is false, and nothing panics
    divides = binary("==", binary("/", lit(1, "i32"), lit(0, "i32"), "i32"), lit(0, "i32"), "i32")
    assert run({"op": "&&", "args": [lit(False, "bool"), divides], "type": "bool"}) is False


# ---------------------------------------------------------------- environment


def test_lengths_parameters_and_locals_come_from_the_environment() -> None:
    env = Environment(params={"k": 3}, lengths={"a": 10}, locals={"half": 5})
    expr = binary("+", binary("*", {"param": "k"}, {"len": "a"}, "usize"), {"local": "half"}, "usize")
    assert evaluate(expr, env) == 35


# ---------------------------------------------------------------- ranges


def launch(start: dict, end: dict, inclusive: bool) -> abi.Launch:
    """A launch of the loop `for i in start..end` (`..=end` when `inclusive`)."""
    general = abi.EntryPoint(abi.EntryKind.GENERAL, "k_0", False)
    return abi.Launch("k.rs:1:1", (abi.Dim("i", start["type"], "x", start, end, inclusive),), (), False, False, False,
                      (general,))


def iteration_count(loop: abi.Launch, env: Environment) -> tuple[int, int]:
    """The first index and the number of iterations the runtime finds for the launch's loop."""
    param = abi.Param("a", "&[f64]", abi.ParamKind.SLICE, False, abi.Transfer.IN, "shared reference",
                      (abi.ArgPart("a", abi.ArgRole.POINTER, 8, 8),), abi.Layout("f64", 8, 8))
    kernel = abi.KernelABI("k", "k.rs:1:1", "k", {}, False, (param,), (), (loop,), None, (), 0)
    starts, counts = CallPlan("k", kernel).launches[0].iteration_space(env)
    return starts["x"], counts["x"]


def test_exclusive_range_runs_end_minus_start_times() -> None:
    # for i in 0..a.len(), a.len() == 5
    assert iteration_count(launch(lit(0, "usize"), {"len": "a"}, False), Environment(lengths={"a": 5})) == (0, 5)


def test_inclusive_range_includes_its_end() -> None:
    # for i in 1..=a.len(), a.len() == 5: i = 1, ..., 5
    assert iteration_count(launch(lit(1, "usize"), {"len": "a"}, True), Environment(lengths={"a": 5})) == (1, 5)


@pytest.mark.parametrize(
    ("start", "end", "inclusive", "count"),
    [(5, 3, False, 0), (5, 4, True, 0), (5, 5, True, 1), (5, 5, False, 0)],  # (5..3).count() == 0, ...
)
def test_empty_and_single_element_ranges(start: int, end: int, inclusive: bool, count: int) -> None:
    assert iteration_count(launch(lit(start, "usize"), lit(end, "usize"), inclusive), Environment()) == (start, count)


def test_signed_inclusive_range_counts_through_zero() -> None:
    # (-3i32..=3).count() == 7
    assert iteration_count(launch(lit(-3, "i32"), lit(3, "i32"), True), Environment()) == (-3, 7)


def test_inclusive_range_to_a_wrapped_length_minus_one_covers_all_of_usize() -> None:
    # for i in 0..=a.len() - 1 with a.len() == 0: the end wraps to usize::MAX, and 0..=usize::MAX has 2^64
    # iterations
    end = binary("-", {"len": "a"}, lit(1, "usize"), "usize")
    assert iteration_count(launch(lit(0, "usize"), end, True), Environment(lengths={"a": 0})) == (0, 2**64)
