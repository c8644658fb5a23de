//! The host-side arithmetic of loop bounds (`div`, `rem`, `range`, `poly`, `require_disjoint`) against Rust's
//! own operators and ranges: the generated `ranges` functions must refuse a launch exactly where the
//! kernel's Rust would panic, with Rust's message.

use super::*;
use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// What Rust itself gives for `operation`: its value, or the message it panics with.
fn rust<T>(operation: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(operation)).map_err(|payload| {
        let message = payload.downcast_ref::<&str>().map(|text| text.to_string());
        message.or_else(|| payload.downcast_ref::<String>().cloned()).expect("a panic with a message")
    })
}

fn refused<T>(result: Result<T, RangeError>) -> Result<T, String> {
    result.map_err(|error| match error {
        RangeError::Panic(message) => message.to_string(),
        other => panic!("an arithmetic error is a panic, not {other:?}"),
    })
}

/// The values where division goes wrong or changes sign, for integer type `$t`: its extremes, 0, ±1, ±7.
macro_rules! edges {
    ($t:ty) => {{
        let zero: $t = 0;
        [<$t>::MIN, <$t>::MIN + 1, zero.wrapping_sub(7), zero.wrapping_sub(1), 0, 1, 2, 7, <$t>::MAX - 1, <$t>::MAX]
    }};
}

macro_rules! division_is_rusts {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            for a in edges!($t) {
                for b in edges!($t) {
                    assert_eq!(refused(div(a, b)), rust(|| black_box(a) / black_box(b)), "{a} / {b}");
                    assert_eq!(refused(rem(a, b)), rust(|| black_box(a) % black_box(b)), "{a} % {b}");
                }
            }
        }
    )*};
}

division_is_rusts!(division_of_i8_is_rusts: i8, division_of_i16_is_rusts: i16, division_of_i32_is_rusts: i32,
                   division_of_i64_is_rusts: i64, division_of_isize_is_rusts: isize, division_of_u8_is_rusts: u8,
                   division_of_u16_is_rusts: u16, division_of_u32_is_rusts: u32, division_of_u64_is_rusts: u64,
                   division_of_usize_is_rusts: usize);

#[test]
fn every_i8_and_u8_division_is_rusts() {
    for a in i8::MIN..=i8::MAX {
        for b in i8::MIN..=i8::MAX {
            assert_eq!(refused(div(a, b)), rust(|| black_box(a) / black_box(b)), "{a} / {b}");
            assert_eq!(refused(rem(a, b)), rust(|| black_box(a) % black_box(b)), "{a} % {b}");
        }
    }
    for a in 0..=u8::MAX {
        for b in 0..=u8::MAX {
            assert_eq!(refused(div(a, b)), rust(|| black_box(a) / black_box(b)), "{a} / {b}");
            assert_eq!(refused(rem(a, b)), rust(|| black_box(a) % black_box(b)), "{a} % {b}");
        }
    }
}

#[test]
fn every_i8_and_u8_range_counts_as_rusts() {
    for start in i8::MIN..=i8::MAX {
        for end in i8::MIN..=i8::MAX {
            assert_eq!(range(start, end, false), Ok(Dim { start, count: (start..end).count() as u64 }));
            assert_eq!(range(start, end, true), Ok(Dim { start, count: (start..=end).count() as u64 }));
        }
    }
    for start in 0..=u8::MAX {
        for end in 0..=u8::MAX {
            assert_eq!(range(start, end, false), Ok(Dim { start, count: (start..end).count() as u64 }));
            assert_eq!(range(start, end, true), Ok(Dim { start, count: (start..=end).count() as u64 }));
        }
    }
}

/// Rust's ranges know their length exactly while it fits in a usize, 64 bits here, which is also where a
/// launch's count must fit: a longer loop is refused, as no launch can run it.
#[cfg(target_pointer_width = "64")]
macro_rules! wide_range_counts_are_rusts {
    ($($name:ident: $t:ty),* $(,)?) => {$(
        #[test]
        fn $name() {
            let too_long = Err(RangeError::Panic("the loop runs 2^64 iterations or more, more than one launch can"));
            for start in edges!($t) {
                for end in edges!($t) {
                    let exact = |hint: (usize, Option<usize>)| match hint {
                        (low, Some(high)) if low == high => Ok(Dim { start, count: low as u64 }),
                        _ => too_long,
                    };
                    assert_eq!(range(start, end, false), exact((start..end).size_hint()), "{start}..{end}");
                    assert_eq!(range(start, end, true), exact((start..=end).size_hint()), "{start}..={end}");
                }
            }
        }
    )*};
}

#[cfg(target_pointer_width = "64")]
wide_range_counts_are_rusts!(ranges_of_i32_count_as_rusts: i32, ranges_of_i64_count_as_rusts: i64,
                             ranges_of_u64_count_as_rusts: u64, ranges_of_usize_count_as_rusts: usize,
                             ranges_of_isize_count_as_rusts: isize);

#[test]
fn the_longest_launches_are_exact() {
    // 2^64 - 1 iterations fit in the count; one more does not
    assert_eq!(range(i64::MIN, i64::MAX, false).map(|d| d.count), Ok(u64::MAX));
    assert_eq!(range(0u64, u64::MAX - 1, true).map(|d| d.count), Ok(u64::MAX));
    assert!(matches!(range(0u64, u64::MAX, true), Err(RangeError::Panic(_))));
    assert!(matches!(range(i64::MIN, i64::MAX, true), Err(RangeError::Panic(_))));
}

#[test]
fn wide_is_the_exact_value() {
    assert_eq!(wide(u64::MAX), 18_446_744_073_709_551_615);
    assert_eq!(wide(i64::MIN), -9_223_372_036_854_775_808);
    assert_eq!(wide(usize::MAX), usize::MAX as i128);
    assert_eq!(wide(-1i8), -1);
}

#[test]
fn poly_sums_the_products_exactly() {
    assert_eq!(poly(&[]), Ok(0));
    assert_eq!(poly(&[(7, &[])]), Ok(7)); // a constant term
    assert_eq!(poly(&[(2, &[3, 4]), (-1, &[5])]), Ok(2 * 3 * 4 - 5));
    // beyond 64 bits, which is why it works in 128: a product of two usize lengths, say
    let big = 1i128 << 62;
    assert_eq!(poly(&[(1, &[big, big]), (-1, &[1])]), Ok((1 << 124) - 1));
}

#[test]
fn poly_refuses_what_does_not_fit_in_128_bits() {
    let refused = Err(RangeError::Panic("a launch-time check does not fit in 128 bits"));
    assert_eq!(poly(&[(i128::MAX, &[2])]), refused);
    assert_eq!(poly(&[(1, &[i128::MIN, -1])]), refused);
    // exact arithmetic, not wrapping: a sum that leaves 128 bits on the way is refused even if it would come back
    assert_eq!(poly(&[(i128::MAX, &[]), (1, &[]), (-1, &[])]), refused);
}

#[test]
fn require_disjoint_holds_from_zero_up() {
    assert_eq!(require_disjoint(0, "k.rs:3:9"), Ok(()));
    assert_eq!(require_disjoint(i128::MAX, "k.rs:3:9"), Ok(()));
    assert_eq!(require_disjoint(-1, "k.rs:3:9"), Err(RangeError::Race("k.rs:3:9")));
}
