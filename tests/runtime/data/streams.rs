//! Kernels of the stream tests (tests/runtime/test_streams.py, tests/gpu/test_streams_gpu.py): one with a
//! parameter named `stream`, which takes the keyword `stream=` as its argument, a copy, a host time-step
//! loop, whose call queues several launches, and a generic kernel instantiated at its calls.
use rs2gpu::kernel;

/// `out[i] = stream * a[i]`: `stream` is a number here, not the stream of the call.
#[kernel]
pub fn scaled(out: &mut [f64], a: &[f64], stream: f64) {
    for i in 0..out.len().min(a.len()) {
        out[i] = stream * a[i];
    }
}

/// `out[i] = 2 * a[i]`.
#[kernel]
pub fn doubled(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len().min(a.len()) {
        out[i] = 2.0 * a[i];
    }
}

/// Jacobi smoothing, ping-ponging between two arrays: two launches per step.
#[kernel]
pub fn smooth(a: &mut [f64], b: &mut [f64], steps: usize) {
    let n = a.len().min(b.len());
    for _ in 0..steps {
        for i in 1..n - 1 {
            b[i] = 0.5 * (a[i - 1] + a[i + 1]);
        }
        for i in 1..n - 1 {
            a[i] = b[i];
        }
    }
}

/// `out[i] = value`, for the element type of the call's arguments.
#[kernel]
pub fn filled<T: Copy>(out: &mut [T], value: T) {
    for i in 0..out.len() {
        out[i] = value;
    }
}
