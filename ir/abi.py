"""The kernel ABI: everything the host side needs to know about a generated kernel, as typed data.

The emitter builds one `CrateABI`; the runtime, the Rust host generator, the command line and the benchmark
read it. `manifest.json` is its JSON form (`CrateABI.to_json()` / `CrateABI.from_json()`), versioned by
`ABI_VERSION`. Nothing here is prose: what the host must decide is in fields.

A kernel is a list of launches (one per parallel loop) that a schedule runs in order, host loops around
them where the Rust code has time steps. Each launch has one or more entry points (`extern "C"`
functions of the generated file), all taking the same argument buffer; the host runs the first of them, in
the order of `EntryKind`, whose condition holds for the call (see `EntryKind`), and after it the launch's
`VERIFY` entry point where it has one.

Geometry: blocks of `CrateABI.block_size` threads, the innermost loop of a nest along x. An entry point
with a `grid` (`CoveringGrid`) runs one thread per iteration (or per group of iterations) on a grid that
covers the loop, and only where one does; the others run a grid-stride loop over the iterations on any
grid (a launch with reductions on at most one wave of blocks, whose partial results its last block
combines).

Host expressions (loop bounds, seeds, results, the terms of checks) are trees of the small JSON
expression language that `emit/hostexpr.py` writes and `runtime/hostexpr.py` evaluates with Rust's
semantics; `Poly` is a sum of products of them, evaluated with exact integers.
"""
from __future__ import annotations

import dataclasses
import enum
import types
import typing
from dataclasses import dataclass
from typing import Any, Union

ABI_VERSION = 8
BLOCK_SIZE = 256  # threads per block of every launch: the kernels' block reductions are written for it
# The threads one multiprocessor holds at once (NVIDIA sm_80/sm_90, AMD CDNA): the host sizes one wave of
# blocks by it, and a product's tiles entry point runs where its tiles give each multiprocessor one.
RESIDENT_THREADS_PER_MULTIPROCESSOR = 2048

HostExpr = dict  # a tree of the host expression language (see the module docstring)


@dataclass(frozen=True, slots=True)
class Term:
    """coefficient · Π factors, each factor a host expression."""

    coefficient: int
    factors: tuple[HostExpr, ...]


Poly = tuple[Term, ...]  # Σ terms, computed exactly


# ------------------------------------------------------------------ parameters


class ParamKind(str, enum.Enum):
    SLICE = "slice"            # &[T], &mut [T]: a pointer and, where a launch reads it, a length
    ARRAY = "array"            # &[T; N]: a pointer, or N elements by value (`Transfer.VALUE`)
    STRUCT_REF = "struct_ref"  # &S: a pointer
    SCALAR = "scalar"          # a primitive by value
    STRUCT = "struct"          # a #[repr(C)] struct by value


class Transfer(str, enum.Enum):
    """How a parameter's data travels between host and device in one call."""

    IN = "in"          # host → device only
    OUT = "out"        # device → host only: the kernel writes every element before reading any
    INOUT = "inout"    # both ways
    VALUE = "value"    # by value in the launch arguments (scalars, structs, small read-only arrays)


class ArgRole(str, enum.Enum):
    POINTER = "pointer"
    LENGTH = "length"
    VALUE = "value"


@dataclass(frozen=True, slots=True)
class ArgPart:
    """One C++ argument that a Rust parameter becomes."""

    name: str
    role: ArgRole
    size: int
    align: int


@dataclass(frozen=True, slots=True)
class FieldLayout:
    name: str
    offset: int
    layout: Layout


@dataclass(frozen=True, slots=True)
class Layout:
    """The memory layout of a Rust type: a primitive, a `#[repr(C)]` struct (`fields`) or an array
    (`elem` and `length`)."""

    type: str
    size: int
    align: int
    fields: tuple[FieldLayout, ...] = ()
    elem: Layout | None = None
    length: int | None = None

    @property
    def is_struct(self) -> bool:
        return bool(self.fields)


