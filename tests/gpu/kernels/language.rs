//! Kernels for the GPU differential tests of the language features beyond element-wise loops:
//! 2-D and 3-D parallel loops, strides proved at launch, index-list writes, checks on the device,
//! min/max-location reductions, several launches in one kernel, iterator loops, signed indices,
//! generic kernels and host time-step loops. Sizes derive from slice lengths, so any input lengths are
//! valid; where a kernel can panic (an index that only some arguments keep in bounds), the GPU must
//! panic with rustc's message.

use rs2gpu::kernel;
use std::ops::{Add, Mul};

/// A row-major matrix of `w + 1` columns; each row scaled by its factor (2-D, strides proved here).
#[kernel]
pub fn scale_rows(m: &mut [f64], row_scale: &[f64], w: usize) {
    let cols = w + 1;
    let rows = m.len() / cols;
    for r in 0..rows {
        for c in 0..cols {
            m[r * cols + c] *= row_scale[r];
        }
    }
}

/// A cube of side `n + 1`, filled with the sum of its coordinates (3-D).
#[kernel]
pub fn fill_cube(a: &mut [f64], n: usize) {
    let side = (n % 4) + 1;
    for k in 0..side {
        for j in 0..side {
            for i in 0..side {
                a[(k * side + j) * side + i] = (i + 2 * j + 3 * k) as f64 + a[(k * side + j) * side + i];
            }
        }
    }
}

/// Matrix product of two `n`-by-`n` corners of the inputs, with a sequential inner loop.
#[kernel]
pub fn matmul(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
    let n = n % 8 + 1;
    for i in 0..n {
        for j in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[i * n + k] * b[k * n + j];
            }
            c[i * n + j] = sum;
        }
    }
}

/// A gather through a computed index: checked on the device (it can fail for short inputs).
#[kernel]
pub fn gather(out: &mut [f64], a: &[f64], stride: usize) {
    for i in 0..out.len() {
        let k = (i * (stride % 3 + 1)) % (a.len() + 1);
        out[i] = a[k] * 0.5;
    }
}

/// Integer division by values that may be zero: the Rust panic must surface from the device.
#[kernel]
pub fn divide(q: &mut [i32], a: &[i32], b: &[i32]) {
    for i in 0..q.len() {
        q[i] = a[i] / (b[i] % 4);
    }
}

/// The smallest value and its first index, and the largest and its last index.
#[kernel]
pub fn extremes(x: &[f64]) -> (f64, usize, f64, usize) {
    let mut lo = f64::INFINITY;
    let mut lo_at = 0;
    let mut hi = f64::NEG_INFINITY;
    let mut hi_at = 0;
    for i in 0..x.len() {
        if x[i] < lo {
            lo = x[i];
            lo_at = i;
        }
        if x[i] >= hi {
            hi = x[i];
            hi_at = i;
        }
    }
    (lo, lo_at, hi, hi_at)
}

/// The first position of the minimum of rounded values (many ties), seeded with element 0.
#[kernel]
pub fn first_min_rounded(x: &[f64]) -> (f64, usize) {
    let mut m = x[0].round();
    let mut at = 0;
    for i in 0..x.len() {
        if x[i].round() < m {
            m = x[i].round();
            at = i;
        }
    }
    (m, at)
}

/// Two launches in one kernel: the second reads what the first wrote, with the data kept on the GPU.
#[kernel]
pub fn two_passes(a: &mut [f64], b: &mut [f64], c: &[f64]) {
    for i in 0..a.len() {
        a[i] = c[i] * 2.0;
    }
    for i in 0..b.len() {
        b[i] = b[i] + a[i % a.len()];
    }
}

/// A reduction over a 2-D iteration space.
#[kernel]
pub fn sum_grid(a: &[i64], w: usize) -> i64 {
    let cols = w % 5 + 1;
    let rows = a.len() / cols;
    let mut total = 0i64;
    for r in 0..rows {
        for c in 0..cols {
            total = total.wrapping_add(a[r * cols + c]);
        }
    }
    total
}

// ---------------------------------------------------------------- iterator loops

/// `zip` of a mutable and a shared slice; the shared one is longer, so the loop runs to the output's end.
#[kernel]
pub fn double_zip(out: &mut [f64], inp: &[f64]) {
    for (o, x) in out.iter_mut().zip(inp.iter()) {
        *o = 2.0 * x + *o;
    }
}

/// `zip` with a fixed-size array: it stops after four elements and leaves the rest of `out` as it was.
#[kernel]
pub fn first_four(out: &mut [f32], weights: &[f32; 4]) {
    for (o, w) in out.iter_mut().zip(weights) {
        *o *= *w;
    }
}

