"""The diagnostic codes: a title and the long explanation `rs2gpu explain CODE` prints.

RG00xx come from the frontend (the source is not in the kernel language), RG01xx from the checker
(the kernel could race or cannot run on the GPU as written), RG02xx from `rs2gpu.dask.call` (a call
cannot be split into chunks of Dask arrays; docs/dask.md).
"""
from __future__ import annotations

CODES: dict[str, tuple[str, str]] = {
    "RG0001": ("syntax error", """
The file does not parse as Rust. rs2gpu reads the same source rustc compiles, so `cargo check` reports
the same problem, usually with more detail."""),
    "RG0002": ("construct not supported in kernels", """
Kernels are written in a subset of Rust that maps directly onto GPU code: scalars, slices, fixed-size
arrays, #[repr(C)] structs, tuples, `let`, `if`, `match` on integers, loops over ranges and over
slices and arrays (`.iter()`, `.iter_mut()`, `.zip(..)`, `.enumerate()`, `.copied()`), ranges with
`.rev()` and `.step_by(s)`, helper functions, consts and the math methods of f32/f64. Closures, macros,
other iterator methods, associated functions of `impl` blocks (`P::new(..)`), `unsafe`, references
taken inside a kernel, trait objects and heap types (`Vec::new()`, `vec![..]`: kernels cannot allocate)
are not. The message names the construct; the help line suggests the usual rewrite.

    for x in a.iter().rev() { ... }            // rejected: the iterator method `.rev()`
    for i in (0..a.len()).rev() { ... }        // accepted
    for (o, x) in out.iter_mut().zip(a) { ... } // accepted"""),
    "RG0003": ("type not supported", """
A type used by a kernel has no GPU representation (for example a tuple struct, or a struct that
contains itself), or an array length is not a constant."""),
    "RG0004": ("unresolved name", """
A variable, function, const, struct or field is not defined in the crate. rs2gpu resolves names
within the crate's files; helper functions, consts and structs used by kernels must be defined there."""),
    "RG0005": ("mismatched types", """
The types do not fit together the way rustc requires (e.g. `f32 + f64`, indexing with a signed
integer, a non-bool condition). rs2gpu infers types as rustc does for the kernel subset: unsuffixed
integer literals take the type their context requires (i32 by default), float literals likewise (f64
by default)."""),
    "RG0006": ("method call on an ambiguous numeric type", """
A method such as `sqrt` was called on a literal or variable whose type rustc would not know yet
(`let x = 2.0; x.sqrt()` is E0689 in rustc too). Give it a type: `2.0_f64`, or `let x: f64 = 2.0`."""),
    "RG0007": ("unknown method", """
Kernels may call the math methods of f32/f64 (sqrt, exp, ln, powi, powf, mul_add, abs, min, max,
floor, sin, ...), the integer methods (min, max, abs, pow, wrapping_*, saturating_*, rotate_left,
rotate_right, rem_euclid, count_ones, ...), `checked_*` in the forms `a.checked_add(b).unwrap_or(v)`,
`.is_some()`, `.is_none()` and `if let Some(x) = a.checked_add(b)`, and `len()` of slices and arrays.
Other methods have no GPU implementation here; the help line lists the methods of the receiver's type.
A method of an `impl` block is written as a helper function taking the struct by value
(`fn norm(p: P) -> f64`), and an iterator method outside a `for` loop (`a.iter().map(..).sum()`) as
the loop itself, with a reduction variable."""),
    "RG0008": ("assignment to something that is not writable", """
The target of an assignment is an immutable variable, or data behind a shared reference `&[T]`.
rustc rejects the same code. Declare the variable `let mut`, or take the slice as `&mut [T]`."""),
    "RG0009": ("struct is not #[repr(C)]", """
A struct that crosses between host and GPU must have a layout both sides agree on. Rust's default
layout may reorder fields, so kernels only accept structs marked #[repr(C)]; the generated C++ then
checks size, alignment and every field offset with static_asserts."""),
    "RG0010": ("duplicate name", """
Two kernels, helpers, consts or structs of the crate share a name. rs2gpu flattens the crate's modules
into one namespace for the generated code; rename one of them. Also a pattern that binds one name twice,
`let (a, a) = ...`, which rustc refuses too (E0416)."""),
    "RG0011": ("wrong number of arguments", """
A function or method was called with a different number of arguments than it declares."""),
    "RG0012": ("literal out of range", """
An integer literal does not fit its type (rustc's deny-by-default `overflowing_literals` lint)."""),
    "RG0013": ("kernel signature cannot cross to the GPU", """
Kernel parameters must be scalars, #[repr(C)] structs by value, `&S` structs, or `&[T]`, `&mut [T]`,
`&[T; N]` of scalars or structs. Kernels return nothing, a scalar, or a tuple of scalars (the results
of reductions): a scalar the kernel gives back is its result, not a `&mut` parameter. The body of a
kernel whose signature cannot cross is not checked further."""),
    "RG0014": ("generic kernel: instantiations and bounds", """
A generic kernel without `types(...)` has its body checked once, for every type its bounds admit,
and is instantiated when a call names its types: from Python, the argument types of its first call with
them (`k.scale(x32, 2.0)` makes `scale::<f32>`); it has no code before that, and no function in the
module of the Cargo hook. Its bounds must be std traits of the primitive types (`Copy`, `PartialOrd`,
`Add<Output = T>`, `Neg<Output = T>`, `BitAnd<Output = T>`, ...), so that rs2gpu knows which types meet
them. `types(...)` names the instantiations ahead of time, for the Cargo hook and for bounds of other
traits. Each entry is one type, or a parenthesized list with one type per type parameter:

    #[kernel(types(f32, f64))]
    pub fn axpy<T: Copy + Add<Output = T> + Mul<Output = T>>(y: &mut [T], x: &[T], a: T) { ... }

    #[kernel(types((f64, i32), (f32, f32)))]
    pub fn select<T: Copy, K: Copy + PartialOrd>(out: &mut [T], a: &[T], key: &[K], cut: K) { ... }

`types(...)` on a kernel without type parameters, an empty `types()`, an entry with the wrong number of
types, the same entry twice, a bound rs2gpu cannot check and bounds no primitive type meets are errors."""),
    "RG0015": ("generic kernel uses what its bounds do not give", """
A generic kernel may do with a value of a type parameter what its bounds give, as rustc requires:
`a * b` needs `T: Mul<Output = T>`, `a < b` needs `T: PartialOrd`, `y[i] += a` needs `T: AddAssign`,
`-a` needs `T: Neg<Output = T>`, reading an element out of a `&[T]` needs `T: Copy`. A cast to or from
`T` is not possible (rustc's E0605), nor a literal where a `T` is expected: take such a value as a
parameter of type `T`. Add the bound the help line names, or list the instantiations with
`#[kernel(types(...))]` and write the kernel for those types."""),
    "RG0016": ("recursive helper", """
A helper that calls itself, directly or through other helpers, is rejected: each call takes room on
the GPU thread's stack, which is small, and recursion whose depth depends on the data overflows it.
The error points at the call that closes the cycle. Write a loop instead, keeping pending work in a
fixed-size array where the algorithm needs a stack.

    fn fact(n: u64) -> u64 { if n == 0 { 1 } else { n * fact(n - 1) } }   // rejected
    fn fact(n: u64) -> u64 {                                              // accepted
        let mut f = 1;
        for k in 1..=n { f *= k; }
        f
    }"""),
    "RG0101": ("every iteration writes the same element", """
In a parallel loop each iteration may run on a different GPU thread at the same time. A write whose
index does not depend on the loop variable is a write by every thread to one element: a data race.

An iteration that only adds into the element (`+=`, or `-=`, `*=`, `&=`, `|=`, `^=`, `.min()`,
`.max()`, one of them per slice) may share it: such updates commute, and the GPU applies them with
atomics (a scatter reduction).

    for i in 0..n { out[0] = a[i]; }           // rejected
    let mut s = 0.0;
    for i in 0..n { s += a[i]; }               // accepted: a reduction
    s
    for i in 0..n { out[0] += a[i]; }          // accepted: a scatter reduction, atomic additions"""),
    "RG0102": ("write index not provably injective", """
rs2gpu proves that two iterations never write the same element by showing the write index is an
affine function of the loop variables whose strides cannot overlap: `c * i + d` with a constant c != 0,
or row-major `j * w + i` with `i` in `0..w`. A stride it cannot compare with the row length (`j * w + i`
with `i` in `0..n`) is checked by the runtime before the launch; a write, under no condition, to rows
longer than their stride whatever the sizes (`i` in `0..w + 1`: iteration `(j, w)` writes where
`(j + 1, 0)` does) is rejected by the checker, with a note naming the stride and the row's length. A
write through an index list (`out[idx[i]]`) is accepted, and the device verifies that the indices it
writes are distinct (`rs2gpu.RaceError` otherwise): the loop checks that they rise or fall from each
iteration to the next, and only a list out of that order takes a second pass with atomics. Indices like `i / 2`,
`i % m` or `i * i` can map two iterations to one element, so the write is rejected. Updates that
only combine into the element are not: when the loop touches a slice only through `out[e] += v` (or
one other of `-=`, `*=`, `&=`, `|=`, `^=`, `.min()`, `.max()`), with 32- or 64-bit elements and `v`
not reading `out`, any index `e` is accepted and the GPU applies the updates with atomics.

    for i in 0..n { out[i / 2] = a[i]; }      // rejected: i = 0 and i = 1 both write out[0]
    for i in 0..n / 2 { out[i] = a[2 * i]; }  // accepted
    for j in 0..m { for i in 0..w + 1 { out[j * w + i] = a[i]; } }  // rejected: rows overlap
    for j in 0..m { for i in 0..n { out[j * w + i] = a[i]; } }      // checked at launch: n <= w
    for i in 0..n { out[bins[i]] += a[i]; }   // accepted: a scatter reduction"""),
    "RG0103": ("read of an element another iteration writes", """
Iterations of a parallel loop run in no fixed order, so reading an element that another iteration
writes gives a result that depends on timing. A written slice may only be read at the index the same
iteration writes. The target of a scatter reduction (`out[bins[i]] += v`) is read by its updates only;
read its values in a later loop.

    for i in 0..n - 1 { a[i] = a[i + 1]; }    // rejected: reads what iteration i+1 writes
    for i in 0..n - 1 { b[i] = a[i + 1]; }    // accepted: read from a separate slice"""),
    "RG0104": ("value carried across iterations", """
A variable declared before a parallel loop is assigned inside it, so one iteration would see the
value another left. The only allowed form is a reduction: the variable is only combined with one of
`+=`, `*=`, `&=`, `|=`, `^=`, `x = x.min(..)`, `x = x.max(..)`, and not otherwise read in the loop.
The kernel then returns it. A reduction inside a host loop (across its iterations) is not supported."""),
    "RG0105": ("two writes of one iteration can collide with another iteration's", """
When an iteration writes several elements of one slice, say `a[2*i]` and `a[2*i + 1]`, the writes of
different iterations must not overlap. `a[i]` and `a[i + 1]` do overlap: iteration i+1's first write
is iteration i's second. Updates that only add into the elements may overlap: `a[i] += v; a[i + 1] += v`
is a scatter reduction, applied with atomics. In a nest, two writes a
constant apart (`out[at]` and `out[at + half]`, with `at` a row-major index whose innermost variable
takes `half` values) are proven apart as one more variable of the index would be; where the sizes decide,
the host checks them before the launch and raises `RaceError` where they meet."""),
    "RG0106": ("loop bounds not computable before the launch", """
The number of GPU threads is chosen before the kernel runs, so a parallel loop's bounds (and a host
loop's) may use only parameters, slice lengths, constants, the variables and `let`s of the host loops
around it, and arithmetic on them."""),
    "RG0107": ("statement outside a parallel loop", """
A kernel is a sequence of top-level `for` loops (each one a GPU launch, or a host loop around
launches), preceded by `let`s of values computed from the parameters and followed by an optional
result computed from reductions. Other statements at the top level, or between the loops of a host
loop, would have to run on the host between launches. The `let`s of a host loop must be computable
from the parameters and the loop's variable, and the values the host keeps (those `let`s, the loop
variables, the kernel's top-level `let`s) need distinct names."""),
    "RG0108": ("early exit from a parallel loop", """
`return` or `break` inside a parallel loop would stop the remaining iterations, but on the GPU they may
already be running. Use `continue` to finish one iteration early."""),
    "RG0201": ("access that chunks cannot follow", """
`rs2gpu.dask.call` splits a call into chunks of rows, each running the kernel on its rows and a halo
read from the kernel's affine indices. An access whose elements depend on data cannot be split that
way: an index list (`a[idx[i]]`), a scatter update (`h[bins[i]] += 1`), a computed index (`a[i * i]`),
or a slice passed to a helper function. Call such a kernel on whole arrays, through the module's own
call (`k.multi_reduce(values, data, bins)` on numpy or cupy arrays)."""),
    "RG0202": ("access that does not move with the chunks", """
Every access of a chunked slice must be `stride * s + offset` in the outermost loop variable `s`, with
one stride for the whole kernel (1 for a plain loop, the row length of a row-major nest) and offsets
made of constants, scalar parameters and inner loop variables whose ranges are made of those too. A
chunk's lengths are not the whole array's, so an offset that depends on a slice length or on a value
computed in the kernel would move; a slice indexed with a different stride (a slab of another size),
or read both with and without `s`, has no rows to split; a write must land in its iteration's own row
(`a[i - 1] = ...` in iteration `i` is refused)."""),
    "RG0203": ("loop structure that chunks cannot reproduce", """
A chunk runs the kernel unchanged on its rows, so its iterations must be the whole call's iterations
of those rows. That fails where the outermost loop variable is used as a value (`(i + 1) as f64`, the
bound of an inner loop: a chunk counts its rows from 0), where a loop bound does not follow the slices'
lengths (`for i in 0..n` with a scalar `n`: write `0..a.len()`, or `1..a.len() / width - 1`), where
the parallel loops run inside a host loop (time steps: run the time loop in Python, one call per step),
and where a kernel has several loops and one of them needs a halo (a later loop would read rows an
earlier one did not finish). Split such kernels, one loop each."""),
    "RG0204": ("reduction that chunks cannot combine", """
Each chunk computes a partial result, and Dask combines the partials with the kernel's own operator
(`+`, `*`, `min`, `max`, `&`, `|`, `^`). That needs a kernel that returns its reductions themselves
(not `4.0 * pi`: compute that from the result), seeds that are the operator's identity (0 for `+`, 1
for `*`; any seed for `min` and `max`), no min/max-location reductions (a chunk's location counts its
own rows) or seeds read from an element, and a loop that reads only its own element (a halo would
count the rows it shares with a neighbour twice)."""),
}


def explain(code: str) -> str | None:
    entry = CODES.get(code.upper())
    if entry is None:
        return None
    title, text = entry
    return f"{code.upper()}: {title}\n{text}\n"
