"""Lowering of ``get_tuple_element``: no code, the element's buffer (``TupleElement``)."""

from __future__ import annotations

from ..lowering import TupleElement, register_lowering

register_lowering("get_tuple_element", TupleElement())
