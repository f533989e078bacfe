"""``fft``: the discrete Fourier transform along the last axis (XLA's FFT op, one dimension).

Four kinds, ``fft_type`` (XLA's ``FftType``), with ``X[k] = sum_j x[j] exp(-2 pi i j k / n)``:

- ``"FFT"``: complex ``x`` of n points to ``X``, the same shape and dtype.
- ``"IFFT"``: the same with ``+`` in the exponent and divided by ``n``, as XLA scales it.
- ``"RFFT"``: real ``x`` of n points to its ``n // 2 + 1`` non-negative frequency terms
  (the others are their conjugates): float32 gives complex64, float64 complex128.
- ``"IRFFT"``: the inverse, attribute ``fft_length=(n,)``: the ``n // 2 + 1`` first terms of a
  Hermitian spectrum to the real signal of n points (complex64 gives float32, complex128
  float64), divided by ``n``. As ``numpy.fft.irfft``, the imaginary parts of the zero
  frequency term and (even n) of the Nyquist term ``X[n / 2]`` do not enter the result.
  ``fft_length`` is a size attribute (a tuple of one entry, as ``reshape``'s ``dims``), so
  that a graph's transforms of other lengths are its structure at other sizes.

``plaidarray.fft`` builds every function of the extension on it (other axes, n
dimensions, ``norm``, ``hfft``/``ihfft`` as conjugated real transforms).

Its lowerings are registered per platform: the target-neutral expansion into other HLO ops
(``codegen/lowerings/fft.py``), which llvm-cpu combines with its compiled Stockham FFT
(``backend/llvm_cpu/fft.py``).
"""

from __future__ import annotations

import collections
import functools
import threading

import numpy as np

from ... import config
from ..opdef import OpDef, register
from ..shape import Shape

FFT_TYPES = {"FFT": -1, "IFFT": 1, "RFFT": -1, "IRFFT": 1}  # the sign of the exponent
#: The complex dtype of a real transform's spectrum, by the real dtype of its signal.
_SPECTRUM_DTYPES = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_SIGNAL_DTYPES = {c: r for r, c in _SPECTRUM_DTYPES.items()}
_COMPLEX_DTYPES = {c: c for c in _SIGNAL_DTYPES}
#: fft_type -> the result's dtype by the operand's: the dtypes each kind takes, and gives.
_RESULT_DTYPES = {"FFT": _COMPLEX_DTYPES, "IFFT": _COMPLEX_DTYPES, "RFFT": _SPECTRUM_DTYPES,
                  "IRFFT": _SIGNAL_DTYPES}


