"""The Array API ``fft`` extension (revision 2024.12): ``plaidarray.fft``.

Every transform is the HLO op ``fft`` (``hlo/ops/fft.py``: a transform along the last
axis, O(n log n) for every length, its twiddles computed once per compile) applied along
one axis at a time: the axis is moved last, trimmed or zero-padded to ``n``, transformed,
scaled for ``norm``, and moved back. N-dimensional transforms apply it axis by axis.

Real-input transforms (``rfft``, ``ihfft``) are its kind ``RFFT`` (``ihfft`` conjugated),
which keeps the ``n // 2 + 1`` non-redundant terms and for even ``n`` does a complex
transform of half the length. Real-output transforms (``irfft``, ``hfft``) are its kind
``IRFFT`` (``hfft`` of the conjugate spectrum), from the first ``n // 2 + 1`` terms of a
Hermitian spectrum; the imaginary parts of the zero-frequency and (for even ``n``)
Nyquist terms are ignored, as NumPy does.

Dtypes: ``fft``/``ifft``/``fftn``/``ifftn`` return the dtype of a complex input;
``rfft``/``rfftn``/``ihfft`` take real floating-point input and return the complex
dtype of the same precision; ``irfft``/``irfftn``/``hfft`` return the real dtype of the
input's precision. As in NumPy, a real floating-point input to a transform that
expects complex data is read as complex (imaginary part 0).

NumPy's ``fft2``, ``ifft2``, ``rfft2`` and ``irfft2`` are here too (an extension):
NumPy-style code calls them, and they are ``fftn``'s kinds over the last two axes.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any, Literal

from . import dtypes as dt
from .api import graph
from .api.creation import placed
from .api.graph import check_array, check_category, convert, in_float64, normalize_axes, op
from .api.manipulation import roll
from .api.recipes import recorded
from .trace.array import Array
from .hlo.opdef import OPS
from .trace.node import derive

__all__ = ["fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift", "fft2", "ifft2", "rfft2", "irfft2"]

Norm = Literal["backward", "ortho", "forward"]

#: Scale of a forward (``exp(-...)``) and of an inverse transform of length n, by ``norm``.
_SCALES = {
    "backward": (lambda n: 1.0, lambda n: 1.0 / n),
    "ortho": (lambda n: 1.0 / math.sqrt(n), lambda n: 1.0 / math.sqrt(n)),
    "forward": (lambda n: 1.0 / n, lambda n: 1.0),
}


def _scale(norm: str, n: int, inverse: bool, where: str) -> float:
    if norm not in _SCALES:
        raise ValueError(f"{where}: norm must be 'backward', 'ortho' or 'forward', got {norm!r}")
    return _SCALES[norm][inverse](n)


# --- the one-dimensional transforms, on the HLO op ---------------------------------------

def _resize(x: Array, axis: int, length: int) -> Array:
    """``x`` trimmed or zero-padded along ``axis`` to ``length``."""
    size = x.shape[axis]
    if length < size:
        return _part(x, axis, 0, length)
    if length > size:
        high = tuple(length - size if i == axis else 0 for i in range(x.ndim))
        return graph.padded(x, graph.constant(0, x.dtype), (0,) * x.ndim, high, (0,) * x.ndim)
    return x


def _part(x: Array, axis: int, start: int, stop: int) -> Array:
    """Entries ``start:stop`` of ``x`` along ``axis``."""
    begin = tuple(start if i == axis else 0 for i in range(x.ndim))
    limit = tuple(stop if i == axis else s for i, s in enumerate(x.shape))
    return op("slice", x, start=begin, limit=limit, strides=(1,) * x.ndim)


#: The HLO op's definition: its shape rule runs at every record.
_FFT = OPS["fft"]


def _fft_op(x: Array, **attrs: Any) -> Array:
    """The HLO ``fft`` of ``x`` along its last axis (``Node.apply`` with its op and arity
    known, as elementwise functions record: a tenth of a small transform's record). A
    transform of one point is that point (its real part for ``IRFFT``): no op of its own
    (an FFT's code is made per length), the same values."""
    node = x._node
    shape = _FFT.infer([node.shape], attrs)
    if shape.dims and shape.dims[-1] == 1 and node.shape.dims[-1] == 1:
        kind = attrs["fft_type"]
        return op("real", x) if kind == "IRFFT" else convert(x, shape.dtype) if kind == "RFFT" else graph.copy_of(x)
    return graph.wrap(derive("fft", (node,), attrs, shape))


def _along(x: Array, axis: int, factor: float, fft_type: str, **attrs) -> Array:
    """The HLO ``fft`` of kind ``fft_type`` of ``x`` along ``axis``, times ``factor``."""
    if axis == x.ndim - 1:
        return _scaled(_fft_op(x, fft_type=fft_type, **attrs), factor)
    order = [*range(axis), *range(axis + 1, x.ndim), axis]
    y = _scaled(_fft_op(graph.transpose(x, tuple(order)), fft_type=fft_type, **attrs), factor)
    return graph.transpose(y, tuple(order.index(i) for i in range(x.ndim)))


def _scaled(y: Array, factor: float) -> Array:
    return y if factor == 1.0 else op("multiply", y, graph.size_operand(factor, y.shape, y.dtype, "fft"))


def _complex_to_complex(x: Array, axis: int, n: int, sign: int, scale: float) -> Array:
    """The transform of ``x`` along ``axis`` with ``exp(sign * 2 pi i jk / n)``, times ``scale``."""
    if sign < 0:
        return _along(_resize(x, axis, n), axis, scale, "FFT")
    return _along(_resize(x, axis, n), axis, scale * n, "IFFT")  # IFFT divides by n already, as XLA's does


def _real_to_complex(x: Array, axis: int, n: int, sign: int, scale: float) -> Array:
    """The ``n // 2 + 1`` non-redundant terms of the transform of a real signal; with
    ``exp(+...)`` they are the conjugates of those with ``exp(-...)``."""
    y = _along(_resize(x, axis, n), axis, scale, "RFFT")
    return y if sign < 0 else op("conj", y)


def _complex_to_real(x: Array, axis: int, n: int, sign: int, scale: float) -> Array:
    """The real signal of length ``n`` whose Hermitian spectrum starts with ``x``; with
    ``exp(-...)`` it is that of the conjugate spectrum (IRFFT divides by n already)."""
    x = _resize(x, axis, n // 2 + 1)
    return _along(x if sign > 0 else op("conj", x), axis, scale * n, "IRFFT", fft_length=(n,))


# --- argument checking -----------------------------------------------------------------

def _as_complex(x: Array, where: str) -> Array:
    x = in_float64(check_array(x, where))
    check_category(x, "floating-point", where)
    return convert(x, dt.complex_dtype(x.dtype))


def _as_real(x: Array, where: str) -> Array:
    x = in_float64(check_array(x, where))
    check_category(x, "real floating-point", where)
    return x



def _axis(x: Array, axis: int, where: str) -> int:
    ndim = x.ndim
    if ndim == 0:
        raise ValueError(f"{where}: expected an array of at least one dimension, got a 0-d array")
    if type(axis) is int and -ndim <= axis < ndim:  # the common case, without normalize_axes' general rules
        return axis % ndim
    return normalize_axes(axis, ndim, where)[0]


def _length(n: Any, default: int, where: str, name: str = "n") -> int:
    """A transform length: ``n`` (``default`` when None) as a positive int."""
    if n is None:
        n = default
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        raise TypeError(f"{where}: {name} must be an int, got {n!r}")
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"{where}: invalid number of data points ({name}={n}); it must be at least 1")
    return n


def _axes_lengths(x: Array, s: Sequence[int] | None, axes: Sequence[int] | None, where: str,
                  hermitian_last: bool = False) -> list[tuple[int, int]]:
    """``(axis, length)`` pairs of an n-dimensional transform. The last length defaults
    to ``2 * (M - 1)`` for a transform from a Hermitian half spectrum (``irfftn``)."""
    if axes is None:
        if s is not None:
            raise ValueError(f"{where}: when s is given, axes must be given too")
        axes = range(x.ndim)
    axes = [normalize_axes(a, x.ndim, where)[0] for a in axes] if x.ndim else list(axes)
    if x.ndim == 0 and axes:
        raise ValueError(f"{where}: a 0-d array has no axis {axes[0]}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{where}: s and axes must have the same length, got {len(s)} and {len(axes)}")
    defaults = [x.shape[a] for a in axes]
    if hermitian_last and axes:
        defaults[-1] = 2 * (defaults[-1] - 1)
    sizes = [None if s is None or s[i] == -1 else s[i] for i in range(len(axes))]
    return [(a, _length(size, default, where, "s")) for a, size, default in zip(axes, sizes, defaults)]


def _needs_axes(pairs: list, where: str) -> None:
    if not pairs:
        raise ValueError(f"{where}: needs at least one axis to transform")


def _plain(x: object, n: object, axis: object, norm: object, kind: str) -> bool:
    """Whether a one-dimensional transform is called the common way: on an array of
    dtype kind ``kind`` with at least two points along its last axis, transformed there,
    ``n`` and ``norm`` at their defaults. That call is the HLO op alone (nothing to trim,
    pad, scale or move), recorded without the general path's argument handling, which
    costs more than the record itself, and at 1024 points about as much as the
    transform's kernel. ``tests/api/test_fft.py`` checks that both paths record
    the same graph."""
    if type(x) is not Array or n is not None or axis != -1 or norm != "backward":
        return False
    shape = x._node.shape
    return shape.dtype.kind == kind and len(shape.dims) > 0 and shape.dims[-1] > 1


# --- one-dimensional transforms -----------------------------------------------------------

@recorded
def fft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """One-dimensional discrete Fourier transform of ``x`` along ``axis``, trimmed or
    zero-padded to ``n`` points (``numpy.fft.fft``)."""
    if _plain(x, n, axis, norm, "c"):
        return _fft_op(x, fft_type="FFT")
    x = _as_complex(x, "fft")
    axis = _axis(x, axis, "fft")
    n = _length(n, x.shape[axis], "fft")
    return _complex_to_complex(x, axis, n, -1, _scale(norm, n, False, "fft"))


@recorded
def ifft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """One-dimensional inverse discrete Fourier transform (``numpy.fft.ifft``)."""
    if _plain(x, n, axis, norm, "c"):
        return _fft_op(x, fft_type="IFFT")  # divides by n, as norm="backward" asks
    x = _as_complex(x, "ifft")
    axis = _axis(x, axis, "ifft")
    n = _length(n, x.shape[axis], "ifft")
    return _complex_to_complex(x, axis, n, 1, _scale(norm, n, True, "ifft"))


@recorded
def rfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """Transform of a real signal: its ``n // 2 + 1`` non-negative frequency terms
    (``numpy.fft.rfft``); float32 gives complex64, float64 gives complex128."""
    if _plain(x, n, axis, norm, "f"):
        return _fft_op(x, fft_type="RFFT")
    x = _as_real(x, "rfft")
    axis = _axis(x, axis, "rfft")
    n = _length(n, x.shape[axis], "rfft")
    return _real_to_complex(x, axis, n, -1, _scale(norm, n, False, "rfft"))


@recorded
def irfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """Inverse of ``rfft``: the real signal of ``n`` points (default ``2 * (M - 1)``)
    whose non-negative frequency terms are ``x`` (``numpy.fft.irfft``)."""
    if _plain(x, n, axis, norm, "c"):
        return _fft_op(x, fft_type="IRFFT", fft_length=(2 * (x._node.shape.dims[-1] - 1),))
    x = _as_complex(x, "irfft")
    axis = _axis(x, axis, "irfft")
    n = _length(n, 2 * (x.shape[axis] - 1), "irfft")
    return _complex_to_real(x, axis, n, 1, _scale(norm, n, True, "irfft"))


@recorded
def hfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """Transform of a Hermitian-symmetric signal given by its first half: a real result
    of ``n`` points, default ``2 * (M - 1)`` (``numpy.fft.hfft``)."""
    x = _as_complex(x, "hfft")
    axis = _axis(x, axis, "hfft")
    n = _length(n, 2 * (x.shape[axis] - 1), "hfft")
    return _complex_to_real(x, axis, n, -1, _scale(norm, n, False, "hfft"))


@recorded
def ihfft(x: Array, /, *, n: int | None = None, axis: int = -1, norm: Norm = "backward") -> Array:
    """Inverse of ``hfft``: the ``n // 2 + 1`` first terms of the inverse transform of a
    real signal (``numpy.fft.ihfft``)."""
    x = _as_real(x, "ihfft")
    axis = _axis(x, axis, "ihfft")
    n = _length(n, x.shape[axis], "ihfft")
    return _real_to_complex(x, axis, n, 1, _scale(norm, n, True, "ihfft"))


# --- n-dimensional transforms ---------------------------------------------------------------

def _complex_nd(x: Array, s, axes, norm: str, inverse: bool, where: str) -> Array:
    x = _as_complex(x, where)
    for axis, n in _axes_lengths(x, s, axes, where):
        x = _complex_to_complex(x, axis, n, 1 if inverse else -1, _scale(norm, n, inverse, where))
    return x


@recorded
def fftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
         norm: Norm = "backward") -> Array:
    """N-dimensional discrete Fourier transform over ``axes`` (all by default), each
    trimmed or zero-padded to the matching entry of ``s`` (``numpy.fft.fftn``)."""
    return _complex_nd(x, s, axes, norm, False, "fftn")


@recorded
def ifftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Array:
    """N-dimensional inverse discrete Fourier transform (``numpy.fft.ifftn``)."""
    return _complex_nd(x, s, axes, norm, True, "ifftn")


@recorded
def rfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
          norm: Norm = "backward") -> Array:
    """N-dimensional transform of a real array: ``rfft`` over the last of ``axes``, then
    ``fft`` over the others (``numpy.fft.rfftn``)."""
    x = _as_real(x, "rfftn")
    pairs = _axes_lengths(x, s, axes, "rfftn")
    _needs_axes(pairs, "rfftn")
    (axis, n), rest = pairs[-1], pairs[:-1]
    x = _real_to_complex(x, axis, n, -1, _scale(norm, n, False, "rfftn"))
    for axis, n in rest:
        x = _complex_to_complex(x, axis, n, -1, _scale(norm, n, False, "rfftn"))
    return x


