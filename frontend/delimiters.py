"""Delimiters that do not pair up, reported as rustc reports them.

tree-sitter recovers from a missing `}` by reinterpreting everything before it, so its error nodes point
far from the mistake (often at line 1). rustc reads delimiters as token trees before it parses, and
points at the delimiter left open, the closing one that does not match, or the one with nothing to close.
This module does the same on the text, skipping comments, strings and character literals.
"""
from __future__ import annotations

from rs2gpu.frontend.source import SourceFile
from rs2gpu.ir.diagnostics import DiagnosticSink, Note
from rs2gpu.ir.nodes import Span

_PAIRS = {"(": ")", "[": "]", "{": "}"}
_CLOSING = set(_PAIRS.values())


def report_delimiter_errors(file: SourceFile, sink: DiagnosticSink) -> bool:
    """Report the first delimiter that does not pair up; whether there was one. Text the scan cannot
    follow (an unterminated string or comment) stops it: the parser's errors report that."""
    text = file.text
    where = _Positions(file.name, text)
    open_delimiters: list[int] = []
    for offset in _delimiters(text):
        char = text[offset]
        if char in _PAIRS:
            open_delimiters.append(offset)
        elif not open_delimiters:
            sink.error("RG0001", f"unexpected closing delimiter: `{char}`", where.span(offset),
                       "unexpected closing delimiter", help=_HELP)
            return True
        elif _PAIRS[text[open_delimiters[-1]]] != char:
            sink.error("RG0001", f"mismatched closing delimiter: `{char}`", where.span(open_delimiters[-1]),
                       "unclosed delimiter", notes=(Note("mismatched closing delimiter", where.span(offset)),),
                       help=_HELP)
            return True
        else:
            open_delimiters.pop()
    if not open_delimiters:
        return False
    sink.error("RG0001", "this file contains an unclosed delimiter", where.end_of_file(),
               notes=tuple(Note("unclosed delimiter", where.span(offset)) for offset in open_delimiters),
               help=_HELP)
    return True


_HELP = "the file must be valid Rust; `cargo check` shows the same error"


def _delimiters(text: str):
    """The offsets of the delimiters of `text` outside comments, strings and character literals."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in _PAIRS or char in _CLOSING:
            yield i
            i += 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            i = _block_comment_end(text, i)
        elif char == '"':
            i = _string_end(text, i + 1)
        elif char == "'":
            i = _quote_end(text, i)
        elif char.isalnum() or char == "_":
            start = i
            while i < n and (text[i].isalnum() or text[i] == "_"):
                i += 1
            if text[start:i] in ("r", "br", "cr"):  # a raw string: `r#"..."#`, no escapes
                i = _raw_string_end(text, i)
        else:
            i += 1


def _raw_string_end(text: str, i: int) -> int:
    """Past the raw string whose `#`s or opening quote start at `i`; `i` itself where none starts there
    (`r#type` is a raw identifier)."""
    quote = i
    while quote < len(text) and text[quote] == "#":
        quote += 1
    if quote >= len(text) or text[quote] != '"':
        return i
    closing = '"' + "#" * (quote - i)
    end = text.find(closing, quote + 1)
    return len(text) if end < 0 else end + len(closing)


def _block_comment_end(text: str, i: int) -> int:
    depth = 0
    while i < len(text):
        if text.startswith("/*", i):
            depth, i = depth + 1, i + 2
        elif text.startswith("*/", i):
            depth, i = depth - 1, i + 2
            if depth == 0:
                return i
        else:
            i += 1
    return len(text)


def _string_end(text: str, i: int) -> int:
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text[i] == '"':
            return i + 1
        else:
            i += 1
    return len(text)


def _quote_end(text: str, i: int) -> int:
    """Past a character literal `'x'` or `'\\n'` at `i`, or past the `'` of a lifetime or label."""
    if text.startswith("\\", i + 1):
        end = text.find("'", i + 3)
        return len(text) if end < 0 else end + 1
    if i + 2 < len(text) and text[i + 2] == "'":
        return i + 3
    return i + 1


class _Positions:
    """Spans of offsets in a file's text, with lines and columns counted as rustc counts them."""

    def __init__(self, name: str, text: str) -> None:
        self.name, self.text = name, text

    def span(self, offset: int) -> Span:
        line = self.text.count("\n", 0, offset) + 1
        col = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return Span(self.name, line, col, line, col + 1)

    def end_of_file(self) -> Span:
        """Where rustc places the end of the file: after the last character, on the last line even when
        that character is its newline."""
        end = len(self.text)
        last = end - 1 if self.text.endswith("\n") else end
        line = self.text.count("\n", 0, last) + 1
        col = end - (self.text.rfind("\n", 0, last) + 1) + 1
        return Span(self.name, line, col, line, col + 1)
