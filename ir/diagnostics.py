"""Diagnostics in rustc's shape, shared by the frontend and the checker.

They are collected, not raised: a stage reports every problem it finds, and the pipeline stops after
a stage that reported an error. Rendering needs the source text, which the caller passes in.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rs2gpu.ir.nodes import Span


@dataclass(frozen=True, slots=True)
class Note:
    """A secondary message, optionally pointing at another span (`note: ...` / `-->`)."""

    message: str
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: str  # "error" | "warning"
    code: str
    message: str
    span: Span
    label: str = ""
    notes: tuple[Note, ...] = ()
    help: str = ""

    def render(self, sources: dict[str, str], color: bool = False) -> str:
        return render(self, sources, color)


class DiagnosticSink:
    """Collects diagnostics for one run of a stage."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []

    def error(self, code: str, message: str, span: Span, label: str = "", help: str = "",
              notes: tuple[Note, ...] = ()) -> None:
        self.items.append(Diagnostic("error", code, message, span, label, notes, help))

    def warning(self, code: str, message: str, span: Span, label: str = "", help: str = "",
                notes: tuple[Note, ...] = ()) -> None:
        self.items.append(Diagnostic("warning", code, message, span, label, notes, help))

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.items)


@dataclass
class CompileFailed(Exception):
    """Raised by the pipeline when a stage reported errors; carries all of them."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return "\n".join(d.render(self.sources) for d in self.diagnostics)


_COLORS = {"error": "\x1b[1;31m", "warning": "\x1b[1;33m", "blue": "\x1b[1;34m", "bold": "\x1b[1m",
           "reset": "\x1b[0m"}


def render(d: Diagnostic, sources: dict[str, str], color: bool = False) -> str:
    """rustc's layout: header, arrow to file:line:col, the source line with carets, notes, help."""
    c = _COLORS if color else {k: "" for k in _COLORS}
    lines = [f"{c[d.severity]}{d.severity}[{d.code}]{c['reset']}{c['bold']}: {d.message}{c['reset']}"]
    lines += _excerpt(d.span, d.label, sources, c, primary=True)
    for note in d.notes:
        if note.span is not None:
            lines += _excerpt(note.span, note.message, sources, c, primary=False)
        else:
            lines.append(f"{c['blue']}  = {c['reset']}{c['bold']}note{c['reset']}: {note.message}")
    if d.help:
        lines.append(f"{c['blue']}  = {c['reset']}{c['bold']}help{c['reset']}: {d.help}")
    return "\n".join(lines) + "\n"


def _excerpt(span: Span, label: str, sources: dict[str, str], c: dict[str, str], primary: bool) -> list[str]:
    gutter = " " * len(str(span.line))
    arrow = "-->" if primary else ":::"
    out = [f"{gutter}{c['blue']}{arrow}{c['reset']} {span.file}:{span.line}:{span.col}"]
    text = sources.get(span.file)
    # Lines end at "\n" only, as in tree-sitter's rows and rustc's line numbers (`splitlines` would also
    # break at "\r", form feeds and U+2028, and show the wrong line after one).
    source_lines = [line.removesuffix("\r") for line in text.split("\n")] if text is not None else []
    if not 0 < span.line <= len(source_lines):
        return out
    line = source_lines[span.line - 1].expandtabs(4)
    end_col = span.end_col if span.end_line == span.line else len(line) + 1
    width = max(1, end_col - span.col)
    mark = "^" if primary else "-"
    color = c["error"] if primary else c["blue"]
    out.append(f"{gutter} {c['blue']}|{c['reset']}")
    out.append(f"{c['blue']}{span.line} |{c['reset']} {line}")
    out.append(f"{gutter} {c['blue']}|{c['reset']} {' ' * (span.col - 1)}{color}{mark * width}"
               f"{' ' + label if label else ''}{c['reset']}")
    return out