@dataclass(frozen=True, slots=True)
class Param:
    """One kernel parameter. `layout` is the element's layout for a slice or an array, the referent's for
    `&S`, the value's for a scalar or a struct; `parts` are the C++ arguments it becomes, in order."""

    name: str
    rust_type: str
    kind: ParamKind
    mutable: bool
    transfer: Transfer
    reason: str
    parts: tuple[ArgPart, ...]
    layout: Layout
    length: int | None = None  # an array's N

    @property
    def in_memory(self) -> bool:
        """Whether the argument is an array of elements in memory (a slice, an array or a referenced struct)."""
        return self.kind in (ParamKind.SLICE, ParamKind.ARRAY, ParamKind.STRUCT_REF)


# ------------------------------------------------------------------ what a launch checks and reduces


@dataclass(frozen=True, slots=True)
class Dim:
    """One dimension of a launch: `for index in start..end` (`..=end` when `inclusive`) along `axis`."""

    index: str
    index_type: str
    axis: str
    start: HostExpr
    end: HostExpr
    inclusive: bool


@dataclass(frozen=True, slots=True)
class Location:
    """The location half of a min/max-location reduction: the variable, its seed, and whether ties keep
    the first location (`<`) or the last (`<=`)."""

    name: str
    type: str
    init: HostExpr
    first: bool


@dataclass(frozen=True, slots=True)
class Reduction:
    """A variable combined across a launch's iterations by `op` from its seed `init`. With
    `seed_on_device`, the seed is an element of a read-only slice (`init` is an `element` expression): the
    launch takes the element's address and reads it there."""

    name: str
    type: str
    op: str  # "+" | "*" | "min" | "max" | "&" | "|" | "^" | "minloc" | "maxloc"
    init: HostExpr
    seed_on_device: bool = False
    location: Location | None = None


@dataclass(frozen=True, slots=True)
class Scatter:
    """A slice the loop only updates by one combining operation, at any index (atomics on the device)."""

    target: str
    op: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class StrideCheck:
    """An inequality the race-freedom proof left to the launch: `poly` ≥ 0 (a row stride at least the row)."""

    poly: Poly
    source: str


@dataclass(frozen=True, slots=True)
class IndexLoop:
    """A sequential loop around a host-checked access (see `checker/bounds.py`)."""

    start: Poly
    end: Poly
    inclusive: bool
    type: str
    coefficient: Poly
    at: tuple[int, int]


@dataclass(frozen=True, slots=True)
class IndexForm:
    """A host-checked access's index: rest + Σ axes · thread variables + Σ loops' coefficients · loop
    variables, and its place `at` (line, column) in Rust's evaluation order."""

    rest: Poly
    axes: tuple[Poly, ...]
    loops: tuple[IndexLoop, ...]
    at: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ExactRange:
    """`bound` is exact when it lies in [low, high] (a loop bound Rust computes in its type, wrapping)."""

    bound: Poly
    low: int
    high: int


@dataclass(frozen=True, slots=True)
class BoundsCheck:
    """An access to `param` whose indices lie in [low, high] over the iteration space, checked on the host
    before the launch (see `ir.plan.BoundsCheck`)."""

    param: str
    low: Poly
    high: Poly
    extents: tuple[Poly, ...]
    source: str
    exact: tuple[ExactRange, ...]
    index: IndexForm


@dataclass(frozen=True, slots=True)
class ListGather:
    param: str
    source: str


@dataclass(frozen=True, slots=True)
class ReadWindow:
    """A group of reads `param[scale * value + offset]` through an index list, whose window of values the
    host computes for each call."""

    param: str
    scale: int
    offsets: tuple[Poly, ...]


@dataclass(frozen=True, slots=True)
class IndexListWrite:
    """A write `target[scale * list[i + position] + offset]`: the loop checks the list's order, and its
    verification the values it finds out of order (see `emit/verify.py`). `bounds` is the access whose panic
    the verification raises for a written index out of bounds (None: the loop checks it itself)."""

    list: str
    position: Poly
    scale: int
    offset: Poly
    target: str
    source: str
    bounds: str | None
    gathers: tuple[ListGather, ...]
    windows: tuple[ReadWindow, ...]


@dataclass(frozen=True, slots=True)
class ListRead:
    """A read `param[scale * list[i + position] + offset]` that the loop checks on the device."""

    list: str
    param: str
    scale: int
    offset: Poly
    source: str


