"""examples/cargo-hook builds on a machine without CUDA, its CPU tests pass, the generated module compiles
without warnings, and its GPU program says so (exit 2) where there is no GPU."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from rs2gpu.cargo import build_script_text

from tests.support.cargo_crates import EXAMPLE, cargo, hook_crate, needs_cargo
from tests.support.paths import CASES

pytestmark = needs_cargo


def test_example_build_script_is_the_one_init_writes() -> None:
    assert (EXAMPLE / "build.rs").read_text() == build_script_text()
    assert 'rs2gpu = { path = "../../rs2gpu/support" }' in (EXAMPLE / "Cargo.toml").read_text()


def test_example_builds_and_its_cpu_tests_pass(cargo_target) -> None:
    built = cargo(["build"], EXAMPLE, cargo_target)
    assert built.returncode == 0, built.stderr
    tested = cargo(["test"], EXAMPLE, cargo_target)
    assert tested.returncode == 0, tested.stderr + tested.stdout
    assert "test result: ok. 10 passed" in tested.stdout


def test_example_without_gpu_exits_2(cargo_target) -> None:
    built = cargo(["build"], EXAMPLE, cargo_target)
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(cargo_target / "debug" / "rs2gpu-cargo-hook"), "64"], capture_output=True, text=True,
                         timeout=120, check=False)
    if run.returncode == 0:
        pytest.skip("this machine has a GPU: the program ran its kernels")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "no GPU to run on" in run.stderr


def test_generated_module_compiles_without_warnings(tmp_path) -> None:
    # A target folder of its own: RUSTFLAGS takes part in every crate's fingerprint.
    built = cargo(["build", "--all-targets"], EXAMPLE, tmp_path / "target", rustflags="-Dwarnings")
    assert built.returncode == 0, built.stderr
    if shutil.which("cargo-clippy") is not None:
        linted = cargo(["clippy", "--all-targets", "--", "-Dwarnings"], EXAMPLE, tmp_path / "target")
        assert linted.returncode == 0, linted.stderr


def test_generated_module_compiles_for_every_parameter_kind(tmp_path, cargo_target) -> None:
    # The semantics corpus: #[repr(C)] structs by value, by reference and as elements, `&[T; N]`, every
    # integer type, tuple results of many reductions, several launches.
    corpus = (CASES / "semantics.rs").read_text()
    include = '\npub mod kernels {\n    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));\n}\n'
    crate = hook_crate(tmp_path / "corpus", corpus + include, name="corpus")
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode == 0, built.stderr


def test_generated_module_launches_scatter_kernels(tmp_path, cargo_target) -> None:
    # Atomic updates leave the ABI as it is (pointers and lengths): every kernel of the scatter cases gets its
    # function, which uploads each target (its updates read the old values), and the module compiles.
    import re

    from rs2gpu import pipeline
    from rs2gpu.emit.rust_host import MODULE_FILE, render_rust_module

    case = CASES / "scatter.rs"
    abi = pipeline.translate(case).emitted.abi
    module = render_rust_module(abi)[MODULE_FILE]
    for name, entry in abi.kernels.items():
        assert re.search(rf"pub fn {name}\(\s*gpu: &Gpu,", module), name
        for target in {s.target for launch in entry.launches for s in launch.scatters}:
            assert f"let mut {target}_dev = DeviceBuffer::from_slice(gpu, {target})?;" in module, (name, target)
    include = '\npub mod kernels {\n    include!(concat!(env!("OUT_DIR"), "/rs2gpu_kernels.rs"));\n}\n'
    crate = hook_crate(tmp_path / "scatter", case.read_text() + include, name="scatter")
    built = cargo(["build"], crate, cargo_target)
    assert built.returncode == 0, built.stderr
