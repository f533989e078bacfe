"""The bad-input matrix: every case raises a specific exception whose message names the
function and the problem, and arrays made before it keep their values.

Inputs that are legal but hostile (NaN, infinities, zero-size and 0-d arrays, strided,
negative-stride, read-only and byte-swapped NumPy arrays) must give NumPy's results.
Integer operations whose C/LLVM versions are undefined have a defined result, the
same on both backends and at every optimisation level (``test_undefined_behaviour.py``),
checked here against the rule written in docs/reliability.md.
"""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from helpers import assert_same


def _i32(n=3):
    return xp.asarray(np.arange(n, dtype=np.int32))


def _f64(*shape):
    return xp.asarray(np.arange(float(np.prod(shape) if shape else 1)).reshape(shape))


def _c128(n=3):
    return xp.asarray(np.arange(n) + 1j)


class Bystanders:
    """Arrays that exist before a bad call: a NumPy-backed one (zero copy), a computed
    one, and a pending one (still a graph when the error happens)."""

    def __init__(self) -> None:
        self.source = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
        self.shared = xp.asarray(self.source)
        self.computed = self.shared * 2.0
        np.asarray(self.computed)
        self.pending = xp.sum(xp.exp(self.shared), axis=0)

    def check(self) -> None:
        np.testing.assert_array_equal(self.source, np.linspace(-1.0, 1.0, 6).reshape(2, 3))
        np.testing.assert_array_equal(np.asarray(self.shared), self.source)
        np.testing.assert_array_equal(np.asarray(self.computed), self.source * 2.0)
        np.testing.assert_allclose(np.asarray(self.pending), np.exp(self.source).sum(axis=0), rtol=1e-12)
        # The caches still work: a new graph compiles and runs.
        np.testing.assert_array_equal(np.asarray(self.shared[1] - 1.0), self.source[1] - 1.0)


