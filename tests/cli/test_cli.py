"""The `rs2gpu` command line, run as a user runs it: a separate process, exit status, stdout and stderr.

Exit status: 0 success, 1 errors in the Rust source (diagnostics on stderr), 2 usage or internal error.
Expected kernel names come from the example's Rust source, positions from the test's own source text.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.emit import render_prelude
from rs2gpu.emit.dialect import CUDA
from rs2gpu.ir.abi import CrateABI, KernelABI, from_json

from tests.cli.running import no_traceback, rs2gpu, with_closed_pipe, write_crate

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "rajaperf"
STREAM = EXAMPLE / "src" / "stream.rs"  # RAJAPerf's Stream kernels, among them triad and dot
EXAMPLE_KERNELS = sorted(
    name for rs in (EXAMPLE / "src").glob("*.rs")
    for name in re.findall(r"#\[kernel\]\s*pub fn (\w+)", rs.read_text()))

RACY = """\
#[kernel]
pub fn shift(a: &mut [f64]) {
    for i in 0..a.len() - 1 {
        a[i] = a[i + 1];
    }
}
"""

TWO_RACES = RACY + """
#[kernel]
pub fn first(a: &mut [f64], b: &[f64]) {
    for i in 0..b.len() {
        a[0] = b[i];
    }
}
"""


def test_example_crate_has_kernels() -> None:
    assert len(EXAMPLE_KERNELS) >= 10


# ---------------------------------------------------------------- translate


def test_translate_writes_cuda_hip_and_a_manifest_for_every_kernel(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = rs2gpu("translate", EXAMPLE / "src", "-o", out)
    assert result.returncode == 0, result.stderr
    expected = {f"{k}.cu" for k in EXAMPLE_KERNELS} | {f"{k}.hip.cpp" for k in EXAMPLE_KERNELS} | {"manifest.json"}
    assert {p.name for p in out.iterdir()} == expected
    manifest = json.loads((out / "manifest.json").read_text())
    assert sorted(manifest["kernels"]) == EXAMPLE_KERNELS
    for name, entry in manifest["kernels"].items():
        assert entry["files"] == {"cuda": f"{name}.cu", "hip": f"{name}.hip.cpp"}
    assert manifest["targets"] == ["cuda", "hip"]
    # the crate's kernel ABI, as the translation in this process makes it
    assert CrateABI.from_json(manifest) == pipeline.translate(EXAMPLE / "src").emitted.abi


def test_translate_accepts_the_crate_folder_and_a_single_file(tmp_path: Path) -> None:
    from_crate = rs2gpu("translate", EXAMPLE, "-o", tmp_path / "crate", "--quiet")
    assert from_crate.returncode == 0, from_crate.stderr
    assert from_crate.stdout == ""
    assert sorted(json.loads((tmp_path / "crate" / "manifest.json").read_text())["kernels"]) == EXAMPLE_KERNELS
    single = rs2gpu("translate", STREAM, "-o", tmp_path / "file", "-q")
    assert single.returncode == 0, single.stderr
    stream = re.findall(r"#\[kernel\]\s*pub fn (\w+)", STREAM.read_text())
    assert sorted(json.loads((tmp_path / "file" / "manifest.json").read_text())["kernels"]) == sorted(stream)


def test_translate_reports_each_kernel_on_stdout(tmp_path: Path) -> None:
    result = rs2gpu("translate", EXAMPLE / "src", "-o", tmp_path / "out")
    assert result.returncode == 0
    for kernel in EXAMPLE_KERNELS:
        assert re.search(rf"Translated {kernel} \(", result.stdout), kernel
    assert f"Finished {len(EXAMPLE_KERNELS)} kernels" in result.stdout


def test_target_cuda_writes_no_hip_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = rs2gpu("translate", EXAMPLE / "src", "-o", out, "--target", "cuda")
    assert result.returncode == 0, result.stderr
    names = {p.name for p in out.iterdir()}
    assert names == {f"{k}.cu" for k in EXAMPLE_KERNELS} | {"manifest.json"}
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["targets"] == ["cuda"]
    assert all(entry["files"] == {"cuda": f"{k}.cu"} for k, entry in manifest["kernels"].items())


def test_target_hip_writes_no_cuda_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert rs2gpu("translate", EXAMPLE / "src", "-o", out, "--target", "hip").returncode == 0
    assert {p.name for p in out.iterdir()} == {f"{k}.hip.cpp" for k in EXAMPLE_KERNELS} | {"manifest.json"}


def test_racy_input_exits_1_with_the_diagnostic_and_writes_nothing(tmp_path: Path) -> None:
    crate = write_crate(tmp_path / "racy", RACY)
    out = tmp_path / "out"
    result = rs2gpu("translate", crate, "-o", out)
    assert result.returncode == 1
    assert "error[RG0103]" in result.stderr
    assert result.stdout == ""
    assert not out.exists() or list(out.iterdir()) == []
    no_traceback(result)


def test_translating_into_an_existing_folder_replaces_only_the_generated_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "triad.cu").write_text("// stale")
    (out / "manifest.json").write_text("{}")
    result = rs2gpu("translate", EXAMPLE / "src", "-o", out, "-q")
    assert result.returncode == 0, result.stderr
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "triad.cu").read_text() != "// stale" and "rs2gpu_triad_0" in (out / "triad.cu").read_text()
    assert sorted(json.loads((out / "manifest.json").read_text())["kernels"]) == EXAMPLE_KERNELS
    generated = {f"{k}.cu" for k in EXAMPLE_KERNELS} | {f"{k}.hip.cpp" for k in EXAMPLE_KERNELS}
    assert {p.name for p in out.iterdir()} == generated | {"manifest.json", "notes.txt"}  # no temporaries left


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_reader_that_stops_reading_ends_the_command_quietly_by_sigpipe(tmp_path: Path, stream: str) -> None:
    # as `cat` or `git log` ends when the reader is gone: killed by SIGPIPE, which a shell reports as
    # 128 + 13 = 141, saying nothing (stdout: the translation's report; stderr: the diagnostics of a race)
    args = ("translate", STREAM, "-o", tmp_path / "out") if stream == "stdout" else \
        ("check", write_crate(tmp_path / "racy", RACY))
    result = with_closed_pipe(stream, *args)
    assert result.returncode == -signal.SIGPIPE
    assert (result.stdout if stream == "stderr" else result.stderr) == ""


def test_translate_output_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("")
    result = rs2gpu("translate", EXAMPLE / "src", "-o", tmp_path / "taken")
    assert result.returncode == 2
    assert "not a directory" in result.stderr
    no_traceback(result)


# ---------------------------------------------------------------- usage errors


@pytest.mark.parametrize("command", ["translate", "check", "inspect"])
def test_missing_path_exits_2_without_a_traceback(tmp_path: Path, command: str) -> None:
    extra = {"translate": ["-o", tmp_path / "out"], "check": [], "inspect": ["--kernel", "triad"]}[command]
    result = rs2gpu(command, tmp_path / "nowhere", *extra)
    assert result.returncode == 2
    assert "no such file or directory" in result.stderr
    no_traceback(result)


@pytest.mark.parametrize("command", ["translate", "check"])
def test_a_file_that_is_not_rust_exits_2(tmp_path: Path, command: str) -> None:
    (tmp_path / "kernels.txt").write_text("fn main() {}\n")
    extra = ["-o", tmp_path / "out"] if command == "translate" else []
    result = rs2gpu(command, tmp_path / "kernels.txt", *extra)
    assert result.returncode == 2
    assert "is not a .rs file" in result.stderr
    no_traceback(result)


def test_a_folder_without_rust_files_exits_2(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = rs2gpu("check", tmp_path / "empty")
    assert result.returncode == 2
    assert "no .rs files" in result.stderr
    no_traceback(result)


def test_a_missing_argument_exits_2_with_usage() -> None:
    result = rs2gpu("translate", EXAMPLE / "src")  # no -o
    assert result.returncode == 2
    assert "usage:" in result.stderr and "--output" in result.stderr


def test_an_unknown_command_exits_2() -> None:
    result = rs2gpu("frobnicate")
    assert result.returncode == 2
    assert "usage:" in result.stderr


@pytest.mark.parametrize(("target", "arch"), [("cuda", "sm_99"), ("hip", "gfx999")])
def test_an_architecture_the_compiler_does_not_know_is_a_usage_error(target: str, arch: str) -> None:
    # well-formed names of architectures that do not exist: the command line is wrong, not rs2gpu's C++
    result = rs2gpu("compile", STREAM, "--kernel", "triad", "--target", target, "--arch", arch)
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: --arch {arch}: the compiler cannot compile for this architecture")
    assert "--arch takes sm_XX or compute_XX (NVIDIA, e.g. sm_90) or gfxNNN (AMD, e.g. gfx90a or gfx1030)" \
        in result.stderr
    assert "bug in rs2gpu" not in result.stderr and result.stdout == ""
    no_traceback(result)


# ---------------------------------------------------------------- check


def test_check_of_a_clean_crate_exits_0(tmp_path: Path) -> None:
    result = rs2gpu("check", EXAMPLE)
    assert result.returncode == 0, result.stderr
    assert f"Checked {len(EXAMPLE_KERNELS)} kernels" in result.stdout


def test_check_prints_a_rustc_style_diagnostic(tmp_path: Path) -> None:
    crate = write_crate(tmp_path / "racy", RACY)
    result = rs2gpu("check", crate)
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    line_no = RACY[:RACY.index("a[i] = a[i + 1]")].count("\n") + 1
    source_line = RACY.splitlines()[line_no - 1]
    column = source_line.index("a[i + 1]") + 1
    header = lines.index("error[RG0103]: this reads an element of `a` that another iteration may write")
    gutter = " " * len(str(line_no))
    assert lines[header + 1] == f"{gutter}--> src/lib.rs:{line_no}:{column}"
    assert lines[header + 2] == f"{gutter} |"
    assert lines[header + 3] == f"{line_no} | {source_line}"
    caret = lines[header + 4]
    assert caret.startswith(f"{gutter} | " + " " * (column - 1) + "^" * len("a[i + 1]") + " ")
    assert any(line.strip().startswith("= help:") for line in lines[header:])
    assert "error: could not check" in result.stderr and "due to 1 previous error" in result.stderr
    assert "rs2gpu explain RG0103" in result.stderr
    assert "\x1b[" not in result.stderr  # NO_COLOR
    no_traceback(result)


def test_check_reports_every_error_of_every_kernel(tmp_path: Path) -> None:
    crate = write_crate(tmp_path / "racy", TWO_RACES)
    result = rs2gpu("check", crate)
    assert result.returncode == 1
    assert "error[RG0103]" in result.stderr and "error[RG0101]" in result.stderr
    assert "due to 2 previous errors" in result.stderr


def test_a_syntax_error_is_rg0001_and_exit_1(tmp_path: Path) -> None:
    crate = write_crate(tmp_path / "broken", "#[kernel]\npub fn broken(a: &mut [f64] {\n    for i in 0..a.len() {\n")
    for command in (["check", crate], ["translate", crate, "-o", tmp_path / "out"]):
        result = rs2gpu(*command)
        assert result.returncode == 1, result.stderr
        assert "error[RG0001]" in result.stderr
        no_traceback(result)
    assert not (tmp_path / "out").exists()


# ---------------------------------------------------------------- inspect

SHAPES = REPO / "tests" / "cases" / "shapes.rs"


def entry_lines(stdout: str) -> list[str]:
    """The lines of `inspect`'s description of the launches that describe an entry point."""
    launches = stdout[stdout.index("\nLaunches ("):]
    return [line.strip() for line in launches.splitlines() if line.startswith("    rs2gpu_")]


