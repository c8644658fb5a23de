"""C++ names for Rust identifiers.

Rust names are kept where C++ allows them. A name that would clash with a C++ keyword, a CUDA/HIP
built-in, a math function or a type name of the prelude gets a trailing underscore; a name that
already ends in underscores after such a base gets one more, so the mapping stays one-to-one
(`max` → `max_`, `max_` → `max__`, `maxi` stays). Everything the emitter invents starts with
`rs2gpu_` (the prelude's macros with `RS2GPU_`), and user names with that prefix, in any case, are
mangled too.
"""
from __future__ import annotations

from functools import lru_cache

from rs2gpu.emit.dialect import CPP_KEYWORDS, GPU_BUILTINS
from rs2gpu.ir.types import PRIMITIVES

PRELUDE_TYPES = frozenset(PRIMITIVES)  # the prelude declares every primitive's Rust name as a typedef

RESERVED = CPP_KEYWORDS | GPU_BUILTINS | PRELUDE_TYPES


@lru_cache(maxsize=1 << 14)  # a pure function of the name, asked again at every use of every binding
def cxx_name(rust_name: str) -> str:
    base = rust_name.rstrip("_")
    if base in RESERVED or rust_name.lower().startswith("rs2gpu_") or rust_name.startswith("__"):
        return rust_name + "_"
    return rust_name


class LocalNames:
    """Unique C++ names for the bindings of one function, so shadowed Rust names become distinct
    C++ variables: the first `x` keeps its name, later ones become `x_1`, `x_2`, ... (skipping names
    already given out). A slice parameter's length is a name of its own (`a_len`), given out here too,
    so that a Rust variable called `a_len` can neither collide with it nor hide it."""

    def __init__(self, reserved=frozenset()) -> None:
        self._names: dict[object, str] = {}
        # the C++ names of the crate's helpers, consts and structs, kept apart from the names given out here
        # so that a function's names cost in proportion to the function, not to the crate
        self._reserved = reserved
        self._used: set[str] = set()
        self.lengths_read: set = set()

    def name(self, binding) -> str:
        return self._unique(binding.node_id, cxx_name(binding.name))

    def length_name(self, binding) -> str:
        """The name of the length that travels with the slice `binding`, for code that reads it: the
        bindings whose lengths were asked for are `lengths_read`, and a launch takes only the lengths its
        code reads."""
        self.lengths_read.add(binding)
        return self.length_parameter(binding)

    def length_parameter(self, binding) -> str:
        """The same name, for the declaration of the parameter (not a read)."""
        return self._unique(("len", binding.node_id), self.name(binding) + "_len")

    def _unique(self, key, base: str) -> str:
        if key not in self._names:
            candidate, n = base, 0
            while candidate in self._used or candidate in self._reserved:
                n += 1
                candidate = f"{base}_{n}"
            self._used.add(candidate)
            self._names[key] = candidate
        return self._names[key]

    def fresh(self, hint: str) -> str:
        """A name for a temporary the emitter needs; the `rs2gpu_` prefix keeps it apart from Rust names."""
        candidate, n = f"rs2gpu_{hint}", 0
        while candidate in self._used or candidate in self._reserved:
            n += 1
            candidate = f"rs2gpu_{hint}{n}"
        self._used.add(candidate)
        return candidate
