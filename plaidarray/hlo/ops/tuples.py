"""``get_tuple_element``: one result of an instruction with several (XLA's op).

    get_tuple_element(t) {index}

An op with several results (``while``, ``conditional``, ``custom_call``) has a
:class:`~plaidarray.hlo.shape.TupleShape` and evaluates to a list of arrays, once; each
result used is selected by a ``get_tuple_element``. It computes nothing: its lowering
names the tuple instruction's buffer for that element (``codegen/fusion.py`` gives a
tuple instruction one buffer per element, those of its ``get_tuple_element`` users).
"""

from __future__ import annotations

from ..opdef import OpDef, no_dims, register
from ..shape import TupleShape


def _infer(shapes, attrs):
    (tup,) = shapes
    if not isinstance(tup, TupleShape):
        raise TypeError(f"get_tuple_element: the operand must have a tuple shape, got {tup}")
    index = attrs["index"]
    if not (isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(tup.elements)):
        raise ValueError(f"get_tuple_element: index {index!r} is out of range for the "
                         f"{len(tup.elements)} elements of {tup}")
    return tup.elements[index]


def _evaluate(args, attrs, shape):
    return args[0][attrs["index"]]


# Its dimensions are a tuple element's, which its operand's rule (a custom call's) ties to
# that op's operands: none of its own, so sizes equal by chance (a batch of three 3 x 3
# matrices) keep their own run-time values.
register(OpDef("get_tuple_element", _infer, _evaluate, arity=1, dim_ties=no_dims))