# (case id, call, exception, message pattern). A call returning an array is also
# materialised, for errors that can only surface when it runs (allocation).
CASES = [
    # --- dtypes and promotion -------------------------------------------------------
    ("uint64 and int64", lambda: xp.ones(2, dtype=xp.uint64) - xp.ones(2, dtype=xp.int64),
     TypeError, r"subtract: no Array API type promotion between uint64 and int64"),
    ("concat of uint64 and int32", lambda: xp.concat([_f64(2), xp.ones(2, dtype=xp.uint64), _i32(2)]),
     TypeError, r"concat: no Array API type promotion between uint64 and int32"),
    ("matmul of uint64 and int64", lambda: xp.matmul(xp.ones((2, 2), dtype=xp.uint64), xp.ones((2, 2), dtype=xp.int64)),
     TypeError, r"matmul: no Array API type promotion"),
    ("setitem of complex into reals", lambda: xp.ones(3, dtype=xp.float32).__setitem__(0, xp.asarray(1j)),
     TypeError, r"__setitem__: cannot store complex128 values into a float32 array \(it would drop what they say"),
    ("setitem of floats into integers", lambda: _i32().__setitem__(0, _f64(3)[0]),
     TypeError, r"__setitem__: cannot store float64 values into a int32 array"),
    ("in-place Python float into an int array", lambda: _i32().__iadd__(1.5),
     TypeError, r"in-place add would change the dtype int32 to float64"),
    ("Python int beyond the dtype", lambda: xp.ones(3, dtype=xp.int8) + 1000,
     OverflowError, r"1000 out of bounds for int8"),
    ("real function on complex values", lambda: xp.atan2(_c128(), _c128()),
     TypeError, r"atan2: expected an array of real floating-point dtype, got complex128"),
    ("bitwise on floats", lambda: xp.bitwise_and(_f64(2), _f64(2)),
     TypeError, r"bitwise_and: expected an array of integer or boolean dtype, got float64"),
    ("maximum of complex numbers", lambda: xp.max(_f64(3) * 1j),
     TypeError, r"max: expected an array of real numeric dtype, got complex128"),
    ("unsupported dtype object", lambda: xp.ones(3, dtype=np.float16),
     TypeError, r"ones: unsupported dtype float16; plaidarray supports bool, int8"),
    ("not a dtype", lambda: xp.astype(_f64(2), "nonsense"),
     TypeError, r"astype: 'nonsense' is not a dtype"),
    ("NumPy string array", lambda: xp.asarray(np.array(["a", "b"])),
     TypeError, r"asarray: unsupported dtype <U1"),
    ("NumPy float16 array", lambda: xp.asarray(np.ones(3, np.float16)),
     TypeError, r"asarray: unsupported dtype float16"),
    ("list of strings", lambda: xp.asarray(["yes", "no"]),
     TypeError, r"asarray: unsupported dtype <U3"),
    ("complex to real cast", lambda: xp.astype(xp.asarray([1j]), xp.float64),
     TypeError, r"astype: casting complex complex128 to float64 would drop the imaginary part"),
    ("non-boolean condition", lambda: xp.where(_f64(3), _f64(3), 0.0),
     TypeError, r"where: condition must be boolean, got float64"),
    ("float indices", lambda: xp.take(_f64(3), _f64(2)),
     TypeError, r"take: indices must have an integer dtype, got float64"),
    # --- shapes -----------------------------------------------------------------------
    ("broadcast mismatch", lambda: _f64(2, 3) + _f64(4),
     ValueError, r"shapes \(2, 3\), \(4,\) cannot be broadcast together"),
    ("matmul inner dimensions", lambda: xp.matmul(_f64(2, 3), _f64(4, 2)),
     ValueError, r"matmul: contracted dimensions differ: \(2, 3\) @ \(4, 2\)"),
    ("matmul of 0-d", lambda: xp.matmul(_f64(), _f64(3)),
     ValueError, r"matmul: operands must be at least 1-D"),
    ("reshape to a wrong size", lambda: xp.reshape(_f64(6), (4,)),
     ValueError, r"reshape: cannot reshape an array of size 6 into \(4,\)"),
    ("reshape with two -1", lambda: xp.reshape(_f64(6), (-1, -1)),
     ValueError, r"reshape: shape entries must be non-negative \(one may be -1\), got \(-1, -1\)"),
    ("reshape with a float", lambda: xp.reshape(_f64(6), (2.0, 3)),
     TypeError, r"reshape: each entry of shape must be an int, got 2.0"),
    ("reshape with a string", lambda: xp.reshape(_f64(6), "23"),
     TypeError, r"reshape: shape must be an int or a tuple of ints, got '23'"),
    ("concat outside the axis", lambda: xp.concat([_f64(2, 3), _f64(2, 4)]),
     ValueError, r"concat: shapes \[\(2, 3\), \(2, 4\)\] differ outside axis 0"),
    ("stack of different shapes", lambda: xp.stack([_f64(3), _f64(4)]),
     ValueError, r"stack: all arrays must have the same shape"),
    ("stack of nothing", lambda: xp.stack([]), ValueError, r"stack: need at least one array"),
    ("broadcast_to smaller", lambda: xp.broadcast_to(_f64(3), (4,)),
     ValueError, r"shapes \(3,\), \(4,\) cannot be broadcast together"),
    ("broadcast_to negative", lambda: xp.broadcast_to(_f64(1), (-1,)),
     ValueError, r"broadcast_to: shape entries must be non-negative, got \(-1,\)"),
    ("negative shape", lambda: xp.zeros((2, -3)),
     ValueError, r"full: shape entries must be non-negative, got \(2, -3\)"),
    ("float shape", lambda: xp.ones(2.5),
     TypeError, r"full: shape must be an int or a tuple of ints, got 2.5"),
    ("None shape", lambda: xp.empty(None),
     TypeError, r"full: shape must be an int or a tuple of ints, got None"),
    ("tile by a float", lambda: xp.tile(_f64(3), (1.5,)),
     TypeError, r"tile: each entry of repetitions must be an int, got 1.5"),
    ("negative repeats", lambda: xp.repeat(_f64(2), xp.asarray([1, -2])),
     ValueError, r"repeat: repeats must be non-negative"),
    ("squeeze a long axis", lambda: xp.squeeze(_f64(2, 3), axis=0),
     ValueError, r"squeeze: axis 0 has size 2, not 1"),
    ("axis out of range", lambda: xp.sum(_f64(2, 2), axis=2),
     ValueError, r"sum: axis 2 is out of bounds for array of dimension 2"),
    ("float axis", lambda: xp.sum(_f64(2, 2), axis=1.0),
     TypeError, r"sum: axis must be an int or a tuple of ints, got 1.0"),
    ("repeated axis", lambda: xp.sum(_f64(2, 2), axis=(0, -2)),
     ValueError, r"sum: repeated axis in \(0, -2\)"),
    ("not a permutation", lambda: xp.permute_dims(_f64(2, 3), (0, 0)),
     ValueError, r"permute_dims: \(0, 0\) is not a permutation of 2 axes"),
    ("in-place broadcast growth", lambda: _f64(3).__iadd__(_f64(2, 3)),
     ValueError, r"in-place add would change the shape \(3,\) to \(2, 3\)"),
    ("in-place dtype change", lambda: _i32().__itruediv__(2),
     TypeError, r"in-place divide would change the dtype int32 to float64"),
    ("solve with a wrong right-hand side", lambda: xp.linalg.solve(xp.eye(2), _f64(3)),
     ValueError, r"solve: x2 of shape \(3,\) does not match x1 of shape \(2, 2\)"),
    ("inverse of a non-square matrix", lambda: xp.linalg.inv(_f64(2, 3)),
     ValueError, r"inv: expected square matrices, got shape \(2, 3\)"),
    # --- indices ------------------------------------------------------------------------
    ("integer index past the end", lambda: _f64(5)[5],
     IndexError, r"index 5 is out of bounds for axis 0 with size 5"),
    ("negative index past the start", lambda: _f64(5)[-6],
     IndexError, r"index -6 is out of bounds for axis 0 with size 5"),
    ("too many indices", lambda: _f64(5)[0, 0],
     IndexError, r"too many indices: array is 1-dimensional, but 2 were indexed"),
    ("index into a 0-d array", lambda: _f64()[0],
     IndexError, r"too many indices: array is 0-dimensional, but 1 were indexed"),
    ("float index", lambda: _f64(3)[1.5],
     IndexError, r"unsupported index 1.5: only ints, slices, None and Ellipsis"),
    ("list of floats as an index", lambda: _f64(3)[[0.0, 1.0]],
     IndexError, r"unsupported index \[0.0, 1.0\]"),
    ("string index", lambda: _f64(3)["0"],
     IndexError, r"unsupported index '0'"),
    ("two ellipses", lambda: _f64(2, 2)[..., ...],
     IndexError, r"an index can only have a single ellipsis"),
    ("float array index", lambda: _f64(3)[xp.ones(2)],
     IndexError, r"index arrays must be integers or booleans, got float64"),
    ("mask of the wrong shape", lambda: _f64(3)[xp.asarray([True, False])],
     IndexError, r"boolean index of shape \(2,\) does not match the indexed axes \(3,\)"),
    ("setitem past the end", lambda: _f64(2, 3).__setitem__((5, 0), 1.0),
     IndexError, r"index 5 is out of bounds for axis 0 with size 2"),
    ("slice with step 0", lambda: _f64(3)[::0], ValueError, r"slice step cannot be zero"),
    ("take from an empty axis", lambda: xp.take(xp.ones(0), xp.asarray([0])),
     IndexError, r"take: cannot take from an empty axis"),
    # --- values ------------------------------------------------------------------------
    ("int() of NaN", lambda: int(xp.asarray(np.nan)), ValueError, r"cannot convert nan to int"),
    ("int() of infinity", lambda: int(xp.asarray(np.inf)), OverflowError, r"cannot convert inf to int"),
    ("float() of a vector", lambda: float(_f64(3)), TypeError, r"float\(\) needs a 0-d array, got shape \(3,\)"),
    ("bool() of a vector", lambda: bool(_f64(2)), TypeError, r"bool\(\) needs a 0-d array, got shape \(2,\)"),
    ("len() of a 0-d array", lambda: len(_f64()), TypeError, r"len\(\) of a 0-d array"),
    ("full of NaN as int", lambda: xp.full(3, float("nan"), dtype=xp.int32),
     ValueError, r"full: cannot fill a int32 array with nan"),
    ("full of inf as int", lambda: xp.full(3, float("inf"), dtype=xp.int64),
     ValueError, r"full: cannot fill a int64 array with inf"),
    ("arange to NaN", lambda: xp.arange(0, float("nan")),
     ValueError, r"arange: start, stop and step must be finite, got 0, nan, 1"),
    ("arange with step 0", lambda: xp.arange(0, 3, 0), ValueError, r"arange: step must not be zero"),
    ("asarray of NaN as int", lambda: xp.asarray([float("nan")], dtype=xp.int32),
     ValueError, r"asarray: cannot convert float NaN to integer"),
    ("asarray of a huge Python int", lambda: xp.asarray(2**70),
     OverflowError, r"asarray: Python int too large"),
    ("asarray of -1 as uint8", lambda: xp.asarray([-1], dtype=xp.uint8),
     OverflowError, r"asarray: Python integer -1 out of bounds for uint8"),
    ("max of nothing", lambda: xp.max(xp.ones(0)), ValueError, r"max: zero-size reduction has no identity"),
    ("argmin of nothing", lambda: xp.argmin(xp.ones((3, 0)), axis=1),
     ValueError, r"argmin: attempt to get argmin of an empty sequence"),
    ("fft of nothing", lambda: xp.fft.fft(xp.ones(0, dtype=xp.complex64)),
     ValueError, r"fft: invalid number of data points \(n=0\)"),
    # --- sizes --------------------------------------------------------------------------
    ("7 TiB of ones", lambda: xp.ones((10**6, 10**6)),
     MemoryError, r"cannot allocate a float64 buffer of shape \(1000000, 1000000\)"),
    ("8 TiB arange", lambda: xp.arange(2**40),
     MemoryError, r"cannot allocate a int64 buffer of shape \(1099511627776,\)"),
    ("a broadcast too large to index", lambda: xp.broadcast_to(_f64(1), (2**40, 2**40)),
     ValueError, r"broadcast_to: shape \(1099511627776, 1099511627776\) has more elements than a 64-bit index"),
    ("zeros too large to index", lambda: xp.zeros((2**62, 2**62)),
     ValueError, r"full: shape \(4611686018427387904, 4611686018427387904\) has more elements"),
    # --- objects that are not arrays ----------------------------------------------------
    ("list to a unary function", lambda: xp.exp([1.0]), TypeError, r"exp: expected a plaidarray array, got list"),
    ("None to a reduction", lambda: xp.sum(None), TypeError, r"sum: expected a plaidarray array, got NoneType"),
    ("two lists", lambda: xp.add([1], [2]), TypeError, r"add: at least one argument must be an array"),
    ("a string operand", lambda: xp.add(_f64(3), "a"),
     TypeError, r"add: expected an array or a Python scalar, got str"),
    ("a list operand", lambda: xp.add(_f64(3), [1.0, 2.0, 3.0]),
     TypeError, r"add: expected an array or a Python scalar, got list"),
    ("a list compared by ==", lambda: _f64(3) == [1.0, 2.0, 3.0],
     TypeError, r"equal: an array and a list \(arrays and Python scalars only"),
    ("a tuple compared by != on its left", lambda: (1.0, 2.0, 3.0) != _f64(3),
     TypeError, r"not_equal: an array and a tuple"),
    ("a list with an operator", lambda: _f64(3) * [1.0, 2.0, 3.0], TypeError, r"multiply: an array and a list"),
    ("None with an operator", lambda: _f64(3) + None,
     TypeError, r"unsupported operand type\(s\) for \+: 'Array' and 'NoneType'"),
    ("Decimal with an operator", lambda: _f64(3) * __import__("decimal").Decimal(1),
     TypeError, r"unsupported operand type\(s\) for \*: 'Array' and 'decimal.Decimal'"),
    ("object to asarray", lambda: xp.asarray(object()), TypeError, r"asarray: unsupported dtype object"),
    ("ragged lists to asarray", lambda: xp.asarray([[1, 2], [3]]),
     ValueError, r"asarray: setting an array element with a sequence"),
    ("list to from_dlpack", lambda: xp.from_dlpack([1, 2]),
     TypeError, r"from_dlpack: expected an object supporting DLPack \(__dlpack__\), got list"),
    ("string to jit", lambda: xp.jit(lambda x: x + 1)("a"),
     TypeError, r"jit\(<lambda>\): cannot pass a str as a traced argument"),
    ("unhashable static argument", lambda: xp.jit(lambda x, n: x, static_argnums=1)(_f64(2), [1]),
     TypeError, r"jit\(<lambda>\): static argument 1 must be hashable, got a list"),
    ("jit returning an object", lambda: xp.jit(lambda x: object())(_f64(2)),
     TypeError, r"returned a object; results must be arrays"),
    ("unknown device", lambda: xp.asarray([1.0], device="gpu"),
     ValueError, r"asarray: unsupported device 'gpu'; the devices are 'cpu'"),
    ("unknown backend", lambda: xp.set_backend("tpu"), ValueError, r"unknown backend 'tpu'"),
    ("complex isin", lambda: xp.isin(xp.asarray([1 + 1j, 2]), xp.asarray([1 + 1j])),
     TypeError, r"isin: complex arrays \(complex128\) are not supported"),
]