def _infer(shapes, attrs):
    (x,) = shapes
    kind = attrs.get("fft_type")
    results = _RESULT_DTYPES.get(kind)
    if results is None:
        raise ValueError(f"fft: fft_type must be one of {sorted(FFT_TYPES)}, got {kind!r}")
    if (kind == "IRFFT") != ("fft_length" in attrs):
        raise ValueError(f"fft: fft_length is the attribute of IRFFT (and only of it), got fft_type={kind!r} "
                         f"with {'no ' if kind == 'IRFFT' else ''}fft_length")
    dims, dtype = x.dims, results.get(x.dtype)
    if dtype is None or not dims:
        expected = "a float32 or float64" if kind == "RFFT" else "a complex"
        raise TypeError(f"fft: {kind} expects {expected} array of rank >= 1, got {x}")
    if kind == "RFFT":
        if not dims[-1]:
            raise ValueError(f"fft: RFFT needs at least one point along the last axis, got {x}")
        return Shape((*dims[:-1], dims[-1] // 2 + 1), dtype)
    if kind == "IRFFT":
        length = attrs["fft_length"]
        n = length[0] if type(length) is tuple and len(length) == 1 else None
        if type(n) is not int or n < 1:
            raise ValueError(f"fft: IRFFT's fft_length must be (n,) for an int n >= 1, got {length!r}")
        if dims[-1] != n // 2 + 1:
            raise ValueError(f"fft: IRFFT of fft_length={n} expects {n // 2 + 1} terms along the last axis, got {x}")
        return Shape((*dims[:-1], n), dtype)
    return x


_REFERENCES = {"FFT": np.fft.fft, "IFFT": np.fft.ifft, "RFFT": np.fft.rfft, "IRFFT": np.fft.irfft}


def _evaluate(args, attrs, shape):
    (x,) = args
    wide = x.astype(np.float64 if x.dtype.kind == "f" else np.complex128)
    y = _REFERENCES[attrs["fft_type"]](wide, n=attrs["fft_length"][0] if "fft_length" in attrs else None, axis=-1)
    return y.astype(shape.dtype)  # rounded once, as compiled


#: pi/2 in long double (x87 extended on x86-64; where long double is double, as precise as that).
_QUARTER_TURN = 2 * np.arctan(np.longdouble(1))


def unit(turns: np.ndarray, n: int | np.ndarray, sign: int) -> np.ndarray:
    """``exp(sign * 2 pi i * turns / n)`` for integer ``turns`` in [0, n), in float64, within
    about half an ulp: the angle is reduced exactly (in integers) to within pi/4 of a
    multiple k of pi/2, ``2 pi turns / n = k pi/2 + d``, so only the small angle d is
    rounded, in long double, before its cosine and sine (an angle rounded in float64 is
    off by up to an ulp of 2 pi, which took the error of a transform to 2-3x
    pocketfft's); quarter turns are exact. ``n`` may be an array of each element's own n,
    which computes the same bits as a call per n (every step is elementwise, the scale
    pi/4 / n too): tables of two lengths in one call.

    Every lowering of ``fft`` takes its twiddles from here (the expansion's constants, a
    backend's tables and run-time plans), so that each computes the same bits: they are
    defined with the op, not with one of its lowerings."""
    return signed_unit(unit_parts(turns, n), sign)


def unit_parts(turns: np.ndarray, n: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The real and imaginary parts of ``unit(turns, n, 1)``, which both signs' values are
    made of (``signed_unit``): a plan that needs both directions of a length (a real
    transform and its inverse) takes the cosines and sines, most of the cost, once.
    Computed in C where it is built (``_units.c``: the same operations on each element,
    the same bits), else by ``_unit_parts``."""
    turns = np.asarray(turns, np.int64)
    if _UNITS is not None and turns.ndim == 1:
        n_given = _c_length(n, turns.shape)
        if n_given is not None:
            counts = np.ascontiguousarray(turns)
            re, im = np.empty(len(counts)), np.empty(len(counts))
            if _UNITS.unit_parts(counts, n_given, _QUARTER_TURN_BYTES, re, im):
                return re, im
    return _unit_parts(turns, n)


def _c_length(n: int | np.ndarray, shape: tuple[int, ...]) -> int | np.ndarray | None:
    """``n`` as ``_units.unit_parts`` takes it: an integer, or signed integers one per turn
    (of ``shape``); None for any other form (a length broadcast to the turns, of another
    kind), which the definition computes as NumPy's rules say."""
    if isinstance(n, (int, np.integer)):
        return int(n)
    if isinstance(n, np.ndarray) and n.dtype.kind == "i" and (n.shape == shape or n.ndim == 0):
        return int(n) if n.ndim == 0 else np.ascontiguousarray(n, np.int64)
    return None


def _unit_parts(turns: np.ndarray, n: int | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``unit_parts`` in NumPy: its definition."""
    eighths, rest = np.divmod(8 * turns, n)  # 2 pi turns / n = (eighths + rest / n) pi/4
    above = (eighths & 1).astype(bool)  # then nearer (eighths + 1) pi/4, d = -(n - rest) / n pi/4
    k = ((eighths + above) >> 1) & 3
    d = np.where(above, n - rest, rest).astype(np.longdouble) * (_QUARTER_TURN / 2 / n)
    c, s = np.cos(d).astype(np.float64), np.sin(d).astype(np.float64)
    np.negative(s, out=s, where=above)
    odd = (k & 1).astype(bool)  # times i^k: (c, s), (-s, c), (-c, -s), (s, -c); a sign is exact
    return np.where(odd, s, c) * _REAL_SIGNS[k], np.where(odd, c, s) * _IMAGINARY_SIGNS[k]


#: ``_units.c``, or None (``_unit_parts`` runs instead).
_UNITS = config.c_module("plaidarray.hlo.ops._units")
#: ``_QUARTER_TURN``'s bytes, as ``_units.unit_parts`` takes it.
_QUARTER_TURN_BYTES = _QUARTER_TURN.tobytes()

#: The signs of ``unit_parts``' real and imaginary parts by quarter turn k (a product by
#: -1.0 negates exactly, zeros included, as ``np.negative``; two gathers and products
#: cost less than ``np.choose`` of four arrays).
_REAL_SIGNS = np.array([1.0, -1.0, -1.0, 1.0])
_IMAGINARY_SIGNS = np.array([1.0, 1.0, -1.0, -1.0])


def signed_unit(parts: tuple[np.ndarray, np.ndarray], sign: int) -> np.ndarray:
    """``unit``'s values of ``unit_parts``' ``parts`` for ``sign``."""
    re, im = parts
    return re + 1j * sign * im


def real_split_factors(n: int, sign: int) -> tuple[np.ndarray, np.ndarray]:
    """The factors ``a``, ``b`` (complex128) of the real kinds' step between n (even) real
    points and the n / 2-point complex transform of their pairs, with ``w = exp(-2 pi i / n)``
    (:func:`unit`): forward (sign -1), ``X[k] = a[k] Z[k] + b[k] conj(Z[n/2 - k])`` for
    k <= n / 2, ``a = (1 - i w^k) / 2``, ``b = (1 + i w^k) / 2``; backward (sign 1),
    ``Z[k] = a[k] X[k] + b[k] conj(X[n/2 - k])`` for k < n / 2, ``a = (1 + i w^-k) / n``,
    ``b = (1 - i w^-k) / n`` (the inverse's scale 1 / (n / 2) in them). Defined with the
    op, as :func:`unit`: every lowering that splits or folds this way (the expansion, a
    backend's plans made at run time) multiplies by the same bits."""
    half = n // 2
    if sign < 0:
        w = unit(np.arange(half + 1), n, -1)
        return (1 - 1j * w) / 2, (1 + 1j * w) / 2
    w = unit(np.arange(half), n, 1)
    return (1 + 1j * w) / n, (1 - 1j * w) / n


def bluestein_tables(n: int, m: int, sign: int) -> tuple[np.ndarray, np.ndarray]:
    """Bluestein's constants for n points convolved in m >= 2n - 1 (complex128): the chirp
    ``c[j] = exp(sign pi i j^2 / n)`` (:func:`unit`), and the spectrum of the circular
    response ``conj(c[|j|])`` over m points, divided by m (the inverse transform's scale),
    computed in long double: every lowering's Bluestein transform uses these, as it uses
    :func:`unit`. The two signs' chirps are conjugates (``signed_unit``), so are their
    responses, and a response is even (``r[j] = r[m - j]``), so the spectrum of sign 1 is
    the conjugate of sign -1's: made once for both (``_spectrum``), where a length's
    transform and its inverse (a filter's rfft and irfft) each took a long double FFT of m
    points, most of planning a length of a large prime factor."""
    chirp = signed_unit(_chirp_parts(n), sign)
    spectrum = _spectrum(n, m)
    return chirp, spectrum.copy() if sign < 0 else np.conj(spectrum)


#: ``_spectrum``'s answers by (n, m), newest last, read-only: the last ``KEPT_SPECTRA``
#: while they hold at most ``KEPT_SPECTRUM_BYTES`` (the newest always), a length's two
#: directions taking one.
_SPECTRA: collections.OrderedDict[tuple[int, int], np.ndarray] = collections.OrderedDict()
KEPT_SPECTRA = 16
KEPT_SPECTRUM_BYTES = 32 << 20
_SPECTRA_LOCK = threading.Lock()


def _spectrum(n: int, m: int) -> np.ndarray:
    """The spectrum of Bluestein's response of sign -1 (``bluestein_tables``), read-only."""
    with _SPECTRA_LOCK:
        found = _SPECTRA.get((n, m))
        if found is not None:
            _SPECTRA.move_to_end((n, m))
            return found
    chirp = signed_unit(_chirp_parts(n), -1)
    response = np.zeros(m, np.complex128)
    response[:n] = np.conj(chirp)
    response[m - n + 1:] = np.conj(chirp[1:])[::-1]
    found = (np.fft.fft(response.astype(np.clongdouble)) / m).astype(np.complex128)
    found.flags.writeable = False
    with _SPECTRA_LOCK:
        _SPECTRA[n, m] = found
        while len(_SPECTRA) > 1 and (len(_SPECTRA) > KEPT_SPECTRA or
                                     sum(a.nbytes for a in _SPECTRA.values()) > KEPT_SPECTRUM_BYTES):
            _SPECTRA.popitem(last=False)
    return found


def forget_spectra() -> None:
    """Drop the kept spectra (``plaidarray.clear_cache``, through the backends that plan
    with them: ``backend/llvm_cpu/fft_library.py``)."""
    with _SPECTRA_LOCK:
        _SPECTRA.clear()


@functools.lru_cache(maxsize=16)
def _chirp_parts(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``unit_parts`` of Bluestein's chirp of n points, kept for the last lengths met: a
    length's transform and its inverse (a filter's rfft and irfft) take them once;
    read-only (``signed_unit`` makes new arrays)."""
    j = np.arange(n, dtype=np.int64)
    parts = unit_parts(j * j % (2 * n), 2 * n)
    for part in parts:
        part.flags.writeable = False
    return parts


register(OpDef("fft", _infer, _evaluate, arity=1, size_attrs=("fft_length",)))
