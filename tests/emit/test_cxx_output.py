"""Properties of the generated C++ that the design promises: self-contained files, `#line` directives that map
every line back to the Rust statement it renders, an entry-point ABI the host can rely on, names that cannot
clash with C++ or CUDA/HIP, and struct layouts checked against rustc's.

Expected values come from the Rust signatures and from rustc itself, never from the emitter.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rs2gpu import pipeline
from rs2gpu.ir.abi import ArgRole, CoveringGrid, EntryKind, EntryPoint, HostLoop, ParamKind, Transfer, Uniform
from rs2gpu.runtime.hiprtc import compile_hip
from rs2gpu.runtime.nvrtc import compile_cuda

from tests.support.generated_code import entry_points

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(manifest.parent for manifest in (REPO / "examples").glob("*/Cargo.toml"))
CASES = sorted((REPO / "tests" / "cases").glob("*.rs"))
DIRECTIVE = re.compile(r'#line (\d+) "([^"]+)"$')


def translate_crate(root: Path, source: str) -> pipeline.Translation:
    """Translate `source` as the src/lib.rs of a crate at `root` (so files are named like cargo names them)."""
    (root / "src").mkdir(parents=True, exist_ok=True)
    (root / "Cargo.toml").write_text('[package]\nname = "probe"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src" / "lib.rs").write_text(source)
    return pipeline.translate(root)


def compile_everything(result: pipeline.Translation) -> None:
    for name, text in result.emitted.files.items():
        if name.endswith(".cu"):
            compile_cuda(text, name, "sm_90")
        else:
            compile_hip(text, name, "gfx90a")


def rust_line(source: str, marker: str) -> int:
    assert source.count(marker) == 1, f"marker {marker!r} must be unique"
    return source[:source.index(marker)].count("\n") + 1


def presumed_lines(cxx: str) -> list[tuple[str, int] | None]:
    """For each line of a C++ file, the (file, line) a C++ compiler attributes it to: `#line N "f"` makes the
    next line N of f, and each line after it one more; lines before any directive are the file's own (None)."""
    out: list[tuple[str, int] | None] = []
    current: tuple[str, int] | None = None
    for line in cxx.splitlines():
        out.append(current)
        match = DIRECTIVE.match(line)
        if match:
            current = (match.group(2), int(match.group(1)))
        elif current is not None:
            current = (current[0], current[1] + 1)
    return out


@pytest.fixture(scope="module")
def corpus() -> dict[str, str]:
    """Every generated file of the example crates and the test cases."""
    files = {}
    for source in [*EXAMPLES, *CASES]:
        for name, text in pipeline.translate(source).emitted.files.items():
            files[f"{source.name}/{name}"] = text
    return files


# ---------------------------------------------------------------- self-contained files


def test_no_generated_file_includes_anything(corpus) -> None:
    # NVRTC has no include path and hiprtc predefines its own types: every file must stand alone.
    assert corpus
    assert [name for name, text in corpus.items() if "#include" in text] == []


def test_no_template_includes_a_header() -> None:
    templates = (REPO / "templates").glob("*.j2")
    assert [t.name for t in templates if "#include" in t.read_text()] == []


# ---------------------------------------------------------------- #line directives


def test_line_directives_name_crate_files_and_existing_lines() -> None:
    for crate in EXAMPLES:
        result = pipeline.translate(crate)
        sources = {name: text.splitlines() for name, text in result.crate.sources.items()}
        assert all(name.startswith("src/") for name in sources)
        for name, text in result.emitted.files.items():
            directives = [DIRECTIVE.match(line) for line in text.splitlines() if line.startswith("#line")]
            assert directives, name
            for d in directives:
                assert d is not None
                file, line = d.group(2), int(d.group(1))
                assert file in sources and 1 <= line <= len(sources[file]), (name, d.group(0))


def test_example_statements_map_to_their_rust_lines() -> None:
    # RAJAPerf TRIAD: the only statement of the loop body is `a[i] = b[i] + alpha * c[i];`. It is rendered
    # in every entry point: the general loop, the vector one's lanes (`a_0 = ...`) and its last iterations.
    crate = REPO / "examples" / "rajaperf"
    source = (crate / "src" / "stream.rs").read_text()
    cxx = pipeline.translate(crate).emitted.files["triad.cu"]
    renderings = [k for k, line in enumerate(cxx.splitlines()) if re.match(r"a(\[i\]|_\d+) = ", line.strip())]
    assert len(renderings) == 4
    expected = ("src/stream.rs", rust_line(source, "a[i] = b[i] + alpha * c[i];"))
    assert [presumed_lines(cxx)[k] for k in renderings] == [expected] * 4


