"""Golden tests of the frontend: tests/data/ir-*.test hold Rust sources and the IR printed from them.

A data file is a list of cases:

    [case triad]
    #[kernel]
    pub fn triad(...) { ... }
    [out]
    #[kernel]
    fn triad(...) { ... }

`[out]` holds `ir.printer.format_crate` of the lowered crate, or, when lowering reports errors, one
line per diagnostic: `line:col: error[CODE]: message [label]` (lines count from the case's first
line). Every lowered function must also pass `ir.validate`. Lines before the first case are comments.
Every source is also given to rustc, which must accept it unless the case expects errors that are
errors in Rust too (see RUST_ACCEPTS / RUST_REJECTS).

`pytest --update-data` rewrites each [out] with the actual output; review the diff before keeping it.
Every file matching the glob is run, so a new file needs no registration.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from rs2gpu.frontend import lower_text
from rs2gpu.ir.diagnostics import Diagnostic
from rs2gpu.ir.printer import format_crate
from rs2gpu.ir.validate import validate_crate

DATA = Path(__file__).resolve().parent.parent / "data"
FILES = sorted(DATA.glob("ir-*.test"))
_CASE = re.compile(r"^\[case ([A-Za-z0-9_-]+)\]\s*$")
_OUT = "[out]"


@dataclass
class Case:
    name: str
    source: str
    expected: str


@dataclass
class DataFile:
    header: str
    cases: list[Case]

    def render(self) -> str:
        parts = [self.header.rstrip("\n") + "\n"] if self.header.strip() else []
        for case in self.cases:
            expected = case.expected + "\n" if case.expected else ""
            parts.append(f"[case {case.name}]\n{case.source}\n{_OUT}\n{expected}")
        return "\n".join(parts)


def parse_data_file(text: str, file_name: str = "<data>") -> DataFile:
    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if _CASE.match(line)]
    header = "\n".join(lines[: starts[0]] if starts else lines)
    cases: list[Case] = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        body = lines[start + 1:end]
        if _OUT not in body:
            raise ValueError(f"{file_name}:{start + 1}: case without an `{_OUT}` section")
        split = body.index(_OUT)
        name = _CASE.match(lines[start]).group(1)
        if any(c.name == name for c in cases):
            raise ValueError(f"{file_name}:{start + 1}: two cases named `{name}`")
        cases.append(Case(name, "\n".join(body[:split]).rstrip("\n"), "\n".join(body[split + 1:]).strip("\n")))
    return DataFile(header, cases)


def format_diagnostic(d: Diagnostic) -> str:
    label = f" [{d.label}]" if d.label else ""
    return f"{d.span.line}:{d.span.col}: {d.severity}[{d.code}]: {d.message}{label}"


def lower_case(source: str) -> tuple[str, list[str]]:
    """The case's output text, and the validator's complaints about the IR it lowered to."""
    crate, sink = lower_text(source + "\n")
    lines = [format_diagnostic(d) for d in sink.items]
    if not sink.has_errors:
        lines += format_crate(crate).rstrip("\n").splitlines()
    problems = validate_crate(crate)
    return "\n".join(lines).strip("\n"), problems


def _collect() -> list:
    params = []
    for path in FILES:
        for case in parse_data_file(path.read_text(encoding="utf-8"), path.name).cases:
            params.append(pytest.param(path, case, id=f"{path.stem}::{case.name}"))
    return params


def test_data_files_exist() -> None:
    assert FILES, f"no ir-*.test files under {DATA}"


@pytest.mark.parametrize("path, case", _collect())
def test_golden(path: Path, case: Case, request: pytest.FixtureRequest) -> None:
    actual, problems = lower_case(case.source)
    assert not problems, "the lowered IR is internally inconsistent:\n" + "\n".join(problems)
    if actual != case.expected and request.config.getoption("--update-data"):
        data = parse_data_file(path.read_text(encoding="utf-8"), path.name)
        next(c for c in data.cases if c.name == case.name).expected = actual
        path.write_text(data.render(), encoding="utf-8")
        return
    assert actual == case.expected, f"{path.name} [case {case.name}]: output differs (rerun with --update-data)"


# What rustc makes of a case's source, by the codes of the errors the case expects: the constructs
# rs2gpu rejects on its own are valid Rust; the type, name and mutability errors are rustc's errors too.
RUST_ACCEPTS = {"RG0002", "RG0009", "RG0013", "RG0014"}
RUST_REJECTS = {"RG0001", "RG0004", "RG0005", "RG0006", "RG0008", "RG0011", "RG0012", "RG0015"}


@pytest.mark.parametrize("path, case", _collect())
def test_golden_source_agrees_with_rustc(path: Path, case: Case, rustc) -> None:
    actual, _ = lower_case(case.source)  # equal to case.expected, unless test_golden fails (or updates) it
    codes = set(re.findall(r"^\d+:\d+: error\[(RG\d{4})\]", actual, re.MULTILINE))
    if codes <= RUST_ACCEPTS:
        rustc.assert_accepts(case.source)
    elif codes <= RUST_REJECTS:
        assert rustc.check(case.source).returncode != 0, f"[case {case.name}] is valid Rust"
    else:
        pytest.fail(f"[case {case.name}] expects {sorted(codes)}: either a mix of errors rustc accepts and rejects, "
                    "or codes whose rustc verdict depends on the case; split it or test it in a unit test")


def test_data_file_parser_reads_cases_and_renders_them_back() -> None:
    text = "comment\n\n[case one]\nfn a() {}\n[out]\nfn a() {}\n\n[case two]\nfn b() {}\n[out]\n"
    data = parse_data_file(text)
    assert data.header == "comment\n"
    assert [(c.name, c.source, c.expected) for c in data.cases] == [
        ("one", "fn a() {}", "fn a() {}"), ("two", "fn b() {}", "")]
    assert data.render() == text
