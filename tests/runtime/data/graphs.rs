// Kernels of several launches, which a repeat call queues as one graph (tests/runtime/test_graphs.py).
use rs2gpu::kernel;

/// Two loops: the second reads what the first wrote.
#[kernel]
pub fn scale_then_add(a: &mut [f64], b: &mut [f64], s: f64) {
    for i in 0..a.len() {
        a[i] = a[i] * s + 1.0;
    }
    for i in 0..b.len() {
        b[i] += a[i];
    }
}

/// A loop, then a sum of what it wrote, returned.
#[kernel]
pub fn scale_then_sum(a: &mut [f64], s: f64) -> f64 {
    for i in 0..a.len() {
        a[i] *= s;
    }
    let mut total = 0.0;
    for i in 0..a.len() {
        total += a[i];
    }
    total
}

/// One loop: nothing to gain from a graph.
#[kernel]
pub fn scale(a: &mut [f64], s: f64) {
    for i in 0..a.len() {
        a[i] *= s;
    }
}