LINES = """\
use rs2gpu::kernel;

fn twice(x: f64) -> f64 {
    let doubled = x * 2.0;
    doubled
}

#[kernel]
pub fn lines(out: &mut [f64], a: &[f64], s: f64) {
    for i in 0..out.len() {
        let alpha = a[i] * s;
        let beta = if alpha > 0.0 { alpha } else { -alpha };
        let mut gamma = 0.0;
        if beta > 1.0 {
            gamma = beta * 2.0;
        } else {
            gamma = beta / 2.0;
        }
        let delta = match i % 3 {
            0 => 1.5,
            1 => {
                let first = gamma + 1.0;
                first * first
            }
            _ => 0.5,
        };
        let epsilon = { let inner = delta + 1.0; inner * inner };
        let sign = if epsilon > 2.0 { let big = epsilon * 3.0; big } else { 0.0 };
        let mut zeta = 0.0;
        for k in 0..3 {
            zeta += twice(k as f64);
        }
        out[i] = alpha + beta + gamma + delta + epsilon + sign + zeta;
    }
}
"""

# (the Rust text of a statement, a pattern for the C++ line that renders it)
LINE_PAIRS = [
    ("let doubled", r"\bdoubled = \(x \* 2\.0\);"),
    ("let alpha", r"\balpha = \(a\[i\] \* s\);"),
    ("let beta", r"\bbeta = "),
    ("let mut gamma", r"\bgamma = 0\.0;"),
    ("if beta > 1.0", r"if \(\(beta > 1\.0\)\) \{"),
    ("gamma = beta * 2.0", r"\bgamma = \(beta \* 2\.0\);"),
    ("gamma = beta / 2.0", r"\bgamma = \(beta / 2\.0\);"),
    ("let delta", r"^\s*f64 delta;"),
    ("0 => 1.5", r"\bdelta = 1\.5;"),
    ("let first", r"\bfirst = \(gamma \+ 1\.0\);"),
    ("first * first", r"\bdelta = \(first \* first\);"),
    ("_ => 0.5", r"\bdelta = 0\.5;"),
    ("let epsilon", r"^\s*f64 epsilon;"),
    ("let inner", r"\binner = \(delta \+ 1\.0\);"),
    ("inner * inner", r"\bepsilon = \(inner \* inner\);"),
    ("let sign", r"if \(\(epsilon > 2\.0\)\) \{"),
    ("let big", r"\bbig = \(epsilon \* 3\.0\);"),
    ("for k in 0..3", r"^\s*for \(\w+ k = "),
    ("zeta += twice", r"\bzeta \+= twice\("),
    ("out[i] = alpha", r"\bout\[i\] = "),
]


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_every_statement_maps_to_its_rust_line(tmp_path: Path, target: str) -> None:
    """Even when one Rust line becomes several C++ lines (a one-line `if`, a block, a `match` arm), the
    compiler must attribute each C++ line to the Rust line it came from."""
    result = translate_crate(tmp_path, LINES)
    cxx = result.emitted.files["lines.cu" if target == "cuda" else "lines.hip.cpp"]
    cxx_lines, presumed = cxx.splitlines(), presumed_lines(cxx)
    start = cxx_lines.index("// ---- end of prelude ----")
    wrong = []
    for marker, pattern in LINE_PAIRS:
        # every rendering: in the general loop, and in the vector entry point's lanes and last iterations
        found = [k for k, line in enumerate(cxx_lines) if k > start and re.search(pattern, line)]
        assert found, pattern
        expected = ("src/lib.rs", rust_line(LINES, marker))
        wrong += [(marker, presumed[k], expected) for k in found if presumed[k] != expected]
    assert wrong == []


def test_prelude_lines_are_not_attributed_to_rust(corpus) -> None:
    for name, text in corpus.items():
        presumed = presumed_lines(text)
        end = text.splitlines().index("// ---- end of prelude ----")
        assert presumed[end] is None, name


# ---------------------------------------------------------------- the entry-point ABI

