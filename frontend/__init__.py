"""Rust source → typed IR.

`lower_path` reads a .rs file or a crate folder; `lower_text` lowers source held in memory. Both
return the IR crate and the diagnostics found; the crate holds only the items that lowered cleanly.
"""
from __future__ import annotations

from pathlib import Path

from rs2gpu.frontend.lower_crate import lower_crate
from rs2gpu.frontend.source import parse_text, read_sources
from rs2gpu.frontend.syntax import report_syntax_errors
from rs2gpu.ir.diagnostics import DiagnosticSink
from rs2gpu.ir.nodes import Crate


def lower_path(path: Path, instances: dict[str, list[tuple[str, ...]]] | None = None) -> tuple[Crate, DiagnosticSink]:
    """`instances`: the instantiations to make of generic kernels without `types(...)` (see `lower_crate`)."""
    name, files = read_sources(Path(path))
    return _lower(name, files, instances)


def lower_text(text: str, file_name: str = "src/lib.rs", crate_name: str = "kernels") -> tuple[Crate, DiagnosticSink]:
    return _lower(crate_name, [parse_text(file_name, text)])


def lower_files(name: str, files: list, instances: dict[str, list[tuple[str, ...]]] | None = None
                ) -> tuple[Crate, DiagnosticSink]:
    """Lower the crate `name` of parsed `files` (`source.parse_file`), as `lower_path` does."""
    return _lower(name, files, instances)


def _lower(name, files, instances=None) -> tuple[Crate, DiagnosticSink]:
    syntax = DiagnosticSink()
    for f in files:
        report_syntax_errors(f, syntax)
    if syntax.has_errors:
        return Crate(name, "", (), (), (), {f.name: f.text for f in files}), syntax
    return lower_crate(name, files, instances)


__all__ = ["lower_path", "lower_text", "lower_files"]
