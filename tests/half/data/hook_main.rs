//! Runs the half-precision kernels on the GPU through the generated API and compares every result with the
//! same Rust functions on the CPU, bit for bit. Exit status: 0 when all match, 1 on a mismatch or a GPU
//! error, 2 where there is no usable GPU.

use std::process::ExitCode;

use probe::kernels::{self, Gpu};
use probe::{axpy_f16, mixed_bf16};
use rs2gpu::{bf16, f16};

/// Every 16-bit pattern in a scrambled order, `n` of them.
fn patterns(n: usize, step: usize) -> Vec<u16> {
    (0..n).map(|i| (i * step % 65536) as u16).collect()
}

fn run(gpu: &Gpu) -> Result<bool, kernels::Error> {
    let n = 65536;
    let x: Vec<f16> = patterns(n, 7919).into_iter().map(f16::from_bits).collect();
    let y: Vec<f16> = patterns(n, 104_729).into_iter().map(f16::from_bits).collect();
    let a = f16::from_f32(0.3);
    let (mut want, mut got) = (y.clone(), y);
    axpy_f16(&mut want, &x, a);
    kernels::axpy_f16(gpu, &mut got, &x, a)?;
    let halves_match = want.iter().zip(&got).all(|(w, g)| w.to_bits() == g.to_bits());

    let x: Vec<bf16> = patterns(n, 7919).into_iter().map(bf16::from_bits).collect();
    let s = bf16::from_f32(-1.75);
    let (mut want, mut got) = (vec![bf16::ZERO; n], vec![bf16::ZERO; n]);
    let (mut want_wide, mut got_wide) = (vec![0.0f32; n], vec![0.0f32; n]);
    mixed_bf16(&mut want, &mut want_wide, &x, s);
    kernels::mixed_bf16(gpu, &mut got, &mut got_wide, &x, s)?;
    // The half operations give NVIDIA's one NaN whatever the operands; f32 arithmetic on a NaN keeps its
    // payload on the CPU and not on the GPU (Rust leaves NaN payloads unspecified): any NaN matches any NaN.
    let bf16_match = want.iter().zip(&got).all(|(w, g)| w.to_bits() == g.to_bits())
        && want_wide.iter().zip(&got_wide).all(|(w, g)| w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()));
    println!("f16 axpy: {}, bf16 expression: {}", halves_match, bf16_match);
    Ok(halves_match && bf16_match)
}

fn main() -> ExitCode {
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(e) if e.is_unavailable() => {
            eprintln!("no GPU to run on: {e}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&gpu) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
