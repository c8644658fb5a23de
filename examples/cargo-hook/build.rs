//! Build script written by `rs2gpu cargo init` (rs2gpu 0.1.0).
//!
//! At every build where a source changed, rs2gpu (a Python package) checks this crate's `#[kernel]`
//! functions and writes their CUDA and HIP C++ and a typed Rust module into OUT_DIR; the crate includes
//! the module with
//!
//!     pub mod kernels {
//!         include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
//!     }
//!
//! A kernel that could race, or that uses something the GPU cannot run, fails the build with rs2gpu's
//! diagnostic. The Python that runs rs2gpu is `$RS2GPU_PYTHON`, or `python3`.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let python = std::env::var("RS2GPU_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let output = match Command::new(&python).args(["-m", "rs2gpu.cli", "cargo", "build-script"]).output() {
        Ok(output) => output,
        Err(err) => {
            eprintln!(
                "error: could not run `{python}`: {err}\n\
                 rs2gpu, a Python package, translates this crate's kernels at build time: install it \
                 (python3 -m pip install rs2gpu) or set RS2GPU_PYTHON to a Python that has it."
            );
            return ExitCode::FAILURE;
        }
    };
    // rs2gpu prints the `cargo::` instructions on stdout and its diagnostics on stderr. Cargo runs a build
    // script that failed again at the next build whatever it watched, so the instructions come only with a
    // success: on a failure cargo shows the diagnostics alone.
    print!("{}", String::from_utf8_lossy(&output.stdout));
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprint!("{stderr}");
    if output.status.success() {
        println!("cargo::rerun-if-env-changed=RS2GPU_PYTHON");
        return ExitCode::SUCCESS;
    }
    // what `python -m rs2gpu.cli` says where rs2gpu is not installed
    if stderr.contains("No module named 'rs2gpu'") {
        eprintln!(
            "error: `{python}` has no rs2gpu: install it (python3 -m pip install rs2gpu) or set RS2GPU_PYTHON \
             to a Python that has it."
        );
    }
    ExitCode::FAILURE
}
