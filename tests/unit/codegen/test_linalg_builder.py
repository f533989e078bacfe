"""Building linalg from a fusion plan (codegen/linalg_builder.py): fused re-indexings
become indexing maps, a reduction one generic op after its output's initialisation, and
each buffer is read once per kernel however often the fused code uses it (which float
operations are marked reassociable: test_reductions.py)."""

from __future__ import annotations

import re

from hlo_builders import F32, lowered, make, module_text, param


def _generics(text: str) -> list[str]:
    return re.findall(r"linalg\.generic \{.*", text)


def test_a_transposed_broadcast_operand_fuses_into_one_reduction_with_indexing_maps():
    x, y = param(0, (4, 8)), param(1, (8,))
    t = make("transpose", x, permutation=(1, 0))
    b = make("broadcast_in_dim", y, dims=(8, 4), broadcast_dimensions=(0,))
    total = make("reduce", make("multiply", make("add", t, b), t), dimensions=(1,), kind="add")
    text = module_text(lowered([x, y], [total], until="to-linalg"))
    init, body = _generics(text)  # the output's identity, then the fused reduction
    assert 'iterator_types = ["parallel"]' in init and "arith.constant 0.000000e+00" in text
    assert 'iterator_types = ["parallel", "reduction"]' in body
    assert "affine_map<(d0, d1) -> (d1, d0)>" in body  # the transpose, read in place
    assert "ins(%0, %1 : memref<4x8xf32>, memref<8xf32>)" in body  # x once, though used twice
    assert "transpose" not in text and "broadcast" not in text


def test_an_elementwise_graph_with_two_outputs_writes_each_in_one_generic():
    x = param(0, (5, 3))
    text = module_text(lowered([x], [make("negate", x), make("add", x, x)], until="to-linalg"))
    assert len(_generics(text)) == 2
    assert "func.func @main(%0: memref<5x3xf32>, %1: memref<5x3xf32>, %2: memref<5x3xf32>)" in text


def test_integer_reductions_are_not_marked():
    x = param(0, (6,), "int32")
    text = module_text(lowered([x], [make("reduce", x, dimensions=(0,), kind="add")], until="to-linalg"))
    assert "arith.addi" in text and "fastmath" not in text


def test_parameters_keep_their_positions_and_the_output_follows():
    x, y = param(0, (3,), F32), param(1, (3,), F32)
    text = module_text(lowered([x, y], [make("subtract", y, x)], until="to-linalg"))
    assert "ins(%1, %0 : memref<3xf32>, memref<3xf32>) outs(%2 : memref<3xf32>)" in text