@pytest.mark.parametrize("call, exception, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_clear_error_and_leaves_other_arrays_intact(call, exception, message):
    bystanders = Bystanders()
    with pytest.raises(exception, match=message):
        result = call()
        if isinstance(result, xp.Array):
            np.asarray(result)
    bystanders.check()


def test_a_failed_materialisation_can_be_retried():
    huge = xp.ones((10**6, 10**6)) * 2.0
    for _ in range(2):
        with pytest.raises(MemoryError):
            np.asarray(huge)
    assert huge.shape == (10**6, 10**6)
    assert float(xp.sum(xp.ones((2, 3)) * 2.0)) == 12.0  # the same graph, smaller, compiles and runs


# --- defined results of operations undefined in C / LLVM ---------------------------------

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=[np.dtype(d).name for d in INT_DTYPES])
def test_integer_division_by_zero_gives_zero_like_numpy(backend, dtype):
    info = np.iinfo(dtype)
    a = np.array([7, 0, 1, info.max, info.min], dtype=dtype)
    zero = np.zeros_like(a)
    with np.errstate(divide="ignore"):
        assert_same(xp.asarray(a) // xp.asarray(zero), a // zero)
        assert_same(xp.asarray(a) % xp.asarray(zero), a % zero)


@pytest.mark.parametrize("dtype", INT_DTYPES[:4], ids=[np.dtype(d).name for d in INT_DTYPES[:4]])
def test_int_min_divided_by_minus_one_wraps_like_numpy(backend, dtype):
    a, b = np.array([np.iinfo(dtype).min, 5], dtype), np.array([-1, -1], dtype)
    with np.errstate(over="ignore"):
        assert_same(xp.asarray(a) // xp.asarray(b), a // b)
        assert_same(xp.asarray(a) % xp.asarray(b), a % b)
        assert_same(-xp.asarray(a[:1]), -a[:1])
        assert_same(xp.abs(xp.asarray(a[:1])), np.abs(a[:1]))


def _shifted(x: np.ndarray, s: np.ndarray, direction: str) -> np.ndarray:
    """The defined shift: counts outside [0, bits) shift every bit out (0, or -1 for an
    arithmetic right shift of a negative number)."""
    bits = x.dtype.itemsize * 8
    inside = (s >= 0) & (s < bits)
    safe = np.where(inside, s, 0).astype(x.dtype)
    zero = np.zeros_like(x)
    if direction == "left":
        return np.where(inside, x << safe, zero)
    return np.where(inside, x >> safe, np.where(x < zero, ~zero, zero))


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=[np.dtype(d).name for d in INT_DTYPES])
def test_shifts_by_the_width_or_more_or_negative_shift_everything_out(backend, dtype):
    bits = np.dtype(dtype).itemsize * 8
    counts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, np.iinfo(dtype).max] + ([-1, -bits] if np.dtype(dtype).kind == "i" else [])
    x = np.full(len(counts), np.iinfo(dtype).max // 3 + 1, dtype=dtype)
    if np.dtype(dtype).kind == "i":
        x[::2] = -x[::2]
    s = np.array(counts, dtype=dtype)
    assert_same(xp.asarray(x) << xp.asarray(s), _shifted(x, s, "left"))
    assert_same(xp.asarray(x) >> xp.asarray(s), _shifted(x, s, "right"))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8, np.uint64], ids=["int8", "int32", "uint8", "uint64"])
