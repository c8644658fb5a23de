"""rustc as the reference for the frontend's tests: what it accepts, rejects and computes is the truth.

Kernel sources carry `#[kernel]` attributes from the rs2gpu support crate; `as_plain_rust` removes them
(they are pass-through attributes), so a snippet compiles on its own, offline, with no dependencies.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

_KERNEL_LINE = re.compile(r"^\s*(#\[(rs2gpu::)?kernel(\(.*\))?\]|use rs2gpu::kernel;)\s*$")


def as_plain_rust(source: str) -> str:
    """`source` without its `#[kernel]` attributes and `use rs2gpu::kernel;` lines."""
    return "\n".join("" if _KERNEL_LINE.match(line) else line for line in source.splitlines()) + "\n"


class Rustc:
    """Compiles snippets in a scratch folder with the installed rustc (edition 2021)."""

    def __init__(self, exe: str, folder: Path) -> None:
        self.exe = exe
        self.folder = folder
        self.count = 0

    def _write(self, source: str) -> Path:
        self.count += 1
        path = self.folder / f"snippet{self.count}.rs"
        path.write_text(as_plain_rust(source), encoding="utf-8")
        return path

    def check(self, source: str) -> subprocess.CompletedProcess[str]:
        """Type-check `source` as a library crate (`--emit=metadata`): returncode 0 when it is valid Rust."""
        path = self._write(source)
        return subprocess.run(
            [self.exe, "--edition", "2021", "--crate-type", "lib", "--emit=metadata", "-A", "warnings",
             "--crate-name", path.stem, "-o", str(path.with_suffix(".rmeta")), str(path)],
            capture_output=True, text=True, check=False)

    def assert_accepts(self, source: str) -> None:
        result = self.check(source)
        assert result.returncode == 0, "rustc rejects the snippet:\n" + result.stderr

    def assert_rejects(self, source: str, error_code: str) -> None:
        """rustc fails on `source` with `error_code` (`E0308`, or `error` for a lint denied by default)."""
        result = self.check(source)
        assert result.returncode != 0, "rustc accepts the snippet"
        marker = f"error[{error_code}]" if error_code.startswith("E") else "error:"
        assert marker in result.stderr, result.stderr

    def run(self, source: str) -> str:
        """Build `source` as a program (with `fn main`) and return what it prints."""
        path = self._write(source)
        exe = path.with_suffix("")
        build = subprocess.run([self.exe, "--edition", "2021", "-A", "warnings", "-o", str(exe), str(path)],
                               capture_output=True, text=True, check=False)
        assert build.returncode == 0, build.stderr
        return subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout


_PROBE = re.compile(r"^(\s*)// probe: (.*)$")


def probed_names(source: str) -> list[str]:
    """The names listed on the `// probe: x, y` line of `source`."""
    for line in source.splitlines():
        match = _PROBE.match(line)
        if match:
            return [n.strip() for n in match.group(2).split(",")]
    raise ValueError("the snippet has no `// probe: ...` line")


def _rustc_types(rustc: Rustc, source: str, call: str) -> dict[str, str]:
    """The types rustc gives the variables named on the `// probe:` line, where that line stands.

    The line becomes `std::any::type_name_of_val(&x)` prints, which constrain nothing, so the types
    are exactly what rustc inferred; `call` (e.g. `k(&mut [0.0; 4])`) runs the function to print them.
    """
    lines = []
    for line in source.splitlines():
        match = _PROBE.match(line)
        if match:
            indent, names = match.group(1), probed_names(source)
            line = "\n".join(f'{indent}println!("{n}={{}}", std::any::type_name_of_val(&{n}));' for n in names)
        lines.append(line)
    output = rustc.run("\n".join(lines) + f"\n\nfn main() {{\n    {call};\n}}\n")
    types: dict[str, str] = {}
    for line in output.splitlines():
        name, _, ty = line.partition("=")
        types.setdefault(name, ty)
    return types


@pytest.fixture(scope="session")
def rustc(tmp_path_factory: pytest.TempPathFactory) -> Rustc:
    exe = shutil.which("rustc")
    if exe is None:
        pytest.skip("rustc is not installed")
    return Rustc(exe, tmp_path_factory.mktemp("rustc"))


@pytest.fixture(scope="session")
def rustc_types(rustc: Rustc):
    """`rustc_types(source, call)`: the types rustc infers for the names on the `// probe:` line."""
    return lambda source, call: _rustc_types(rustc, source, call)
