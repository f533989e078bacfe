"""Float reductions may be reassociated; nothing else may.

Only the accumulating add or multiply of a reduction carries ``reassoc`` in the linalg
lowering, and llvm-cpu takes that permission by writing the sum out in partial sums
(test_llvm_emitter.py): the fused elementwise code stays exact. Sums over many elements
stay within float tolerance of NumPy's pairwise summation.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import plaidarray as xp


def _loops_mlir(tmp_path, monkeypatch, compute) -> str:
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")
    np.asarray(compute())
    (dumped,) = tmp_path.glob("*.loops.mlir")
    return dumped.read_text()


def test_only_the_accumulation_is_reassociated(tmp_path, monkeypatch):
    x = xp.asarray(np.linspace(0, 1, 3 * 1001).reshape(3, 1001))
    text = _loops_mlir(tmp_path, monkeypatch, lambda: xp.sum(x * 2.0 + 1.0, axis=1))
    adds = re.findall(r"arith\.addf[^\n]*", text)
    assert len(adds) == 2  # the fused "+ 1.0" and the accumulation
    assert sum("reassoc" in a for a in adds) == 1
    assert "reassoc" not in "".join(re.findall(r"arith\.mulf[^\n]*", text))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_long_sums_match_numpy_pairwise_summation(dtype, axis):
    a = np.random.default_rng(3).uniform(0.5, 1.5, (1000, 3001)).astype(dtype)
    got = np.asarray(xp.sum(xp.asarray(a), axis=axis))
    np.testing.assert_allclose(got, np.sum(a, axis=axis), rtol=1e-5 if dtype == np.float32 else 1e-12)


def test_products_and_extrema_stay_exact_where_order_cannot_matter():
    a = np.random.default_rng(4).uniform(-1, 1, (64, 257))
    np.testing.assert_array_equal(np.asarray(xp.max(xp.asarray(a), axis=1)), np.max(a, axis=1))
    powers = np.full((3, 40), 2.0)
    np.testing.assert_array_equal(np.asarray(xp.prod(xp.asarray(powers), axis=1)), np.prod(powers, axis=1))