/// `enumerate`'s counter, and a branch on a copied element.
#[kernel]
pub fn ramp_positive(out: &mut [f64], inp: &[f64]) {
    for (i, (o, &x)) in out.iter_mut().zip(inp).enumerate() {
        if x > 0.0 {
            *o = i as f64 * x;
        } else {
            *o = 0.0;
        }
    }
}

/// Three sources, `((a, b), c)`, and the free `zip`.
#[kernel]
pub fn triad_zip(a: &mut [f64], b: &[f64], c: &[f64], q: f64) {
    for ((x, y), z) in a.iter_mut().zip(b.iter()).zip(c.iter()) {
        *x = y + q * z;
    }
    for (x, y) in std::iter::zip(&mut *a, b) {
        *x -= *y;
    }
}

/// Reductions over items: a dot product of zipped slices and a wrapping integer sum.
#[kernel]
pub fn dot_and_count(x: &[f64], y: &[f64], flags: &[i32]) -> (f64, i32) {
    let mut dot = 0.0;
    for (a, b) in x.iter().zip(y) {
        dot += a * b;
    }
    let mut count = 0i32;
    for f in flags.iter().copied() {
        count = count.wrapping_add(f & 1);
    }
    (dot, count)
}

/// A sequential iterator loop over a fixed-size array inside a parallel one.
#[kernel]
pub fn weighted_window(out: &mut [f64], inp: &[f64], w: &[f64; 3]) {
    for (i, o) in out.iter_mut().enumerate() {
        let mut acc = 0.0;
        for (k, &c) in w.iter().enumerate() {
            acc += c * inp[i + k];
        }
        *o = acc;
    }
}

// ---------------------------------------------------------------- signed loop indices

/// An `i64` index from 1 to n - 2, cast to usize for each access: bounds are checked on the host.
#[kernel]
pub fn signed_stencil(out: &mut [f64], inp: &[f64]) {
    let n = out.len() as i64;
    for i in 1..n - 1 {
        out[i as usize] = inp[(i - 1) as usize] + inp[(i + 1) as usize];
    }
}

/// An `i32` loop; it starts at `first - 1`, which is -1 when `first` is 0: `-1 as usize` is out of
/// bounds, and the GPU must panic with Rust's message before any launch.
#[kernel]
pub fn signed_from(out: &mut [f32], inp: &[f32], first: i32) {
    for i in first - 1..out.len() as i32 {
        out[i as usize] = inp[i as usize] * 0.5;
    }
}

// ---------------------------------------------------------------- generic kernels

/// One kernel for two element types.
#[kernel(types(f32, f64))]
pub fn axpy_generic<T: Copy + Add<Output = T> + Mul<Output = T>>(y: &mut [T], x: &[T], a: T) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = a * *xi + *yi;
    }
}

/// Two type parameters, instantiated twice.
#[kernel(types((f64, i32), (f32, f32)))]
pub fn select_below<T: Copy, K: Copy + PartialOrd>(out: &mut [T], a: &[T], key: &[K], cut: K) {
    for i in 0..out.len() {
        if key[i] < cut {
            out[i] = a[i];
        }
    }
}

// ---------------------------------------------------------------- host time-step loops

/// Jacobi smoothing, ping-ponging between two arrays: two launches per step, the data kept on the GPU.
#[kernel]
pub fn jacobi(a: &mut [f64], b: &mut [f64], steps: usize) {
    let n = a.len().min(b.len());
    for step in 0..steps {
        let w = 0.5 / (step + 1) as f64;
        for i in 1..n - 1 {
            b[i] = w * (a[i - 1] + a[i + 1]);
        }
        for i in 1..n - 1 {
            a[i] = b[i] + step as f64;
        }
    }
}

/// A step-dependent loop bound, and a reduction after the host loop.
#[kernel]
pub fn shrinking_then_sum(a: &mut [f64], steps: usize) -> f64 {
    for s in 0..steps {
        let m = a.len() - s.min(a.len());
        for i in 0..m {
            a[i] = a[i] * 0.5 + s as f64;
        }
    }
    let mut total = 0.0;
    for x in a.iter() {
        total += x;
    }
    total
}

/// A read that leaves its slice in a later step: the host finds it before that step's launch, and the
/// GPU call panics with Rust's message (Rust's own run has done the earlier steps by then).
#[kernel]
pub fn drifting_read(b: &mut [f64], a: &[f64], steps: usize) {
    for s in 0..steps {
        for i in 0..b.len() {
            b[i] = a[i + 2 * s] + b[i];
        }
    }
}

/// A `let` of the host loop that divides by zero in step 1: Rust panics there, before that step's loop.
#[kernel]
pub fn step_divisor(a: &mut [i32], steps: i32) {
    for s in 0..steps {
        let q = 12 / (s - 1);
        for i in 0..a.len() {
            a[i] = a[i].wrapping_add(q);
        }
    }
}