def test_float_to_int_saturates_and_nan_gives_zero(backend, dtype):
    info = np.iinfo(dtype)
    values = np.array([np.nan, np.inf, -np.inf, 1e300, -1e300, 2.5, -2.5, float(info.max) * 2], dtype=np.float64)
    expected = np.array([0, info.max, info.min, info.max, info.min, 2, -2 if info.min else 0, info.max], dtype=dtype)
    assert_same(xp.astype(xp.asarray(values), dtype), expected)


def _pending(indices):
    """``indices`` as an index array whose values are not computed yet."""
    pending = xp.asarray(indices) + 0
    assert pending._node.buffer is None
    return pending


def test_out_of_range_gathers_by_pending_indices_clamp(backend):
    """A pending index array is not read to check it (that would cut the graph at every
    gather): its positions out of range clamp, as documented."""
    x = np.arange(10.0, 15.0)
    indices = np.array([0, 4, 5, 100, -1, -5, -6, -100])
    # Negative indices count from the end once; whatever is still outside clamps to the ends.
    expected = np.take(x, np.where(indices < 0, indices + x.size, indices), mode="clip")
    assert_same(xp.take(xp.asarray(x), _pending(indices)), expected)
    assert_same(xp.asarray(x)[_pending(indices)], expected)
    assert_same(xp.take_along_axis(xp.asarray(x), _pending(indices), axis=0), expected)
    # Integer-array indexing clamps each axis on its own.
    grid = np.arange(6.0).reshape(2, 3)
    rows, cols = np.array([0, 5, -3, 1]), np.array([7, 0, -1, -9])
    expected = grid[np.clip(np.where(rows < 0, rows + 2, rows), 0, 1), np.clip(np.where(cols < 0, cols + 3, cols), 0, 2)]
    assert_same(xp.asarray(grid)[_pending(rows), _pending(cols)], expected)


