"""``fft``: the discrete Fourier transform along the last axis (XLA's FFT op, one dimension).

``fft_type="FFT"``: ``X[k] = sum_j x[j] exp(-2 pi i j k / n)``; ``"IFFT"``: the same with
``+`` and divided by ``n``, as XLA scales it. Complex in, the same shape and dtype out.
``plaidarray.fft`` builds every function of the extension on it (real input or output,
other axes, n dimensions, ``norm``).

Lowering: an expansion into other HLO ops (``Expansion``), O(n log n) for every n:

- n <= ``DENSE_MAX``: one ``dot_general`` with the n x n DFT matrix.
- n whose prime factors are all <= ``LARGEST_RADIX_PRIME``: mixed-radix Cooley-Tukey. A
  stage splits n = a * b with a radix a <= ``DENSE_MAX`` dividing n (a prime factor up to
  ``LARGEST_RADIX_PRIME`` otherwise): the signal seen as an (a, b) array is transformed
  along its length-a axis by a ``dot_general`` with the a x a DFT matrix, multiplied by
  the twiddles ``exp(-2 pi i n2 k1 / n)``, transposed, and transformed along the length-b
  axis the same way, down to a dense stage. Each stage reads and writes the signal once
  and costs O(n a): O(n log n) in all.
- any other n: Bluestein's algorithm, the transform as a convolution with a chirp, done
  by transforms of the power of two m >= 2n - 1 above.

The twiddles (DFT matrices, factors between stages, chirps) are computed when the graph
is compiled, in float64 from angles whose integer turns are reduced modulo n first (and
quarter turns snapped to exact values), rounded to the operand's precision; they become
constants bound to the executable (``bind_constants``), so a cached call plans nothing.
"""

from __future__ import annotations

import math

import numpy as np

from ..ir import Instruction
from ..literal import Literal
from ..lowering import Expansion
from ..opdef import OpDef, register

FFT_TYPES = {"FFT": -1, "IFFT": 1}  # the sign of the exponent
#: Lengths transformed by one dense matrix product, and the largest radix of a stage.
DENSE_MAX = 16
#: Prime factors up to this are radices of their own; a larger one makes the length a
#: Bluestein transform.
LARGEST_RADIX_PRIME = 61


def _infer(shapes, attrs):
    (x,) = shapes
    if attrs.get("fft_type") not in FFT_TYPES:
        raise ValueError(f"fft: fft_type must be one of {sorted(FFT_TYPES)}, got {attrs.get('fft_type')!r}")
    if x.dtype.kind != "c" or not x.rank:
        raise TypeError(f"fft: expected a complex array of rank >= 1, got {x}")
    return x


def _evaluate(args, attrs, shape):
    (x,) = args
    transform = np.fft.fft if attrs["fft_type"] == "FFT" else np.fft.ifft
    return transform(x.astype(np.complex128), axis=-1).astype(shape.dtype)  # rounded once, as compiled


# --- twiddles, computed when the graph is compiled -----------------------------------------

def _unit(turns: np.ndarray, n: int, sign: int) -> np.ndarray:
    """``exp(sign * 2 pi i * turns / n)`` for integer ``turns`` in [0, n), in float64."""
    angle = turns * (2 * math.pi / n)
    re, im = np.cos(angle), np.sin(angle)
    quarter = (4 * turns) % n == 0
    return np.where(quarter, np.round(re), re) + 1j * sign * np.where(quarter, np.round(im), im)


def _constant(values: np.ndarray, dtype: np.dtype) -> Instruction:
    return Instruction.make("constant", (), value=Literal(values.astype(dtype)))


def _dft_matrix(n: int, sign: int, dtype: np.dtype) -> Instruction:
    j = np.arange(n)
    return _constant(_unit(np.outer(j, j) % n, n, sign), dtype)


# --- the expansion --------------------------------------------------------------------------

def _op(opcode: str, *operands: Instruction, **attrs) -> Instruction:
    return Instruction.make(opcode, operands, **attrs)


def _reshape(x: Instruction, dims: tuple[int, ...]) -> Instruction:
    return x if x.shape.dims == dims else _op("reshape", x, dims=dims)


def _times(x: Instruction, factors: Instruction) -> Instruction:
    """``x`` (rows, ...) times ``factors``, the same for every row."""
    rank = x.shape.rank
    return _op("multiply", x, _op("broadcast_in_dim", factors, dims=x.shape.dims,
                                   broadcast_dimensions=tuple(range(rank - factors.shape.rank, rank))))


