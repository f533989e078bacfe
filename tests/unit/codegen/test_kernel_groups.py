"""Kernel groups (codegen/kernel_groups.py): a module lowered group by group gives the
kernels, buffer table, scratch buffers and limits that lowering it whole gives; groups are
cut only where no code can be shared; a group met again is not lowered again; and
groups that differ in anything the code depends on are never taken for one another."""

from __future__ import annotations

import numpy as np
import pytest
from hlo_builders import F32, lowered, make, param

import plaidarray as xp
from plaidarray.backend.llvm import group_cache
from plaidarray.backend.llvm import lowering


def _summary(c) -> tuple:
    return ([(s.key, s.buffers, s.segment, s.dims, s.imports) for s in c.sources],
            [t.shape for t in c.temps], c.scratch, c.limits, c.derived, c.n_buffers)


def _whole(monkeypatch, params, outputs, n_symbols=0):
    """The compilation of the module lowered as one group, as before groups."""
    with monkeypatch.context() as m:
        m.setattr(lowering, "group_kernels", lambda plan, buffer: [list(plan.kernels)])
        return lowered(params, outputs, n_symbols=n_symbols)


def _graphs():
    """Modules mixing rows of several sizes, reductions along either axis, a kernel op and
    temporaries that loops contract."""
    x, y, v = param(0, (6, 5)), param(1, (5, 6)), param(2, (5,))
    e = make("exp", x)
    rows = make("reduce", e, dimensions=(1,), kind="add")
    soft = make("divide", e, make("broadcast_in_dim", rows, dims=(6, 5), broadcast_dimensions=(0,)))
    cols = make("reduce", make("multiply", soft, soft), dimensions=(0,), kind="maximum")
    t = make("add", make("transpose", y, permutation=(1, 0)), x)
    dot = make("dot_general", soft, y, lhs_batch=(), rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))
    scaled = make("multiply", make("add", cols, v), v)
    yield [x, y, v], [soft, cols, scaled]
    yield [x, y, v], [make("tanh", t), make("negate", dot), scaled]
    column = make("reduce", dot, dimensions=(0,), kind="add")
    yield [x, y, v], [make("add", dot, make("broadcast_in_dim", column, dims=(6, 6), broadcast_dimensions=(1,))), rows]


@pytest.mark.parametrize("graph", range(3))
def test_lowering_by_groups_gives_what_lowering_whole_gives(monkeypatch, graph):
    params, outputs = list(_graphs())[graph]
    group_cache.GROUPS.clear()
    by_groups = lowered(params, outputs)
    assert len(by_groups.groups) > 1  # the graphs are made to be cut
    assert _summary(by_groups) == _summary(_whole(monkeypatch, params, outputs))
    again = lowered(params, outputs)  # every group found: nothing lowered
    assert all(g.module is None for g in again.groups) and _summary(again) == _summary(by_groups)


def test_what_a_kernel_op_made_in_place_is_not_taken_for_it_made_apart(monkeypatch):
    """An update in place starts with loads of its offsets; the same update writing a
    buffer of its own is a loop over rows, which fuses with the loop before it: what the
    first lowering learned of the op must not cut the second."""
    x, update, i, j = param(0, (3, 4)), param(1, (1, 4)), param(2, (), "int64"), param(3, (), "int64")
    t = make("add", x, x)
    in_place = [make("dynamic_update_slice", t, update, i, j)]
    apart = [make("dynamic_update_slice", t, update, i, j), t]  # t is an output: the update writes a copy
    group_cache.GROUPS.clear()
    for outputs in (in_place, apart):
        assert _summary(lowered([x, update, i, j], outputs)) == _summary(_whole(monkeypatch, [x, update, i, j], outputs))