@dataclass(frozen=True, slots=True)
class Uniform:
    """A value of a host loop around the launch that the launch reads (a launch argument)."""

    name: str
    type: str


# ------------------------------------------------------------------ entry points


class EntryKind(str, enum.Enum):
    """The kinds of entry point, in the order the host tries them; each runs when its condition holds:

    PRIVATE   the scatter target is short enough for each block's copy in shared memory (`private`)
    PROVEN    every index list is a verified list whose facts prove its checks (`proof`), the other
              accesses are all in bounds, and a grid covers the loop
    L2_ADDS   the other accesses are in bounds and the loop's data fit in the L2 (`l2_adds`)
    VECTOR    the other accesses are in bounds and each slice's first group of lanes is aligned (`vector`);
              a nest's also needs a grid that covers its groups
    BLOCKS    the other accesses are in bounds and a warp per iteration would leave the device partly idle
              (`split`): one block per iteration, its inner loops split over its threads
    WARPS     the other accesses are in bounds (`split`): one warp per iteration, its inner loops split
              over the lanes, for a loop whose inner loops read a row apart from thread to thread
    COLUMNS   the other accesses are in bounds and the loop has fewer iterations than the device holds
              threads (`split`): a few iterations per block, their inner loops split over its groups of
              threads, for a loop whose inner loops read consecutive elements from thread to thread
    TILES     the other accesses are in bounds, a grid covers the loop and the loop has at least `fill`
              iterations per thread the device holds (`grid`): a matrix product on larger tiles
    COVERING  the other accesses are in bounds and a grid covers the loop (`grid`)
    GENERAL   every access the loop makes only under a condition is in bounds (always, without CHECKED)
    CHECKED   always: the loop checking those conditional accesses on the device too
    VERIFY    never chosen: it runs after the chosen one, verifying the index lists the loop writes through
    """

    PRIVATE = "private"
    PROVEN = "proven"
    L2_ADDS = "l2_adds"
    VECTOR = "vector"
    BLOCKS = "blocks"
    WARPS = "warps"
    COLUMNS = "columns"
    TILES = "tiles"
    COVERING = "covering"
    GENERAL = "general"
    CHECKED = "checked"
    VERIFY = "verify"


@dataclass(frozen=True, slots=True)
class CoveringGrid:
    """One thread per iteration (or group of iterations) on a grid that covers the loop: `block` is the
    block shape its body needs (None: any), every axis's count must stay below `count_limit`, the grid
    starts with `lead` idle threads along x (aligning warps to the stores), and each thread runs `tile`
    iterations along x, y and z (1 each: one iteration); `staging` names how a block shares its tile of
    iterations through shared memory (`PRODUCT_STAGING`, `TRANSPOSE_STAGING`,
    `TENSOR_STAGING`; empty: it does not). With
    `fill`, it runs only where the loop's iterations (all axes) are at least `fill` times the threads the
    device holds at once."""

    block: tuple[int, ...] | None
    count_limit: int
    lead: int = 0
    tile: tuple[int, int, int] = (1, 1, 1)
    staging: str = ""
    fill: int = 0


# A matrix product (emit/tiling.py): each thread sums a tile of iterations in registers, the block's
# operands staged slice by slice of `k` in shared memory.
PRODUCT_STAGING = "register tiles"
# A transpose (emit/transpose.py): the block reads a tile by rows into shared memory and writes it by columns.
TRANSPOSE_STAGING = "transposed tile"
# A matrix product of half values into f32 sums (emit/tensor.py): each warp sums a tile of iterations on the
# tensor cores' fragments, the block's operands staged slice by slice of `k` in shared memory.
TENSOR_STAGING = "tensor-core tiles"


@dataclass(frozen=True, slots=True)
class AlignedSlice:
    """A slice whose first lane in the first group lies `offset` elements after the loop's first index."""

    slice: str
    offset: int


@dataclass(frozen=True, slots=True)
class VectorLanes:
    """Each thread runs `width` consecutive iterations with one `alignment`-byte access per slice; the
    `aligned` slices must be at aligned addresses for that (a nest's rows test their own: none)."""

    width: int
    alignment: int
    aligned: tuple[AlignedSlice, ...]


