//! `f16` (IEEE 754 binary16: 5 exponent bits, 10 fraction bits) and `bf16` (bfloat16: f32's 8 exponent bits,
//! 7 fraction bits), stored as their 16 bits.
//!
//! Every arithmetic operation converts its operands to f32 (exactly), computes in f32 and rounds the result
//! once to the half type, to nearest, ties to even. For `+ - * /` and `sqrt` this is the correctly rounded
//! result: f32 carries at least 2p + 2 bits of a p-bit half significand (24 >= 2 * 11 + 2), so the f32
//! rounding never moves the exact result across a half rounding boundary (Figueroa, "When is double rounding
//! innocuous?", 1995); bf16's results in f32's subnormal range are exact in f32 (they are multiples of
//! 2^-149) or, for quotients, too far from a bf16 midpoint to reach it. `%` is exact in f32. The generated
//! GPU code (the `rs2gpu_half` part of the kernels' prelude) does the same operations in the same order, so
//! the two agree bit for bit.
//!
//! NaN: every NaN an operation or a conversion to a half type produces is the type's `NAN`, 0x7FFF (the
//! NaN NVIDIA's half-precision instructions produce), whatever the operands' payloads and signs. `-x`,
//! `abs`, `from_bits` and `to_bits` work on the bits and keep a NaN's sign and payload, and so do `to_f32`
//! and `to_f64`, which widen the payload into the top fraction bits. Comparisons are IEEE's: a NaN is
//! unordered and unequal to everything, itself included; `-0.0 == 0.0`.

use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign};

/// The bits of the float with `exp_bits` exponent bits and `man_bits` fraction bits nearest to
/// `sig * 2^exp` (ties to even), with the sign bit set if `negative`; `sig` is not 0. One rounding, from
/// the exact value: the conversions from f32 and f64 both use it.
const fn round(negative: bool, sig: u64, exp: i32, exp_bits: u32, man_bits: u32) -> u16 {
    let sign = if negative { 0x8000 } else { 0 };
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let top = exp + 63 - sig.leading_zeros() as i32; // the exponent of the leading bit
    let min_exp = 1 - bias;
    // The exponent of the result's last place: a normal's, or the subnormals' fixed one.
    let last = (if top > min_exp { top } else { min_exp }) - man_bits as i32;
    let dropped = last - exp;
    let mut r = if dropped <= 0 {
        sig << -dropped
    } else if dropped >= 64 {
        0 // below half the least subnormal: sig < 2^53 <= 2^(dropped - 11)
    } else {
        let kept = sig >> dropped;
        let rest = sig & ((1u64 << dropped) - 1);
        let half = 1u64 << (dropped - 1);
        if rest > half || (rest == half && kept & 1 == 1) { kept + 1 } else { kept }
    };
    let mut last = last;
    if r == 1u64 << (man_bits + 1) {
        // rounded up to the next power of two
        r >>= 1;
        last += 1;
    }
    if r < 1u64 << man_bits {
        return sign | r as u16; // a subnormal, or zero
    }
    let field = last + man_bits as i32 + bias;
    if field >= (1 << exp_bits) - 1 {
        return sign | ((((1u32 << exp_bits) - 1) << man_bits) as u16); // overflow: infinity
    }
    sign | ((field as u16) << man_bits) | (r as u16 & ((1u16 << man_bits) - 1))
}

/// `round` of a finite, nonzero value given by its IEEE fields (`fraction`, biased `field` of a format
/// with `frac_bits` fraction bits and exponent bias `bias`).
const fn round_fields(negative: bool, field: u64, fraction: u64, frac_bits: u32, bias: i32,
                      exp_bits: u32, man_bits: u32) -> u16 {
    let (sig, biased) = if field == 0 { (fraction, 1) } else { (fraction | 1u64 << frac_bits, field as i32) };
    round(negative, sig, biased - bias - frac_bits as i32, exp_bits, man_bits)
}

