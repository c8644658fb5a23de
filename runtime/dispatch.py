"""Calling a generic kernel: the instantiation is chosen from the arguments' types, as rustc would infer
the type parameters at a call site.

    #[kernel(types(f32, f64))]
    pub fn axpy<T: ...>(y: &mut [T], x: &[T], a: T)

    k.axpy(y32, x32, 2.0)       # arrays of float32: axpy::<f32>
    k.axpy["f64"](y, x, 2.0)    # one instantiation, by its type arguments

An array argument matches an instantiation when its dtype is the parameter's element type, a numpy
scalar when its dtype is the parameter's type, a Python bool, int or float when the parameter is a bool,
an integer or a float type (an int also fits a float parameter, if nothing fits exactly). Exactly one
instantiation must match; otherwise the TypeError lists them.

A generic kernel without `types(...)` has no instantiation until a call names one (`LazyGeneric`): its
arguments' types say what each type parameter is, as at a Rust call site, and the instantiation is made
then (translated, compiled through the disk cache) and kept for the calls that name it again.
"""
from __future__ import annotations

from typing import Callable

from rs2gpu.ir.abi import CrateABI, KernelABI, Param, ParamKind
from rs2gpu.ir.types import PRIMITIVES
from rs2gpu.runtime.arguments import numpy_dtype, primitive_dtype


def argument_dtype(value):
    """The numpy dtype of an array or numpy scalar argument (None for Python scalars and the unknown)."""
    import numpy as np

    dtype = getattr(value, "dtype", None)
    if dtype is None:
        interface = getattr(value, "__array_interface__", None) or getattr(value, "__cuda_array_interface__", None)
        return np.dtype(interface["typestr"]) if interface is not None else None
    if isinstance(dtype, np.dtype):
        return dtype
    try:
        if str(dtype) == "torch.bfloat16":
            return primitive_dtype("bf16")
        return np.dtype(str(dtype).removeprefix("torch."))  # torch names its dtypes as numpy does
    except TypeError:  # one numpy has no type for (torch.bfloat16 without ml_dtypes)
        return None


def _fit(param: Param, value) -> int:
    """How an argument fits a parameter: 2 exactly, 1 by conversion (an int for a float), 0 not at all."""
    import numpy as np

    if param.in_memory:
        dtype = argument_dtype(value)
        try:
            return 2 if dtype is None or dtype == numpy_dtype(param.layout) else 0
        except TypeError:  # bf16 elements without ml_dtypes: no array is one
            return 0
    if param.kind != ParamKind.SCALAR:
        return 2  # a struct by value: its fields are checked when the call binds it
    primitive = PRIMITIVES[param.layout.type]
    if isinstance(value, np.generic):
        try:
            return 2 if value.dtype == primitive_dtype(primitive.name) else 0
        except TypeError:
            return 0
    if isinstance(value, bool):
        return 2 if primitive.kind == "bool" else 0
    if isinstance(value, int):
        return 2 if primitive.is_int else 1 if primitive.kind in ("float", "half") else 0
    if isinstance(value, float):
        return 2 if primitive.kind == "float" else 1 if primitive.kind == "half" else 0
    return 2  # something else: the instantiation's own checks explain what is wrong with it


def _key(value):
    """What the choice depends on, for the cache of choices."""
    dtype = argument_dtype(value) if not isinstance(value, (bool, int, float)) else None
    return type(value), dtype


