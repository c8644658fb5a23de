//! The host's bounds checks of a launch (`first_out_of_bounds`) against Rust's sequential run: the error a
//! launch is refused with is the panic of the first access out of bounds in the order Rust makes them,
//! with the index Rust computes (usize arithmetic, which wraps where the kernel's index does).

use super::*;
use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};

static KERNEL: KernelSource =
    KernelSource { name: "k", file: "k.cu", cuda: "", fast_math: false, launches: &[], panics: &[], result_words: 0 };

/// The message Rust panics with when it runs `kernel`, if it panics.
fn rust_panic(kernel: impl FnOnce()) -> Option<String> {
    let payload = catch_unwind(AssertUnwindSafe(kernel)).err()?;
    Some(payload.downcast_ref::<String>().cloned().expect("an index panic carries a formatted message"))
}

/// The message of the error the host refuses the launch with, if it refuses it.
fn host_panic(accesses: &[HostAccess<'_>], dims: &[(i128, i128)]) -> Option<String> {
    match KERNEL.refused(first_out_of_bounds(accesses, dims).err()?) {
        Error::Panic { message, .. } => Some(message),
        other => panic!("an out-of-bounds access is a panic, not {other}"),
    }
}

fn access<'a>(len: usize, rest: i128, axes: &'a [i128], loops: &'a [AccessLoop], at: u64) -> HostAccess<'a> {
    HostAccess { len, rest, axes, loops, at, source: "k.rs:1:1" }
}

#[test]
fn a_shifted_read_fails_at_the_last_iteration() {
    let (out, a): (&[f64], &[f64]) = (&[0.0; 8], &[1.0; 8]);
    let rust = rust_panic(|| {
        for i in 0..8usize {
            black_box(out[i] + a[i + 1]);
        }
    });
    let host = host_panic(&[access(8, 0, &[1], &[], 0), access(8, 1, &[1], &[], 1)], &[(0, 8)]);
    assert_eq!(rust.as_deref(), Some("index out of bounds: the len is 8 but the index is 8"));
    assert_eq!(host, rust);
}

#[test]
fn the_first_failure_is_in_rusts_order_not_the_smallest_index() {
    // `b[i + 6]` fails from i = 2, `a[10 * i]` from i = 1 though it comes second in the body: Rust stops at
    // i = 1 on `a`, with index 10, before `b` fails with a smaller index.
    let (a, b): (&[u32], &[u32]) = (&[0; 10], &[0; 8]);
    let rust = rust_panic(|| {
        for i in 0..4usize {
            black_box(b[i + 6]);
            black_box(a[10 * i]);
        }
    });
    let host = host_panic(&[access(8, 6, &[1], &[], 0), access(10, 0, &[10], &[], 1)], &[(0, 4)]);
    assert_eq!(rust.as_deref(), Some("index out of bounds: the len is 10 but the index is 10"));
    assert_eq!(host, rust);
}

#[test]
fn a_row_stride_longer_than_the_rows_fails_in_the_last_row() {
    // out[j * stride + i] over h rows of w: the last row ends past the slice
    let (w, h, stride) = (5usize, 3usize, 7usize);
    let out: &[i8] = &[0; 18];
    let rust = rust_panic(|| {
        for j in 0..h {
            for i in 0..w {
                black_box(out[j * stride + i]);
            }
        }
    });
    let host = host_panic(&[access(18, 0, &[stride as i128, 1], &[], 0)], &[(0, h as i128), (0, w as i128)]);
    assert_eq!(rust.as_deref(), Some("index out of bounds: the len is 18 but the index is 18"));
    assert_eq!(host, rust);
}

#[test]
fn a_negative_index_is_the_wrapped_usize() {
    // a[i - 2] with i from 1: the index Rust computes wraps to 2^64 - 1, and Rust reports that one
    let a: &[u8] = &[0; 4];
    let rust = rust_panic(|| {
        for i in 1..4usize {
            black_box(a[i.wrapping_sub(2)]);
        }
    });
    let host = host_panic(&[access(4, -2, &[1], &[], 0)], &[(1, 3)]);
    assert_eq!(rust.as_deref(), Some("index out of bounds: the len is 4 but the index is 18446744073709551615"));
    assert_eq!(host, rust);
}

#[test]
fn an_inner_sequential_loop_fails_at_its_first_iteration_out_of_bounds() {
    // for i in 0..3 { for k in 1..4 { x[4 * i + k] } }, x of 10: Rust stops at i = 2, k = 2 (index 10)
    let x: &[u16] = &[0; 10];
    let rust = rust_panic(|| {
        for i in 0..3usize {
            for k in 1..4usize {
                black_box(x[4 * i + k]);
            }
        }
    });
    let loops = [AccessLoop { extent: 3, coefficient: 1, start: 1, at: 0 }];
    let host = host_panic(&[access(10, 0, &[4], &loops, 1)], &[(0, 3)]);
    assert_eq!(rust.as_deref(), Some("index out of bounds: the len is 10 but the index is 10"));
    assert_eq!(host, rust);
}

#[test]
fn an_access_that_never_happens_never_fails() {
    // an empty launch, or an empty loop around the access
    assert_eq!(first_out_of_bounds(&[access(0, 5, &[1], &[], 0)], &[(0, 0)]), Ok(()));
    let empty = [AccessLoop { extent: 0, coefficient: 1, start: 0, at: 0 }];
    assert_eq!(first_out_of_bounds(&[access(0, 5, &[1], &empty, 1)], &[(0, 4)]), Ok(()));
}

#[test]
fn indices_that_wrap_back_into_the_slice_are_in_bounds_where_rust_finds_them_so() {
    // x[2^63 * i] over i in 0..4: indices 0, 2^63, 0 (2^64 wrapped), 2^63; the second fails
    let step = 1i128 << 63;
    let found = first_out_of_bounds(&[access(1, 0, &[step], &[], 0)], &[(0, 4)]);
    assert_eq!(found, Err(RangeError::OutOfBounds { len: 1, index: step, source: "k.rs:1:1" }));
    // x[2^64 - 1 + i] over i in 1..3: indices 0 and 1 once wrapped, both in a slice of 2
    assert_eq!(first_out_of_bounds(&[access(2, (1i128 << 64) - 1, &[1], &[], 0)], &[(1, 2)]), Ok(()));
}

/// SplitMix64: reproducible inputs without a dependency.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A value in `low..=high`.
    fn between(&mut self, low: i128, high: i128) -> i128 {
        low + (self.next() % (high - low + 1) as u64) as i128
    }

    /// A small coefficient, now and then one whose multiples wrap around 2^64.
    fn coefficient(&mut self) -> i128 {
        match self.next() % 8 {
            0 => (1i128 << 63) + self.between(-2, 2),
            1 => (1i128 << 64) - self.between(1, 3),
            _ => self.between(-4, 4),
        }
    }
}