def test_inspect_prints_the_kernels_own_code_and_leaves_the_prelude_out() -> None:
    result = rs2gpu("inspect", STREAM, "--kernel", "triad")
    assert result.returncode == 0, result.stderr
    generated = pipeline.translate(STREAM, ("cuda",)).emitted.files["triad.cu"]
    prelude = render_prelude(CUDA)
    assert prelude in generated and prelude not in result.stdout
    # the file's header first (what the file is, the transfer plan), then the kernel's entry points
    assert result.stdout.startswith(generated.splitlines()[0] + "\n")
    assert 'extern "C" __global__ void __launch_bounds__(256) rs2gpu_triad_0(' in result.stdout
    assert f"the CUDA C++ prelude, {len(prelude.splitlines())} lines, is left out: `rs2gpu inspect --prelude` " \
           "prints the whole file" in result.stdout


def test_inspect_prelude_prints_the_whole_file_as_translate_writes_it() -> None:
    result = rs2gpu("inspect", STREAM, "--kernel", "triad", "--prelude")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(pipeline.translate(STREAM, ("cuda",)).emitted.files["triad.cu"])


def test_inspect_shows_the_hip_source_and_the_transfer_plan() -> None:
    result = rs2gpu("inspect", STREAM, "--kernel", "triad", "--target", "hip")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "HIP C++" in out and 'extern "C" __global__' in out and "rs2gpu_triad_0(" in out
    assert "\x1b[" not in out  # not a terminal: no colours
    plan = out[out.index("Transfer plan:"):].splitlines()[1:5]
    # triad writes every a[i] over 0..a.len() and never reads it; b and c are shared; alpha is a scalar.
    assert [line.split(":")[0].strip() + ":" + line.split(":")[1].split()[0] for line in plan] == [
        "a:out", "b:in", "c:in", "alpha:value"]
    assert "\nLaunches (blocks of 256 threads; the host runs the first entry point whose condition holds):\n" in out
    # its entry points in the order the host tries them: 16-byte groups where the slices are aligned
    assert entry_lines(out) == [
        "rs2gpu_triad_0_vector (vector): 2 iterations per thread with 16-byte accesses; runs where the slices' "
        "first lanes are aligned; 0 device checks",
        "rs2gpu_triad_0 (general): each thread strides over the iterations; runs otherwise; 0 device checks"]