EVERY_KIND = """\
#[repr(C)]
#[derive(Clone, Copy)]
pub struct Pair {
    pub a: f64,
    pub b: u32,
}

#[kernel]
pub fn every_kind(out: &mut [f32], inp: &[f32], table: &[f64; 16], pair: &Pair, by_value: Pair, n: u8,
                  flag: bool) -> f64 {
    let mut total = 0.0;
    for i in 0..out.len() {
        out[i] = inp[i] * n as f32 + table[i % 16] as f32 + pair.a as f32 + by_value.b as f32;
        if flag {
            total += 1.0;
        }
    }
    total
}

#[kernel]
pub fn two_loops(a: &mut [i32], b: &mut [i32], m: i32) {
    for i in 0..a.len() {
        a[i] = m;
    }
    for j in 1..=b.len() {
        b[j - 1] = a[j - 1] + 1;
    }
}
"""


def test_entry_point_parameters_follow_the_rust_signature(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, EVERY_KIND)
    for name in ("every_kind.cu", "every_kind.hip.cpp"):
        assert entry_points(result.emitted.files[name]) == {"rs2gpu_every_kind_0": [
            "f32* __restrict__ out",        # &mut [f32]: the pointer (its length where the code reads it)
            "const f32* __restrict__ inp",  # &[f32]: a const pointer; the host proved `inp[i]` in bounds
            "const f64* __restrict__ table",                         # &[f64; 16]: the length is known
            "const Pair* __restrict__ pair",                         # &Pair
            "const Pair by_value", "const u8 n", "const bool flag",  # by value, at their exact width
            "const usize rs2gpu_start_x", "const usize rs2gpu_count_x",  # the loop's first index, its length
            "const u32 rs2gpu_launch",              # its number in the call: `table[i % 16]` may panic
            "const f64 rs2gpu_seed_total",                               # per reduction: its value before
            "f64* __restrict__ rs2gpu_partials_total",                   # the loop, the blocks' partials and
            "f64* __restrict__ rs2gpu_result_total",                     # the result
            "u32* __restrict__ rs2gpu_done",  # the call's last launch reduces: the word it sets after its results
        ]}
    compile_everything(result)


def test_the_abi_lists_every_argument_with_its_size(tmp_path: Path) -> None:
    kernel = translate_crate(tmp_path, EVERY_KIND).emitted.abi.kernels["every_kind"]
    parts = {p.name: [(a.name, a.role, a.size, a.align) for a in p.parts] for p in kernel.params}
    pointer, length, value = ArgRole.POINTER, ArgRole.LENGTH, ArgRole.VALUE
    assert parts == {
        "out": [("out", pointer, 8, 8), ("out_len", length, 8, 8)],
        "inp": [("inp", pointer, 8, 8), ("inp_len", length, 8, 8)],
        "table": [("table", pointer, 8, 8)],
        "pair": [("pair", pointer, 8, 8)],
        "by_value": [("by_value", value, 16, 8)],  # f64 then u32, padded to a multiple of 8
        "n": [("n", value, 1, 1)],
        "flag": [("flag", value, 1, 1)],  # bool is one byte
    }


def test_entry_points_are_named_after_the_kernel_and_the_loop(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, EVERY_KIND)
    kernel = result.emitted.abi.kernels["two_loops"]
    assert [launch.general.symbol for launch in kernel.launches] == ["rs2gpu_two_loops_0", "rs2gpu_two_loops_1"]
    for name in ("two_loops.cu", "two_loops.hip.cpp"):
        entries = entry_points(result.emitted.files[name])
        # both loops index at their variable plus a constant: each has a vector entry point (see `emit.vector`);
        # the second indexes at `j - 1`: it also has a covering entry point (see `covering_pays`). Each loop's
        # entry points come in the order the host tries them (`EntryKind`).
        assert list(entries) == ["rs2gpu_two_loops_0_vector", "rs2gpu_two_loops_0", "rs2gpu_two_loops_1_vector",
                                 "rs2gpu_two_loops_1_covering", "rs2gpu_two_loops_1"]
        # The second loop's index runs over 1..=len: the entry takes its first index as a usize.
        assert entries["rs2gpu_two_loops_1"][-2:] == ["const usize rs2gpu_start_x", "const usize rs2gpu_count_x"]
    # the ABI lists them in the same order
    assert [[e.symbol for e in launch.entry_points] for launch in kernel.launches] == [
        ["rs2gpu_two_loops_0_vector", "rs2gpu_two_loops_0"],
        ["rs2gpu_two_loops_1_vector", "rs2gpu_two_loops_1_covering", "rs2gpu_two_loops_1"]]