/// A 2-D launch whose body reads `x[rest_x + ...]`, then in a loop over `k` reads `y[rest_y + ... + c * k]`,
/// then reads `z[rest_z + ...]`.
struct Nest {
    dims: [(i128, i128); 2],
    lens: [usize; 3],
    rests: [i128; 3],
    axes: [[i128; 2]; 3],
    inner: AccessLoop,
}

impl Nest {
    fn random(random: &mut Random) -> Nest {
        let mut dim = || (random.between(-3, 3), random.between(0, 3));
        let dims = [dim(), dim()];
        let lens = [0, 0, 0].map(|_: usize| random.between(0, 12) as usize);
        let rests = [0; 3].map(|_: i128| random.between(-6, 12));
        let axes = [[0; 2]; 3].map(|row: [i128; 2]| row.map(|_| random.coefficient()));
        let inner = AccessLoop { extent: random.between(0, 3), coefficient: random.coefficient(),
                                 start: random.between(-3, 3), at: 1 };
        Nest { dims, lens, rests, axes, inner }
    }

    /// Rust's sequential run: (len, index) of the first access out of bounds. Each index is computed
    /// exactly, then taken modulo 2^64 as usize arithmetic leaves it.
    fn sequential(&self) -> Option<(u64, u64)> {
        let index = |rest: i128, terms: &[(i128, i128)]| -> u64 {
            terms.iter().fold(rest, |sum, &(coefficient, value)| sum + coefficient * value) as u64
        };
        let check = |which: usize, extra: &[(i128, i128)], i: i128, j: i128| -> Option<(u64, u64)> {
            let [ci, cj] = self.axes[which];
            let at = index(self.rests[which], &[&[(ci, i), (cj, j)], extra].concat());
            (at >= self.lens[which] as u64).then_some((self.lens[which] as u64, at))
        };
        let [(i0, ni), (j0, nj)] = self.dims;
        for i in i0..i0 + ni {
            for j in j0..j0 + nj {
                if let Some(failure) = check(0, &[], i, j) {
                    return Some(failure);
                }
                for k in self.inner.start..self.inner.start + self.inner.extent {
                    if let Some(failure) = check(1, &[(self.inner.coefficient, k)], i, j) {
                        return Some(failure);
                    }
                }
                if let Some(failure) = check(2, &[], i, j) {
                    return Some(failure);
                }
            }
        }
        None
    }

    fn host(&self) -> Option<(u64, u64)> {
        let AccessLoop { extent, coefficient, start, at } = self.inner;
        let inner = [AccessLoop { extent, coefficient, start, at }];
        let accesses = [
            access(self.lens[0], self.rests[0], &self.axes[0], &[], 0),
            access(self.lens[1], self.rests[1], &self.axes[1], &inner, 2),
            access(self.lens[2], self.rests[2], &self.axes[2], &[], 3),
        ];
        match first_out_of_bounds(&accesses, &self.dims) {
            Ok(()) => None,
            Err(RangeError::OutOfBounds { len, index, .. }) => Some((len, u64::try_from(index).expect("a usize"))),
            Err(other) => panic!("bounds checks fail with OutOfBounds, not {other:?}"),
        }
    }
}

#[test]
fn random_nests_fail_where_rusts_sequential_run_fails() {
    let mut random = Random(0x5eed);
    let mut failures = 0;
    for trial in 0..20_000 {
        let nest = Nest::random(&mut random);
        let expected = nest.sequential();
        failures += usize::from(expected.is_some());
        assert_eq!(nest.host(), expected, "trial {trial}");
    }
    // both outcomes are well represented
    assert!((2_000..18_000).contains(&failures), "{failures} of 20000 trials fail");
}