def test_inspect_says_how_each_inner_loop_of_a_row_softmax_runs() -> None:
    result = rs2gpu("inspect", REPO / "tests" / "runtime" / "data" / "warps.rs", "--kernel", "softmax")
    assert result.returncode == 0, result.stderr
    inner = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("inner loop at ")]
    where = "split over a block's threads, the row staying in the L1 from one of the loops reading it to the next"
    assert [line.split(": ", 1)[1] for line in inner] == [
        f"{where}: combines `m` (max)", f"{where}: combines `s` (+)", f"{where}: writes `out` spread over them"]
    assert entry_lines(result.stdout)[:1] == [
        "rs2gpu_softmax_0_blocks (blocks): one block per iteration, its inner loops split over its threads; runs "
        "on any grid; 0 device checks"]


def test_inspect_names_the_slice_lengths_each_launch_takes() -> None:
    # triad's accesses are all at its loop variable over 0..a.len(): the host proves them, so no length
    # travels to the device
    result = rs2gpu("inspect", STREAM, "--kernel", "triad")
    assert result.returncode == 0, result.stderr
    assert "    slice lengths it takes: none (its code reads none)" in result.stdout


def test_inspect_names_the_idle_threads_that_align_a_covering_grid() -> None:
    # tridiag_elim stores xout[i] for i in 1..: one idle thread puts iteration i on thread i
    result = rs2gpu("inspect", EXAMPLE / "src" / "lcals.rs", "--kernel", "tridiag_elim")
    assert result.returncode == 0, result.stderr
    assert ("rs2gpu_tridiag_elim_0_covering (covering): one thread per iteration; runs where a grid covers the nest, "
            "blocks of 256 x 1 x 1, after 1 idle thread (warps from multiples of 32); 0 device checks") in result.stdout


