//! RAJAPerf kernels launched back to back through rs2gpu's generated Rust API, timed the way RAJAPerf times
//! its reps: a host clock around `reps` asynchronous calls between two device synchronizations, divided by
//! `reps`, at RAJAPerf's default size (10^6) and reps; the best of three passes through the kernels, each
//! pass timing every kernel once, as RAJAPerf's passes go through its suite (its H200 figures are the
//! minimum of 3 passes). A call on device buffers
//! whose launches record nothing reads nothing back, so these calls queue without waiting, as RAJAPerf's
//! launches do; a reduction reads its result back in every call, as RAJA_CUDA's do.
//!
//! Usage: `rs2gpu-rust-reps [KERNEL...]` (default: all of them). Prints `KERNEL reps µs/rep` per line.
//! Exit status: 0, 1 on a GPU error, 2 when this machine has no usable GPU.

use std::process::ExitCode;
use std::time::Instant;

/// The generated module refers to the kernels' structs by their path in the kernels' crate.
pub use rajaperf_kernels::apps;

#[allow(dead_code)] // the module has every kernel of the crate; this program times some
mod kernels {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
}

use kernels::{DeviceBuffer, Error, Gpu};

const N: usize = 1_000_000;
/// Inputs are longer than the loops by this much: some kernels read a few elements past `i` (FIR 15).
const SLACK: usize = 16;
const PASSES: usize = 3;

