"""`rs2gpu compile`: success reports per kernel and arch, and compile failures printed at the Rust lines
they come from, with exit status 1. The failures are provoked by adding a broken line to the generated
C++ through the pipeline (no Rust kernel that translates is meant to fail to compile)."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rs2gpu import cli, pipeline
from rs2gpu.runtime.options import DEFAULT_ARCH

ABI_SOURCE = Path(__file__).resolve().parent / "data" / "abi.rs"

RACY = """\
use rs2gpu::kernel;

#[kernel]
pub fn shift(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}
"""


def rs2gpu(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("CLICOLOR_FORCE", None)
    return subprocess.run([sys.executable, "-m", "rs2gpu.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)


def launch_symbols() -> list[str]:
    kernel = pipeline.translate(ABI_SOURCE).emitted.abi.kernels["mixed"]
    return [entry.symbol for launch in kernel.launches for entry in launch.entry_points]


def test_json_report_of_both_targets() -> None:
    done = rs2gpu("compile", ABI_SOURCE, "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [(r["kernel"], r["target"], r["arch"]) for r in results] == [
        ("mixed", "cuda", DEFAULT_ARCH["cuda"]), ("mixed", "hip", DEFAULT_ARCH["hip"])]
    for r in results:  # the symbols in the binary's order
        assert r["ok"] and sorted(r["symbols"]) == sorted(launch_symbols()) and r["missing_symbols"] == []
        assert r["binary_bytes"] > 0 and r["compiler"]
        assert [usage["symbol"] for usage in r["resources"]] == r["symbols"]
        assert all(usage["registers"] > 0 for usage in r["resources"])
    cuda, hip = results
    assert cuda["compiler"].startswith("nvrtc")
    assert all(usage["spill_store_bytes"] is not None for usage in cuda["resources"])
    assert hip["compiler"].startswith("hiprtc")
    assert all(usage["wave_size"] == 64 and usage["scalar_registers"] > 0 for usage in hip["resources"])


def test_text_report_names_kernel_arch_compiler_and_resources() -> None:
    done = rs2gpu("compile", ABI_SOURCE)
    assert done.returncode == 0, done.stderr
    symbols = launch_symbols()  # the loop's grid-stride entry point and its covering one
    assert len(symbols) == 2
    assert re.search(r"Compiled mixed for cuda sm_90 with nvrtc [^:]+: [\d,]+ B, 2 entry points", done.stdout)
    assert re.search(r"Compiled mixed for hip gfx90a with hiprtc [^:]+: [\d,]+ B, 2 entry points", done.stdout)
    for symbol in symbols:
        assert re.search(rf"{symbol}: \d+ registers, \d+ B stack, \d+ B shared, \d+ B spill stores", done.stdout)
        assert re.search(rf"{symbol}: \d+ VGPRs, \d+ SGPRs, \d+ AGPRs, \d+/\d+ VGPRs/SGPRs spilled, \d+ B "
                         r"scratch, \d+ B LDS, wave64", done.stdout)
    assert "Finished 2 compiles of 1 kernel of `abi`" in done.stdout


def test_several_archs_and_clang_for_hip() -> None:
    done = rs2gpu("compile", ABI_SOURCE, "--target", "hip", "--arch", "gfx90a", "--arch", "gfx1030",
                  "--hip-compiler", "clang", "--kernel", "mixed", "--json")
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    assert [(r["arch"], r["resources"][0]["wave_size"]) for r in results] == [("gfx90a", 64), ("gfx1030", 32)]
    assert all(r["compiler"].startswith("Debian clang") or "clang" in r["compiler"] for r in results)


def test_ptx_arch_reports_entry_points_without_resources() -> None:
    done = rs2gpu("compile", ABI_SOURCE, "--target", "cuda", "--arch", "compute_90")
    assert done.returncode == 0, done.stderr
    assert "resources not recorded (PTX)" in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--target", "cuda", "--arch", "gfx90a"], "--arch gfx90a is for hip, which --target leaves out"),
    (["--arch", "sm90"], "unknown GPU architecture 'sm90'"),
    (["--kernel", "nope"], "no kernel named `nope`"),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    done = rs2gpu("compile", ABI_SOURCE, *args)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_rust_errors_exit_1_with_diagnostics(tmp_path: Path) -> None:
    racy = tmp_path / "racy.rs"
    racy.write_text(RACY)
    done = rs2gpu("compile", racy)
    assert done.returncode == 1 and "error[RG0103]" in done.stderr and "could not compile" in done.stderr


def test_help_tells_what_the_command_does() -> None:
    done = rs2gpu("compile", "--help")
    text = " ".join(done.stdout.split())
    assert done.returncode == 0
    for phrase in ("NVRTC for CUDA, hiprtc for HIP", "without a GPU", "exit status is 1",
                   f"compiled for {DEFAULT_ARCH['cuda']} (CUDA) or {DEFAULT_ARCH['hip']} (HIP)",
                   "VGPRs, SGPRs", "--hip-compiler {hiprtc,clang}"):
        assert phrase in text, phrase


# ---------------------------------------------------------------- failures, in process


def break_generated(monkeypatch, line: str, suffix: str = "") -> None:
    """Make every generated file whose name ends with `suffix` end with `line` (pipeline.translate is what
    `rs2gpu compile` calls)."""
    translate = pipeline.translate

    def broken(path, targets=pipeline.ALL_TARGETS):
        result = translate(path, targets)
        for name in result.emitted.files:
            if name.endswith(suffix):
                result.emitted.files[name] += "\n" + line.replace("{file}", name) + "\n"
        return result

    monkeypatch.setattr(pipeline, "translate", broken)


def rust_line(pattern: str) -> int:
    lines = ABI_SOURCE.read_text().splitlines()
    return next(i for i, text in enumerate(lines, 1) if pattern in text)


def test_compile_error_is_shown_at_its_rust_line(monkeypatch, capsys) -> None:
    line = rust_line("let base =")
    break_generated(monkeypatch, f'#line {line} "abi.rs"\n'
                                 "static __device__ int rs2gpu_broken() { return rs2gpu_no_such_name; }")
    status = cli.main(["compile", str(ABI_SOURCE), "--jobs", "1"])
    err = capsys.readouterr().err
    assert status == 1
    source_line = ABI_SOURCE.read_text().splitlines()[line - 1]
    col = len(source_line) - len(source_line.lstrip()) + 1
    for target, arch, message in (("cuda", "sm_90", 'identifier "rs2gpu_no_such_name" is undefined'),
                                  ("hip", "gfx90a", "use of undeclared identifier 'rs2gpu_no_such_name'")):
        block = next(b for b in err.split("\n\n") if f"compile for {target} {arch}" in b)
        assert block.startswith(f"error: {message}\n"), block
        assert f"--> abi.rs:{line}:{col}\n" in block
        assert f"{line} | {source_line.expandtabs(4)}\n" in block
        assert "^" * len(source_line.strip()) in block
        assert f"= note: `mixed` (mixed.{'cu' if target == 'cuda' else 'hip.cpp'}) did not compile" in block
        assert "to reproduce, write the generated files with `rs2gpu translate`" in block
    assert "hipcc" in err and "nvcc" in err
    assert err.rstrip().endswith("error: 2 of 2 compiles failed")


def test_compile_error_outside_the_rust_source_shows_the_log(monkeypatch, capsys) -> None:
    break_generated(monkeypatch, '#line 1 "{file}"\nstatic __device__ int rs2gpu_broken() { return 1 +; }')
    status = cli.main(["compile", str(ABI_SOURCE), "--target", "hip", "--jobs", "1"])
    err = capsys.readouterr().err
    assert status == 1
    assert "error: `mixed` (mixed.hip.cpp) did not compile for hip gfx90a: hiprtc could not compile" in err
    assert "no error points into the Rust source" in err and "expected expression" in err


def test_only_the_broken_file_fails(monkeypatch, capsys) -> None:
    break_generated(monkeypatch, "static __device__ int rs2gpu_broken() { return 1 +; }", suffix=".hip.cpp")
    status = cli.main(["compile", str(ABI_SOURCE)])
    captured = capsys.readouterr()
    assert status == 1 and "Compiled mixed for cuda sm_90" in captured.out
    assert "Compiled mixed for hip" not in captured.out
    assert captured.err.rstrip().endswith("error: 1 of 2 compiles failed")