def test_inspect_says_a_product_runs_on_register_tiles_and_a_transpose_through_shared_memory() -> None:
    shapes = REPO / "tests" / "cases" / "shapes.rs"
    result = rs2gpu("inspect", shapes, "--kernel", "matmul_fused")
    assert result.returncode == 0, result.stderr
    assert ("rs2gpu_matmul_fused_0_covering (covering): a matrix product on register tiles, 8 x 4 iterations per "
            "thread (rows x columns), each adding its terms in k order, the operands staged in shared memory slice "
            "by slice of k; runs where a grid covers the nest, blocks of 16 x 16 x 1; 0 device checks") in result.stdout
    result = rs2gpu("inspect", shapes, "--kernel", "transpose")
    assert result.returncode == 0, result.stderr
    assert ("rs2gpu_transpose_0_covering (covering): a transpose staged through shared memory, 4 iterations per "
            "thread, read by rows and written by columns; runs where a grid covers the nest, blocks of 32 x 8 x 1; "
            "0 device checks") in result.stdout


def test_inspect_defaults_to_cuda() -> None:
    result = rs2gpu("inspect", STREAM, "--kernel", "dot")
    assert result.returncode == 0, result.stderr
    assert "CUDA C++" in result.stdout and "rs2gpu_dot_0(" in result.stdout
    assert "reduces dot (+)" in result.stdout