TIME_STEPS = """\
use rs2gpu::kernel;

#[kernel]
pub fn relax(a: &mut [f64], b: &mut [f64], steps: u32) {
    let n = a.len().min(b.len());
    for step in 0..steps {
        let m = n - (step as usize).min(n);
        for i in 0..m {
            b[i] = a[i] * 0.5 + step as f64;
        }
        for i in 0..m {
            a[i] = b[i];
        }
    }
}
"""


def test_launches_of_a_host_loop_take_its_variable_after_their_iteration_space(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, TIME_STEPS)
    entry = result.emitted.abi.kernels["relax"]
    for name in ("relax.cu", "relax.hip.cpp"):
        entries = entry_points(result.emitted.files[name])
        assert entries["rs2gpu_relax_0"][-3:] == ["const usize rs2gpu_start_x", "const usize rs2gpu_count_x",
                                                   "const u32 step"]
        assert entries["rs2gpu_relax_1"][-2:] == ["const usize rs2gpu_start_x", "const usize rs2gpu_count_x"]
    assert [launch.uniforms for launch in entry.launches] == [(Uniform("step", "u32"),), ()]
    compile_everything(result)


def test_the_schedule_runs_the_launches_in_the_host_loop_with_the_values_their_bounds_need(tmp_path: Path):
    entry = translate_crate(tmp_path, TIME_STEPS).emitted.abi.kernels["relax"]
    [loop] = entry.schedule
    assert isinstance(loop, HostLoop)
    assert (loop.var, loop.type, loop.end, loop.inclusive) == ("step", "u32", {"param": "steps"}, False)
    assert loop.body == (0, 1)
    assert [local.name for local in loop.locals] == ["m"]  # both bounds read it
    assert all(launch.dims[0].end == {"local": "m"} for launch in entry.launches)


def test_kernel_without_host_loops_has_no_schedule(tmp_path: Path) -> None:
    kernels = translate_crate(tmp_path, EVERY_KIND).emitted.abi.kernels
    assert all(entry.schedule is None for entry in kernels.values())


def test_each_instantiation_of_a_generic_kernel_is_a_kernel_with_its_type_arguments(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, """\
use rs2gpu::kernel;

#[kernel(types(f32, u16))]
pub fn fill<T: Copy>(out: &mut [T], value: T) {
    for o in out.iter_mut() {
        *o = value;
    }
}
""")
    kernels = result.emitted.abi.kernels
    assert sorted(kernels) == ["fill_f32", "fill_u16"]
    assert (kernels["fill_u16"].generic.name, kernels["fill_u16"].generic.type_args) == ("fill", ("u16",))
    assert kernels["fill_u16"].rust_path == "fill"
    assert [p.rust_type for p in kernels["fill_u16"].params] == ["&mut [u16]", "u16"]
    assert entry_points(result.emitted.files["fill_f32.cu"])["rs2gpu_fill_f32_0"][:2] == [
        "f32* __restrict__ out", "const f32 value"]
    compile_everything(result)


def test_every_pointer_of_every_entry_point_is_restrict_and_const_exactly_for_shared_data(corpus) -> None:
    for name, text in corpus.items():
        for symbol, params in entry_points(text).items():
            for param in params:
                if "*" in param:
                    assert "* __restrict__ " in param, (name, symbol, param)


def test_shared_references_are_const_pointers_and_mutable_ones_are_not(corpus) -> None:
    for source in [*EXAMPLES, *CASES]:
        result = pipeline.translate(source)
        for kernel, entry in result.emitted.abi.kernels.items():
            for params in entry_points(result.emitted.files[entry.files["cuda"]]).values():
                by_name = {p.split()[-1]: p for p in params}
                for p in entry.params:
                    if p.kind in (ParamKind.SLICE, ParamKind.ARRAY, ParamKind.STRUCT_REF) \
                            and p.transfer != Transfer.VALUE:
                        pointer = by_name[p.parts[0].name]
                        assert pointer.startswith("const ") != p.mutable, (kernel, pointer)


def test_arrays_passed_by_value_are_const_arrays_read_in_place(corpus) -> None:
    """FIR's taps are in the launch arguments: a const array, marked to be read where the launch put it."""
    params = entry_points(corpus["rajaperf/fir.cu"])["rs2gpu_fir_0"]
    assert "const RS2GPU_GRID_CONSTANT rs2gpu_array<f64, 16> coeff" in params
    assert "#define RS2GPU_GRID_CONSTANT __grid_constant__" in corpus["rajaperf/fir.cu"]
    assert "#define RS2GPU_GRID_CONSTANT\n" in corpus["rajaperf/fir.hip.cpp"]


