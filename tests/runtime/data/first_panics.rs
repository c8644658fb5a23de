//! Kernels that fail in many iterations at once, in the shapes that decide which failure Rust's panic names:
//! the first one of its sequential run (the earliest iteration of the loop nest, the outermost loop
//! slowest, then the first failing access of that iteration, sequential loops inside it included). Some
//! are checked on the host before the launch (affine indices every iteration makes), some on the device
//! (data-dependent and conditional accesses, divisions, checks in helpers, index-list verifications).
//! The cpu backend (rustc) is the reference for where they panic.

use rs2gpu::kernel;

// ---------------------------------------------------------------- checked on the host

/// Two slices of a row-major grid, each too short from some cell on.
#[kernel]
pub fn grid(out: &mut [f64], a: &[f64], rows: usize, width: usize) {
    for r in 0..rows {
        for c in 0..width {
            out[r * width + c] = a[r * width + c] * 2.0;
        }
    }
}

/// A 3-D nest reading a shifted copy of the volume and one plane of it.
#[kernel]
pub fn cube(out: &mut [f64], a: &[f64], plane: &[f64], nk: usize, nj: usize, ni: usize, shift: usize) {
    for k in 0..nk {
        for j in 0..nj {
            for i in 0..ni {
                out[i + ni * (j + nj * k)] = a[i + ni * (j + nj * k) + shift] + plane[i + ni * j];
            }
        }
    }
}

/// A product with a sequential loop in the nest: its reads in every step, the write after the loop.
#[kernel]
pub fn product(c: &mut [f32], a: &[f32], b: &[f32], m: usize, n: usize, p: usize) {
    for row in 0..m {
        for col in 0..p {
            let mut acc = 0.0;
            for k in 1..n {
                acc += b[k * p + col] * a[row * n + k];
            }
            c[row * p + col] = acc;
        }
    }
}

/// Rows summed by a sequential loop, then a read after the loop.
#[kernel]
pub fn row_sums(out: &mut [f64], a: &[f64], bias: &[f64], w: usize, shift: usize) {
    for r in 0..out.len() {
        let mut s = 0.0;
        for k in 0..w {
            s += a[r * w + k];
        }
        out[r] = s + bias[r + shift];
    }
}

/// Indices below zero, which wrap past the end as `usize`.
#[kernel]
pub fn shifted(out: &mut [f64], a: &[f64], b: &[f64], s: i64) {
    for i in 0..out.len() as i64 {
        out[i as usize] = a[(i + s) as usize] - b[(i - s) as usize];
    }
}

/// A bound that wraps in its type: `1..n - 1` with `n == 0` runs to 2^64 - 2.
#[kernel]
pub fn interior(out: &mut [f64], n: usize) {
    for i in 1..n - 1 {
        out[i] = 1.0;
    }
}

/// An index past 2^64, which wraps back into the slice.
#[kernel]
pub fn strided(out: &mut [f64], a: &[f64], w: usize) {
    for i in 0..out.len() {
        out[i] = a[(i + 4) * w];
    }
}

/// A sequential loop that may stop early: its reads are not made in every iteration.
#[kernel]
pub fn until_large(out: &mut [f64], a: &[f64], limit: usize) {
    for i in 0..out.len() {
        let mut s = 0.0;
        for k in 0..limit {
            if a[k] > 1.0 {
                break;
            }
            s += a[k];
        }
        out[i] = s + i as f64;
    }
}

// ---------------------------------------------------------------- checked on the device

/// Every cell of a volume but every fifth diagonal one: a conditional write.
#[kernel]
pub fn volume(out: &mut [u32], nk: usize, nj: usize, ni: usize) {
    for k in 0..nk {
        for j in 0..nj {
            for i in 0..ni {
                if (i + j + k) % 5 == 0 {
                    continue;
                }
                out[i + ni * (j + nj * k)] = (i + 7 * j + 13 * k) as u32;
            }
        }
    }
}

/// Two gathers in each iteration.
#[kernel]
pub fn gather(out: &mut [f64], a: &[f64], b: &[f64], ia: &[usize], ib: &[usize]) {
    for i in 0..out.len() {
        out[i] = a[ia[i]] + b[ib[i]];
    }
}

fn pick(a: &[f64], k: usize) -> f64 {
    a[k]
}

fn pick_twice(a: &[f64], k: usize) -> f64 {
    pick(a, k) + pick(a, k + 1)
}

/// A gather in a 2-D nest, through helpers that check their own indices.
#[kernel]
pub fn picked(out: &mut [f64], a: &[f64], idx: &[usize], rows: usize, width: usize) {
    for r in 0..rows {
        for c in 0..width {
            out[r * width + c] = pick_twice(a, idx[r * width + c]);
        }
    }
}

/// Integer division by the values of a slice: by zero, and MIN / -1.
#[kernel]
pub fn ratios(out: &mut [i64], a: &[i64], d: &[i64]) {
    for i in 0..out.len() {
        out[i] = a[i] / d[i];
    }
}

/// A reduction whose reads are checked on the device.
#[kernel]
pub fn gathered_sum(a: &[f64], idx: &[usize]) -> f64 {
    let mut s = 0.0;
    for i in 0..idx.len() {
        s += a[idx[i]];
    }
    s
}

/// Two loops that both fail: Rust never reaches the second.
#[kernel]
pub fn two_loops(out: &mut [f64], a: &[f64], first: &[usize], second: &[usize]) {
    for i in 0..first.len() {
        out[i] = a[first[i]];
    }
    for i in 0..second.len() {
        out[i] += a[second[i]];
    }
}

/// A loop that fails, then one writing through an index list that its verification finds out of bounds.
#[kernel]
pub fn then_list(out: &mut [f64], a: &[f64], idx: &[usize], zones: &[usize]) {
    for i in 0..idx.len() {
        out[i] = a[idx[i]];
    }
    for j in 0..zones.len() {
        out[zones[j]] = 1.0;
    }
}

fn per_part(total: usize, parts: usize) -> usize {
    total / parts
}

/// A value every thread computes before the loop, as Rust computes it once before every iteration.
#[kernel]
pub fn parts(out: &mut [f64], a: &[f64], idx: &[usize], parts: usize) {
    let width = per_part(out.len(), parts);
    for i in 0..out.len() {
        out[i] = a[idx[i]] * width as f64;
    }
}

/// A time-step loop around a gather through one row of `idx` per step: a panic in one step ends the run,
/// as in Rust, however early in its loop a later step would fail.
#[kernel]
pub fn steps(out: &mut [f64], a: &[f64], idx: &[usize], steps: usize) {
    for s in 0..steps {
        for i in 0..out.len() {
            out[i] += a[idx[s * out.len() + i]];
        }
    }
}
