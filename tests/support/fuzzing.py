"""What the fuzz tests share: the property every input must satisfy, the corpus, and the settings.

The property: rs2gpu either translates a source, or fails with `CompileFailed` whose diagnostics all
carry a known code and a span inside the file, and render with that span's source line. Any other
exception (a Python traceback) is a bug.

Hypothesis settings: the default profile keeps the whole fuzz suite under a minute and is
derandomized, so CI runs the same examples every time. For a longer, randomized local run set
`RS2GPU_FUZZ=long` (or `RS2GPU_FUZZ=<number>` to multiply every test's example count by that number):

    RS2GPU_FUZZ=long python3 -m pytest tests/fuzz -q
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from hypothesis import HealthCheck, settings

from rs2gpu.checker import check_crate
from rs2gpu.emit import emit_crate
from rs2gpu.frontend import lower_text
from rs2gpu.frontend.source import parse_text
from rs2gpu.ir.codes import CODES
from rs2gpu.ir.diagnostics import CompileFailed, Diagnostic, render
from rs2gpu.ir.nodes import Span
from rs2gpu.ir.validate import validate_function

from tests.support.paths import CASES, RAJAPERF

FILE_NAME = "src/lib.rs"


# ---------------------------------------------------------------- settings

def _scale() -> tuple[int, bool]:
    """(factor on max_examples, derandomize) from RS2GPU_FUZZ."""
    value = os.environ.get("RS2GPU_FUZZ", "").strip().lower()
    if not value:
        return 1, True
    if value == "long":
        return 50, False
    return max(1, int(value)), False


def fuzz_settings(max_examples: int) -> settings:
    """`max_examples` on CI (derandomized, no example database); more, and random, under RS2GPU_FUZZ."""
    factor, derandomize = _scale()
    return settings(max_examples=max_examples * factor, deadline=None, derandomize=derandomize,
                    database=None, print_blob=not derandomize,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


# ---------------------------------------------------------------- the property

def translate_text(text: str):
    """What `pipeline.translate` does, for source held in memory: raises CompileFailed on user errors.

    Every function the frontend lowered must also pass the IR validator: a kernel the frontend
    accepts with inconsistent IR would reach the emitter as a miscompilation, not a diagnostic."""
    crate, lowered = lower_text(text, FILE_NAME)
    diagnostics = list(lowered.items)
    if lowered.has_errors:
        raise CompileFailed(diagnostics, crate.sources)
    for fn in crate.functions:
        problems = validate_function(fn)
        assert problems == [], f"the frontend accepted invalid IR: {problems}"
    checked, checks = check_crate(crate)
    diagnostics += checks.items
    if checks.has_errors:
        raise CompileFailed(diagnostics, crate.sources)
    emit_crate(checked, ("cuda", "hip"), "0.0.0")
    return diagnostics


def check_span(span: Span, sources: dict[str, str], what: str) -> None:
    assert span.file in sources, f"{what}: unknown file {span.file!r}"
    lines = sources[span.file].split("\n")
    assert 1 <= span.line <= len(lines), f"{what}: line {span.line} outside 1..{len(lines)}"
    assert span.col >= 1, f"{what}: column {span.col}"
    assert (span.end_line, span.end_col) >= (span.line, span.col), f"{what}: span ends before it starts: {span}"


def check_diagnostic(d: Diagnostic, sources: dict[str, str]) -> str:
    what = f"{d.code} {d.message!r} at {d.span}"
    assert d.severity in ("error", "warning"), what
    assert d.code in CODES, f"unknown code: {what}"
    assert d.message, what
    check_span(d.span, sources, what)
    for note in d.notes:
        if note.span is not None:
            check_span(note.span, sources, f"note of {what}")
    text = render(d, sources)
    assert text.startswith(f"{d.severity}[{d.code}]: "), text
    # The excerpt shows the line the span points at (the same line numbering as rustc: lines end at "\n").
    line = sources[d.span.file].split("\n")[d.span.line - 1].removesuffix("\r").expandtabs(4)
    assert f"{d.span.line} | {line}" in text, f"{what}: the excerpt is not line {d.span.line}:\n{text}"
    return text


def assert_translates_or_diagnoses(text: str) -> list[Diagnostic] | CompileFailed:
    """The fuzz property. Returns the warnings of a success, or the CompileFailed of a rejection."""
    try:
        diagnostics = translate_text(text)
    except CompileFailed as failed:
        assert failed.diagnostics, "CompileFailed without a diagnostic"
        assert any(d.severity == "error" for d in failed.diagnostics), "CompileFailed without an error"
        for d in failed.diagnostics:
            check_diagnostic(d, failed.sources)
        str(failed)
        return failed
    for d in diagnostics:
        check_diagnostic(d, {FILE_NAME: text})
    return diagnostics


# ---------------------------------------------------------------- the corpus

CORPUS_FILES = sorted((RAJAPERF / "src").glob("*.rs")) + sorted(CASES.glob("*.rs"))


def corpus_units() -> list[str]:
    """One small source per kernel of the corpus: the kernel, after every non-kernel item of its file
    (consts, structs, helpers), so that it still resolves every name and translates on its own."""
    units = []
    for path in CORPUS_FILES:
        text = path.read_text(encoding="utf-8")
        data = text.encode("utf-8")  # tree-sitter offsets count bytes
        root = parse_text(path.name, text).tree.root_node
        prelude, kernels, pending = [], [], []
        for node in root.children:
            if node.type in ("attribute_item", "line_comment", "block_comment"):
                pending.append(node)
                continue
            if node.type == "mod_item":
                pending = []
                continue
            piece = data[pending[0].start_byte if pending else node.start_byte:node.end_byte].decode("utf-8")
            is_kernel = node.type == "function_item" and any(
                "kernel" in p.text.decode() for p in pending if p.type == "attribute_item")
            (kernels if is_kernel else prelude).append(piece)
            pending = []
        prelude_text = "\n".join(prelude)
        units += [prelude_text + "\n\n" + k + "\n" for k in kernels]
    return units


# Identifiers, numbers (with suffixes), strings and chars, comments, multi-character operators, single
# characters, whitespace: close enough to Rust's tokens for mutations to make near-misses of real code.
_TOKEN = re.compile(r"""
    //[^\n]* | /\*.*?\*/
  | b?r?"(?:\\.|[^"\\])*" | '(?:\\.|[^'\\])'
  | [A-Za-z_][A-Za-z0-9_]*
  | 0[xob][0-9a-fA-F_]+(?:[iu](?:8|16|32|64|size))?
  | \d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?(?:_?[a-z]\w*)?
  | ::|->|=>|\.\.=|\.\.\.|\.\.|&&|\|\||<<=|>>=|[-+*/%^&|<>=!]=|<<|>>
  | \s+ | .