# ---------------------------------------------------------------- names

CLASHING_NAMES = """\
#[kernel]
pub fn clash(norm: &mut [f64], max: &[f64], min: &[f64], class: f64, int: i32, template: u8, float: f32,
             threadIdx: usize, sqrt: &[f64], f64: f64, RS2GPU_SHARED: f64) {
    for i in 0..norm.len() {
        let rs2gpu_t = max[i] + min[i];
        let double = sqrt[i] * class;
        norm[i] = rs2gpu_t + double + int as f64 + template as f64 + float as f64 + threadIdx as f64 + f64
            + RS2GPU_SHARED;
    }
}
"""
# (RS2GPU_SHARED is a macro of the prelude.)
RESERVED = ["norm", "max", "min", "class", "int", "template", "float", "threadIdx", "sqrt", "f64", "double",
            "RS2GPU_SHARED"]


def test_names_that_clash_with_cxx_or_gpu_builtins_are_mangled_and_compile(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, CLASHING_NAMES)
    for name in ("clash.cu", "clash.hip.cpp"):
        text = result.emitted.files[name]
        params = entry_points(text)["rs2gpu_clash_0"]
        names = [p.split()[-1] for p in params]
        assert not set(names) & set(RESERVED), names
        assert len(set(names)) == len(names)
        # The Rust local `rs2gpu_t` must not be the thread counter of the generated loop.
        declared = re.findall(r"\b(?:const )?f64 (\w+) = ", text.split("// ---- end of prelude ----")[1])
        assert "rs2gpu_t" not in declared and "double" not in declared
    compile_everything(result)


def test_a_slice_length_and_a_rust_name_ending_in_len_do_not_collide(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, """\
#[kernel]
pub fn lens(a: &mut [f64], a_len: usize) {
    for i in 0..a.len() {
        let out_len = 3.0;
        a[i] = a_len as f64 + out_len + a.len() as f64;
    }
}
""")
    text = result.emitted.files["lens.cu"]
    params = entry_points(text)["rs2gpu_lens_0"]
    names = [p.split()[-1] for p in params]
    assert len(set(names)) == len(names)
    abi = {p.name: [a.name for a in p.parts] for p in result.emitted.abi.kernels["lens"].params}
    assert [p.split()[-1] for p in params[:3]] == [*abi["a"], *abi["a_len"]]
    # `a.len()` reads the length argument, the Rust parameter `a_len` its own argument.
    length, user = abi["a"][1], abi["a_len"][0]
    assert re.search(rf"\(\(f64\){user}\) \+ \w+\) \+ \(\(f64\){length}\)", text), text[-600:]
    compile_everything(result)


LENGTHS = """\
fn total(xs: &[f64]) -> f64 {
    let mut sum = 0.0;
    for x in xs {
        sum += *x;
    }
    sum
}

#[kernel]
pub fn lengths(out: &mut [f64], a: &[f64], b: &[f64], c: &[f64], idx: &[usize]) {
    for i in 0..out.len() {
        out[i] = a[i];
    }
    for i in 0..out.len() {
        out[i] = a[idx[i]] + total(b) + c.len() as f64;
    }
}
"""


def test_a_launch_takes_the_lengths_its_code_reads_and_no_others(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, LENGTHS)
    launches = result.emitted.abi.kernels["lengths"].launches
    # the first loop's accesses are proven on the host: no length travels
    assert launches[0].lengths == ()
    # the second checks `a[idx[i]]` on the device, passes `b` to a helper and reads `c.len()`
    assert launches[1].lengths == ("a", "b", "c")
    for name in ("lengths.cu", "lengths.hip.cpp"):
        entries = entry_points(result.emitted.files[name])
        assert [p for p in entries["rs2gpu_lengths_0"] if p.endswith("_len")] == []
        assert [p for p in entries["rs2gpu_lengths_1"] if p.endswith("_len")] == [
            "const usize a_len", "const usize b_len", "const usize c_len"]
    compile_everything(result)


def test_a_local_may_take_the_name_of_the_helper_it_calls(tmp_path: Path) -> None:
    # `let square = square(x);` is Rust; in C++ the new variable would be in scope in its own initializer.
    result = translate_crate(tmp_path, """\
fn square(x: f64) -> f64 {
    x * x
}

#[kernel]
pub fn squares(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        let square = square(a[i]);
        out[i] = square;
    }
}
""")
    compile_everything(result)