#: Reads of a (3, 4) array by an index array ``i`` of two positions (in a row, for
#: ``take_along_axis``), and the axis ``i`` indexes.
_GATHERS = [
    (lambda x, i: x[i], 0),
    (lambda x, i: x[:, i], 1),
    (lambda x, i: x[..., i], 1),
    (lambda x, i: x[None, 1:, i], 1),
    (lambda x, i: x[x[:, 0] != 5.0, i], 1),  # a mask's two positions beside it
    (lambda x, i: xp.take(x, i, axis=1), 1),
    (lambda x, i: xp.take(x, i, axis=-2), 0),
    (lambda x, i: xp.take_along_axis(x, i, axis=1), 1),
]


@pytest.mark.parametrize(("read", "axis"), _GATHERS)
@pytest.mark.parametrize("kind", ["computed", "numpy"])
def test_out_of_range_gathers_by_computed_indices_raise(backend, read, axis, kind):
    """An index array whose values are computed (made from a list or NumPy, or read) or a
    NumPy array names positions that can be checked where they lie: out of range,
    IndexError naming the index and the axis, as NumPy raises, also where a recipe of the
    same signature replays (it holds no values). In range, negative ones too, the read is
    NumPy's."""
    x = xp.reshape(xp.arange(1.0, 13.0), (3, 4))
    row = read is _GATHERS[-1][0]

    def make(positions):
        positions = np.array([positions] if row else positions)
        return xp.asarray(positions) if kind == "computed" else positions

    n = x.shape[axis]
    for _ in range(3):  # a recipe is kept at a signature's first call, and replayed after
        assert_same(read(x, make([1, -1])), read(np.asarray(x), make([1, -1]) if kind == "numpy" else
                                                 np.asarray(make([1, -1]))))
    with pytest.raises(IndexError, match=f"index {n + 3} is out of bounds for axis {axis} with size {n}"):
        read(x, make([1, n + 3]))
    with pytest.raises(IndexError, match=f"index {-n - 1} is out of bounds for axis {axis} with size {n}"):
        read(x, make([-n - 1, 0]))


