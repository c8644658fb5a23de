// Nine kernels, each with one error: some in the Rust itself (the frontend's, which rustc reports too),
// some races (the checker's, in valid Rust). Every one of them is reported, in this order.
use rs2gpu::kernel;

#[kernel]
pub fn shift_left(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}

#[kernel]
pub fn undefined(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i] = b[i] + offset;
    }
}

#[kernel]
pub fn first(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[0] = b[i];
    }
}

#[kernel]
pub fn mixed(a: &mut [f64], b: &[f32]) {
    for i in 0..b.len() {
        a[i] = b[i] + 1.0f64;
    }
}

#[kernel]
pub fn halve(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[i / 2] = b[i];
    }
}

#[kernel]
pub fn reversed(a: &mut [f64], b: &[f64]) {
    for i in 0..a.len() {
        a[i] = b.iter().rev().sum();
    }
}

#[kernel]
pub fn carried(a: &mut [f64], b: &[f64]) -> f64 {
    let mut last = 0.0;
    for i in 0..b.len() {
        last = b[i];
        a[i] = last;
    }
    last
}

#[kernel]
pub fn roots(a: &mut [f64]) {
    for i in 0..a.len() {
        a[i] = root(i);
    }
}

fn root(i: usize) -> f64 {
    i.sqrt()
}

#[kernel]
pub fn shift_right(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i + 1] = a[i];
    }
}
