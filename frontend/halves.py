"""The half-precision types, `f16` and `bf16`: which paths name them, and what a kernel may do with them.

They are no Rust primitives but types of a crate: of rs2gpu's support crate (`use rs2gpu::{kernel, f16};`)
or of the `half` crate, whose types have the same layout and operations, so the frontend treats both as
the same types (`rs2gpu::f16` is `half::f16`). A name is a half type where a `use` of either crate brings
it (`use half::f16 as h;` too, and a glob of the crate), or where a path spells the crate
(`half::bf16::from_f32`). A struct of the kernel's own crate of that name stays the struct.
"""
from __future__ import annotations

from rs2gpu.ir.types import HALF_NAMES, PrimType

HALF_CRATES = frozenset({"rs2gpu", "half"})
# `f32::from(x)` and `f64::from(x)`: the widenings, as the methods that do the same.
WIDENINGS = {"f32": "to_f32", "f64": "to_f64"}


def half_named(crate, parts: list[str], file, node) -> PrimType | None:
    """The half type the path `parts` names where `node` is, or None."""
    parts = [p for p in parts if p]
    if len(parts) == 2 and parts[0] in HALF_CRATES and parts[1] in HALF_NAMES:
        return PrimType(parts[1])
    if len(parts) != 1:
        return None
    name = parts[0]
    item = crate.items.get(name)
    if item is not None and item.kind == "struct":
        return None
    path = crate.uses.path(name, file, node)
    if path is not None:
        return half_named(crate, list(path), file, node) if len(path) == 2 else None
    if name in HALF_NAMES and any(tuple(g) in {(c,) for c in HALF_CRATES} for g in crate.uses.globs(file, node)):
        return PrimType(name)
    return None


def half_prefix(crate, parts: list[str], file, node) -> tuple[PrimType, list[str]] | None:
    """The half type the path `parts` starts with (`half::f16::MAX`, `f16::from_f32`), and the rest."""
    for length in (2, 1):
        if len(parts) > length:
            ty = half_named(crate, parts[:length], file, node)
            if ty is not None:
                return ty, parts[length:]
    return None
