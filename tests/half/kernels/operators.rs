// Half-precision kernels: every operator of f16 and bf16 applied elementwise, so that each element of an
// output is one operation on the inputs at its index, as rustc's build of the support crate computes it.
use rs2gpu::{bf16, f16, kernel};
use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

/// The five arithmetic operators and the negation of a[i] and b[i]; `flags`: the six comparisons, one bit
/// each (==, !=, <, <=, >, >=, lowest first).
#[kernel(types(f16, bf16))]
pub fn operators<T>(sum: &mut [T], difference: &mut [T], product: &mut [T], quotient: &mut [T],
                    remainder: &mut [T], negation: &mut [T], flags: &mut [u8], a: &[T], b: &[T])
where
    T: Copy + PartialOrd + Add<Output = T> + Sub<Output = T> + Mul<Output = T> + Div<Output = T>
        + Rem<Output = T> + Neg<Output = T>,
{
    for i in 0..a.len() {
        let x = a[i];
        let y = b[i];
        sum[i] = x + y;
        difference[i] = x - y;
        product[i] = x * y;
        quotient[i] = x / y;
        remainder[i] = x % y;
        negation[i] = -x;
        flags[i] = (x == y) as u8 | ((x != y) as u8) << 1 | ((x < y) as u8) << 2 | ((x <= y) as u8) << 3
            | ((x > y) as u8) << 4 | ((x >= y) as u8) << 5;
    }
}