@dataclass(frozen=True, slots=True)
class SplitIterations:
    """Several threads per iteration, splitting the loop's inner loops: the host launches `threads` threads
    per iteration (at most one wave of blocks, as for a reduction: the entry point strides over the rest),
    and only where the loop's count times `fill` is below the threads the device holds at once (0: always).
    With `reassociates`, they combine float sums or products in another order than Rust's: what the loop
    computes from them is within the bound of a reassociated float reduction."""

    threads: int
    fill: int
    reassociates: bool


@dataclass(frozen=True, slots=True)
class InnerLoop:
    """A loop inside a launch's loop body, and how its warps entry point runs it: `split` over the lanes
    of a warp, or sequentially in each thread; `detail` says how, or why not."""

    source: str
    split: bool
    detail: str


@dataclass(frozen=True, slots=True)
class PrivateCopy:
    """Each block keeps a copy of the scatter target `target` in shared memory: at most `capacity` elements."""

    target: str
    capacity: int


@dataclass(frozen=True, slots=True)
class L2Footprint:
    """The bytes of slice elements one iteration touches: the loop's data fit in the L2 below its size."""

    bytes_per_iteration: int


@dataclass(frozen=True, slots=True)
class ListProof:
    """The verified lists whose facts must prove the checks the entry point leaves out, and the reads
    through them it does not check."""

    lists: tuple[str, ...]
    reads: tuple[ListRead, ...]


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """One `extern "C"` function of a launch. `checks` are the panic sites its code contains; the field of
    its kind says what the host needs to decide whether it runs, and `grid` how."""

    kind: EntryKind
    symbol: str
    records_panics: bool
    checks: tuple[int, ...] = ()
    grid: CoveringGrid | None = None
    vector: VectorLanes | None = None
    private: PrivateCopy | None = None
    l2_adds: L2Footprint | None = None
    proof: ListProof | None = None
    split: SplitIterations | None = None


# ------------------------------------------------------------------ launches and kernels


@dataclass(frozen=True, slots=True)
class Launch:
    """One parallel loop: one launch of one of its entry points (`entry_points`, in `EntryKind`'s order).

    Its arguments, in order: the kernel's parameters (a slice's length only if the slice is in `lengths`),
    each dimension's start and count, its number in the call if `numbered` (a `u32`, for a launch that can
    record a panic or stop on one), the `uniforms`, the arguments of its index lists' checks, whether earlier
    code of the call can have panicked if it `stops` (a `bool`), then per reduction its seed (or the seed's
    address), the blocks' partials and the result (a location reduction: both seeds, the partials of pairs
    and both results), and last, if it `signals_done`, the address of the word it sets once its results
    are written. A `VERIFY` entry point takes the loop's arguments up to the uniforms, then per slice
    written through a list its mark array, stamp and order flag."""

    source: str
    dims: tuple[Dim, ...]
    lengths: tuple[str, ...]
    numbered: bool
    stops: bool
    signals_done: bool
    entry_points: tuple[EntryPoint, ...]
    reductions: tuple[Reduction, ...] = ()
    scatters: tuple[Scatter, ...] = ()
    stride_checks: tuple[StrideCheck, ...] = ()
    bounds: tuple[BoundsCheck, ...] = ()
    guarded_bounds: tuple[BoundsCheck, ...] = ()
    index_lists: tuple[IndexListWrite, ...] = ()
    uniforms: tuple[Uniform, ...] = ()
    inner_loops: tuple[InnerLoop, ...] = ()

    def entry(self, kind: EntryKind) -> EntryPoint | None:
        """The entry point of `kind`, if the launch has one."""
        return next((e for e in self.entry_points if e.kind == kind), None)

    @property
    def general(self) -> EntryPoint:
        """The loop as written, with the checks the host did not prove: every launch has it."""
        entry = self.entry(EntryKind.GENERAL)
        assert entry is not None
        return entry

    @property
    def last_resort(self) -> EntryPoint:
        """What runs when no other condition holds: the checked entry point, or the general one."""
        return self.entry(EntryKind.CHECKED) or self.general


@dataclass(frozen=True, slots=True)
class PanicSite:
    """A place of the generated code that can record a panic; `launch` and `list` name the index list of an
    index-list check."""

    site: int
    kind: str  # "bounds" | "div" | "rem" | "index list" | "index list reads"
    source: str
    launch: int | None = None
    list: int | None = None


