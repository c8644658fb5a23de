"""What the hook rejects: aliasing calls (rustc's borrow checker, E0502), racy kernels (rs2gpu's diagnostic,
which fails the build), and a build machine without rs2gpu."""
from __future__ import annotations

import os
import subprocess
import venv

from tests.support.cargo_crates import TRIAD_LIB_RS, cargo, hook_crate, needs_cargo

pytestmark = needs_cargo

ALIASING_MAIN_RS = """\
use probe::kernels::{self, DeviceBuffer, Gpu};

fn main() -> Result<(), kernels::Error> {
    let gpu = Gpu::new()?;
    let mut a = vec![0.0; 4];
    let c = vec![1.0; 4];
    kernels::triad(&gpu, &mut a, &a, &c, 2.0)?;
    let mut a_dev = DeviceBuffer::from_slice(&gpu, &a)?;
    let c_dev = DeviceBuffer::from_slice(&gpu, &c)?;
    kernels::triad_on(&gpu, &mut a_dev, &a_dev, &c_dev, 2.0)?;
    Ok(())
}
"""

RACY_LIB_RS = """\
use rs2gpu::kernel;

#[kernel]
pub fn shift(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}
"""


def test_one_slice_as_mut_and_shared_argument_is_rejected_by_rustc(tmp_path, cargo_target) -> None:
    crate = hook_crate(tmp_path / "aliasing", TRIAD_LIB_RS, ALIASING_MAIN_RS)
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode != 0
    assert "error[E0502]: cannot borrow `a` as immutable because it is also borrowed as mutable" in built.stderr
    assert "error[E0502]: cannot borrow `a_dev` as immutable because it is also borrowed as mutable" in built.stderr
    assert "src/main.rs:7:34" in built.stderr


def test_the_same_crate_builds_once_the_call_is_fixed(tmp_path, cargo_target) -> None:
    fixed = ALIASING_MAIN_RS.replace("&mut a, &a, &c", "&mut a, &c, &c").replace("&a_dev, &c_dev", "&c_dev, &c_dev")
    crate = hook_crate(tmp_path / "fixed", TRIAD_LIB_RS, fixed)
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode == 0, built.stderr


def test_racy_kernel_fails_the_build_with_the_diagnostic(tmp_path, cargo_target) -> None:
    crate = hook_crate(tmp_path / "racy", RACY_LIB_RS)
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode != 0
    assert "failed to run custom build command for `probe" in built.stderr
    expected = ("error[RG0103]: this reads an element of `a` that another iteration may write\n"
                " --> src/lib.rs:6:16\n"
                "  |\n"
                "6 |         a[i] = a[i + 1];\n"
                "  |                ^^^^^^^^ read here, at an index other than the one this iteration writes\n")
    # cargo shows a failed build script's stderr indented by two spaces
    shown = "\n".join(line.removeprefix("  ") for line in built.stderr.splitlines())
    assert expected in shown, built.stderr
    assert "error: rs2gpu could not translate the kernels due to 1 previous error" in shown
    # and its stdout above it, where the build script leaves nothing on a failure: the diagnostic comes
    # right after cargo's own lines
    assert "--- stdout" not in built.stderr and "cargo::" not in built.stderr
    assert "--- stderr\n  error[RG0103]" in built.stderr


def test_a_source_that_does_not_parse_fails_the_build_with_rustcs_error(tmp_path, cargo_target) -> None:
    unclosed = TRIAD_LIB_RS.replace("alpha * c[i];\n    }", "alpha * c[i];\n")
    built = cargo(["build"], hook_crate(tmp_path / "unclosed", unclosed), cargo_target)
    assert built.returncode != 0
    assert "error: this file contains an unclosed delimiter" in built.stderr  # rustc's words and place
    assert "error[RG0001]" not in built.stderr and "failed to run custom build command" not in built.stderr
    assert "rs2gpu did not translate the kernels: src/lib.rs does not parse as Rust" in built.stderr


def test_build_without_rs2gpu_says_how_to_get_it(tmp_path, cargo_target) -> None:
    crate = hook_crate(tmp_path / "nopython", TRIAD_LIB_RS)
    env = {**os.environ, "CARGO_TARGET_DIR": str(cargo_target), "RS2GPU_PYTHON": str(tmp_path / "no-python"),
           "CARGO_TERM_COLOR": "never"}
    built = subprocess.run(["cargo", "build", "--offline"], cwd=crate, env=env, capture_output=True, text=True,
                           check=False)
    assert built.returncode != 0
    assert "could not run" in built.stderr and "RS2GPU_PYTHON" in built.stderr


def test_build_with_a_python_without_rs2gpu_says_how_to_get_it(tmp_path, cargo_target) -> None:
    crate = hook_crate(tmp_path / "bare", TRIAD_LIB_RS)
    venv.create(tmp_path / "venv", with_pip=False)  # a Python that runs, without rs2gpu
    python = tmp_path / "venv" / "bin" / "python"
    env = {**os.environ, "CARGO_TARGET_DIR": str(cargo_target), "RS2GPU_PYTHON": str(python),
           "CARGO_TERM_COLOR": "never"}
    env.pop("PYTHONPATH", None)
    built = subprocess.run(["cargo", "build", "--offline"], cwd=crate, env=env, capture_output=True, text=True,
                           check=False)
    assert built.returncode != 0
    assert "No module named 'rs2gpu'" in built.stderr  # Python's words, which build.rs looks for
    assert "has no rs2gpu: install it (python3 -m pip install rs2gpu) or set RS2GPU_PYTHON" in built.stderr


GENERIC_LIB_RS = """\
use rs2gpu::kernel;
use std::ops::{Add, Mul};

#[kernel(ARGUMENTS)]
pub fn axpy<T: Copy + Add<Output = T> + Mul<Output = T>>(y: &mut [T], x: &[T], a: T) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}
"""


def test_kernel_attribute_takes_types_and_fast_math(tmp_path, cargo_target) -> None:
    source = GENERIC_LIB_RS.replace("ARGUMENTS", "types(f32, f64), fast_math")
    crate = hook_crate(tmp_path / "generic", source)
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode == 0, built.stderr


def test_kernel_attribute_rejects_an_argument_it_does_not_know(tmp_path, cargo_target) -> None:
    crate = hook_crate(tmp_path / "typo", GENERIC_LIB_RS.replace("ARGUMENTS", "type(f32)"))
    (crate / "build.rs").unlink()  # rustc's verdict on the attribute, without rs2gpu's
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode != 0
    assert "error: unknown #[kernel] argument `type" in built.stderr  # as rustc prints the tokens
    assert "the accepted arguments are `fast_math` and `types(T1, T2, ...)`" in built.stderr
