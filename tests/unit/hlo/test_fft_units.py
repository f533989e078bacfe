"""``fft.unit_parts`` in C (``hlo/ops/_units.c``) against its NumPy definition
(``fft._unit_parts``), bit for bit: every FFT lowering's twiddles come from it, so a plan
made with either computes the same transform. Without the C module (not built, or
``PLAIDARRAY_PURE_PYTHON=1``) ``unit_parts`` is the definition itself and there is nothing
to compare; CI requires it built (``tests/trace/test_read_path_in_c.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plaidarray.hlo.ops import fft

pytestmark = pytest.mark.skipif(fft._UNITS is None, reason="_units.c is not built or not in use")


def _bits(parts: tuple[np.ndarray, np.ndarray]) -> bytes:
    return parts[0].tobytes() + parts[1].tobytes()


@pytest.mark.parametrize("n", [*range(1, 700), 1024, 4093, 4096, 65536, 3**11, 1 << 20, 10**6 + 3, 2**62 // 3])
def test_every_turn_of_a_length_is_the_definitions_bits(n):
    turns = np.arange(min(n, 3000), dtype=np.int64) if n < 10**5 else \
        np.random.default_rng(n % 2**32).integers(0, n, 3000)
    assert _bits(fft.unit_parts(turns, n)) == _bits(fft._unit_parts(turns, n))


@pytest.mark.parametrize("n", [64, 4096, 20014, 65536, 3 * 2**14])
def test_long_runs_of_a_length_whose_angles_repeat_are_the_definitions_bits(n):
    """A real plan's table as ``fft_plan._parts`` asks for it: every turn below n/2 of n,
    then the n/2-point table's turns of n/2, each run long enough that C takes each
    reduced angle once (``Memo``) and hands it to every turn that reduces to it."""
    half = n // 2
    table = np.concatenate([np.arange(half) * r % half for r in (1, 3, 5)])
    turns = np.concatenate([np.arange(half), table])
    lengths = np.repeat(np.array([n, half], np.int64), [half, len(table)])
    assert _bits(fft.unit_parts(turns, lengths)) == _bits(fft._unit_parts(turns, lengths))
    assert _bits(fft.unit_parts(np.arange(4 * n), n)) == _bits(fft._unit_parts(np.arange(4 * n), n))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**9), st.integers(0, 10**9)), min_size=1, max_size=60))
def test_each_element_with_its_own_length_is_the_definitions_bits(pairs):
    """A real plan's tables take each element's own n; turns at or past n (a plan's
    ``turns % half``, Bluestein's ``j * j % 2n``) too."""
    n = np.array([p[0] for p in pairs], np.int64)
    turns = np.array([p[1] for p in pairs], np.int64)
    assert _bits(fft.unit_parts(turns, n)) == _bits(fft._unit_parts(turns, n))


@pytest.mark.parametrize("turns, n", [(np.arange(5), np.int64(12)), (np.arange(5), np.array(12)),
                                      (np.arange(5), np.array([12])), (np.arange(6).reshape(2, 3), 12),
                                      ([3, 1, 4], np.array([[7], [9]]))])
def test_lengths_and_turns_of_other_forms_are_the_definitions(turns, n):
    """A length as a NumPy scalar or 0-d array (C's), one broadcast to the turns, turns of
    another rank (NumPy's): each gives the definition's bits."""
    assert _bits(fft.unit_parts(turns, n)) == _bits(fft._unit_parts(np.asarray(turns, np.int64), n))


@pytest.mark.parametrize("n", [np.array([12, 9, 7, 5, 3.0]), np.full(5, 12, np.uint64)])
def test_lengths_not_signed_integers_are_refused_as_the_definition_refuses_them(n):
    """C takes no other kind (it would read floats as its int64 lengths): the definition's TypeError."""
    with pytest.raises(TypeError):
        fft._unit_parts(np.arange(5), n)
    with pytest.raises(TypeError):
        fft.unit_parts(np.arange(5), n)


@pytest.mark.parametrize("turns, n", [([-1, 3], 8), ([2**61, 1], 5), ([1, 2], 0), ([1, 2], np.array([4, -4]))])
def test_what_c_refuses_is_the_definitions(turns, n):
    """A negative turn, one whose eighths pass int64, a length not positive: NumPy's."""
    turns = np.asarray(turns, np.int64)
    assert not fft._UNITS.unit_parts(turns, n if isinstance(n, int) else np.asarray(n, np.int64),
                                     fft._QUARTER_TURN_BYTES, np.empty(2), np.empty(2))
    with np.errstate(all="ignore"):
        assert _bits(fft.unit_parts(turns, n)) == _bits(fft._unit_parts(turns, n))


@pytest.mark.parametrize("turns, n, re, im, message", [
    (np.arange(3), 8, np.empty(2), np.empty(3), "re is not a buffer of 3 float64"),
    (np.arange(3), np.arange(1, 3), np.empty(3), np.empty(3), "n is not a buffer of 3 int64"),
    (np.arange(3.0), 8, np.empty(3), np.empty(3), "turns is not a buffer of int64 values"),
    (np.arange(3), 8, np.empty(3), np.empty(3, np.int64), "im is not a buffer of 3 float64"),
    (np.int64(3), 8, np.empty(1), np.empty(1), "turns is not a buffer of int64 values"),
    (np.arange(6).reshape(2, 3), 8, np.empty(6), np.empty(6), "turns is not a buffer of int64 values"),
])
def test_buffers_of_other_kinds_or_lengths_are_a_clear_error(turns, n, re, im, message):
    with pytest.raises(ValueError, match=message):
        fft._UNITS.unit_parts(turns, n, fft._QUARTER_TURN_BYTES, re, im)