""", re.S | re.X)


def tokenize(text: str) -> list[str]:
    """Rough Rust tokens; "".join(tokenize(t)) == t."""
    return _TOKEN.findall(text)


RUST_TOKENS = (
    "as break const continue crate else enum false fn for if impl in let loop match mod move mut pub ref "
    "return self Self static struct super trait true type unsafe use where while dyn async await "
    "i8 i16 i32 i64 isize u8 u16 u32 u64 usize f32 f64 bool kernel repr C std core cmp min max len sqrt "
    "powi abs mul_add wrapping_add MAX MIN BITS consts PI "
    "0 1 2 255 256 -1 0u8 1_i64 0xff 0b1010 1e3 1.5 2.0f32 1e400 18446744073709551616 3usize 'a' \"s\" "
    "( ) [ ] { } < > ; , . .. ..= = == != <= >= + - * / % & | ^ ! ~ && || << >> += -= *= /= %= <<= >>= "
    "&= |= ^= : :: -> => _ ? # @ $ ' \" \\ #[kernel] #[repr(C)] &mut &"
).split(" ")


# ---------------------------------------------------------------- rustc, the reference

_KERNEL_LINE = re.compile(r"^\s*(#\[kernel\]|use rs2gpu::kernel;)\s*$")


def as_plain_rust(source: str) -> str:
    """The source rustc sees: without `#[kernel]` and `use rs2gpu::kernel;` (pass-through for rustc)."""
    return "\n".join("" if _KERNEL_LINE.match(line) else line for line in source.splitlines()) + "\n"


def rustc_errors(source: str, folder: Path, cap_lints: bool = False) -> str | None:
    """rustc's diagnostics for `source` built as a library crate, or None when it compiles. A full
    build, not `--emit=metadata`: the deny-by-default lints on overflow and panics run on MIR. With
    `cap_lints`, lints do not fail the build, and what is left are errors of the language itself."""
    path = folder / "fuzzed.rs"
    path.write_text(as_plain_rust(source), encoding="utf-8")
    command = ["rustc", "--edition", "2021", "--crate-type", "lib", "-A", "warnings", "-o",
               str(folder / "libfuzzed.rlib"), str(path)]
    if cap_lints:
        command[5:5] = ["--cap-lints", "allow"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    return None if result.returncode == 0 else result.stderr
