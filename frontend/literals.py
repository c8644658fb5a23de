"""Rust literal syntax: suffixes, underscores, radix prefixes, exponents."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from rs2gpu.ir.types import PRIM_NAMES

_SUFFIXES = sorted((n for n in PRIM_NAMES if n != "bool"), key=len, reverse=True)


@dataclass(frozen=True)
class ParsedLiteral:
    value: int | float
    text: str  # canonical digits for the emitter: decimal for ints, the decimal float as written
    suffix: str | None
    is_float: bool


@lru_cache(maxsize=4096)  # literals repeat a lot in a crate; the result is immutable
def parse_number(raw: str) -> ParsedLiteral:
    """Parse an integer or float literal as rustc does. Raises ValueError on malformed input."""
    body = raw.replace("_", "")
    suffix = None
    lowered = body.lower()
    is_hex = lowered.startswith("0x")
    for s in _SUFFIXES:
        # `0x1f32` is the hex integer 0x1f32, not 0x1 with an f32 suffix, and hex has no floats.
        if body.endswith(s) and not (is_hex and s.startswith("f")) and len(body) > len(s):
            suffix, body = s, body[: -len(s)]
            break
    lowered = body.lower()
    if lowered.startswith(("0x", "0o", "0b")):
        value = int(body[2:], {"x": 16, "o": 8, "b": 2}[lowered[1]])
        if suffix in ("f32", "f64"):
            raise ValueError("binary, octal and hex literals cannot have a float suffix")
        return ParsedLiteral(value, str(value), suffix, False)
    is_float = suffix in ("f32", "f64") or any(ch in lowered for ch in ".e")
    if is_float:
        text = body[:-1] if body.endswith(".") else body
        value = float(text)
        if "." not in text and "e" not in text.lower():
            text += ".0"
        return ParsedLiteral(value, text, suffix, True)
    return ParsedLiteral(int(body, 10), str(int(body, 10)), suffix, False)