@recorded
def irfftn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] | None = None,
           norm: Norm = "backward") -> Array:
    """Inverse of ``rfftn``: ``ifft`` over all but the last of ``axes``, then ``irfft``
    over the last, whose output length defaults to ``2 * (M - 1)`` (``numpy.fft.irfftn``)."""
    x = _as_complex(x, "irfftn")
    pairs = _axes_lengths(x, s, axes, "irfftn", hermitian_last=True)
    _needs_axes(pairs, "irfftn")
    (last, n_last), rest = pairs[-1], pairs[:-1]
    for axis, n in rest:
        x = _complex_to_complex(x, axis, n, 1, _scale(norm, n, True, "irfftn"))
    return _complex_to_real(x, last, n_last, 1, _scale(norm, n_last, True, "irfftn"))


# --- NumPy's two-dimensional transforms (an extension: NumPy-style code calls them) ----------

def _over_last_two(transform: Any, name: str) -> Any:
    """NumPy's ``name``: ``transform`` (an n-dimensional kind) over the last two axes by default."""
    def fn(x: Array, /, *, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1),
           norm: Norm = "backward") -> Array:
        return transform(x, s=s, axes=axes, norm=norm)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"``{transform.__name__}`` over the last two axes by default (``numpy.fft.{name}``; not in the standard)."
    return fn


