"""Syntax errors: tree-sitter recovers from them silently, so they are found and reported here."""
from __future__ import annotations

from rs2gpu.frontend.delimiters import report_delimiter_errors
from rs2gpu.frontend.source import SourceFile, text_of
from rs2gpu.ir.diagnostics import DiagnosticSink

_MAX_PER_FILE = 5


def report_syntax_errors(file: SourceFile, sink: DiagnosticSink) -> None:
    if file.not_utf8 is not None:
        sink.error("RG0001", "the file is not valid UTF-8", file.not_utf8, "this byte is not UTF-8",
                   help="rustc reads source files as UTF-8; save the file in that encoding")
        return
    if not file.tree.root_node.has_error or report_delimiter_errors(file, sink):
        return
    found = 0
    stack = [file.tree.root_node]
    while stack and found < _MAX_PER_FILE:
        node = stack.pop()
        if node.is_missing:
            sink.error("RG0001", f"expected `{node.type}`", file.span(node), f"expected `{node.type}` here",
                       help="the file must be valid Rust; `cargo check` shows the same error")
            found += 1
        elif node.type == "ERROR":
            snippet = text_of(node).strip().split("\n")[0][:40]
            sink.error("RG0001", f"syntax error near `{snippet}`" if snippet else "syntax error",
                       file.span(node), "this does not parse as Rust",
                       help="the file must be valid Rust; `cargo check` shows the same error")
            found += 1
        elif node.has_error:
            stack.extend(reversed(node.children))
