"""The text of manifest.json, written straight from the ABI's objects.

`json_text(value)` is `json.dumps(to_json(value), indent=2)` (`ir.abi.to_json`), character for character,
without building the JSON data first: with `indent`, the json module encodes in pure Python, one generator
per nested value, and the ABI of a large crate holds hundreds of thousands of values. Here each dataclass's
field names are looked up once per class, and strings are quoted by the json module's own C function.
"""
from __future__ import annotations

import dataclasses
import enum
from json.encoder import encode_basestring_ascii
from typing import Any

_INDENT = "  "
# dataclass type → its fields as (attribute, quoted key with its separator); other types → None
_FIELDS: dict[type, tuple[tuple[str, str], ...] | None] = {}


def json_text(value: Any, pad: str = "") -> str:
    """`value` (an ABI object, or a tuple, list or dict of them, or a JSON scalar) as `json.dumps` writes
    `to_json(value)` with `indent=2`, its lines after the first indented by `pad` more."""
    cls = type(value)
    if cls is str:
        return encode_basestring_ascii(value)
    fields = _FIELDS[cls] if cls in _FIELDS else _fields_of(cls)
    if fields is not None:
        if not fields:
            return "{}"
        inner = pad + _INDENT
        return ("{\n" + inner + (",\n" + inner).join(key + json_text(getattr(value, name), inner)
                                                     for name, key in fields) + "\n" + pad + "}")
    if isinstance(value, enum.Enum):
        return json_text(value.value, pad)
    if isinstance(value, (tuple, list)):
        if not value:
            return "[]"
        inner = pad + _INDENT
        return "[\n" + inner + (",\n" + inner).join(json_text(v, inner) for v in value) + "\n" + pad + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        inner = pad + _INDENT
        return ("{\n" + inner + (",\n" + inner).join(_key(k) + ": " + json_text(v, inner) for k, v in value.items())
                + "\n" + pad + "}")
    return _scalar(value)


def _fields_of(cls: type) -> tuple[tuple[str, str], ...] | None:
    fields = None
    if dataclasses.is_dataclass(cls):
        fields = tuple((f.name, encode_basestring_ascii(f.name) + ": ") for f in dataclasses.fields(cls))
    _FIELDS[cls] = fields
    return fields


def _scalar(value: Any) -> str:
    """A JSON scalar as the json module writes it (`to_json` leaves anything else as it is, which json
    would reject: so does this)."""
    if isinstance(value, str):
        return encode_basestring_ascii(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """A dict key as the json module writes it: a string, or a scalar written as one."""
    if isinstance(key, str):
        return encode_basestring_ascii(key)
    if isinstance(key, (int, float)) or key is None:
        return encode_basestring_ascii(_scalar(key))
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")