macro_rules! half_type {
    ($(#[$doc:meta])* $name:ident, exp_bits = $exp_bits:expr, man_bits = $man_bits:expr,
     digits = $digits:expr, min_10_exp = $min_10_exp:expr, max_10_exp = $max_10_exp:expr,
     to_f32_bits = $to_f32_bits:expr) => {
        $(#[$doc])*
        #[allow(non_camel_case_types)]
        #[derive(Clone, Copy, Default)]
        #[repr(transparent)]
        pub struct $name(u16);

        impl $name {
            const EXP_BITS: u32 = $exp_bits;
            const MAN_BITS: u32 = $man_bits;
            const BIAS: i32 = (1 << (Self::EXP_BITS - 1)) - 1;
            const SIGN_MASK: u16 = 0x8000;
            const EXP_MASK: u16 = (((1u32 << Self::EXP_BITS) - 1) << Self::MAN_BITS) as u16;
            const MAN_MASK: u16 = (1u16 << Self::MAN_BITS) - 1;

            pub const ZERO: Self = Self(0);
            pub const NEG_ZERO: Self = Self(Self::SIGN_MASK);
            pub const ONE: Self = Self((Self::BIAS as u16) << Self::MAN_BITS);
            pub const NEG_ONE: Self = Self(Self::ONE.0 | Self::SIGN_MASK);
            pub const INFINITY: Self = Self(Self::EXP_MASK);
            pub const NEG_INFINITY: Self = Self(Self::EXP_MASK | Self::SIGN_MASK);
            /// The NaN every operation that has no number for its result produces.
            pub const NAN: Self = Self(0x7FFF);
            /// The largest finite value.
            pub const MAX: Self = Self(Self::EXP_MASK - 1);
            /// The least finite value, `-MAX`.
            pub const MIN: Self = Self((Self::EXP_MASK - 1) | Self::SIGN_MASK);
            /// The least positive normal value.
            pub const MIN_POSITIVE: Self = Self(1 << Self::MAN_BITS);
            pub const MIN_POSITIVE_SUBNORMAL: Self = Self(1);
            pub const MAX_SUBNORMAL: Self = Self(Self::MAN_MASK);
            /// The difference between 1.0 and the next larger value.
            pub const EPSILON: Self = Self(((Self::BIAS - Self::MAN_BITS as i32) as u16) << Self::MAN_BITS);
            pub const MANTISSA_DIGITS: u32 = Self::MAN_BITS + 1;
            pub const DIGITS: u32 = $digits;
            pub const RADIX: u32 = 2;
            pub const MIN_EXP: i32 = 2 - Self::BIAS;
            pub const MAX_EXP: i32 = Self::BIAS + 1;
            pub const MIN_10_EXP: i32 = $min_10_exp;
            pub const MAX_10_EXP: i32 = $max_10_exp;

            // The constants of `f64::consts`, each rounded once to this type.
            pub const E: Self = Self::from_f64(core::f64::consts::E);
            pub const PI: Self = Self::from_f64(core::f64::consts::PI);
            pub const TAU: Self = Self::from_f64(core::f64::consts::TAU);
            pub const SQRT_2: Self = Self::from_f64(core::f64::consts::SQRT_2);
            pub const FRAC_1_SQRT_2: Self = Self::from_f64(core::f64::consts::FRAC_1_SQRT_2);
            pub const LN_2: Self = Self::from_f64(core::f64::consts::LN_2);
            pub const LN_10: Self = Self::from_f64(core::f64::consts::LN_10);
            pub const LOG2_E: Self = Self::from_f64(core::f64::consts::LOG2_E);
            pub const LOG10_E: Self = Self::from_f64(core::f64::consts::LOG10_E);
            pub const LOG2_10: Self = Self::from_f64(core::f64::consts::LOG2_10);
            pub const LOG10_2: Self = Self::from_f64(core::f64::consts::LOG10_2);
            pub const FRAC_PI_2: Self = Self::from_f64(core::f64::consts::FRAC_PI_2);
            pub const FRAC_PI_3: Self = Self::from_f64(core::f64::consts::FRAC_PI_3);
            pub const FRAC_PI_4: Self = Self::from_f64(core::f64::consts::FRAC_PI_4);
            pub const FRAC_PI_6: Self = Self::from_f64(core::f64::consts::FRAC_PI_6);
            pub const FRAC_PI_8: Self = Self::from_f64(core::f64::consts::FRAC_PI_8);
            pub const FRAC_1_PI: Self = Self::from_f64(core::f64::consts::FRAC_1_PI);
            pub const FRAC_2_PI: Self = Self::from_f64(core::f64::consts::FRAC_2_PI);
            pub const FRAC_2_SQRT_PI: Self = Self::from_f64(core::f64::consts::FRAC_2_SQRT_PI);

            /// The value whose bits are `bits`.
            pub const fn from_bits(bits: u16) -> Self {
                Self(bits)
            }

            pub const fn to_bits(self) -> u16 {
                self.0
            }

            /// `x` rounded to nearest, ties to even; beyond `MAX` (after rounding) it is infinite, and a NaN
            /// becomes `NAN`.
            pub const fn from_f32(x: f32) -> Self {
                Self::from_wider(x.to_bits() as u64, 8, 23)
            }

            /// `x` rounded once to nearest, ties to even (not through f32, which could round twice), as
            /// `from_f32` does.
            pub const fn from_f64(x: f64) -> Self {
                Self::from_wider(x.to_bits(), 11, 52)
            }

            /// The bits of a wider IEEE format (`exp_bits` and `frac_bits` wide, its sign above them)
            /// rounded once to this one.
            const fn from_wider(bits: u64, exp_bits: u32, frac_bits: u32) -> Self {
                let negative = bits >> (exp_bits + frac_bits) & 1 == 1;
                let all_ones = (1u64 << exp_bits) - 1;
                let field = (bits >> frac_bits) & all_ones;
                let fraction = bits & ((1u64 << frac_bits) - 1);
                if field == all_ones {
                    return if fraction != 0 { Self::NAN } else if negative { Self::NEG_INFINITY } else { Self::INFINITY };
                }
                if field == 0 && fraction == 0 {
                    return if negative { Self::NEG_ZERO } else { Self::ZERO };
                }
                let bias = (1i32 << (exp_bits - 1)) - 1;
                Self(round_fields(negative, field, fraction, frac_bits, bias, Self::EXP_BITS, Self::MAN_BITS))
            }

            /// The same value in f32 (every value is exact there); a NaN keeps its sign and payload.
            pub const fn to_f32(self) -> f32 {
                f32::from_bits($to_f32_bits(self.0))
            }

            /// The same value in f64 (every value is exact there); a NaN keeps its sign and payload.
            pub fn to_f64(self) -> f64 {
                if self.is_nan() {
                    let sign = ((self.0 & Self::SIGN_MASK) as u64) << 48;
                    let payload = ((self.0 & Self::MAN_MASK) as u64) << (52 - Self::MAN_BITS);
                    return f64::from_bits(sign | 0x7FF0_0000_0000_0000 | payload);
                }
                self.to_f32() as f64
            }

            pub const fn is_nan(self) -> bool {
                self.0 & Self::EXP_MASK == Self::EXP_MASK && self.0 & Self::MAN_MASK != 0
            }

            pub const fn is_infinite(self) -> bool {
                self.0 & !Self::SIGN_MASK == Self::EXP_MASK
            }

            pub const fn is_finite(self) -> bool {
                self.0 & Self::EXP_MASK != Self::EXP_MASK
            }

            /// Whether the sign bit is set (also for -0.0 and a NaN with its sign bit set).
            pub const fn is_sign_negative(self) -> bool {
                self.0 & Self::SIGN_MASK != 0
            }

            pub const fn is_sign_positive(self) -> bool {
                !self.is_sign_negative()
            }

            /// The value with its sign bit cleared.
            pub const fn abs(self) -> Self {
                Self(self.0 & !Self::SIGN_MASK)
            }

            /// The square root, correctly rounded; `NAN` below -0.0 (and `sqrt(-0.0)` is -0.0).
            pub fn sqrt(self) -> Self {
                Self::from_f32(self.to_f32().sqrt())
            }

            /// The lesser of the two; where one is NaN, the other. Where they are equal (0.0 and -0.0),
            /// `self`.
            pub fn min(self, other: Self) -> Self {
                if self.is_nan() || other < self { other } else { self }
            }

            /// The greater of the two; where one is NaN, the other. Where they are equal (0.0 and -0.0),
            /// `self`.
            pub fn max(self, other: Self) -> Self {
                if self.is_nan() || other > self { other } else { self }
            }
        }

        impl From<$name> for f32 {
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        impl From<$name> for f64 {
            fn from(x: $name) -> f64 {
                x.to_f64()
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.to_f32() == other.to_f32()
            }
        }

        impl PartialOrd for $name {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                self.to_f32().partial_cmp(&other.to_f32())
            }
        }

        impl Neg for $name {
            type Output = Self;
            fn neg(self) -> Self {
                Self(self.0 ^ Self::SIGN_MASK)
            }
        }

        half_type!(@binary $name, Add, add, AddAssign, add_assign, +);
        half_type!(@binary $name, Sub, sub, SubAssign, sub_assign, -);
        half_type!(@binary $name, Mul, mul, MulAssign, mul_assign, *);
        half_type!(@binary $name, Div, div, DivAssign, div_assign, /);
        half_type!(@binary $name, Rem, rem, RemAssign, rem_assign, %);

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(&self.to_f32(), f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.to_f32(), f)
            }
        }
    };
    (@binary $name:ident, $trait:ident, $method:ident, $assign_trait:ident, $assign:ident, $op:tt) => {
        impl $trait for $name {
            type Output = Self;
            /// Computed in f32 from the exact operands, rounded once.
            fn $method(self, rhs: Self) -> Self {
                Self::from_f32(self.to_f32() $op rhs.to_f32())
            }
        }

        impl $assign_trait for $name {
            fn $assign(&mut self, rhs: Self) {
                *self = *self $op rhs;
            }
        }
    };
}

