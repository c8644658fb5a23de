"""Kernel modules loaded once per test session on the CPU backend (each load builds a Rust library with
cargo), with the compiled-kernel cache in a temporary folder (tests/conftest.py's `kernel_cache`)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import rs2gpu

# A crate of kernels that the example crate does not have: #[repr(C)] structs by value, by reference and
# as slice elements, integer scalars, a fixed-size array, a tuple result, a division before the loop, and a
# scatter update that reads its element, and parameters named like the names a C ABI shim would invent.
PROBE_LIB_RS = """\
use rs2gpu::kernel;

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Affine {
    pub scale: f64,
    pub shift: f32,
    pub steps: i32,
    pub flag: u8,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct Particle {
    pub mass: f32,
    pub pos: f64,
    pub id: u16,
}

#[kernel]
pub fn affine(out: &mut [f64], x: &[f64], p: Affine) {
    for i in 0..out.len() {
        out[i] = x[i] * p.scale + p.shift as f64 + p.steps as f64 + p.flag as f64;
    }
}

#[kernel]
pub fn affine_ref(out: &mut [f64], x: &[f64], p: &Affine) {
    for i in 0..out.len() {
        out[i] = x[i] * p.scale + p.shift as f64 + p.steps as f64 + p.flag as f64;
    }
}

#[kernel]
pub fn momentum(out: &mut [f64], ps: &[Particle]) {
    for i in 0..out.len() {
        out[i] = ps[i].mass as f64 * ps[i].pos + ps[i].id as f64;
    }
}

#[kernel]
pub fn renumber(ps: &mut [Particle], by: u16) {
    for i in 0..ps.len() {
        ps[i].id = ps[i].id.wrapping_add(by);
    }
}

#[kernel]
pub fn scale_u32(out: &mut [u32], a: &[u32], k: u32) {
    for i in 0..out.len() {
        out[i] = a[i].wrapping_mul(k);
    }
}

#[kernel]
pub fn count_above(a: &[i32], lo: i32) -> (i32, f64) {
    let mut n = 0;
    let mut s = 0.0;
    for i in 0..a.len() {
        if a[i] > lo {
            n += 1;
            s += a[i] as f64;
        }
    }
    (n, s)
}

#[kernel]
pub fn first_part(out: &mut [f64], parts: usize) {
    let width = out.len() / parts;
    for i in 0..width {
        out[i] = 1.0;
    }
}

#[kernel]
pub fn lowest(lo: &mut [f64], idx: &[usize], v: &[f64]) {
    for i in 0..v.len() {
        lo[idx[i]] = lo[idx[i]].min(v[i]);
    }
}

// parameters named as a C ABI shim might name its own: `out`, `msg`, `cap`, a slice `a` beside an `a_len`
#[kernel]
pub fn shim_names(out: &mut [f64], a: &[f64], a_len: usize, msg: f64, cap: i32) -> f64 {
    let mut total = 0.0;
    for i in 0..out.len() {
        out[i] = a[i] * msg + cap as f64;
        total += a[i];
    }
    total + a_len as f64
}

#[kernel]
pub fn cycle(out: &mut [f64], table: &[f64; 4]) {
    for i in 0..out.len() {
        out[i] = table[i % 4];
    }
}
"""

LONE_FILE_RS = """\
use rs2gpu::kernel;

#[kernel]
pub fn saxpy(y: &mut [f32], x: &[f32], a: f32) {
    for i in 0..y.len() {
        y[i] = a * x[i] + y[i];
    }
}
"""


@pytest.fixture(scope="session")
def probe_crate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("probe-crate")
    (root / "src").mkdir()
    (root / "Cargo.toml").write_text(
        '[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n'
        f"rs2gpu = {{ path = {json.dumps(rs2gpu.support_crate_path().as_posix())} }}\n"
    )
    (root / "src" / "lib.rs").write_text(PROBE_LIB_RS)
    return root


@pytest.fixture(scope="session")
def probe(kernel_cache: Path, probe_crate: Path) -> rs2gpu.api.KernelModule:
    return rs2gpu.load(probe_crate, backend="cpu")


@pytest.fixture(scope="session")
def lone_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("lone") / "saxpy.rs"
    path.write_text(LONE_FILE_RS)
    return path
