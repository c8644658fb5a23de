"""Terminal colours for generated C++ (`rs2gpu inspect`), with no dependency beyond the standard library."""
from __future__ import annotations

import re

from rs2gpu.ir.types import PRIMITIVES

_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*)
  | (?P<directive>^\#[^\n]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<number>\b\d[\w.]*\b)
  | (?P<word>\b[A-Za-z_]\w*\b)
""", re.VERBOSE | re.MULTILINE)

_KEYWORDS = {"if", "else", "for", "while", "return", "break", "continue", "const", "static", "struct",
             "template", "typename", "typedef", "extern", "constexpr", "static_assert", "true", "false",
             "union", "do", "inline", "unsigned"}
_TYPES = set(PRIMITIVES) | {"void", "int", "char", "float", "double"}  # the prelude's typedefs, and C's
_QUALIFIERS = {"__global__", "__device__", "__shared__", "RS2GPU_SHARED", "__restrict__", "__launch_bounds__",
               "__forceinline__"}

_STYLE = {"comment": "2;37", "directive": "35", "string": "32", "number": "36", "keyword": "1;34", "type": "33",
          "qualifier": "1;35"}


def highlight(source: str) -> str:
    def paint(match: re.Match) -> str:
        kind = match.lastgroup
        text = match.group(0)
        if kind == "word":
            kind = "keyword" if text in _KEYWORDS else "type" if text in _TYPES else \
                "qualifier" if text in _QUALIFIERS else None
            if kind is None:
                return text
        return f"\x1b[{_STYLE[kind]}m{text}\x1b[0m"

    return _TOKEN.sub(paint, source)