def test_groups_are_cut_between_rows_of_other_sizes_and_kept_for_sibling_rows():
    x, y = param(0, (4, 3), F32), param(1, (7, 3), F32)
    same = lowered([x], [make("exp", x), make("negate", x)], until="group-kernels")
    other = lowered([x, y], [make("exp", x), make("negate", y)], until="group-kernels")
    assert [len(g.kernels) for g in same.groups] == [2]  # loop fusion merges them: one group
    assert [len(g.kernels) for g in other.groups] == [1, 1]


@pytest.fixture
def built(monkeypatch) -> list:
    """The kernels (opcodes) of each group lowered from now on, with no group known."""
    groups: list = []
    real = lowering.build_linalg

    def counting(plan, order, owners, n_symbols, kernels, **options):
        groups.append([k.opcode for k in kernels])
        return real(plan, order, owners, n_symbols, kernels, **options)

    monkeypatch.setattr(lowering, "build_linalg", counting)
    group_cache.GROUPS.clear()
    return groups


def test_a_group_met_again_in_another_graph_is_not_lowered_again(built):
    x, w = param(0, (3, 4)), param(1, (5, 7))
    lowered([x, w], [make("tanh", x), make("reduce", w, dimensions=(0,), kind="add")])
    assert sorted(built) == [["reduce"], ["tanh"]]
    built.clear()
    w, x = param(0, (5, 7)), param(1, (3, 4))  # other parameter numbers: the group's own numbering
    lowered([w, x], [make("negate", x), make("reduce", w, dimensions=(0,), kind="add")])
    assert built == [["negate"]]


def test_a_group_repeated_in_one_graph_is_lowered_once(built, monkeypatch):
    """A loop's body cut into one graph several times (k-means' per-cluster sums) gives
    groups of one key: the first is lowered, the others take its kernels."""
    x, *ws = param(0, (3, 4)), param(1, (5, 7)), param(2, (5, 7)), param(3, (5, 7))
    outputs = [make("tanh", x), *[make("reduce", make("multiply", w, w), dimensions=(0,), kind="add") for w in ws]]
    c = lowered([x, *ws], outputs)
    assert len(c.groups) == 4 and len(built) == 2
    assert _summary(c) == _summary(_whole(monkeypatch, [x, *ws], outputs))