def test_every_function_the_emitter_calls_is_a_name_rust_variables_cannot_take() -> None:
    # A Rust local called `powf` would otherwise hide the `powf` that `x.powf(y)` on an f32 becomes.
    from rs2gpu.emit.cxx_expr import FLOAT_INTRINSICS, INT_INTRINSICS
    from rs2gpu.emit.names import cxx_name

    spellings = [s for pair in FLOAT_INTRINSICS.values() for s in pair] + list(INT_INTRINSICS.values())
    called = {name for s in spellings for name in re.findall(r"([A-Za-z_]\w*)\(", s)}
    assert called
    assert sorted(name for name in called if cxx_name(name) == name) == []


def test_locals_named_like_math_functions_compile(tmp_path: Path) -> None:
    compile_everything(translate_crate(tmp_path, """\
#[kernel]
pub fn math_names(out: &mut [f32], a: &[f32]) {
    for i in 0..out.len() {
        let x = a[i];
        let sqrtf = x.sqrt();
        let powf = x.powf(sqrtf);
        let expf = x.exp();
        let fminf = x.min(expf);
        let fmodf = x % fminf;
        let fmaf = x.mul_add(powf, fmodf);
        let signbit = x.is_sign_negative();
        out[i] = if signbit { fmaf } else { -fmaf };
    }
}
"""))


def test_mutable_parameters_of_helpers_can_be_assigned(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, """\
fn bump(mut x: f64, mut n: u32) -> f64 {
    while n > 0 {
        x += 1.0;
        n -= 1;
    }
    x
}

#[kernel]
pub fn bumped(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = bump(a[i], 3);
    }
}
""")
    assert "f64 bump(f64 x, u32 n)" in result.emitted.files["bumped.cu"]
    compile_everything(result)


def test_operands_keep_rusts_left_to_right_order_when_a_later_one_needs_statements(tmp_path: Path) -> None:
    # Rust reads the left `x` (5) before the block increments it: y = 5 + 6. The block's statements run
    # before the C++ expression, so the left operand must come from a copy made before them.
    result = translate_crate(tmp_path, """\
#[kernel]
pub fn order(out: &mut [i32], a: &[i32]) {
    for i in 0..out.len() {
        let mut x = a[i];
        let y = x + { x += 1; x };
        out[i] = y + x;
    }
}
""")
    for text in result.emitted.files.values():
        body = text.split("// ---- end of prelude ----")[1]
        y_lines = [line for line in body.splitlines() if re.search(r"\bi32 y = ", line)]
        assert y_lines  # in each entry point, and in each lane of the vector one
        for y_line in y_lines:
            assert not re.search(r"\bx\b", y_line), y_line
    compile_everything(result)


def test_shadowed_lets_get_distinct_cxx_names(tmp_path: Path) -> None:
    result = translate_crate(tmp_path, """\
#[kernel]
pub fn shadow(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        let a = a[i];
        let x = a * 3.0;
        let x = x * 2.0;
        let x = x + 1.0;
        out[i] = x;
    }
}
""")
    text = result.emitted.files["shadow.cu"]
    body = re.split(r"const usize i = .*;", text)[1].split("\n}\n")[0]  # the general entry point's loop
    declared = re.findall(r"const f64 (\w+) = ", body)
    assert len(declared) == 4 and len(set(declared)) == 4 and "a" not in declared
    first, x1, x2, x3 = declared
    assert f"const f64 {first} = a[i];" in body
    assert f"const f64 {x2} = ({x1} * 2.0);" in body and f"const f64 {x3} = ({x2} + 1.0);" in body
    assert f"out[i] = {x3};" in body
    compile_everything(result)


# ---------------------------------------------------------------- struct layouts

LAYOUT_STRUCTS = {
    "Mixed": [("flag", "u8"), ("x", "f64"), ("tag", "u16"), ("y", "f32"), ("small", "i8"), ("big", "i64"),
              ("last", "u8")],
    "Small": [("a", "u8"), ("b", "u16"), ("c", "u8")],
    "Nested": [("head", "u8"), ("inner", "Small"), ("arr", "[u16; 3]"), ("tail", "f32"), ("mixed", "Mixed"),
               ("end", "bool")],
    "Keywords": [("class", "u32"), ("int", "i32"), ("float", "f32"), ("template", "u8"), ("this", "f64"),
                 ("new", "u16"), ("max", "u8")],
}


