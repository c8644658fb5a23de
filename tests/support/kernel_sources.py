"""Rust sources of example crates with some of their `#[kernel]` attributes taken off, so that a test
translates one kernel (or a chosen few) of a crate whose other kernels it must not see."""
from __future__ import annotations

import re

# `#[kernel]` or `#[kernel(options)]`, then `pub fn NAME`; group 1 is the function without its attribute.
KERNEL = re.compile(r"#\[kernel(?:\([^)\]]*\))?\]\s*(pub\s+fn\s+(\w+))")


def kernel_names(text: str) -> list[str]:
    """The `#[kernel]` functions of a Rust source, in order."""
    return [m.group(2) for m in KERNEL.finditer(text)]


def keep_kernels(text: str, keep) -> str:
    """`text` in which only the functions named in `keep` are still `#[kernel]`s."""
    return KERNEL.sub(lambda m: m.group(0) if m.group(2) in keep else m.group(1), text)
