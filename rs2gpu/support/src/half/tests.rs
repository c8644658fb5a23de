//! The half types against values worked out by hand from the formats, and their arithmetic against a
//! second route to the correctly rounded result (computing in f64 and rounding once from there, which is
//! exact for the same reason, with conversions of their own).

use super::{bf16, f16};

fn all_f16() -> impl Iterator<Item = f16> {
    (0..=u16::MAX).map(f16::from_bits)
}

fn all_bf16() -> impl Iterator<Item = bf16> {
    (0..=u16::MAX).map(bf16::from_bits)
}

#[test]
fn every_f16_survives_the_round_trip_through_f32_and_f64() {
    for x in all_f16().filter(|x| !x.is_nan()) {
        assert_eq!(f16::from_f32(x.to_f32()).to_bits(), x.to_bits(), "{:#06x}", x.to_bits());
        assert_eq!(f16::from_f64(x.to_f64()).to_bits(), x.to_bits(), "{:#06x}", x.to_bits());
        assert_eq!(x.to_f64(), x.to_f32() as f64);
    }
}

#[test]
fn every_bf16_survives_the_round_trip_through_f32_and_f64() {
    for x in all_bf16().filter(|x| !x.is_nan()) {
        assert_eq!(bf16::from_f32(x.to_f32()).to_bits(), x.to_bits(), "{:#06x}", x.to_bits());
        assert_eq!(bf16::from_f64(x.to_f64()).to_bits(), x.to_bits(), "{:#06x}", x.to_bits());
        // bf16 is the upper half of an f32
        assert_eq!(x.to_f32().to_bits(), (x.to_bits() as u32) << 16);
    }
}

#[test]
fn f16_values_are_those_of_the_binary16_format() {
    assert_eq!(f16::from_bits(0x3C00).to_f32(), 1.0);
    assert_eq!(f16::from_bits(0xC000).to_f32(), -2.0);
    assert_eq!(f16::from_bits(0x3555).to_f32(), 0.333251953125);
    assert_eq!(f16::MAX.to_f32(), 65504.0);
    assert_eq!(f16::MIN.to_f32(), -65504.0);
    assert_eq!(f16::MIN_POSITIVE.to_f32(), 2f32.powi(-14));
    assert_eq!(f16::MIN_POSITIVE_SUBNORMAL.to_f32(), 2f32.powi(-24));
    assert_eq!(f16::MAX_SUBNORMAL.to_f32(), 1023.0 * 2f32.powi(-24));
    assert_eq!(f16::EPSILON.to_f32(), 2f32.powi(-10));
    assert_eq!(f16::INFINITY.to_f32(), f32::INFINITY);
    assert_eq!(f16::NEG_ZERO.to_f32().to_bits(), (-0.0f32).to_bits());
    assert_eq!((f16::ONE.to_bits(), f16::NEG_ONE.to_bits(), f16::NAN.to_bits()), (0x3C00, 0xBC00, 0x7FFF));
    assert_eq!((f16::MANTISSA_DIGITS, f16::MIN_EXP, f16::MAX_EXP), (11, -13, 16));
    assert_eq!(f16::PI.to_bits(), 0x4248); // 3.140625, the nearest to pi
}

#[test]
fn bf16_values_are_those_of_the_bfloat16_format() {
    assert_eq!(bf16::ONE.to_bits(), 0x3F80);
    assert_eq!(bf16::MAX.to_f32(), f32::from_bits(0x7F7F_0000));
    assert_eq!(bf16::MIN_POSITIVE.to_f32(), f32::MIN_POSITIVE);
    assert_eq!(bf16::MIN_POSITIVE_SUBNORMAL.to_f32(), f32::from_bits(1 << 16)); // 2^-133
    assert_eq!(bf16::EPSILON.to_f32(), 2f32.powi(-7));
    assert_eq!(bf16::INFINITY.to_bits(), 0x7F80);
    assert_eq!((bf16::MANTISSA_DIGITS, bf16::MIN_EXP, bf16::MAX_EXP), (8, f32::MIN_EXP, f32::MAX_EXP));
    assert_eq!(bf16::PI.to_bits(), 0x4049); // 3.140625
}