def _struct_items() -> str:
    out = []
    for name, fields in LAYOUT_STRUCTS.items():
        body = "".join(f"    pub {f}: {t},\n" for f, t in fields)
        out.append(f"#[repr(C)]\n#[derive(Clone, Copy)]\npub struct {name} {{\n{body}}}\n")
    return "\n".join(out)


LAYOUT_KERNEL = _struct_items() + """
#[kernel]
pub fn layouts(out: &mut [Nested], keys: &mut [Keywords]) {
    for i in 0..out.len() {
        let mut n = out[i];
        n.head = n.inner.a;
        n.mixed.big = n.mixed.big + n.arr[2] as i64;
        n.end = !n.end;
        out[i] = n;
        let mut k = keys[i];
        k.class = k.int as u32 + k.template as u32 + k.new as u32 + k.max as u32;
        k.this = k.float as f64;
        keys[i] = k;
    }
}
"""


@pytest.fixture(scope="module")
def rustc_layout(tmp_path_factory) -> dict[tuple[str, str], int]:
    """size_of, align_of and offset_of! of every struct and field, as printed by a program rustc built."""
    folder = tmp_path_factory.mktemp("layout")
    prints = []
    for name, fields in LAYOUT_STRUCTS.items():
        prints.append(f'println!("{name} size {{}}", std::mem::size_of::<{name}>());')
        prints.append(f'println!("{name} align {{}}", std::mem::align_of::<{name}>());')
        prints += [f'println!("{name} {f} {{}}", std::mem::offset_of!({name}, {f}));' for f, _ in fields]
    program = _struct_items() + "\nfn main() {\n" + "\n".join("    " + p for p in prints) + "\n}\n"
    (folder / "layout.rs").write_text(program)
    build = subprocess.run(["rustc", "--edition", "2021", "--cap-lints", "allow", "-o", str(folder / "layout"),
                            str(folder / "layout.rs")], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    run = subprocess.run([str(folder / "layout")], capture_output=True, text=True, check=True)
    return {(struct, what): int(value) for struct, what, value in (line.split() for line in run.stdout.splitlines())}


def _cxx_name(rust: str) -> str:
    return {"class": "class_", "int": "int_", "float": "float_", "template": "template_", "this": "this_",
            "new": "new_", "max": "max_"}.get(rust, rust)


@pytest.mark.parametrize("target", ["cuda", "hip"])
def test_struct_static_asserts_state_rustcs_layout(tmp_path: Path, rustc_layout, target: str) -> None:
    result = translate_crate(tmp_path, LAYOUT_KERNEL)
    text = result.emitted.files["layouts.cu" if target == "cuda" else "layouts.hip.cpp"]
    asserted = {}
    for struct, value in re.findall(r"static_assert\(sizeof\((\w+)\) == (\d+),", text):
        asserted[(struct, "size")] = int(value)
    for struct, value in re.findall(r"static_assert\(alignof\((\w+)\) == (\d+),", text):
        asserted[(struct, "align")] = int(value)
    for struct, field, value in re.findall(r"static_assert\(RS2GPU_OFFSETOF\((\w+), (\w+)\) == (\d+),", text):
        asserted[(struct, field)] = int(value)
    expected = {(struct, _cxx_name(what)): value for (struct, what), value in rustc_layout.items()}
    assert asserted == expected


def test_the_abi_layout_of_struct_elements_is_rustcs(tmp_path: Path, rustc_layout) -> None:
    params = translate_crate(tmp_path, LAYOUT_KERNEL).emitted.abi.kernels["layouts"].params
    nested = params[0].layout  # a slice's element
    assert (nested.size, nested.align) == (rustc_layout[("Nested", "size")], rustc_layout[("Nested", "align")])
    assert {f.name: f.offset for f in nested.fields} == {
        f: rustc_layout[("Nested", f)] for f, _ in LAYOUT_STRUCTS["Nested"]}
    keywords = params[1].layout
    assert {f.name: f.offset for f in keywords.fields} == {
        f: rustc_layout[("Keywords", f)] for f, _ in LAYOUT_STRUCTS["Keywords"]}


def test_structs_with_cxx_keywords_as_field_names_compile(tmp_path: Path) -> None:
    # The C++ compilers evaluate every static_assert: this also checks the layout on both vendors.
    compile_everything(translate_crate(tmp_path, LAYOUT_KERNEL))


def test_sources_of_this_suite_are_rust(tmp_path: Path) -> None:
    sources = {"lines": LINES.replace("use rs2gpu::kernel;", ""), "every_kind": EVERY_KIND,
               "clash": CLASHING_NAMES, "layouts": LAYOUT_KERNEL}
    crate = "\n".join(f"pub mod {name} {{\n{text.replace('#[kernel]', '')}\n}}" for name, text in sources.items())
    (tmp_path / "lib.rs").write_text(crate)
    rustc = subprocess.run(["rustc", "--edition", "2021", "--crate-type", "lib", "--cap-lints", "allow",
                            "--out-dir", str(tmp_path), str(tmp_path / "lib.rs")], capture_output=True, text=True)
    assert rustc.returncode == 0, rustc.stderr


# ---------------------------------------------------------------- covering entry points and tiles

NESTS = """\
use rs2gpu::kernel;

#[kernel]
pub fn flat(out: &mut [f64]) {
    for i in 0..out.len() {
        out[i] = 1.0;
    }
}

#[kernel]
pub fn shifted(out: &mut [f64], a: &[f64]) {
    for i in 0..out.len() {
        out[i] = a[i + 1];
    }
}

#[kernel]
pub fn summed(a: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for j in 0..n {
        for i in 0..n {
            s += a[j * n + i];
        }
    }
    s
}

#[kernel]
pub fn product_plus_one(c: &mut [f64], a: &[f64], b: &[f64], n: usize) {
    for row in 0..n {
        for col in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[row * n + k] * b[k * n + col];
                sum += 1.0;
            }
            c[row * n + col] = sum;
        }
    }
}

#[kernel]
pub fn row_squares(c: &mut [f64], a: &[f64], n: usize) {
    for row in 0..n {
        for col in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += a[row * n + k] * a[row * n + k];
            }
            c[row * n + col] = sum;
        }
    }
}
"""


def test_nests_and_loops_indexing_beside_their_variable_have_a_covering_entry_point(tmp_path) -> None:
    result = translate_crate(tmp_path, NESTS)
    kernels = result.emitted.abi.kernels

    def covering(kernel: str) -> EntryPoint | None:
        return kernels[kernel].launches[0].entry(EntryKind.COVERING)

    assert covering("flat") is None  # it indexes at `i` only: nothing to spare
    # a single loop runs on rows of the block size, as its grid-stride entry point does
    assert covering("shifted") == EntryPoint(EntryKind.COVERING, "rs2gpu_shifted_0_covering", records_panics=False,
                                             checks=(), grid=CoveringGrid((256, 1, 1), 2**31, lead=0))
    assert covering("summed") is None  # its threads combine many iterations
    # every access is checked on the host
    assert covering("product_plus_one") == EntryPoint(EntryKind.COVERING, "rs2gpu_product_plus_one_0_covering",
                                                      records_panics=False, checks=(),
                                                      grid=CoveringGrid(None, 2**31, lead=0))
    for name in ("product_plus_one.cu", "product_plus_one.hip.cpp"):
        assert list(entry_points(result.emitted.files[name])) == ["rs2gpu_product_plus_one_0_covering",
                                                                   "rs2gpu_product_plus_one_0"]
    compile_everything(result)


def test_a_product_is_tiled_only_when_each_operand_misses_one_thread_variable(tmp_path) -> None:
    # `row_squares` reads `a` along the row twice: no operand is shared down a column, so no tiles;
    # `product_plus_one` adds more than the products in its k loop
    kernels = translate_crate(tmp_path, NESTS).emitted.abi.kernels
    assert kernels["row_squares"].launches[0].entry(EntryKind.COVERING).grid.block is None
    assert kernels["product_plus_one"].launches[0].entry(EntryKind.COVERING).grid.block is None


def test_the_corpus_matrix_product_is_tiled_through_shared_memory(corpus) -> None:
    text = corpus["rajaperf/mat_mat_shared.cu"]
    assert "RS2GPU_SHARED f64 rs2gpu_row_tile[16][16];" in text
    assert "RS2GPU_SHARED f64 rs2gpu_col_tile[16][16];" in text
    covering = text[text.index("rs2gpu_mat_mat_shared_0_covering("):]
    assert covering.count("RS2GPU_SYNC_THREADS();") == 2
    product = "rs2gpu_row_tile[RS2GPU_THREAD_IDX.y][rs2gpu_kk] * rs2gpu_col_tile[rs2gpu_kk][RS2GPU_THREAD_IDX.x]"
    assert f"sum += ({product});" in covering
