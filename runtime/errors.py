"""Errors raised by the GPU compile wrappers.

`GpuCompileError` keeps everything needed to understand and reproduce a failed compile: the compiler log, the
generated source, a shell command that reruns the compile (nvcc, hipcc or clang), and the errors the log places in
the Rust sources (the generated C++ carries `#line N "src/lib.rs"` directives, so the compilers report Rust
files and lines).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import NamedTuple

# NVRTC: `src/lib.rs(5): error: identifier "x" is undefined`
_NVRTC_DIAG = re.compile(
    r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\): (?P<sev>catastrophic error|error)\s*:?\s*(?P<msg>.*)$"
)
# clang (hiprtc and hip-clang): `src/lib.rs:5:3: error: use of undeclared identifier 'x'`
_CLANG_DIAG = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? (?P<sev>fatal error|error): (?P<msg>.*)$")

# Errors inside C/C++ files (vendor headers, the generated file under another name) are not Rust locations.
_CXX_SUFFIXES = frozenset({".h", ".hh", ".hpp", ".hxx", ".cuh", ".inc", ".c", ".cc", ".cpp", ".cxx", ".cu", ".hip"})

_SHOWN_LOCATIONS = 5


class Location(NamedTuple):
    file: str
    line: int
    message: str


def parse_locations(log: str, generated_name: str) -> list[Location]:
    """Return the errors of an NVRTC or clang log that point outside the generated C++ file."""
    generated = {generated_name, PurePosixPath(generated_name).name}
    found: list[Location] = []
    for raw in log.splitlines():
        match = _NVRTC_DIAG.match(raw) or _CLANG_DIAG.match(raw)
        if match is None:
            continue
        file = match["file"].strip()
        if file in generated or file.startswith("<") or PurePosixPath(file).suffix in _CXX_SUFFIXES:
            continue
        location = Location(file, int(match["line"]), match["msg"].strip())
        if location not in found:
            found.append(location)
    return found


class GpuCompileError(Exception):
    """NVRTC, hiprtc or clang rejected a generated source (or crashed on it)."""

    def __init__(
        self,
        summary: str,
        *,
        log: str,
        source: str,
        source_name: str,
        command: str,
        locations: list[Location] | None = None,
    ) -> None:
        super().__init__(summary)
        self.summary = summary
        self.log = log
        self.source = source
        self.source_name = source_name
        self.command = command
        self.locations = parse_locations(log, source_name) if locations is None else locations

    def __reduce__(self) -> tuple[object, ...]:
        # The default pickling passes only args to __init__, which also needs the keyword fields; a compile
        # error must survive the trip back from a worker process.
        fields = {"log": self.log, "source": self.source, "source_name": self.source_name, "command": self.command}
        return (_rebuild_compile_error, (type(self), self.summary, fields, self.locations))

    def write_source(self, directory: str | Path) -> Path:
        """Write the generated source where `command` expects it (relative to `directory`) and return its path."""
        relative = PurePosixPath(self.source_name)
        if relative.is_absolute() or ".." in relative.parts:
            relative = PurePosixPath(relative.name)
        path = Path(directory) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.source)
        return path

    def __str__(self) -> str:
        lines = [self.summary]
        # The Rust locations come first: they are what the user wrote; the C++ log is secondary.
        for loc in self.locations[:_SHOWN_LOCATIONS]:
            lines.append(f"  {loc.file}:{loc.line}: error: {loc.message}")
        if len(self.locations) > _SHOWN_LOCATIONS:
            lines.append(f"  ... and {len(self.locations) - _SHOWN_LOCATIONS} more")
        lines.append("compiler log:")
        lines.extend("  " + line for line in (self.log.strip() or "(empty)").splitlines())
        lines.append(f"reproduce (with the source saved as {self.source_name}):")
        lines.append("  " + self.command)
        return "\n".join(lines)


def _rebuild_compile_error(
    cls: type[GpuCompileError], summary: str, fields: dict[str, str], locations: list[Location]
) -> GpuCompileError:
    return cls(summary, locations=locations, **fields)


class ToolchainUnavailable(Exception):
    """A compiler library or program is missing; the message says what to install."""


class AliasError(ValueError):
    """A `&mut` argument overlaps another argument's memory; raised before any device work."""


class LaunchError(RuntimeError):
    """The driver reported an error while launching or running a kernel (never swallowed)."""


class KernelPanic(RuntimeError):
    """The kernel panicked the way the Rust code would (out-of-bounds index, division by zero, ...).

    `message` is Rust's own panic message and `location` the .rs file:line:col it points at.
    """

    def __init__(self, message: str, location: str, kernel: str) -> None:
        super().__init__(f"kernel `{kernel}` panicked at {location}:\n{message}")
        self.message = message
        self.location = location
        self.kernel = kernel


class RaceError(ValueError):
    """The arguments would make two iterations of a parallel loop write one element: a stride the
    translator could only check at launch (raised before any kernel code runs), or an index list written
    through that holds a value twice (raised after the loop, with nothing copied back to the host); see
    docs/call-contract.md."""