/// Device buffers of reproducible values in [0.5, 1.5), `len` long.
fn values(gpu: &Gpu, len: usize, seed: u64) -> Result<DeviceBuffer<f64>, Error> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let data: Vec<f64> = (0..len)
        .map(|_| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            0.5 + (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect();
    DeviceBuffer::from_slice(gpu, &data)
}

/// µs per call of `reps` calls back to back (after one call, which compiles and loads the kernel in the
/// first pass).
fn per_rep(gpu: &Gpu, reps: usize, mut call: impl FnMut() -> Result<(), Error>) -> Result<f64, Error> {
    call()?;
    gpu.synchronize()?;
    let started = Instant::now();
    for _ in 0..reps {
        call()?;
    }
    gpu.synchronize()?;
    Ok(started.elapsed().as_secs_f64() / reps as f64 * 1e6)
}

/// (RAJAPerf name, RAJAPerf's default reps, µs per rep) of one kernel.
fn run(gpu: &Gpu, name: &str) -> Result<Option<(usize, f64)>, Error> {
    let input = |seed| values(gpu, N + SLACK, seed);
    let output = |seed| values(gpu, N, seed);
    let timed = |reps: usize, call: &mut dyn FnMut() -> Result<(), Error>| per_rep(gpu, reps, call).map(|us| Some((reps, us)));
    match name {
        "ADD" => {
            let (mut c, a, b) = (output(1)?, input(2)?, input(3)?);
            timed(1000, &mut || kernels::add_on(gpu, &mut c, &a, &b))
        }
        "COPY" => {
            let (mut c, a) = (output(1)?, input(2)?);
            timed(1800, &mut || kernels::copy_on(gpu, &mut c, &a))
        }
        "MUL" => {
            let (mut b, c) = (output(1)?, input(2)?);
            timed(1800, &mut || kernels::mul_on(gpu, &mut b, &c, 0.75))
        }
        "TRIAD" => {
            let (mut a, b, c) = (output(1)?, input(2)?, input(3)?);
            timed(1000, &mut || kernels::triad_on(gpu, &mut a, &b, &c, 0.75))
        }
        "DOT" => {
            let (a, b) = (output(1)?, output(2)?);
            timed(2000, &mut || kernels::dot_on(gpu, &a, &b).map(|_| ()))
        }
        "DAXPY" => {
            let (mut y, x) = (output(1)?, input(2)?);
            timed(500, &mut || kernels::daxpy_on(gpu, &mut y, &x, 0.75))
        }
        "INIT3" | "MULADDSUB" => {
            let (mut o1, mut o2, mut o3, i1, i2) = (output(1)?, output(2)?, output(3)?, input(4)?, input(5)?);
            if name == "INIT3" {
                timed(500, &mut || kernels::init3_on(gpu, &mut o1, &mut o2, &mut o3, &i1, &i2))
            } else {
                timed(350, &mut || kernels::muladdsub_on(gpu, &mut o1, &mut o2, &mut o3, &i1, &i2))
            }
        }
        "INIT_VIEW1D" => {
            let mut a = output(1)?;
            timed(2500, &mut || kernels::init_view1d_on(gpu, &mut a, 0.25))
        }
        "INIT_VIEW1D_OFFSET" => {
            let mut a = output(1)?;
            timed(2500, &mut || kernels::init_view1d_offset_on(gpu, &mut a, 0.25))
        }
        "IF_QUAD" => {
            let (a, b, c, mut x1, mut x2) = (input(1)?, input(2)?, input(3)?, output(4)?, output(5)?);
            timed(180, &mut || kernels::if_quad_on(gpu, &a, &b, &c, &mut x1, &mut x2))
        }
        "EOS" => {
            let (mut x, y, z, u) = (output(1)?, input(2)?, input(3)?, input(4)?);
            timed(500, &mut || kernels::eos_on(gpu, &mut x, &y, &z, &u, 0.5, 0.25, 0.125))
        }
        "FIRST_DIFF" => {
            let (mut x, y) = (output(1)?, input(2)?);
            timed(2000, &mut || kernels::first_diff_on(gpu, &mut x, &y))
        }
        "FIRST_SUM" => {
            let (mut x, y) = (output(1)?, output(2)?);
            timed(2000, &mut || kernels::first_sum_on(gpu, &mut x, &y))
        }
        "HYDRO_1D" => {
            let (mut x, y, z) = (output(1)?, input(2)?, input(3)?);
            timed(1000, &mut || kernels::hydro_1d_on(gpu, &mut x, &y, &z, 0.5, 0.25, 0.125))
        }
        "PLANCKIAN" => {
            let (x, mut y, u, v, mut w) = (input(1)?, output(2)?, input(3)?, input(4)?, output(5)?);
            timed(50, &mut || kernels::planckian_on(gpu, &x, &mut y, &u, &v, &mut w))
        }
        "TRIDIAG_ELIM" => {
            let (mut xout, xin, y, z) = (output(1)?, output(2)?, output(3)?, output(4)?);
            timed(1000, &mut || kernels::tridiag_elim_on(gpu, &mut xout, &xin, &y, &z))
        }
        "PRESSURE" => {
            let (mut bvc, mut p_new) = (output(1)?, output(2)?);
            let (compression, e_old, vnewc) = (input(3)?, input(4)?, input(5)?);
            timed(700, &mut || {
                kernels::pressure_on(gpu, &mut bvc, &mut p_new, &compression, &e_old, &vnewc, 0.5, 1e-7, 1e-7, 1.25)
            })
        }
        "FIR" => {
            let (mut out, input) = (output(1)?, input(2)?);
            let coeff = [3.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 3.0];
            timed(160, &mut || kernels::fir_on(gpu, &mut out, &input, &coeff))
        }
        "NESTED_INIT" => {
            let mut array = output(1)?;
            timed(1000, &mut || kernels::nested_init_on(gpu, &mut array, 100, 100, 100))
        }
        "REDUCE3_INT" => {
            let data: Vec<i32> = (0..N as i32).map(|i| (i % 2001) - 1000).collect();
            let vec = DeviceBuffer::from_slice(gpu, &data)?;
            timed(50, &mut || kernels::reduce3_int_on(gpu, &vec).map(|_| ()))
        }
        _ => Ok(None),
    }
}

const KERNELS: [&str; 21] = [
    "ADD", "COPY", "MUL", "TRIAD", "DOT", "DAXPY", "INIT3", "MULADDSUB", "INIT_VIEW1D", "INIT_VIEW1D_OFFSET",
    "IF_QUAD", "NESTED_INIT", "REDUCE3_INT", "EOS", "FIRST_DIFF", "FIRST_SUM", "HYDRO_1D", "PLANCKIAN",
    "TRIDIAG_ELIM", "PRESSURE", "FIR",
];

fn main() -> ExitCode {
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(err) if err.is_unavailable() => {
            eprintln!("no usable GPU: {err}");
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    println!("# {}, {N} elements, best of {PASSES} passes", gpu.describe());
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    for unknown in wanted.iter().filter(|w| !KERNELS.contains(&w.as_str())) {
        eprintln!("unknown kernel {unknown}");
    }
    let names: Vec<&str> = KERNELS.into_iter().filter(|n| wanted.is_empty() || wanted.iter().any(|w| w == n)).collect();
    let mut best = vec![(0, f64::INFINITY); names.len()];
    for _ in 0..PASSES {
        for (name, best) in names.iter().zip(&mut best) {
            match run(&gpu, name) {
                Ok(Some((reps, us))) => *best = (reps, best.1.min(us)),
                Ok(None) => unreachable!("{name} is one of KERNELS"),
                Err(err) => {
                    eprintln!("error: {name}: {err}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    for (name, (reps, us)) in names.iter().zip(best) {
        println!("{name} {reps} {us:.2}");
    }
    ExitCode::SUCCESS
}