#[test]
fn conversions_round_to_nearest_with_ties_to_even() {
    let bits = |x: f32| f16::from_f32(x).to_bits();
    assert_eq!(bits(1.0 + 2f32.powi(-11)), 0x3C00); // halfway between 1 and its successor: to 1, the even one
    assert_eq!(bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3C02); // halfway between 0x3C01 and 0x3C02: up, to even
    assert_eq!(bits(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), 0x3C01); // above halfway
    assert_eq!(bits(65519.99), 0x7BFF); // below halfway to 65536: MAX
    assert_eq!(bits(65520.0), 0x7C00); // halfway to 65536 rounds to even, past MAX: infinity
    assert_eq!(bits(-1e9), 0xFC00);
    assert_eq!(bits(2f32.powi(-25)), 0x0000); // half the least subnormal: to zero, the even one
    assert_eq!(bits(-2f32.powi(-25)), 0x8000);
    assert_eq!(bits(2f32.powi(-25) * 1.0001), 0x0001);
    assert_eq!(bits(3.0 * 2f32.powi(-25)), 0x0002); // 1.5 subnormal steps: to 2
    assert_eq!(bits(1023.5 * 2f32.powi(-24)), 0x0400); // the largest subnormal rounds up to MIN_POSITIVE
    assert_eq!(bits(f32::MIN_POSITIVE), 0x0000);
    let bf = |x: f32| bf16::from_f32(x).to_bits();
    assert_eq!(bf(f32::from_bits(0x3F80_8000)), 0x3F80); // tie, to even
    assert_eq!(bf(f32::from_bits(0x3F81_8000)), 0x3F82); // tie, to even
    assert_eq!(bf(f32::from_bits(0x3F80_8001)), 0x3F81);
    assert_eq!(bf(f32::MAX), 0x7F80); // above halfway from bf16::MAX to 2^128
    assert_eq!(bf(f32::from_bits(0x0000_8000)), 0x0000); // f32 subnormals: half the least bf16 subnormal
    assert_eq!(bf(f32::from_bits(0x0001_8000)), 0x0002);
}

#[test]
fn from_f64_rounds_once() {
    // Rounding to f32 first lands exactly halfway, and then rounds down to even: one rounding goes up.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(f16::from_f32(x as f32).to_bits(), 0x3C00);
    assert_eq!(f16::from_f64(x).to_bits(), 0x3C01);
    let y = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(bf16::from_f32(y as f32).to_bits(), 0x3F80);
    assert_eq!(bf16::from_f64(y).to_bits(), 0x3F81);
    assert_eq!(f16::from_f64(1e-300).to_bits(), 0x0000);
    assert_eq!(bf16::from_f64(-1e300).to_bits(), 0xFF80);
    assert_eq!(f16::from_f64(f64::from_bits(1)).to_bits(), 0x0000);
}

#[test]
fn every_nan_an_operation_makes_is_nan_0x7fff() {
    let signalling = f16::from_bits(0x7D01);
    let negative = f16::from_bits(0xFE00);
    assert_eq!((f16::INFINITY - f16::INFINITY).to_bits(), 0x7FFF);
    assert_eq!((f16::ZERO / f16::ZERO).to_bits(), 0x7FFF);
    assert_eq!((signalling + f16::ONE).to_bits(), 0x7FFF);
    assert_eq!((negative * f16::ONE).to_bits(), 0x7FFF);
    assert_eq!(f16::NEG_ONE.sqrt().to_bits(), 0x7FFF);
    assert_eq!(f16::from_f32(-f32::NAN).to_bits(), 0x7FFF);
    assert_eq!(bf16::from_f64(f64::NAN).to_bits(), 0x7FFF);
    assert_eq!((bf16::ONE % bf16::ZERO).to_bits(), 0x7FFF);
    // the sign operations and the widenings keep the bits
    assert_eq!((-signalling).to_bits(), 0xFD01);
    assert_eq!(negative.abs().to_bits(), 0x7E00);
    assert_eq!(signalling.to_f32().to_bits(), 0x7FA0_2000);
    assert_eq!(negative.to_f64().to_bits(), 0xFFF8_0000_0000_0000);
    assert_eq!(bf16::from_bits(0xFF81).to_f64().to_bits(), 0xFFF0_2000_0000_0000);
}

