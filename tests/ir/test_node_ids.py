"""Node identities: the key of every fact the checker records about a binding, an access or an assignment.

Each such node the frontend lowers has an identity of its own; a copy made by `rebuild` or
`dataclasses.replace` keeps it, so the facts still hold for the copy; and the identity is invisible to
equality, hashing, `repr` and the printed IR.
"""
from __future__ import annotations

import dataclasses

from rs2gpu.frontend import lower_text
from rs2gpu.ir import nodes as ir
from rs2gpu.ir.printer import format_function
from rs2gpu.ir.types import USIZE
from rs2gpu.ir.walk import preorder, rebuild, same_value

STENCIL = """
#[kernel]
pub fn stencil(out: &mut [f64], a: &[f64], w: f64) {
    for i in 1..out.len() {
        let left = a[i - 1];
        out[i] = w * (left + a[i]) + a[i - 1];
        out[i] += a[i];
    }
}
"""


def kernel(source: str) -> ir.Function:
    crate, sink = lower_text(source)
    assert not sink.items, [d.message for d in sink.items]
    [fn] = crate.kernels
    return fn


def nodes_of(fn: ir.Function, cls: type) -> list:
    return [n for n in preorder(fn.body) if isinstance(n, cls)]


def bindings_of(fn: ir.Function) -> list[ir.Binding]:
    declared = [n.binding for n in preorder(fn.body) if isinstance(n, ir.Let)]
    return [*fn.params, *declared, *(n.var for n in preorder(fn.body) if isinstance(n, ir.For))]


def test_every_access_assignment_and_binding_has_an_identity_of_its_own() -> None:
    fn = kernel(STENCIL)
    accesses, assigns = nodes_of(fn, ir.Index), nodes_of(fn, ir.Assign)
    assert len(accesses) == 6 and len(assigns) == 2
    # `a[i - 1]` twice and `a[i]` twice: the same values, distinct accesses
    assert same_value(accesses[0], accesses[3]) and same_value(accesses[2], accesses[5])
    identities = [n.node_id for n in (*accesses, *assigns, *bindings_of(fn))]
    assert len(set(identities)) == len(identities) == 6 + 2 + 5


def test_each_use_of_a_for_pattern_element_is_an_access_of_its_own() -> None:
    fn = kernel("""
#[kernel]
pub fn square(out: &mut [f64], a: &[f64]) {
    for (o, x) in out.iter_mut().zip(a) {
        *o = *x * *x;
    }
}
""")
    [o, x1, x2] = nodes_of(fn, ir.Index)
    assert [o.base.binding.name, x1.base.binding.name, x2.base.binding.name] == ["out", "a", "a"]
    assert x1.span != x2.span and len({o.node_id, x1.node_id, x2.node_id}) == 3


def test_rebuild_keeps_the_identity_of_a_node_whose_children_change() -> None:
    fn = kernel(STENCIL)

    def shift_by_two(node):  # `i - 1` becomes `i - 2`
        if isinstance(node, ir.Lit) and node.value == 1 and node.ty == USIZE:
            return ir.Lit(2, "2", USIZE, node.span)
        return None

    rebuilt = rebuild(fn.body, shift_by_two)
    before = [n for n in preorder(fn.body) if isinstance(n, (ir.Index, ir.Assign))]
    after = [n for n in preorder(rebuilt) if isinstance(n, (ir.Index, ir.Assign))]
    changed = [(old, new) for old, new in zip(before, after) if old is not new]
    assert len(changed) == 3  # the two reads `a[i - 1]`, and the assignment that holds one
    assert all(new.node_id == old.node_id and new != old for old, new in changed)
    assert [n.node_id for n in after] == [n.node_id for n in before]


def test_replace_keeps_the_identity() -> None:
    access = nodes_of(kernel(STENCIL), ir.Index)[0]
    assert dataclasses.replace(access, ty=access.ty).node_id == access.node_id


def test_identity_is_invisible_to_equality_hash_repr_and_printed_ir() -> None:
    fn = kernel(STENCIL)
    access = nodes_of(fn, ir.Index)[0]
    other = dataclasses.replace(access, node_id=ir.new_node_id())
    assert other == access and hash(other) == hash(access) and repr(other) == repr(access)
    assert same_value(other, access)
    renumbered = rebuild(fn.body, lambda n: dataclasses.replace(n, node_id=ir.new_node_id())
                         if isinstance(n, (ir.Index, ir.Assign)) else None)
    assert format_function(dataclasses.replace(fn, body=renumbered)) == format_function(fn)
    assert "node_id" not in format_function(fn)
