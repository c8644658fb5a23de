"""`rs2gpu cargo init` and `rs2gpu cargo build-script`, without building anything, and the Rust rendering of
host expressions."""
from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from rs2gpu import cargo as hook
from rs2gpu import __version__, incremental, pipeline, support_crate_path
from rs2gpu.cli import main as rs2gpu_main
from rs2gpu.emit.rust_host import HostExpr, Scope, literal, render_rust_module
from rs2gpu.ir.diagnostics import Diagnostic
from rs2gpu.ir.nodes import Span

from tests.support.cargo_crates import EXAMPLE, TRIAD_LIB_RS
from tests.support.paths import REPO

PACKAGE = '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n'


def crate(tmp_path: Path, toml: str = PACKAGE + "\n[dependencies]\n") -> Path:
    (tmp_path / "src").mkdir(parents=True)
    (tmp_path / "src" / "lib.rs").write_text(TRIAD_LIB_RS)
    (tmp_path / "Cargo.toml").write_text(toml)
    return tmp_path


def test_init_writes_build_rs_and_the_dependency(tmp_path, capsys) -> None:
    root = crate(tmp_path)
    assert rs2gpu_main(["cargo", "init", str(root)]) == 0
    assert (root / "build.rs").read_text() == hook.build_script_text()
    toml = (root / "Cargo.toml").read_text()
    assert f'[dependencies]\nrs2gpu = {{ path = "{support_crate_path().as_posix()}" }}\n' in toml
    out = capsys.readouterr().out
    assert hook.INCLUDE_LINE in out and "pub mod kernels" in out
    # a second run changes nothing
    assert rs2gpu_main(["cargo", "init", str(root)]) == 0
    assert (root / "Cargo.toml").read_text() == toml
    assert "up to date" in capsys.readouterr().out