def _dense(x: Instruction, n: int, sign: int) -> Instruction:
    """(rows, n) -> (rows, n) by one product with the DFT matrix."""
    return _op("dot_general", x, _dft_matrix(n, sign, x.shape.dtype), lhs_batch=(), rhs_batch=(),
               lhs_contracting=(1,), rhs_contracting=(0,))


def _radix(n: int) -> int:
    """The radix of the next stage: the largest divisor of n up to DENSE_MAX, else its
    smallest prime factor."""
    for a in range(DENSE_MAX, 1, -1):
        if n % a == 0:
            return a
    return _prime_factors(n)[0]


def _prime_factors(n: int) -> list[int]:
    factors, p = [], 2
    while p * p <= n:
        while n % p == 0:
            factors.append(p)
            n //= p
        p += 1
    return factors + [n] if n > 1 else factors


def _transform(x: Instruction, sign: int) -> Instruction:
    """The unscaled transform of each row of ``x`` (rows, n)."""
    rows, n = x.shape.dims
    if n == 1:
        return x
    if n <= DENSE_MAX:
        return _dense(x, n, sign)
    if _prime_factors(n)[-1] > LARGEST_RADIX_PRIME:
        return _bluestein(x, sign)
    a = _radix(n)
    if a == n:
        return _dense(x, n, sign)
    b = n // a
    # x[b * n1 + n2] at (n1, n2): transform along n1, to (rows, b, a) = (n2, k1).
    y = _op("dot_general", _reshape(x, (rows, a, b)), _dft_matrix(a, sign, x.shape.dtype), lhs_batch=(),
            rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))
    y = _times(y, _constant(_unit(np.outer(np.arange(b), np.arange(a)) % n, n, sign), x.shape.dtype))
    # Along n2, each k1 a row of its own: X[k1 + a * k2] at (k2, k1).
    y = _transform(_reshape(_op("transpose", y, permutation=(0, 2, 1)), (rows * a, b)), sign)
    y = _op("transpose", _reshape(y, (rows, a, b)), permutation=(0, 2, 1))
    return _reshape(y, (rows, n))


def _bluestein(x: Instruction, sign: int) -> Instruction:
    """``X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k - j])`` with the chirp
    ``c[j] = exp(sign * pi i j^2 / n)``: a circular convolution of length m, a power of
    two >= 2n - 1, computed by transforms of length m."""
    rows, n = x.shape.dims
    dtype = x.shape.dtype
    m = 1 << (2 * n - 2).bit_length()
    j = np.arange(n, dtype=np.int64)
    chirp = _unit(j * j % (2 * n), 2 * n, sign)
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = np.conj(chirp)
    kernel[m - n + 1:] = np.conj(chirp[1:])[::-1]
    c = _constant(chirp, dtype)
    padded = _op("pad", _times(x, c), _constant(np.zeros(()), dtype), low=(0, 0), high=(0, m - n),
                 interior=(0, 0))
    kernel_spectrum = _transform(_constant(kernel[None, :], dtype), -1)
    spectrum = _op("multiply", _transform(padded, -1),
                   _op("broadcast_in_dim", _reshape(kernel_spectrum, (m,)), dims=(rows, m), broadcast_dimensions=(1,)))
    convolution = _times(_transform(spectrum, 1), _constant(np.full(m, 1.0 / m), dtype))
    head = _op("slice", convolution, start=(0, 0), limit=(rows, n), strides=(1, 1))
    return _times(head, c)


def _expand(inst: Instruction, x: Instruction) -> Instruction:
    dims, dtype = x.shape.dims, x.shape.dtype
    n, rows = dims[-1], math.prod(dims[:-1])
    if rows == 0 or n == 0:
        return x
    sign = FFT_TYPES[inst.attrs["fft_type"]]
    # complex64 is transformed in complex128 and rounded once: in single precision the
    # stages' roundings and twiddles took the error to 3-9x pocketfft's (measured).
    y = _reshape(x, (rows, n)) if dtype == _WIDE else _op("convert", _reshape(x, (rows, n)), dtype=_WIDE)
    y = _transform(y, sign)
    if sign > 0:
        y = _times(y, _constant(np.full(n, 1.0 / n), _WIDE))
    if dtype != _WIDE:
        y = _op("convert", y, dtype=dtype)
    return _reshape(y, dims)


_WIDE = np.dtype(np.complex128)


register(OpDef("fft", _infer, _evaluate, Expansion(_expand), arity=1))
