//! Translates the RAJAPerf example crate's kernels (not this crate's: it has none) into OUT_DIR with
//! rs2gpu's Cargo hook, so that `src/main.rs` can include their typed Rust API. The Python that runs rs2gpu
//! is `$RS2GPU_PYTHON`, or `python3`.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    println!("cargo::rerun-if-env-changed=RS2GPU_PYTHON");
    let python = std::env::var("RS2GPU_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let kernels = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/rajaperf");
    let output = match Command::new(&python)
        .args(["-m", "rs2gpu.cli", "cargo", "build-script", "--crate-dir", kernels])
        .output()
    {
        Ok(output) => output,
        Err(err) => {
            eprintln!("error: could not run `{python}` (rs2gpu translates the kernels at build time): {err}");
            return ExitCode::FAILURE;
        }
    };
    // rs2gpu prints the `cargo::` instructions on stdout and its diagnostics on stderr; the warnings about
    // kernels the Rust API cannot launch yet are expected here, so only errors are passed on.
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        if !line.starts_with("cargo::warning=") {
            println!("{line}");
        }
    }
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    if output.status.success() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