def test_init_refuses_to_replace_a_different_build_rs(tmp_path, capsys) -> None:
    root = crate(tmp_path)
    (root / "build.rs").write_text("fn main() { println!(\"cargo::rustc-link-lib=m\"); }\n")
    assert rs2gpu_main(["cargo", "init", str(root)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert "rustc-link-lib" in (root / "build.rs").read_text()
    assert "rs2gpu" not in (root / "Cargo.toml").read_text()
    assert rs2gpu_main(["cargo", "init", "--force", str(root)]) == 0
    assert (root / "build.rs").read_text() == hook.build_script_text()


def test_init_adds_a_dependencies_table_and_keeps_an_existing_dependency(tmp_path) -> None:
    root = crate(tmp_path / "a", PACKAGE)
    hook.init_crate(root)
    assert (root / "Cargo.toml").read_text().endswith(f'\n[dependencies]\nrs2gpu = {{ path = "{support_crate_path().as_posix()}" }}\n')
    mine = PACKAGE + '\n[dependencies]\nrs2gpu = { path = "../vendored/rs2gpu" }\n'
    root = crate(tmp_path / "b", mine)
    report = hook.init_crate(root)
    assert (root / "Cargo.toml").read_text() == mine
    assert any("already depends on rs2gpu" in m for m in report.messages)


def test_init_warns_when_cargo_would_not_run_build_rs(tmp_path) -> None:
    root = crate(tmp_path, PACKAGE.replace('edition = "2021"\n', 'edition = "2021"\nbuild = false\n'))
    assert any("build = False" in w for w in hook.init_crate(root).warnings)


def test_init_needs_a_package(tmp_path, capsys) -> None:
    assert rs2gpu_main(["cargo", "init", str(tmp_path)]) == 2
    assert "no Cargo.toml" in capsys.readouterr().err
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["a"]\n')
    assert rs2gpu_main(["cargo", "init", str(tmp_path)]) == 2
    assert "no [package]" in capsys.readouterr().err


def test_support_crate_path_is_relative_inside_one_repository() -> None:
    assert hook.support_dependency(EXAMPLE) == "../../rs2gpu/support"


def test_build_script_outside_cargo_is_a_usage_error(monkeypatch, capsys) -> None:
    monkeypatch.delenv("OUT_DIR", raising=False)
    monkeypatch.delenv("CARGO_MANIFEST_DIR", raising=False)
    assert rs2gpu_main(["cargo", "build-script"]) == 2
    assert "--crate-dir" in capsys.readouterr().err


def test_build_script_writes_the_module_and_watches_the_sources(tmp_path) -> None:
    root = crate(tmp_path / "crate")
    out_dir = tmp_path / "out"
    stdout, stderr = io.StringIO(), io.StringIO()
    assert hook.run_build_script(root, out_dir, stdout, stderr) == 0
    lines = stdout.getvalue().splitlines()
    assert f"cargo::rerun-if-changed={root / 'src'}" in lines
    assert f"cargo::rerun-if-changed={root / 'src' / 'lib.rs'}" in lines
    assert f"cargo::rerun-if-changed={REPO / 'emit' / 'rust_host.py'}" in lines
    assert f"cargo::rerun-if-changed={REPO / 'templates' / 'rust_kernels.j2'}" in lines
    assert f"cargo::rerun-if-changed={REPO / 'rs2gpu' / 'rust' / 'src' / 'rs2gpu_runtime.rs'}" in lines
    assert f"cargo::rerun-if-changed={REPO / 'rs2gpu' / 'rust' / 'src' / 'rs2gpu_driver.rs'}" in lines
    assert stderr.getvalue() == ""
    written = sorted(p.name for p in out_dir.iterdir())
    assert written == ["manifest.json", "rs2gpu_driver.rs", "rs2gpu_kernels.rs", "rs2gpu_runtime.rs", "triad.cu",
                       "triad.hip.cpp"]
    # the runtime and the driver loader are the package's files, unchanged (cargo tests them in rs2gpu/rust)
    for name in ("rs2gpu_runtime.rs", "rs2gpu_driver.rs"):
        assert (out_dir / name).read_bytes() == (REPO / "rs2gpu" / "rust" / "src" / name).read_bytes()
    module = (out_dir / "rs2gpu_kernels.rs").read_text()
    assert module.startswith(f"// rs2gpu_kernels.rs: generated by rs2gpu {__version__} from")
    # the one value the runtime takes from the translation: the block size the kernels were written for
    assert "mod runtime {\n    /// Threads per block" in module
    assert "    const BLOCK_SIZE: u32 = 256;\n    include!(concat!(env!(\"OUT_DIR\"), \"/rs2gpu_runtime.rs\"));" in module
    assert "pub fn triad(gpu: &Gpu, a: &mut [f64], b: &[f64], c: &[f64], alpha: f64) -> Result<(), Error> {" in module
    assert "let mut a_dev = DeviceBuffer::zeroed(gpu, a.len())?; // the kernel writes all of `a`: not uploaded" in module
    # three pointers (no lengths: the host proved every access in bounds), `alpha`, the loop's start and count;
    # its entry points in the order the host tries them: two iterations per thread where the three slices'
    # first lanes (arguments 0 to 2, from the loop's start, argument 4) are aligned, else the loop as written
    assert ("LaunchSource { source: \"src/lib.rs:5:5\", arguments: &[8, 8, 8, 8, 8, 8], reductions: 0, "
            "signals_done: false, entries: &[\n"
            "            Entry { kind: EntryKind::Vector, symbol: \"rs2gpu_triad_0_vector\", records_panics: false, "
            "grid: None, lanes: Some(Lanes { width: 2, pointers: &[0, 1, 2], offsets: &[0, 0, 0], start: 4 }), "
            "bytes_per_iteration: 0, threads_per_iteration: 0, fill: 0 },\n"
            "            Entry { kind: EntryKind::General, symbol: \"rs2gpu_triad_0\", records_panics: false, "
            "grid: None, lanes: None, bytes_per_iteration: 0, threads_per_iteration: 0, fill: 0 },\n"
            "        ] }") in module


def test_build_script_of_an_unchanged_crate_writes_the_same_files_from_the_translation_cache(tmp_path,
                                                                                           monkeypatch) -> None:
    monkeypatch.setenv("RS2GPU_CACHE_DIR", str(tmp_path / "cache"))
    root = crate(tmp_path / "crate")
    for out in ("out-1", "out-2"):
        assert hook.run_build_script(root, tmp_path / out, io.StringIO(), io.StringIO()) == 0
    assert any((tmp_path / "cache" / incremental.CACHE_FOLDER).rglob("*"))
    first, second = ({p.name: p.read_bytes() for p in (tmp_path / out).iterdir()} for out in ("out-1", "out-2"))
    assert "rs2gpu_kernels.rs" in first and first == second


def test_build_script_turns_warnings_into_cargo_warnings(tmp_path, monkeypatch) -> None:
    root = crate(tmp_path / "crate")
    translate = incremental.translate

    def with_a_warning(path, targets):
        result = translate(path, targets)
        span = Span("src/lib.rs", 5, 5, 5, 24)
        result.warnings.append(Diagnostic("warning", "RG9999", "a made-up warning", span, "here"))
        return result

    monkeypatch.setattr(incremental, "translate", with_a_warning)
    stdout = io.StringIO()
    assert hook.run_build_script(root, tmp_path / "out", stdout, io.StringIO()) == 0
    warnings = [line for line in stdout.getvalue().splitlines() if line.startswith("cargo::warning=")]
    assert warnings[0] == "cargo::warning=warning[RG9999]: a made-up warning"
    assert "cargo::warning= --> src/lib.rs:5:5" in warnings


def test_build_script_warns_that_a_generic_kernel_without_types_has_no_rust_function(tmp_path) -> None:
    root = crate(tmp_path / "crate")
    scale = ("\n#[kernel]\npub fn scale<T: Copy + std::ops::Mul<Output = T>>(out: &mut [T], x: &[T], k: T) {\n"
             "    for i in 0..out.len() {\n        out[i] = x[i] * k;\n    }\n}\n")
    (root / "src" / "lib.rs").write_text(TRIAD_LIB_RS + scale)
    stdout = io.StringIO()
    assert hook.run_build_script(root, tmp_path / "out", stdout, io.StringIO()) == 0
    assert ("cargo::warning=kernel `scale` is generic and lists no `types(...)`: the `kernels` module has no "
            "function for it (only a call from Python instantiates it); name its instantiations in the attribute to "
            "have one for each, e.g. #[kernel(types(f32, f64))]") in stdout.getvalue().splitlines()
    module = (tmp_path / "out" / "rs2gpu_kernels.rs").read_text()
    assert "pub fn triad(" in module and "scale" not in module


def test_build_script_reports_errors_on_stderr_and_nothing_else(tmp_path) -> None:
    root = crate(tmp_path / "crate")
    (root / "src" / "lib.rs").write_text(TRIAD_LIB_RS.replace("a[i] = b[i]", "a[i] = a[i + 1]"))
    stdout, stderr = io.StringIO(), io.StringIO()
    assert hook.run_build_script(root, tmp_path / "out", stdout, stderr) == 1
    assert stderr.getvalue().startswith("error[RG0103]")
    # cargo shows a failed build script's stdout above its stderr, and runs it again at the next build
    # whatever it watched: files to watch would only push the diagnostic out of sight
    assert stdout.getvalue() == ""
    assert not (tmp_path / "out").exists()


def test_build_script_leaves_a_source_that_does_not_parse_to_rustc(tmp_path) -> None:
    root = crate(tmp_path / "crate")
    out_dir = tmp_path / "out"
    assert hook.run_build_script(root, out_dir, io.StringIO(), io.StringIO()) == 0
    (root / "src" / "lib.rs").write_text(TRIAD_LIB_RS.replace("alpha * c[i];\n    }", "alpha * c[i];\n"))
    stdout, stderr = io.StringIO(), io.StringIO()
    # rustc compiles the crate next and says, in its words, why it does not parse
    assert hook.run_build_script(root, out_dir, stdout, stderr) == 0
    assert stderr.getvalue() == ""
    lines = stdout.getvalue().splitlines()
    assert lines[0] == ("cargo::warning=rs2gpu did not translate the kernels: src/lib.rs does not parse as Rust (see "
                        "rustc's error; `rs2gpu check` gives rs2gpu's own)")
    assert f"cargo::rerun-if-changed={root / 'src' / 'lib.rs'}" in lines  # so that the fix runs it again
    # no module of an earlier build stays to be included: a file that only rs2gpu cannot parse fails the
    # build at the include! instead of building with the kernels as they were
    assert not (out_dir / "rs2gpu_kernels.rs").exists()


@pytest.mark.parametrize("expr, text", [
    ({"lit": 3, "type": "usize"}, "3usize"),
    ({"lit": -128, "type": "i8"}, "i8::MIN"),
    ({"lit": "-inf", "type": "f32"}, "f32::NEG_INFINITY"),
    ({"lit": 0.1, "type": "f64"}, "0.1f64"),
    ({"op": "-", "args": [{"len": "a"}, {"lit": 1, "type": "usize"}], "type": "usize"}, "a_len.wrapping_sub(1usize)"),
    ({"op": "/", "args": [{"param": "n"}, {"param": "k"}], "type": "u32"}, "runtime::div(n, k)?"),
    ({"op": "/", "args": [{"param": "x"}, {"lit": 2.0, "type": "f64"}], "type": "f64"}, "x / 2.0f64"),
    ({"op": "<<", "args": [{"param": "n"}, {"param": "s"}], "type": "u64"}, "n.wrapping_shl(s as u32)"),
    ({"op": "neg", "args": [{"param": "n"}], "type": "i32"}, "n.wrapping_neg()"),
    ({"op": "<", "args": [{"cast": {"param": "n"}, "from": "u32", "type": "usize"}, {"len": "a"}], "type": "usize"},
     "(n as usize) < a_len"),
    ({"call": "min", "args": [{"len": "a"}, {"op": "+", "args": [{"param": "n"}, {"param": "n"}], "type": "usize"}],
      "type": "usize"}, "a_len.min(n.wrapping_add(n))"),
    ({"call": "abs", "args": [{"lit": -5, "type": "i64"}], "type": "i64"}, "(-5i64).wrapping_abs()"),
    ({"field": "w", "of": {"param": "dims"}}, "dims.w"),
    ({"tuple": [{"reduction": "lo"}, {"local": "m"}]}, "(lo, m)"),
])
def test_host_expressions_render_with_rust_semantics(expr, text) -> None:
    scope = Scope({"n": "n", "k": "k", "x": "x", "s": "s", "dims": "dims"}, {"a": "a_len"}, {"m": "m"},
                  {"lo": "lo"}, "?")
    assert HostExpr(scope).render(expr) == text


def test_literals_are_typed() -> None:
    assert literal(True, "bool") == ("true", True)
    assert literal(-1, "i32") == ("-1i32", False)
    assert literal(float("nan"), "f64") == ("f64::NAN", True)
    assert literal(1e-5, "f64") == ("1e-05f64", True)


def test_two_kernels_that_would_define_one_function_are_refused() -> None:
    abi = pipeline.translate(EXAMPLE).emitted.abi
    colliding = dataclasses.replace(abi, kernels={**abi.kernels, "triad_on": abi.kernels["dot"]})
    with pytest.raises(ValueError, match="would both define `triad_on`"):
        render_rust_module(colliding)
