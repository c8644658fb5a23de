import pickle
import subprocess

import pytest

from rs2gpu.runtime.errors import GpuCompileError, Location, parse_locations
from rs2gpu.runtime.hipclang import compile_hip_clang
from rs2gpu.runtime.hiprtc import compile_hip
from rs2gpu.runtime.nvrtc import compile_cuda

COMPILERS = {"nvrtc": compile_cuda, "hiprtc": compile_hip, "clang": compile_hip_clang}
NAMES = {"nvrtc": "bad.cu", "hiprtc": "bad.hip.cpp", "clang": "bad.hip.cpp"}

# An error in the generated code itself, reported against the generated file, not against Rust.
GENERATED_LINE_ERROR = """\
typedef int i32;
extern "C" __global__ void rs2gpu_bad(i32* __restrict__ a) { a[0] = undeclared; }
"""


def compile_error(compiler: str, source: str) -> GpuCompileError:
    with pytest.raises(GpuCompileError) as caught:
        COMPILERS[compiler](source, NAMES[compiler])
    return caught.value


@pytest.mark.parametrize("compiler", COMPILERS)
def test_type_error_points_at_the_rust_line(compiler, type_error_source):
    error = compile_error(compiler, type_error_source)
    assert ("src/lib.rs", 4) in [(loc.file, loc.line) for loc in error.locations]


@pytest.mark.parametrize("compiler", COMPILERS)
def test_error_keeps_log_source_and_name(compiler, type_error_source):
    error = compile_error(compiler, type_error_source)
    assert (error.source, error.source_name) == (type_error_source, NAMES[compiler]) and "src/lib.rs" in error.log


def test_message_lists_rust_locations_before_the_log(type_error_source):
    text = str(compile_error("nvrtc", type_error_source))
    assert text.index("src/lib.rs:4: error:") < text.index("compiler log:")


def test_hiprtc_log_names_the_generated_file():
    # hiprtc 5.x reports its own temporary file name; the wrapper puts the source name back.
    error = compile_error("hiprtc", GENERATED_LINE_ERROR)
    assert "bad.hip.cpp:2:" in error.log and "CompileSource" not in error.log


def test_errors_in_the_generated_file_are_not_rust_locations():
    assert compile_error("clang", GENERATED_LINE_ERROR).locations == []


def test_nvcc_command_reproduces_the_nvrtc_error(type_error_source, tmp_path):
    error = compile_error("nvrtc", type_error_source)
    error.write_source(tmp_path)
    rerun = subprocess.run(error.command, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert rerun.returncode != 0 and "src/lib.rs(4): error" in rerun.stdout + rerun.stderr


def test_hipcc_command_reproduces_the_hiprtc_error(type_error_source, tmp_path):
    error = compile_error("hiprtc", type_error_source)
    error.write_source(tmp_path)
    rerun = subprocess.run(error.command, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert rerun.returncode != 0 and "src/lib.rs:4:" in rerun.stderr


def test_clang_command_reproduces_the_clang_error(type_error_source, tmp_path):
    error = compile_error("clang", type_error_source)
    error.write_source(tmp_path)
    rerun = subprocess.run(error.command, shell=True, cwd=tmp_path, capture_output=True, text=True)
    assert rerun.returncode != 0 and "src/lib.rs:4:" in rerun.stderr


def test_parse_nvrtc_diagnostic():
    log = 'src/lib.rs(5): error: identifier "x" is undefined\n'
    assert parse_locations(log, "k.cu") == [Location("src/lib.rs", 5, 'identifier "x" is undefined')]


def test_parse_clang_diagnostic():
    log = "src/lib.rs:5:3: error: use of undeclared identifier 'x'\n"
    assert parse_locations(log, "k.hip.cpp") == [Location("src/lib.rs", 5, "use of undeclared identifier 'x'")]


def test_parse_skips_warnings_notes_and_headers():
    log = (
        'src/lib.rs(2): warning #177-D: variable "y" was declared but never referenced\n'
        "src/lib.rs:3:1: note: declared here\n"
        "/usr/include/hip/amd_detail/amd_hip_runtime.h:40:3: error: in a header\n"
    )
    assert parse_locations(log, "k.cu") == []


def test_compile_error_survives_pickling(type_error_source):
    error = compile_error("nvrtc", type_error_source)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.locations, copy.command) == (str(error), error.locations, error.command)
