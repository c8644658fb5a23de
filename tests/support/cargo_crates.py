"""Crates that use the Cargo build-script hook, and cargo run on them offline with this test's Python as
the hook's interpreter. A test that builds one takes the `cargo_target` fixture of tests/cargo (one target
folder per session, so the support crate builds once) and the `needs_cargo` mark."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rs2gpu import support_crate_path
from rs2gpu.cli import main as rs2gpu_main

from tests.support.paths import REPO

needs_cargo = pytest.mark.usefixtures("cargo_is_installed")
EXAMPLE = REPO / "examples" / "cargo-hook"

TRIAD_LIB_RS = """\
use rs2gpu::kernel;

#[kernel]
pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) {
    for i in 0..a.len() {
        a[i] = b[i] + alpha * c[i];
    }
}

pub mod kernels {
    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));
}
"""


def cargo(args: list[str], crate: Path, target_dir: Path, rustflags: str | None = None) -> subprocess.CompletedProcess:
    """`cargo ARGS --offline` in `crate`; the build script runs rs2gpu with this test's Python."""
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir), "RS2GPU_PYTHON": sys.executable,
           "CARGO_TERM_COLOR": "never"}
    env.pop("RUSTFLAGS", None)
    if rustflags is not None:
        env["RUSTFLAGS"] = rustflags
    return subprocess.run(["cargo", args[0], "--offline", *args[1:]], cwd=crate, env=env, capture_output=True, text=True,
                          check=False)


def hook_crate(root: Path, lib_rs: str, main_rs: str | None = None, name: str = "probe") -> Path:
    """A crate prepared by `rs2gpu cargo init`, with the given src/lib.rs (and src/main.rs)."""
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(f'[package]\nname = "{name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
                                     "[dependencies]\n\n[workspace]\n")
    (root / "src" / "lib.rs").write_text(lib_rs)
    if main_rs is not None:
        (root / "src" / "main.rs").write_text(main_rs)
    assert rs2gpu_main(["cargo", "init", str(root)]) == 0
    assert json.dumps(support_crate_path().as_posix()) in (root / "Cargo.toml").read_text()
    return root
