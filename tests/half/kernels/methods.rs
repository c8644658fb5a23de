// The methods, conversions and constants of f16 and bf16, applied elementwise.
use rs2gpu::{bf16, f16, kernel};

const F16_TENTH: f16 = f16::from_f32(0.1);
const F16_THIRD: f16 = f16::from_f64(-1.0 / 3.0);
const BF16_TENTH: bf16 = bf16::from_f32(0.1);
const BF16_THIRD: bf16 = bf16::from_f64(-1.0 / 3.0);

/// The methods of a[i] (and b[i]); `classify`: is_nan, is_infinite, is_finite, is_sign_negative and
/// is_sign_positive, one bit each, lowest first; the integers: Rust's `as` of the widened value.
#[kernel]
pub fn f16_methods(sqrt: &mut [f16], abs: &mut [f16], lo: &mut [f16], hi: &mut [f16], classify: &mut [u8],
                 bits: &mut [u16], wide: &mut [f32], wider: &mut [f64], to_i32: &mut [i32], to_u8: &mut [u8],
                 to_i64: &mut [i64], to_u64: &mut [u64], a: &[f16], b: &[f16]) {
    for i in 0..a.len() {
        let x = a[i];
        sqrt[i] = x.sqrt();
        abs[i] = f16::abs(x);
        lo[i] = x.min(b[i]);
        hi[i] = x.max(b[i]);
        classify[i] = x.is_nan() as u8 | (x.is_infinite() as u8) << 1 | (x.is_finite() as u8) << 2
            | (x.is_sign_negative() as u8) << 3 | (x.is_sign_positive() as u8) << 4;
        bits[i] = x.to_bits();
        wide[i] = x.to_f32();
        wider[i] = f64::from(x);
        to_i32[i] = x.to_f32() as i32;
        to_u8[i] = x.to_f32() as u8;
        to_i64[i] = x.to_f64() as i64;
        to_u64[i] = x.to_f64() as u64;
    }
}

/// The conversions to f16: from f32, from f64 (rounded once), and from bits.
#[kernel]
pub fn f16_conversions(from_f32: &mut [f16], from_f64: &mut [f16], from_bits: &mut [f16], x: &[f32], y: &[f64],
                     bits: &[u16]) {
    for i in 0..x.len() {
        from_f32[i] = f16::from_f32(x[i]);
        from_f64[i] = f16::from_f64(y[i]);
        from_bits[i] = f16::from_bits(bits[i]);
    }
}

/// A scalar argument, the compound assignments (each rounding once), a sum of half values rounded at each
/// step, as the inner loop runs in Rust, and the constants.
#[kernel]
pub fn f16_expressions(out: &mut [f16], sums: &mut [f16], constants: &mut [f16], a: &[f16], rows: &[f16],
                     s: f16, width: usize) {
    for i in 0..a.len() {
        out[i] = a[i] * s + a[i];
        out[i] -= s;
        out[i] /= a[i];
        out[i] += f16::ONE;
        out[i] %= s;
        let mut sum = f16::NEG_ZERO;
        for j in 0..width {
            sum += rows[i * width + j];
        }
        sums[i] = sum;
        constants[i] = match i % 20 {
            0 => f16::ZERO,
            1 => f16::NEG_ZERO,
            2 => f16::ONE,
            3 => f16::NEG_ONE,
            4 => f16::INFINITY,
            5 => f16::NEG_INFINITY,
            6 => f16::NAN,
            7 => f16::MAX,
            8 => f16::MIN,
            9 => f16::MIN_POSITIVE,
            10 => f16::MIN_POSITIVE_SUBNORMAL,
            11 => f16::MAX_SUBNORMAL,
            12 => f16::EPSILON,
            13 => f16::PI,
            14 => f16::E,
            15 => f16::LN_2,
            16 => f16::FRAC_1_SQRT_2,
            17 => f16::TAU,
            18 => F16_TENTH,
            19 => -F16_THIRD,
            _ => f16::from_f32(i as f32),
        };
    }
}