fft2 = _over_last_two(fftn, "fft2")
ifft2 = _over_last_two(ifftn, "ifft2")
rfft2 = _over_last_two(rfftn, "rfft2")
irfft2 = _over_last_two(irfftn, "irfft2")


# --- frequencies and shifts -----------------------------------------------------------------

def _frequencies(count: int, n: int, wrap_from: int, d: float, dtype: Any, where: str) -> Array:
    """``count`` sample frequencies ``k / (d * n)``, where ``k`` from ``wrap_from`` on
    wraps to ``k - n`` (the negative frequencies)."""
    target = dt.default_float if dtype is None else dt.check_dtype(dtype, "real floating-point", where)
    if d == 0:
        raise ValueError(f"{where}: the sample spacing d must not be zero")
    k = op("iota", dims=(count,), iota_dimension=0, dtype=dt.int64)
    positive = op("compare", k, graph.size_operand(wrap_from, (count,), dt.int64, where), direction="LT")
    k = op("select", positive, k, op("subtract", k, graph.size_operand(n, (count,), dt.int64, where)))
    values = op("multiply", convert(k, dt.float64), graph.size_operand(1.0 / (n * d), (count,), dt.float64, where))
    return convert(values, target)


@placed
@recorded
def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None) -> Array:
    """Sample frequencies of an ``n``-point transform with sample spacing ``d``:
    ``[0, 1, ..., -2, -1] / (d * n)`` (``numpy.fft.fftfreq``)."""
    n = _length(n, n, "fftfreq")
    return _frequencies(n, n, (n + 1) // 2, d, dtype, "fftfreq")


@placed
@recorded
def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None) -> Array:
    """The ``n // 2 + 1`` non-negative sample frequencies of ``rfft``:
    ``[0, 1, ..., n // 2] / (d * n)`` (``numpy.fft.rfftfreq``)."""
    n = _length(n, n, "rfftfreq")
    return _frequencies(n // 2 + 1, n, n // 2 + 1, d, dtype, "rfftfreq")


def _shift(x: Array, axes: int | Sequence[int] | None, direction: int, where: str) -> Array:
    x = check_array(x, where)
    axes = graph.traced_value(axes)
    axes = normalize_axes(axes, x.ndim, where) if axes is None or isinstance(axes, int) else \
        tuple(normalize_axes(a, x.ndim, where)[0] for a in axes)
    if not axes:
        return x
    return roll(x, tuple(direction * (x.shape[a] // 2) for a in axes), axis=axes)


@recorded
def fftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Move the zero-frequency term to the centre of ``axes`` (all by default)."""
    return _shift(x, axes, 1, "fftshift")


@recorded
def ifftshift(x: Array, /, *, axes: int | Sequence[int] | None = None) -> Array:
    """Inverse of ``fftshift`` (they differ by one sample along odd-length axes)."""
    return _shift(x, axes, -1, "ifftshift")
