"""Sibling loop fusion and array contraction (codegen/loop_fusion.py).

Structure is read from the ``loops.mlir`` dump (the loops after both passes); values are
compared with NumPy, including graphs where fusing would be wrong: there a loop reads
another's buffer at a position the other writes in a later iteration.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import plaidarray as xp
from helpers import assert_same
from strategies import arrays


def _loops(fn, *args, tmp_path, monkeypatch) -> tuple[str, np.ndarray]:
    """The loops of the module compiled for ``fn(*args)`` (a jitted function, so the
    module is compiled even when an equal graph was compiled before) and its value."""
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))
    xp.set_backend("llvm-cpu")
    try:
        value = np.asarray(xp.jit(fn)(*[xp.asarray(a) for a in args]))
    finally:
        xp.set_backend(None)
    (dump,) = tmp_path.glob("*.loops.mlir")
    return dump.read_text(), value


def _top_level_loops(text: str) -> int:
    """Loop nests in ``main``'s body (its operations are indented by four spaces)."""
    return len(re.findall(r"^    scf\.for ", text, re.MULTILINE))


def _main_arguments(text: str) -> int:
    return len(re.search(r"func\.func @main\((.*)\)", text).group(1).split("%")) - 1


def _softmax(m, x, axis=-1):
    e = m.exp(x - m.max(x, axis=axis, keepdims=True))
    return e / m.sum(e, axis=axis, keepdims=True)


def _layer_norm(m, x):
    centred = x - m.mean(x, axis=-1, keepdims=True)
    return centred / m.sqrt(m.mean(centred * centred, axis=-1, keepdims=True) + 1e-5)


def _logsumexp(m, x):
    top = m.max(x, axis=-1, keepdims=True)
    return m.log(m.sum(m.exp(x - top), axis=-1)) + m.reshape(top, top.shape[:-1])


def _plus_row_sums_as_columns(m, x):
    """out[i, j] = x[i, j] + sum(x[j, :]): the sum loop writes entry i at row i, the
    add loop reads entry j at row i, so fusing the two would read sums not yet made."""
    return x + m.reshape(m.sum(x, axis=1), (1, -1))


def _minus_column_max(m, x):
    return x - m.max(x, axis=0, keepdims=True)


PATTERNS = {"softmax": _softmax, "softmax axis 0": lambda m, x: _softmax(m, x, 0), "layer norm": _layer_norm,
            "logsumexp": _logsumexp, "plus row sums as columns": _plus_row_sums_as_columns,
            "minus column max": _minus_column_max}
#: How much a pattern amplifies the round-off of its row sums, which both backends add in
#: an order of their own (reassociated): layer norm divides centred values by
#: sqrt(variance + 1e-5), so on a constant row an ulp of the mean becomes 316 ulps.
AMPLIFICATION = {"layer norm": 1e-5 ** -0.5}


def test_softmax_is_one_loop_over_rows_with_no_temporary_buffers(tmp_path, monkeypatch):
    x = np.random.default_rng(0).standard_normal((37, 29)).astype(np.float32)
    text, value = _loops(lambda v: _softmax(xp, v), x, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert _top_level_loops(text) == 1
    assert _main_arguments(text) == 2  # the input and the output: the maxima, sums and exponentials are contracted
    assert text.count("math.exp") == 1  # computed once, kept in a row on the stack
    assert "memref.alloca" in text
    assert_same(value, _softmax(np, x), rtol=1e-6)


def test_layer_norm_is_one_loop(tmp_path, monkeypatch):
    x = np.random.default_rng(1).standard_normal((19, 41))
    text, value = _loops(lambda v: _layer_norm(xp, v), x, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert _top_level_loops(text) == 1
    assert _main_arguments(text) == 2
    assert_same(value, _layer_norm(np, x), rtol=1e-12)


def test_a_loop_reading_another_row_is_not_fused(tmp_path, monkeypatch):
    x = np.random.default_rng(2).standard_normal((23, 23))
    text, value = _loops(lambda v: _plus_row_sums_as_columns(xp, v), x, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert _top_level_loops(text) >= 2
    assert _main_arguments(text) == 3  # the sums stay a buffer, read by the later loop in any order
    assert_same(value, _plus_row_sums_as_columns(np, x), rtol=1e-12)


def test_a_temporary_larger_than_the_stack_limit_stays_a_buffer(tmp_path, monkeypatch):
    """The target's ``stack_slice_bytes`` bounds a contracted slice."""
    import dataclasses

    from plaidarray.backend.llvm_cpu import targets

    monkeypatch.setattr(targets, "_host", dataclasses.replace(targets.host(), stack_slice_bytes=16))
    x = np.random.default_rng(3).standard_normal((7, 300))
    text, value = _loops(lambda v: _softmax(xp, v), x, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert _top_level_loops(text) == 1
    assert _main_arguments(text) == 3  # the rows of exponentials (2400 bytes) are a buffer again
    assert_same(value, _softmax(np, x), rtol=1e-12)


_SQUARE = st.integers(0, 9).map(lambda n: (n, n))


@pytest.mark.parametrize("pattern", list(PATTERNS))
@given(data=st.data())
def test_row_patterns_match_numpy(backend, pattern, data):
    fn = PATTERNS[pattern]
    shape = data.draw(_SQUARE if pattern == "plus row sums as columns" else
                      st.tuples(st.integers(1, 9), st.integers(1, 9)), label="shape")
    dtype = data.draw(st.sampled_from([np.float32, np.float64]), label="dtype")
    x = data.draw(arrays(dtype, shape, min_value=-30, max_value=30), label="x")
    with np.errstate(all="ignore"):
        expected = fn(np, x)
    finite = np.abs(x[np.isfinite(x)])
    round_off = np.finfo(dtype).eps * max(1.0, finite.max(initial=0.0)) * x.shape[-1]
    # The sign of max(+0, -0) is unspecified; NumPy's depends on its operand order.
    assert_same(fn(xp, xp.asarray(x)), expected, rtol=1e-4 if dtype == np.float32 else 1e-10,
                atol=1e-6 + round_off * AMPLIFICATION.get(pattern, 1.0), signed_zeros=False)
