//! Control flow inside the parallel iteration: `match`, `while`, `loop`, early `continue` and `break`.

use rs2gpu::kernel;

/// Sign of each integer, as a `match` on ranges.
#[kernel]
pub fn sign_match(out: &mut [i32], x: &[i32]) {
    for i in 0..out.len() {
        out[i] = match x[i] {
            i32::MIN..=-1 => -1,
            0 => 0,
            _ => 1,
        };
    }
}

/// Column of the first element above `t` in each row (or -1), a `while` that `break`s when it finds one.
#[kernel]
pub fn first_above(out: &mut [i64], m: &[f64], cols: usize, t: f64) {
    for r in 0..out.len() {
        let mut found = -1;
        let mut c = 0;
        while c < cols {
            if m[r * cols + c] > t {
                found = c as i64;
                break;
            }
            c += 1;
        }
        out[r] = found;
    }
}

/// Sum of the positive elements of each row, skipping the others with `continue`.
#[kernel]
pub fn positive_row_sums(out: &mut [f64], m: &[f64], cols: usize) {
    for r in 0..out.len() {
        let mut s = 0.0;
        for c in 0..cols {
            let v = m[r * cols + c];
            if v <= 0.0 {
                continue;
            }
            s += v;
        }
        out[r] = s;
    }
}

/// Square root by Newton's iteration, a `loop` that stops when converged or after 60 steps.
#[kernel]
pub fn newton_sqrt(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        let a = x[i].abs();
        let mut g = a.max(1.0);
        let mut steps = 0;
        loop {
            let next = 0.5 * (g + a / g);
            if next == g || steps == 60 {
                break;
            }
            g = next;
            steps += 1;
        }
        out[i] = g;
    }
}

/// Collatz steps to reach 1 (at most 500), a `while` with an `if` expression.
pub fn collatz_steps(out: &mut [u32], x: &[u32]) {
    for i in 0..out.len() {
        let mut n = x[i].max(1) as u64;
        let mut steps = 0u32;
        while n != 1 && steps < 500 {
            n = if n.is_multiple_of(2) { n / 2 } else { 3 * n + 1 };
            steps += 1;
        }
        out[i] = steps;
    }
}

/// Square roots of the non-negative elements; a negative one skips the iteration, leaving its output as it was.
#[kernel]
pub fn sqrt_non_negative(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        if x[i] < 0.0 {
            continue;
        }
        out[i] = x[i].sqrt();
    }
}

/// Whether some row holds two equal neighbours, leaving both loops with a labelled `break`.
pub fn rows_with_repeat(out: &mut [u8], m: &[i32], cols: usize) {
    for r in 0..out.len() {
        let mut hit = 0;
        'scan: for c in 1..cols {
            for d in 0..c {
                if m[r * cols + c] == m[r * cols + d] {
                    hit = 1;
                    break 'scan;
                }
            }
        }
        out[r] = hit;
    }
}

/// The next element, or zero past the end, read with `if let Some(..) = x.get(..)`.
pub fn next_or_zero(out: &mut [f64], x: &[f64]) {
    for i in 0..out.len() {
        out[i] = if let Some(v) = x.get(i + 1) { *v } else { 0.0 };
    }
}