def test_inspect_names_the_slices_a_launch_updates_with_atomics() -> None:
    result = rs2gpu("inspect", EXAMPLE / "src" / "basic.rs", "--kernel", "multi_reduce")
    assert result.returncode == 0, result.stderr
    assert "rs2gpu_atomic_add(&values[" in result.stdout
    launches = result.stdout[result.stdout.index("\nLaunches ("):]
    assert "launch 0: loop at src/basic.rs:202:5, over (i: usize), updates with atomics values (+)" in launches
    # each block adds into its own copy where the bins fit in its 16 KiB of shared memory: 2048 f64
    assert "rs2gpu_multi_reduce_0_private (private): each block updates a copy of the scatter target in shared " \
           "memory; runs where the target has at most 2048 elements" in launches
    assert "values: inout (updated by several iterations" in result.stdout


def test_inspect_json_prints_the_kernels_abi() -> None:
    result = rs2gpu("inspect", STREAM, "--kernel", "triad", "--json")
    assert result.returncode == 0, result.stderr
    entry = json.loads(result.stdout)
    assert [(p["name"], p["transfer"]) for p in entry["params"]] == [
        ("a", "out"), ("b", "in"), ("c", "in"), ("alpha", "value")]
    assert from_json(KernelABI, entry) == pipeline.translate(STREAM, ("cuda",)).emitted.abi.kernels["triad"]


def test_inspect_of_an_unknown_kernel_exits_2_and_lists_the_kernels() -> None:
    result = rs2gpu("inspect", STREAM, "--kernel", "no_such_kernel")
    assert result.returncode == 2
    assert "no_such_kernel" in result.stderr
    for kernel in re.findall(r"#\[kernel\]\s*pub fn (\w+)", STREAM.read_text()):
        assert kernel in result.stderr
    no_traceback(result)


LANGUAGE = REPO / "tests" / "gpu" / "kernels" / "language.rs"


def test_inspect_shows_the_schedule_of_a_host_loop() -> None:
    result = rs2gpu("inspect", LANGUAGE, "--kernel", "jacobi")
    assert result.returncode == 0, result.stderr
    schedule = result.stdout[result.stdout.index("Schedule"):].splitlines()[1:4]
    assert [line.strip().split(" at ")[0] for line in schedule] == ["for `step` (usize)", "launch 0", "launch 1"]
    # the launches the schedule numbers, each with the host loop's values its code reads
    for launch, value in ((0, "w"), (1, "step")):
        assert re.search(rf"^  launch {launch}: loop at language\.rs:\d+:\d+, over \(i: usize\), given `{value}`$",
                         result.stdout, re.M)



def test_inspect_says_a_nests_vector_entry_point_needs_a_grid_of_its_groups() -> None:
    # where `out[r * cols + c]` starts depends on the row: each row tests its own alignment, the host none
    result = rs2gpu("inspect", SHAPES, "--kernel", "plane")
    assert result.returncode == 0, result.stderr
    assert entry_lines(result.stdout) == [
        "rs2gpu_plane_0_vector (vector): 2 iterations per thread with 16-byte accesses; runs where a grid covers "
        "its groups (each row tests its own alignment); 0 device checks",
        "rs2gpu_plane_0_covering (covering): one thread per iteration; runs where a grid covers the nest; "
        "0 device checks",
        "rs2gpu_plane_0 (general): each thread strides over the iterations; runs otherwise; 0 device checks"]