@pytest.mark.parametrize("position", [7, -6, np.int64(5), np.uint8(9)])
def test_take_at_an_integer_out_of_range_raises(backend, position):
    """``take`` at a Python or NumPy integer (an extension: one position, the axis dropped,
    as ``numpy.take``) names a position NumPy checks: IndexError out of range, also where
    a recipe of the signature replays; in range, NumPy's element."""
    x = xp.arange(10.0, 15.0)
    for good in (4, 0, 4) + ((-5,) if int(position) < 0 else ()):
        assert float(xp.take(x, type(position)(good))) == float(np.take(np.arange(10.0, 15.0), good))
    with pytest.raises(IndexError, match=f"index {int(position)} is out of bounds for axis 0 with size 5"):
        xp.take(x, position)


def test_a_computed_index_array_found_in_range_is_checked_once_per_axis_length(backend):
    """``indexing._CHECKED``: an index array found in range for an axis length is not looked
    at again for it; for another length it is."""
    from plaidarray.api import indexing

    idx = xp.asarray([0, 3])
    assert_same(xp.arange(4.0)[idx], np.array([0.0, 3.0]))
    assert indexing._CHECKED.get((id(idx._node), 4)) is idx._node
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3"):
        xp.arange(3.0)[idx]


def test_integer_power_with_a_negative_exponent(backend):
    base = np.array([2, 1, -1, -1, 0, 3], dtype=np.int64)
    exponent = np.array([-1, -3, -3, -2, -1, -2], dtype=np.int64)
    # NumPy refuses; the defined result is the truncated value 1 / base**-e (0 unless |base| is 1).
    assert_same(xp.asarray(base) ** xp.asarray(exponent), np.array([0, 1, -1, 1, 0, 0]))


# --- hostile but legal inputs give NumPy's results ----------------------------------------

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 5e-324, 1.7976931348623157e308])

UNARY = ["abs", "exp", "log", "sqrt", "sin", "tanh", "floor", "round", "sign", "isnan", "isinf", "isfinite",
         "signbit", "negative", "square"]


@pytest.mark.parametrize("name", UNARY)
def test_nan_and_infinities_flow_through_unary_functions_like_numpy(backend, name):
    np_name = {"isnan": "isnan"}.get(name, name)
    with np.errstate(all="ignore"):
        expected = getattr(np, np_name)(SPECIAL)
    assert_same(getattr(xp, name)(xp.asarray(SPECIAL)), expected, rtol=1e-15)


REDUCTIONS = ["sum", "prod", "max", "min", "mean", "cumulative_sum", "sort", "argsort", "argmax", "argmin"]


@pytest.mark.parametrize("name", REDUCTIONS)
def test_nan_and_infinities_through_reductions_and_sorts_like_numpy(backend, name):
    numpy_fn = {"cumulative_sum": np.cumsum, "sort": lambda a: np.sort(a, kind="stable"),
                "argsort": lambda a: np.argsort(a, kind="stable")}.get(name, getattr(np, name))
    for values in (SPECIAL, SPECIAL[1:], SPECIAL[3:]):
        with np.errstate(all="ignore"):
            assert_same(getattr(xp, name)(xp.asarray(values)), numpy_fn(values), err_msg=f"{name}({values})")