@dataclass(frozen=True, slots=True)
class HostLet:
    """A `let` the host evaluates (before the launches, or in every iteration of a host loop)."""

    name: str
    type: str
    expr: HostExpr
    source: str


@dataclass(frozen=True, slots=True)
class Returned:
    type: str
    expr: HostExpr


@dataclass(frozen=True, slots=True)
class GenericInstance:
    """The instantiation of a generic kernel this entry is: `name::<type_args>`."""

    name: str
    type_args: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class HostLoop:
    """`for var in start..end` on the host, running `body` (launch indices and nested loops) in every
    iteration after evaluating its `locals`."""

    var: str
    type: str
    start: HostExpr
    end: HostExpr
    inclusive: bool
    source: str
    locals: tuple[HostLet, ...]
    body: tuple[Union[int, HostLoop], ...]


@dataclass(frozen=True, slots=True)
class KernelABI:
    """One kernel. `result_words` are the 8-byte words its results take in the readback area; `schedule` is
    None where the launches simply run in order."""

    name: str
    source: str
    rust_path: str
    files: dict[str, str]  # target → generated file name
    fast_math: bool
    params: tuple[Param, ...]
    preamble: tuple[HostLet, ...]
    launches: tuple[Launch, ...]
    returns: Returned | None
    panics: tuple[PanicSite, ...]
    result_words: int
    generic: GenericInstance | None = None
    schedule: tuple[Union[int, HostLoop], ...] | None = None


@dataclass(frozen=True, slots=True)
class CrateABI:
    crate: str
    rs2gpu_version: str
    targets: tuple[str, ...]
    kernels: dict[str, KernelABI]
    block_size: int = BLOCK_SIZE
    version: int = ABI_VERSION

    def to_json(self) -> dict:
        return to_json(self)

    @staticmethod
    def from_json(data: dict) -> CrateABI:
        found = data.get("version") if isinstance(data, dict) else None
        if found != ABI_VERSION:
            raise ValueError(f"kernel ABI version {found!r} is not this rs2gpu's ({ABI_VERSION}): translate the "
                             f"crate again")
        return from_json(CrateABI, data)


def host_exprs(value: Any):
    """Every host expression in `value` (an ABI object below a kernel: a launch, a check, a reduction, ...;
    or a tuple or list of them), in field order; an expression's own sub-expressions are not listed apart."""
    if isinstance(value, dict):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from host_exprs(item)
    elif dataclasses.is_dataclass(value):
        for f in dataclasses.fields(value):
            yield from host_exprs(getattr(value, f.name))


# ------------------------------------------------------------------ JSON


def to_json(value: Any) -> Any:
    """`value` as JSON data: dataclasses as objects of their fields, enums as their values, tuples as lists."""
    if dataclasses.is_dataclass(value):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    return value


_HINTS: dict[type, dict[str, Any]] = {}


def from_json(cls: type, data: Any) -> Any:
    """The value of type `cls` (a dataclass of this module, or a type its fields name) that `to_json` made
    `data` from."""
    return _decode(cls, data)


def _decode(hint: Any, data: Any) -> Any:
    if hint is Any or hint is dict or hint is HostExpr:
        return data
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        if data is None:
            return None
        # an optional value, or a schedule step: a launch's index or a host loop's object
        options = [o for o in typing.get_args(hint) if o is not type(None)]
        if len(options) > 1:
            options = [o for o in options if dataclasses.is_dataclass(o) == isinstance(data, dict)]
        return _decode(options[0], data)
    if origin is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v) for v in data)
        return tuple(_decode(a, v) for a, v in zip(args, data))
    if origin is dict:
        _, value_hint = typing.get_args(hint)
        return {k: _decode(value_hint, v) for k, v in data.items()}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint(data)
    if dataclasses.is_dataclass(hint):
        hints = _HINTS.get(hint)
        if hints is None:
            hints = _HINTS[hint] = typing.get_type_hints(hint)
        return hint(**{f.name: _decode(hints[f.name], data[f.name]) for f in dataclasses.fields(hint)
                       if f.name in data})
    return data