def test_inspect_says_which_entry_points_need_the_conditional_accesses_in_bounds() -> None:
    # `out[...]` after the `continue` runs only in some iterations: only the checked loop may run where the
    # host finds it can leave the slice
    result = rs2gpu("inspect", SHAPES, "--kernel", "volume")
    assert result.returncode == 0, result.stderr
    found = "the host found every conditional access in bounds"
    assert entry_lines(result.stdout) == [
        f"rs2gpu_volume_0_covering (covering): one thread per iteration; runs where {found} and a grid covers "
        "the nest; 0 device checks",
        f"rs2gpu_volume_0 (general): each thread strides over the iterations; runs where {found}; 0 device checks",
        "rs2gpu_volume_0_checked (checked): the same loop checking its conditional accesses on the device; runs "
        "otherwise; 1 device check (the call waits for them)"]


def test_inspect_of_a_generic_kernel_names_its_instantiations() -> None:
    result = rs2gpu("inspect", LANGUAGE, "--kernel", "axpy_generic")
    assert result.returncode == 2
    assert "`axpy_generic` is generic: inspect one of its instantiations, axpy_generic_f32, axpy_generic_f64" \
        in result.stderr
    no_traceback(result)
    one = rs2gpu("inspect", LANGUAGE, "--kernel", "axpy_generic_f64")
    assert one.returncode == 0 and "axpy_generic::<f64>" in one.stdout


# ---------------------------------------------------------------- explain, support-crate, help


def test_explain_prints_the_long_explanation() -> None:
    result = rs2gpu("explain", "RG0103")
    assert result.returncode == 0
    assert result.stdout.startswith("RG0103: read of an element another iteration writes")
    assert "a[i] = a[i + 1]" in result.stdout


def test_explain_agrees_with_the_documentation() -> None:
    docs = (REPO / "docs" / "diagnostics.md").read_text()
    for code, title in re.findall(r"^## (RG\d{4}): (.+)$", docs, re.M):
        result = rs2gpu("explain", code.lower())
        assert result.returncode == 0 and result.stdout.startswith(f"{code}: {title}"), code


def test_explain_of_an_unknown_code_exits_2() -> None:
    result = rs2gpu("explain", "RG9999")
    assert result.returncode == 2
    assert "unknown error code" in result.stderr and "RG0103" in result.stderr


def test_support_crate_prints_the_folder_of_the_rust_crate() -> None:
    result = rs2gpu("support-crate")
    assert result.returncode == 0
    folder = Path(result.stdout.strip())
    assert (folder / "Cargo.toml").is_file()
    assert re.search(r'^name = "rs2gpu"$', (folder / "Cargo.toml").read_text(), re.M)
    assert (folder / "src" / "lib.rs").is_file()


HELP_OPTIONS = {
    "translate": ["PATH", "--output", "--target", "--quiet"],
    "check": ["PATH"],
    "inspect": ["PATH", "--kernel", "--target", "--json", "--prelude"],
    "explain": ["CODE"],
    "support-crate": [],
}


@pytest.mark.parametrize("command", sorted(HELP_OPTIONS))
def test_help_of_every_command_exits_0_and_lists_its_options(command: str) -> None:
    result = rs2gpu(command, "--help")
    assert result.returncode == 0
    assert result.stdout.startswith(f"usage: rs2gpu {command}")
    for option in HELP_OPTIONS[command]:
        assert option in result.stdout, option


def test_inspect_help_says_the_prelude_comes_only_on_request() -> None:
    text = " ".join(rs2gpu("inspect", "--help").stdout.split())
    assert "without the vendor prelude" in text and "--prelude prints the whole file" in text


def test_top_level_help_lists_every_command() -> None:
    result = rs2gpu("--help")
    assert result.returncode == 0
    for command in HELP_OPTIONS:
        assert command in result.stdout
    assert "Exit status" in result.stdout


def test_version() -> None:
    result = rs2gpu("--version")
    assert result.returncode == 0 and result.stdout.startswith("rs2gpu ")


def test_the_console_script_is_installed() -> None:
    script = Path(sys.executable).parent / "rs2gpu"
    if not script.exists():
        import shutil
        found = shutil.which("rs2gpu")
        assert found, "the rs2gpu console script is not installed"
        script = Path(found)
    result = subprocess.run([str(script), "explain", "RG0101"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("RG0101")