ZERO_SIZE = {
    "sum": (lambda x: xp.sum(x, axis=0), lambda a: np.sum(a, axis=0)),
    "prod": (lambda x: xp.prod(x), np.prod),
    "any": (lambda x: xp.any(x), np.any),
    "all": (lambda x: xp.all(x), np.all),
    "max axis 0 of (3, 0)": (lambda x: xp.max(xp.reshape(x, (3, 0)), axis=0), lambda a: np.max(a.reshape(3, 0), axis=0)),
    "exp": (xp.exp, np.exp),
    "matmul (0, 3) @ (3, 2)": (lambda x: xp.reshape(x, (0, 3)) @ xp.ones((3, 2)), lambda a: a.reshape(0, 3) @ np.ones((3, 2))),
    "matmul (2, 0) @ (0, 2)": (lambda x: xp.ones((2, 0)) @ xp.ones((0, 2)), lambda a: np.ones((2, 0)) @ np.ones((0, 2))),
    "concat": (lambda x: xp.concat([x, x]), lambda a: np.concatenate([a, a])),
    "sort": (xp.sort, np.sort),
    "argsort": (xp.argsort, np.argsort),
    "unique_values": (xp.unique_values, np.unique),
    "nonzero of (0, 3)": (lambda x: xp.nonzero(xp.reshape(x, (0, 3)))[1], lambda a: np.nonzero(a.reshape(0, 3))[1]),
    "cumulative_sum": (xp.cumulative_sum, np.cumsum),
    "take": (lambda x: xp.take(xp.ones(3), xp.astype(x, xp.int64)), lambda a: np.take(np.ones(3), a.astype(np.int64))),
    "searchsorted into nothing": (lambda x: xp.searchsorted(x, xp.ones(3)), lambda a: np.searchsorted(a, np.ones(3))),
    "roll": (lambda x: xp.roll(x, 2), lambda a: np.roll(a, 2)),
    "tile": (lambda x: xp.tile(x, (2, 3)), lambda a: np.tile(a, (2, 3))),
    "inv of (0, 0)": (lambda x: xp.linalg.inv(xp.reshape(x, (0, 0))), lambda a: np.linalg.inv(a.reshape(0, 0))),
    "det of (0, 0)": (lambda x: xp.linalg.det(xp.reshape(x, (0, 0))), lambda a: np.linalg.det(a.reshape(0, 0))),
}


@pytest.mark.parametrize("name", list(ZERO_SIZE))
def test_zero_size_arrays_like_numpy(backend, name):
    fn, numpy_fn = ZERO_SIZE[name]
    assert_same(fn(xp.asarray(np.zeros(0))), numpy_fn(np.zeros(0)))


ZERO_D = {
    "sum": (xp.sum, np.sum), "mean": (xp.mean, np.mean), "exp": (xp.exp, np.exp), "max": (xp.max, np.max),
    "argmax": (xp.argmax, np.argmax), "flip": (xp.flip, np.flip), "unique_values": (xp.unique_values, np.unique),
    "reshape to (1, 1)": (lambda x: xp.reshape(x, (1, 1)), lambda a: a.reshape(1, 1)),
    "broadcast_to (2,)": (lambda x: xp.broadcast_to(x, (2,)), lambda a: np.broadcast_to(a, (2,))),
    "stack": (lambda x: xp.stack([x, x]), lambda a: np.stack([a, a])),
    "x[...]": (lambda x: x[...], lambda a: a[...]),
    "x[None]": (lambda x: x[None], lambda a: a[None]),
    "x[()]": (lambda x: x[()], lambda a: np.asarray(a[()])),
    "where": (lambda x: xp.where(x > 0, x, -x), lambda a: np.where(a > 0, a, -a)),
}


@pytest.mark.parametrize("name", list(ZERO_D))
def test_zero_dimensional_arrays_like_numpy(backend, name):
    fn, numpy_fn = ZERO_D[name]
    assert_same(fn(xp.asarray(np.float64(-2.5))), numpy_fn(np.asarray(-2.5)))