#[test]
fn comparisons_are_ieee() {
    let nan = f16::NAN;
    assert!(nan != nan && !(nan < nan) && !(nan >= f16::ZERO) && nan.partial_cmp(&nan).is_none());
    assert!(f16::ZERO == f16::NEG_ZERO && !(f16::NEG_ZERO < f16::ZERO));
    assert!(f16::MIN_POSITIVE_SUBNORMAL > f16::ZERO && f16::NEG_INFINITY < f16::MIN);
    assert!(bf16::from_bits(0x7FC1) != bf16::from_bits(0x7FC1));
}

#[test]
fn min_and_max_take_the_number_over_a_nan() {
    assert_eq!(f16::NAN.min(f16::ONE).to_bits(), f16::ONE.to_bits());
    assert_eq!(f16::ONE.max(f16::NAN).to_bits(), f16::ONE.to_bits());
    assert_eq!(f16::ZERO.min(f16::NEG_ZERO).to_bits(), 0x0000);
    assert_eq!(f16::NEG_ZERO.max(f16::ZERO).to_bits(), 0x8000);
    assert_eq!(bf16::NEG_ONE.max(bf16::ONE).to_bits(), bf16::ONE.to_bits());
}

/// Operands where rounding is delicate: zeros, the subnormal range and its edge, ties, the largest
/// values, infinities and NaNs, of both signs.
fn edges(bits: &[u16]) -> Vec<u16> {
    bits.iter().flat_map(|&b| [b, b ^ 0x8000]).collect()
}

macro_rules! against_f64 {
    ($name:ident, $ty:ident, $edges:expr) => {
        #[test]
        fn $name() {
            let same = |a: $ty, b: $ty| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
            for a in edges(&$edges).into_iter().map($ty::from_bits) {
                for b in (0..=u16::MAX).map($ty::from_bits) {
                    let (x, y) = (a.to_f64(), b.to_f64());
                    for (op, got, want) in [
                        ("+", a + b, $ty::from_f64(x + y)),
                        ("-", a - b, $ty::from_f64(x - y)),
                        ("*", a * b, $ty::from_f64(x * y)),
                        ("/", a / b, $ty::from_f64(x / y)),
                        ("%", a % b, $ty::from_f64(x % y)),
                    ] {
                        assert!(same(got, want), "{:#06x} {op} {:#06x}: {:#06x}, not {:#06x}",
                                a.to_bits(), b.to_bits(), got.to_bits(), want.to_bits());
                        assert!(!got.is_nan() || got.to_bits() == 0x7FFF);
                    }
                }
            }
            for a in (0..=u16::MAX).map($ty::from_bits) {
                assert!(same(a.sqrt(), $ty::from_f64(a.to_f64().sqrt())), "sqrt {:#06x}", a.to_bits());
            }
        }
    };
}

against_f64!(f16_arithmetic_rounds_as_f64_arithmetic_rounded_once, f16,
             [0x0000, 0x0001, 0x0002, 0x0155, 0x03FF, 0x0400, 0x0401, 0x1400, 0x3555, 0x3BFF, 0x3C00, 0x3C01,
              0x3E00, 0x4248, 0x5BFF, 0x7BFE, 0x7BFF, 0x7C00, 0x7E00]);
against_f64!(bf16_arithmetic_rounds_as_f64_arithmetic_rounded_once, bf16,
             [0x0000, 0x0001, 0x0003, 0x007F, 0x0080, 0x0081, 0x3C00, 0x3EAB, 0x3F7F, 0x3F80, 0x3F81, 0x3FC0,
              0x4049, 0x7F7E, 0x7F7F, 0x7F80, 0x7FC0]);