/// f16's bits in f32: the exponent rebiased (15 → 127), a subnormal normalized, the fraction widened.
const fn f16_to_f32_bits(bits: u16) -> u32 {
    let sign = ((bits & 0x8000) as u32) << 16;
    let field = ((bits >> 10) & 0x1F) as u32;
    let fraction = (bits & 0x3FF) as u32;
    if field == 0x1F {
        return sign | 0x7F80_0000 | fraction << 13;
    }
    if field == 0 {
        if fraction == 0 {
            return sign;
        }
        // fraction * 2^-24, its leading bit at position `top`
        let top = 31 - fraction.leading_zeros();
        return sign | (top + 103) << 23 | ((fraction << (23 - top)) & 0x7F_FFFF);
    }
    sign | (field + 112) << 23 | fraction << 13
}

/// bf16 is the upper half of an f32.
const fn bf16_to_f32_bits(bits: u16) -> u32 {
    (bits as u32) << 16
}

half_type!(
    /// IEEE 754 binary16: 1 sign bit, 5 exponent bits, 10 fraction bits (finite values up to 65504).
    f16, exp_bits = 5, man_bits = 10, digits = 3, min_10_exp = -4, max_10_exp = 4,
    to_f32_bits = f16_to_f32_bits
);

half_type!(
    /// bfloat16: 1 sign bit, f32's 8 exponent bits, 7 fraction bits (the upper half of an f32).
    bf16, exp_bits = 8, man_bits = 7, digits = 2, min_10_exp = -37, max_10_exp = 38,
    to_f32_bits = bf16_to_f32_bits
);

#[cfg(test)]
mod tests;