@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse", "unique_all"])
def test_unique_of_a_python_scalar_is_its_0_d_arrays(backend, name):
    """As ``sum(255)`` and ``unique_values(255)``: the other unique functions took the size
    of their argument, not of its array (AttributeError: 'int' object has no attribute 'size')."""
    found = getattr(xp, name)(255)
    expected = np.unique(np.asarray(255), return_index=True, return_inverse=True, return_counts=True)
    parts = {"unique_values": ["values"], "unique_counts": ["values", "counts"],
             "unique_inverse": ["values", "inverse_indices"],
             "unique_all": ["values", "indices", "inverse_indices", "counts"]}[name]
    numpy_parts = dict(zip(["values", "indices", "inverse_indices", "counts"], expected))
    for part in parts:
        got = found if name == "unique_values" else getattr(found, part)
        np.testing.assert_array_equal(np.asarray(got), np.reshape(numpy_parts[part], np.shape(np.asarray(got))))


def _numpy_inputs() -> dict[str, np.ndarray]:
    base = np.arange(24.0).reshape(4, 6)
    readonly = base.copy()
    readonly.flags.writeable = False
    unaligned = np.frombuffer(b"\0" + base.tobytes(), dtype=np.float64, offset=1).reshape(4, 6)
    return {
        "transposed": base.T,
        "negative strides": base[::-1, ::-2],
        "every other column": base[:, ::2],
        "Fortran order": np.asfortranarray(base),
        "read-only": readonly,
        "big-endian": base.astype(">f8"),
        "unaligned": unaligned,
        "broadcast view (stride 0)": np.broadcast_to(base[0], (3, 6)),
    }


@pytest.mark.parametrize("dtype", [">f8", ">i4", ">f4"])
def test_a_big_endian_scalar_array_stays_0_d(backend, dtype):
    """A 0-d array of foreign byte order is converted as a 0-d one (``ascontiguousarray``
    made it 1-d)."""
    a = np.array(2, dtype)
    assert_same(xp.asarray(a), np.asarray(a, dtype=np.dtype(dtype).newbyteorder("=")), exact=True)


@pytest.mark.parametrize("kind", list(_numpy_inputs()))
def test_strided_read_only_and_foreign_layout_numpy_inputs(backend, kind):
    a = _numpy_inputs()[kind]
    before = a.copy()
    x = xp.asarray(a)
    assert_same(x, np.asarray(a, dtype=np.float64), exact=True)
    assert_same(xp.sum(x * 2.0 + 1.0, axis=0), np.sum(a * 2.0 + 1.0, axis=0))
    assert_same(xp.jit(lambda v: v[::-1] - 1.0)(a), a[::-1] - 1.0)
    assert_same(xp.asarray(xp.ones(a.shape) + a), 1.0 + a)  # a NumPy operand meets an operator
    np.testing.assert_array_equal(a, before)  # inputs are never written


@pytest.mark.skipif(xp.__array_namespace_info__().default_device().platform != "cpu",
                    reason="copy=False shares host memory; a GPU copies it (test_gpu_arrays.py)")
def test_copy_false_refuses_layouts_that_need_a_copy():
    with pytest.raises(ValueError, match="asarray: the input's layout needs a copy, but copy=False"):
        xp.asarray(np.arange(6.0)[::-1], copy=False)
    read_only_view = np.arange(6.0)[1:]
    read_only_view.flags.writeable = False  # of memory that can still be written
    with pytest.raises(ValueError, match="asarray: the input is a read-only view of memory that can still be written"):
        xp.asarray(read_only_view, copy=False)
    shared = np.arange(6.0)
    shared.flags.writeable = False
    assert np.shares_memory(xp.asarray(shared, copy=False)._value(), shared)
    for empty in (np.zeros(0), np.zeros((2, 0, 3), np.float32)):  # no element to share, and no copy needed
        assert xp.asarray(empty, copy=False).shape == empty.shape


def test_a_run_larger_than_memory_raises_memory_error_before_allocating():
    from plaidarray.backend import memory

    available = memory.available_bytes()
    if available is None:
        pytest.skip("this system does not say how much memory is available")
    side = int((2 * available / 8) ** 0.5) + 1  # one float64 result of twice the available memory
    x = xp.ones((side, side)) + 1.0
    with pytest.raises(MemoryError, match=rf"float64 buffer of shape \({side}, {side}\): .* needs .* GiB .* only "
                                          r".* GiB of memory is available"):
        x[0, 0] = 3.0  # reading any part computes the whole result


def test_numpys_trace_called_on_the_namespace_says_to_use_linalg_trace():
    """``xp.trace`` is the tracing package, where NumPy has a function: calling it raises a
    TypeError naming ``linalg.trace`` (it said "'module' object is not callable"), and the
    package still imports as one."""
    import plaidarray.trace.array as array_module

    m = xp.asarray(np.arange(9.0).reshape(3, 3))
    with pytest.raises(TypeError, match=r"plaidarray\.linalg\.trace"):
        xp.trace(m)
    assert array_module.Array is xp.Array
    assert float(xp.linalg.trace(m)) == 12.0