class GenericKernel:
    """A generic kernel's instantiations on one backend; calling it calls the one the arguments fit."""

    def __init__(self, name: str, instances: dict[tuple[str, ...], object],
                 entries: dict[tuple[str, ...], KernelABI]):
        self.name = name
        self.instances = instances
        self._entries = entries
        self._choices: dict[tuple, object] = {}
        self.last = None  # the instantiation the last call ran

    def __getitem__(self, type_args) -> object:
        key = (type_args,) if isinstance(type_args, str) else tuple(type_args)
        if key not in self.instances:
            raise KeyError(f"`{self.name}` has no instantiation `{self._spelled(key)}`; it has "
                           f"{', '.join(self._spelled(k) for k in self.instances)}")
        return self.instances[key]

    def __call__(self, *args, **kwargs):
        key = (tuple(_key(a) for a in args), tuple((k, _key(v)) for k, v in sorted(kwargs.items())))
        kernel = self._choices.get(key)
        if kernel is None:
            kernel = self._choices[key] = self._choose(args, kwargs)
        self.last = kernel
        return kernel(*args, **kwargs)

    @property
    def last_transfers(self) -> list:
        return self.last.last_transfers if self.last is not None else []

    def _choose(self, args: tuple, kwargs: dict):
        scores = {}
        for type_args, entry in self._entries.items():
            params = entry.params
            values = dict(zip((p.name for p in params), args)) | kwargs
            fits = [_fit(p, values[p.name]) for p in params if p.name in values]
            if all(fits):
                scores[type_args] = min(fits, default=2)
        best = max(scores.values(), default=0)
        chosen = [t for t, score in scores.items() if score == best]
        untyped = any(argument_dtype(a) is None and not isinstance(a, (bool, int, float)) for a in args)
        if len(chosen) == 1 or chosen and untyped:
            return self.instances[chosen[0]]  # with an argument of no dtype, its binding says what is wrong
        given = ", ".join(self._describe(a) for a in args)
        listed = "; ".join(self._signature(t) for t in (chosen or self._entries))
        if not chosen:
            raise TypeError(f"{self.name}() has no instantiation for arguments ({given}); it has: {listed}")
        raise TypeError(f"{self.name}() with arguments ({given}) fits several instantiations: {listed}; pass numpy "
                        f"scalars (np.float32(2.0)) or choose one, e.g. {self.name}[{chosen[0][0]!r}](...)")

    def _spelled(self, type_args: tuple[str, ...]) -> str:
        return f"{self.name}::<{', '.join(type_args)}>"

    def _signature(self, type_args: tuple[str, ...]) -> str:
        params = ", ".join(f"{p.name}: {p.rust_type}" for p in self._entries[type_args].params)
        return f"{self._spelled(type_args)}({params})"

    @staticmethod
    def _describe(value) -> str:
        dtype = argument_dtype(value) if not isinstance(value, (bool, int, float)) else None
        return f"{type(value).__name__} of {dtype}" if dtype is not None else type(value).__name__


# numpy's dtype → the Rust type an array of it holds: the first of the primitive types of that layout (i64
# before isize, u64 before usize)
_RUST_TYPE_OF: dict = {}


def _rust_type(dtype, structs: dict) -> str | None:
    """The Rust type of one element of `dtype`: a primitive type, or a struct of `structs` (name → dtype)."""
    import numpy as np

    if not _RUST_TYPE_OF:
        for name in PRIMITIVES:
            try:
                _RUST_TYPE_OF.setdefault(primitive_dtype(name), name)
            except TypeError:  # bf16 without ml_dtypes: no array has its elements
                pass
    if dtype.fields:
        return next((name for name, fields in structs.items() if fields == dtype), None)
    return _RUST_TYPE_OF.get(dtype)


# a Python scalar's type where nothing else says what its type parameter is, as numba and Triton take them
_PYTHON_SCALARS = ((bool, "bool"), (int, "i64"), (float, "f64"))