/// The methods of a[i] (and b[i]); `classify`: is_nan, is_infinite, is_finite, is_sign_negative and
/// is_sign_positive, one bit each, lowest first; the integers: Rust's `as` of the widened value.
#[kernel]
pub fn bf16_methods(sqrt: &mut [bf16], abs: &mut [bf16], lo: &mut [bf16], hi: &mut [bf16], classify: &mut [u8],
                 bits: &mut [u16], wide: &mut [f32], wider: &mut [f64], to_i32: &mut [i32], to_u8: &mut [u8],
                 to_i64: &mut [i64], to_u64: &mut [u64], a: &[bf16], b: &[bf16]) {
    for i in 0..a.len() {
        let x = a[i];
        sqrt[i] = x.sqrt();
        abs[i] = bf16::abs(x);
        lo[i] = x.min(b[i]);
        hi[i] = x.max(b[i]);
        classify[i] = x.is_nan() as u8 | (x.is_infinite() as u8) << 1 | (x.is_finite() as u8) << 2
            | (x.is_sign_negative() as u8) << 3 | (x.is_sign_positive() as u8) << 4;
        bits[i] = x.to_bits();
        wide[i] = x.to_f32();
        wider[i] = f64::from(x);
        to_i32[i] = x.to_f32() as i32;
        to_u8[i] = x.to_f32() as u8;
        to_i64[i] = x.to_f64() as i64;
        to_u64[i] = x.to_f64() as u64;
    }
}

/// The conversions to bf16: from f32, from f64 (rounded once), and from bits.
#[kernel]
pub fn bf16_conversions(from_f32: &mut [bf16], from_f64: &mut [bf16], from_bits: &mut [bf16], x: &[f32], y: &[f64],
                     bits: &[u16]) {
    for i in 0..x.len() {
        from_f32[i] = bf16::from_f32(x[i]);
        from_f64[i] = bf16::from_f64(y[i]);
        from_bits[i] = bf16::from_bits(bits[i]);
    }
}

/// A scalar argument, the compound assignments (each rounding once), a sum of half values rounded at each
/// step, as the inner loop runs in Rust, and the constants.
#[kernel]
pub fn bf16_expressions(out: &mut [bf16], sums: &mut [bf16], constants: &mut [bf16], a: &[bf16], rows: &[bf16],
                     s: bf16, width: usize) {
    for i in 0..a.len() {
        out[i] = a[i] * s + a[i];
        out[i] -= s;
        out[i] /= a[i];
        out[i] += bf16::ONE;
        out[i] %= s;
        let mut sum = bf16::NEG_ZERO;
        for j in 0..width {
            sum += rows[i * width + j];
        }
        sums[i] = sum;
        constants[i] = match i % 20 {
            0 => bf16::ZERO,
            1 => bf16::NEG_ZERO,
            2 => bf16::ONE,
            3 => bf16::NEG_ONE,
            4 => bf16::INFINITY,
            5 => bf16::NEG_INFINITY,
            6 => bf16::NAN,
            7 => bf16::MAX,
            8 => bf16::MIN,
            9 => bf16::MIN_POSITIVE,
            10 => bf16::MIN_POSITIVE_SUBNORMAL,
            11 => bf16::MAX_SUBNORMAL,
            12 => bf16::EPSILON,
            13 => bf16::PI,
            14 => bf16::E,
            15 => bf16::LN_2,
            16 => bf16::FRAC_1_SQRT_2,
            17 => bf16::TAU,
            18 => BF16_TENTH,
            19 => -BF16_THIRD,
            _ => bf16::from_f32(i as f32),
        };
    }
}

/// Half-precision fields of a `#[repr(C)]` struct, as slice elements and by value.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Sample {
    pub weight: f16,
    pub id: u8,
    pub bias: bf16,
    pub value: f32,
}

#[kernel]
pub fn weigh(out: &mut [f32], samples: &[Sample], scale: Sample) {
    for i in 0..out.len() {
        let s = samples[i];
        out[i] = (s.weight * scale.weight).to_f32() + (s.bias + scale.bias).to_f32() * s.value + s.id as f32;
    }
}