@pytest.mark.parametrize("variants", [
    [lambda ns, a: a + 0.0, lambda ns, a: a + (-0.0)],  # equal as Python floats, not as constants
    [lambda ns, a: ns.sum(a, axis=0), lambda ns, a: ns.sum(a, axis=1), lambda ns, a: ns.max(a, axis=0)],
    [lambda ns, a: ns.cumulative_sum(a, axis=0), lambda ns, a: ns.cumulative_sum(a, axis=1)],
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_groups_that_differ_are_never_taken_for_one_another(variants, dtype):
    data = np.array([[-0.0, 1.5, -2.0], [3.0, -0.0, 0.25], [7.0, 2.0, -1.0]], dtype=dtype)
    xp.clear_cache()
    for fn in variants * 2:  # the second round finds every group
        got, want = np.asarray(fn(xp, xp.asarray(data))), fn(np, data)
        np.testing.assert_array_equal(got, want)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_groups_of_other_run_time_sizes_and_buffers_share_one_lowering(built, monkeypatch):
    """In a shape-generic module a loop's iterations are groups alike but for which of the
    module's run-time sizes and buffers they use: numbered as the key meets them, they
    have one key and one lowering, and the module gets the kernels, buffers, scratch and
    limits that lowering it whole gives."""
    from plaidarray.hlo import Instruction, Shape
    from plaidarray.hlo.symbolic import Sym

    y = param(0, (1, 3))
    xs = [param(1 + k, (Sym(k, 4 + k), 3)) for k in range(4)]
    joined = [Instruction("concatenate", [x, y], {"dimension": 0}, Shape((Sym(4 + k, 5 + k), 3), F32))
              for k, x in enumerate(xs)]
    outputs = [make("tanh", j) for j in joined[::-1]]
    c = lowered([y, *xs], outputs, n_symbols=8)
    assert len(c.groups) == 8 and sorted(built) == [["concatenate"], ["tanh"]]
    assert _summary(c) == _summary(_whole(monkeypatch, [y, *xs], outputs, n_symbols=8))
    built.clear()
    static = [param(1 + k, (4 + k, 3)) for k in range(4)]  # sizes of their own: one lowering each
    c = lowered([y, *static], [make("tanh", make("concatenate", x, y, dimension=0)) for x in static])
    assert len(built) == len(c.groups) > 1


def test_dims_table_entries_computed_at_binding_are_the_modules_in_shared_groups(built, monkeypatch):
    """A concatenation of three operands reads its third operand's offset as an entry of
    the dims table computed when the executable is bound (``KernelBuilder.one_value``).
    Groups that share one lowering each name the entry of their own sizes, one entry per
    value in the module, as lowering the module whole numbers them."""
    from plaidarray.hlo import Instruction, Shape
    from plaidarray.hlo.symbolic import Sym

    xs = [param(k, (Sym(k, 4 + k), 3)) for k in range(3)]
    orders = [(0, 1, 2), (1, 2, 0), (0, 1, 0)]
    joined = [Instruction("concatenate", [xs[i] for i in order], {"dimension": 0}, Shape((Sym(3 + k, 20), 3), F32))
              for k, order in enumerate(orders)]
    c = lowered(xs, [make("tanh", j) for j in joined], n_symbols=6)
    # The first two share a lowering; the last, one operand twice, has a key of its own
    # and the first one's offsets.
    assert sorted(built) == [["concatenate"], ["concatenate"], ["tanh"]]
    assert c.derived == [Sym(0, 0) + Sym(1, 0), Sym(1, 0) + Sym(2, 0)]
    read = sorted(k for s in c.sources for k in s.dims if k >= 6)  # the third copies' offsets
    assert read == [6, 6, 7]
    assert _summary(c) == _summary(_whole(monkeypatch, xs, [make("tanh", j) for j in joined], n_symbols=6))


def _concatenate(x, y, dimension=0):
    a, b = param(0, x), param(1, y)
    return [a, b], make("concatenate", a, b, dimension=dimension)


def _dynamic_slice(x, sizes):
    a, starts = param(0, x), [param(1 + i, (), "int64") for i in range(len(x))]
    return [a, *starts], make("dynamic_slice", a, *starts, slice_sizes=sizes)


KERNEL_OPS = {
    "rows": lambda: _concatenate((6, 5), (1, 5)), "columns": lambda: _concatenate((6, 5), (6, 2), 1),
    "one row": lambda: _concatenate((1, 5), (1, 5)), "empty first": lambda: _concatenate((0, 5), (3, 5)),
    "1-D": lambda: _concatenate((7,), (3,)), "slice": lambda: _dynamic_slice((6, 5), (2, 5)),
    "slice of one row": lambda: _dynamic_slice((6, 5), (1, 5)), "empty slice": lambda: _dynamic_slice((6, 5), (0, 5)),
    "1-D slice": lambda: _dynamic_slice((9,), (4,)),
}


@pytest.mark.parametrize("case", list(KERNEL_OPS))
def test_what_a_kernel_op_says_of_its_ends_is_what_its_lowering_makes(case):
    """``Kernel.ends`` cuts groups before any lowering of the op was seen: it must say what
    the lowering then makes (which ``kernel_groups.learn`` records)."""
    from plaidarray.codegen import kernel_groups
    from plaidarray.codegen.lowering import lowering_for

    params, inst = KERNEL_OPS[case]()
    kernel_groups._SEEN.clear()
    lowered(params, [inst])  # a kernel op's lowering records what it made
    declared = lowering_for(inst.opcode, None).ends(inst)
    assert list(kernel_groups._SEEN.values()) == [None if declared is None else kernel_groups.Nests(*declared)]