class LazyGeneric:
    """A generic kernel without `types(...)` on one backend. A call instantiates it for its arguments'
    types: each type parameter is the element type of the arrays and the type of the numpy scalars passed
    for parameters of that type, or else that of a Python scalar (bool, int → i64, float → f64); it must
    meet the parameter's bounds. `k.scale["f32"]` names an instantiation. `instantiations` lists the
    instantiations made, in order.

    `params` is (parameter name, the type parameter its type or its elements' type is, or None) per kernel
    parameter; `unmet(type_param, type, is_struct)` the bound of a type parameter that a type does not
    meet (None where it meets them all); `instantiate(type_args)` makes an instantiation's kernel;
    `structs` maps the crate's struct names to their numpy dtypes."""

    def __init__(self, name: str, type_params: tuple[str, ...], params: tuple[tuple[str, str | None], ...],
                 unmet: Callable[[str, str, bool], str | None], instantiate: Callable[[tuple[str, ...]], object],
                 structs: dict) -> None:
        self.name = name
        self.type_params = type_params
        self._params = params
        self._unmet = unmet
        self._instantiate = instantiate
        self._structs = structs
        self.instances: dict[tuple[str, ...], object] = {}
        self._choices: dict[tuple, object] = {}
        self.last = None  # the instantiation the last call ran

    @property
    def instantiations(self) -> list[str]:
        return [f"{self.name}::<{', '.join(args)}>" for args in self.instances]

    @property
    def last_transfers(self) -> list:
        return self.last.last_transfers if self.last is not None else []

    def __repr__(self) -> str:
        made = ", ".join(self.instantiations) or "none yet"
        return f"<generic kernel {self.name}<{', '.join(self.type_params)}>, instantiations: {made}>"

    def __getitem__(self, type_args):
        key = (type_args,) if isinstance(type_args, str) else tuple(type_args)
        if len(key) != len(self.type_params):
            raise KeyError(f"`{self.name}` has {len(self.type_params)} type parameter(s) "
                           f"({', '.join(self.type_params)}), got {len(key)}: {', '.join(key)}")
        for param, type_name in zip(self.type_params, key):
            self._check_bounds(param, type_name, "as its type argument")
        return self._instance(key)

    def __call__(self, *args, **kwargs):
        key = (tuple(_key(a) for a in args), tuple((k, _key(v)) for k, v in sorted(kwargs.items())))
        kernel = self._choices.get(key)
        if kernel is None:
            kernel = self._choices[key] = self._instance(self._deduce(args, kwargs))
        self.last = kernel
        return kernel(*args, **kwargs)

    def _instance(self, type_args: tuple[str, ...]):
        kernel = self.instances.get(type_args)
        if kernel is None:
            kernel = self.instances[type_args] = self._instantiate(type_args)
        return kernel

    def _deduce(self, args: tuple, kwargs: dict) -> tuple[str, ...]:
        """The type arguments the arguments name, as rustc infers them at a call site."""
        values = dict(zip((name for name, _ in self._params), args)) | kwargs
        exact: dict[str, tuple[str, str]] = {}  # type parameter → (type, the parameter that says so)
        fallback: dict[str, tuple[str, str]] = {}
        for name, param in self._params:
            if param is None or name not in values:
                continue
            value = values[name]
            dtype = argument_dtype(value) if not isinstance(value, (bool, int, float)) else None
            if dtype is not None:
                found = _rust_type(dtype, self._structs)
                if found is None:
                    raise TypeError(f"{self.name}(): argument `{name}` has elements of dtype {dtype}, which is no "
                                    f"Rust type of this crate; name the instantiation: {self.name}[...](...)")
                self._agree(exact, param, found, name)
            else:
                python = next((rust for kind, rust in _PYTHON_SCALARS if type(value) is kind), None)
                if python is not None:
                    self._agree(fallback, param, python, name, "pass numpy scalars (np.float32(2.0)) to say which")
        chosen = []
        for param in self.type_params:
            found = exact.get(param) or fallback.get(param)
            if found is None:
                example = ", ".join(["'f32'"] * len(self.type_params))
                raise TypeError(f"{self.name}(): cannot infer type parameter `{param}` from the arguments; name the "
                                f"instantiation, e.g. {self.name}[{example}](...)")
            self._check_bounds(param, found[0], f"from argument `{found[1]}`")
            chosen.append(found[0])
        return tuple(chosen)

    def _agree(self, found: dict, param: str, type_name: str, argument: str, hint: str = "") -> None:
        before = found.setdefault(param, (type_name, argument))
        if before[0] != type_name:
            raise TypeError(f"{self.name}(): mismatched types: `{param}` is `{before[0]}` from argument `{before[1]}` "
                            f"but `{type_name}` from argument `{argument}`" + (f"; {hint}" if hint else ""))

    def _check_bounds(self, param: str, type_name: str, origin: str) -> None:
        is_struct = type_name in self._structs
        if type_name not in PRIMITIVES and not is_struct:
            raise TypeError(f"{self.name}(): `{type_name}` ({origin}) is neither a primitive type nor a #[repr(C)] "
                            f"struct its kernels use")
        unmet = self._unmet(param, type_name, is_struct)
        if unmet is not None:
            raise TypeError(f"{self.name}(): the trait bound `{type_name}: {unmet}` is not satisfied (`{param}` is "
                            f"`{type_name}` {origin})")


def group_instances(kernels: dict[str, object], crate: CrateABI) -> dict[str, GenericKernel]:
    """The generic kernels of a crate, by their Rust name, over the backend's `kernels` (by the ABI's key)."""
    grouped: dict[str, tuple[dict, dict]] = {}
    for key, entry in crate.kernels.items():
        generic = entry.generic
        if generic is not None:
            instances, entries = grouped.setdefault(generic.name, ({}, {}))
            instances[generic.type_args] = kernels[key]
            entries[generic.type_args] = entry
    return {name: GenericKernel(name, instances, entries) for name, (instances, entries) in grouped.items()}
