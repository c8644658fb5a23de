"""Every kernel rs2gpu can translate compiles, for every vendor, with the compilers the runtime uses.

Inputs are found by glob: each example crate under `examples/` and each kernel file under `tests/cases/`,
`tests/runtime/data/`, `tests/half/kernels/` and `tests/gpu/kernels/`.
Each generated `.cu` file goes through NVRTC for sm_90, each `.hip.cpp` through hiprtc for gfx90a and
through clang for gfx1030 (RDNA, wave32) and, in the `slow` tier, gfx90a (CDNA, wave64); the HIP compiles of
the kernel files outside `HIP_DEFAULT` are `slow` too. A file that does not compile is a
failed test, never a skip, and the binary must hold exactly the entry points the ABI lists.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from rs2gpu import pipeline, support_crate_path
from rs2gpu.frontend.generics import open_generics
from rs2gpu.ir.abi import CrateABI
from rs2gpu.ir.diagnostics import CompileFailed

from tests.support.code_objects import CLANG_ARCHS, CLANG_GROUP, HIPRTC_GROUP, vendor_compile_marks

REPO = Path(__file__).resolve().parents[2]
CRATES = sorted(manifest.parent for manifest in (REPO / "examples").glob("*/Cargo.toml"))
CASES = sorted((REPO / "tests" / "cases").glob("*.rs"))
# Kernel files of the runtime's tests: inputs chosen per test (index lists must hold distinct values), so they
# are not among the cases the GPU runs on random inputs, but they are compiled and cover the prelude too.
KERNEL_FILES = [*CASES, *sorted((REPO / "tests" / "runtime" / "data").glob("*.rs")),
                *sorted((REPO / "tests" / "half" / "kernels").glob("*.rs"))]
GPU_KERNELS = sorted((REPO / "tests" / "gpu" / "kernels").glob("*.rs"))  # the GPU tests' own kernel files
SOURCES = [*CRATES, *KERNEL_FILES, *GPU_KERNELS]
PRELUDE = REPO / "templates" / "prelude_common.j2"
# The sources whose HIP files hiprtc and clang compile in the default run: the example crates, the cases
# (which use every helper of the prelude), the half types' operators (the half prelude) and the split inner
# loops (whose combinations depend on the wave's width).
HIP_DEFAULT = {*CRATES, *CASES, REPO / "tests" / "half" / "kernels" / "operators.rs",
               REPO / "tests" / "runtime" / "data" / "warps.rs"}


def source_id(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


@lru_cache(maxsize=None)
def translate(path: Path) -> pipeline.Translation:
    return pipeline.translate(path)


def generated_files(suffix: str) -> list:
    """(source, file name) pairs for every generated file of one kind; a source that does not translate
    still yields one entry, so that its failure is reported by the tests below instead of at collection."""
    out = []
    for source in SOURCES:
        try:
            names = [n for n in translate(source).emitted.files if n.endswith(suffix)]
        except Exception:  # a diagnostic or a crash: reported by the test, not at collection
            names = ["<does not translate>"]
        out += [pytest.param(source, name, id=f"{source_id(source)}/{name}", marks=vendor_compile_marks(source))
                for name in names]
    return out


def hip_files() -> list:
    """The HIP files hiprtc and clang compile: in the default run, those of `HIP_DEFAULT`; the others, whose
    kernels NVRTC compiles in the default run and the emulated device runs, in the `slow` tier."""
    return [pytest.param(*p.values, id=p.id,
                         marks=[*p.marks, *([] if p.values[0] in HIP_DEFAULT else [pytest.mark.slow])])
            for p in generated_files(".hip.cpp")]


def generated(source: Path, name: str) -> tuple[str, list[str]]:
    """The text of one generated file and the entry points of the launches it defines, from the ABI."""
    try:
        result = translate(source)
    except CompileFailed as err:
        pytest.fail(f"{source_id(source)} does not translate:\n{err}")
    kernel = next(k for k in result.emitted.abi.kernels.values() if name in k.files.values())
    return result.emitted.files[name], [entry.symbol for launch in kernel.launches for entry in launch.entry_points]


def test_there_is_something_to_compile() -> None:
    assert CRATES and CASES


@pytest.mark.parametrize("source", SOURCES, ids=source_id)
def test_every_kernel_of_the_source_translates(source: Path) -> None:
    try:
        result = translate(source)
    except CompileFailed as err:
        pytest.fail(str(err))
    files = sorted(source.glob("src/**/*.rs")) if source.is_dir() else [source]
    declared = [name for f in files for name in re.findall(r"#\[kernel[^\]]*\]\s*pub fn (\w+)", f.read_text())]
    abi = result.emitted.abi
    # one ABI entry per kernel, and per instantiation of a generic kernel; a generic kernel without
    # `types(...)` is instantiated at its calls, so it has none yet
    rust_names = {name if entry.generic is None else entry.generic.name for name, entry in abi.kernels.items()}
    rust_names |= {signature.name for signature in open_generics(result.crate)}
    assert declared and rust_names == set(declared)
    for name, entry in abi.kernels.items():
        assert entry.files == {"cuda": f"{name}.cu", "hip": f"{name}.hip.cpp"}
    # manifest.json is the ABI's JSON form, and reads back as the same ABI
    assert CrateABI.from_json(json.loads(json.dumps(abi.to_json()))) == abi


@pytest.mark.parametrize(("source", "name"), generated_files(".cu"))
def test_cuda_file_compiles_with_nvrtc_for_sm_90(source: Path, name: str) -> None:
    from rs2gpu.runtime.nvrtc import compile_cuda, cubin_symbols

    text, symbols = generated(source, name)
    compiled = compile_cuda(text, name, "sm_90")
    assert sorted(cubin_symbols(compiled.binary)) == sorted(symbols)


@pytest.mark.xdist_group(HIPRTC_GROUP)
@pytest.mark.parametrize(("source", "name"), hip_files())
def test_hip_file_compiles_with_hiprtc_for_gfx90a(source: Path, name: str, code_objects) -> None:
    from rs2gpu.runtime.hipclang import code_object_symbols

    text, symbols = generated(source, name)
    assert sorted(code_object_symbols(code_objects.hiprtc(text, name, "gfx90a"))) == sorted(symbols)


@pytest.mark.xdist_group(CLANG_GROUP)
@pytest.mark.parametrize("arch", CLANG_ARCHS)
@pytest.mark.parametrize(("source", "name"), hip_files())
def test_hip_file_compiles_with_clang(source: Path, name: str, arch: str, code_objects) -> None:
    from rs2gpu.runtime.hipclang import code_object_symbols

    text, symbols = generated(source, name)
    assert sorted(code_object_symbols(code_objects.clang(text, name, arch))) == sorted(symbols)


# ---------------------------------------------------------------- the cases are Rust, and cover the prelude


@pytest.fixture(scope="module")
def cargo_target_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cargo-target")


@pytest.mark.parametrize("case", KERNEL_FILES, ids=source_id)
def test_case_file_builds_with_rustc(case: Path, tmp_path: Path, cargo_target_dir: Path) -> None:
    """The rustc build of a case is its specification, so it must be Rust that rustc accepts."""
    crate = tmp_path / "case"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "case"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f"[dependencies]\nrs2gpu = {{ path = {json.dumps(support_crate_path().as_posix())} }}\n")
    (crate / "src" / "lib.rs").write_text(case.read_text())
    env = {**os.environ, "CARGO_TARGET_DIR": str(cargo_target_dir)}
    build = subprocess.run(["cargo", "build", "--offline", "--quiet"], cwd=crate, env=env,
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr


def _prelude_definitions() -> dict[str, str]:
    """Each `rs2gpu_*` function, struct or device variable the common prelude defines, with the text of its
    definitions (all overloads and specializations), found by splitting the prelude at top-level braces."""
    definitions: dict[str, str] = {}
    chunk, depth = [], 0
    for line in PRELUDE.read_text().splitlines():
        if line.startswith(("//", "{%", "#")) or not line.strip():
            continue
        chunk.append(line)
        depth += line.count("{") - line.count("}")
        if depth == 0 and line.rstrip().endswith(("}", ";")):
            text = "\n".join(chunk)
            name = re.search(r"RS2GPU_DEVICE[^(]*\b(rs2gpu_\w+)\s*\(|struct\s+(rs2gpu_\w+)|"
                             r"^__device__\s+\w+\s+(rs2gpu_\w+)\s*;", text)
            if name:
                key = next(g for g in name.groups() if g)
                definitions[key] = definitions.get(key, "") + text + "\n"
            chunk = []
    return definitions


def test_cases_use_every_helper_of_the_prelude() -> None:
    """Templates are only type-checked when instantiated: the cases must reach every helper, directly from
    kernel code or through another helper they reach, for the compile tests above to cover it."""
    definitions = _prelude_definitions()
    assert len(definitions) > 40, sorted(definitions)
    used: set[str] = set()
    for case in KERNEL_FILES:
        for text in translate(case).emitted.files.values():
            body = text.split("---- end of prelude ----", 1)[1]
            used |= set(re.findall(r"\brs2gpu_\w+", body))
    frontier = used & set(definitions)
    while frontier:
        name = frontier.pop()
        for other in set(re.findall(r"\brs2gpu_\w+", definitions[name])) & set(definitions) - used:
            used.add(other)
            frontier.add(other)
    assert sorted(set(definitions) - used) == []


INT_TYPES = ["i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "usize"]


def _expected_intrinsic_uses() -> set[tuple[str, str]]:
    """(method, receiver type) for every intrinsic of the table on every type that has it in Rust."""
    from rs2gpu.ir.intrinsics import INTRINSICS

    expected = set()
    for kind, name in INTRINSICS:
        if kind == "float":
            expected |= {(name, "f32"), (name, "f64")}
        elif kind == "int":
            # Rust defines is_power_of_two on unsigned integers only.
            types = [t for t in INT_TYPES if t.startswith("u")] if name == "is_power_of_two" else INT_TYPES
            expected |= {(name, t) for t in types}
        elif kind == "signed":
            expected |= {(name, t) for t in INT_TYPES if t.startswith("i")} | {(name, "f32"), (name, "f64")}
        elif kind == "seq":
            expected.add((name, "slice"))
        elif kind == "half":
            expected |= {(name, "f16"), (name, "bf16")}
    return expected


def test_cases_call_every_intrinsic_on_every_type() -> None:
    from rs2gpu.ir import nodes as ir
    from rs2gpu.ir.types import RefType, SliceType
    from rs2gpu.ir.walk import walk

    used = set()
    for case in KERNEL_FILES:
        for fn in translate(case).crate.functions:
            for node in walk(fn.body):
                if isinstance(node, ir.Intrinsic):
                    ty = node.args[0].ty
                    is_slice = isinstance(ty, RefType) and isinstance(ty.target, SliceType)
                    used.add((node.name, "slice" if is_slice else str(ty)))
    assert sorted(_expected_intrinsic_uses() - used) == []
