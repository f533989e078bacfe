"""The target-neutral lowering of ``fft`` (semantics: ``hlo/ops/fft.py``).

Lowering: an expansion into other HLO ops (``Expansion``), O(n log n) for every n. A
backend may give it a ``RowKernel``, its own transform of rows for the lengths it
supports, which the expansion then uses in place of its dense and radix stages (the
hook through which llvm-cpu puts its compiled Stockham FFT, ``backend/llvm_cpu/fft.py``
and ``stockham.py``, under the steps below; there FFT and IFFT of a kernel length, and
RFFT and IRFFT of an even length whose half is one, are one kernel call each, and this
expansion does the rest). Without a kernel:

- n <= ``DENSE_MAX``: one ``dot_general`` with the n x n DFT matrix.
- n whose prime factors are all <= ``LARGEST_RADIX_PRIME``: mixed-radix Cooley-Tukey. A
  stage splits n = a * b with a radix a <= ``DENSE_MAX`` dividing n (a prime factor up to
  ``LARGEST_RADIX_PRIME`` otherwise): the signal seen as an (a, b) array is transformed
  along its length-a axis by a ``dot_general`` with the a x a DFT matrix, multiplied by
  the twiddles ``exp(-2 pi i n2 k1 / n)``, transposed, and transformed along the length-b
  axis the same way, down to a dense stage. Each stage reads and writes the signal once
  and costs O(n a): O(n log n) in all.
- any other n: Bluestein's algorithm, the transform as a convolution with a chirp, done
  by transforms of the power of two m >= 2n - 1 above (with a kernel, of the smallest
  5-smooth m >= 2n - 1 it supports); the chirp's own spectrum is a constant, computed
  when the graph is compiled (NumPy's FFT in long double), so a call does two
  transforms of m points, not three. Primes up to ``LARGEST_RADIX_PRIME`` = 127 take a
  dense stage rather than this: Bluestein's error there is 2-3.5x pocketfft's, which
  takes a direct DFT up to about the same size.

With a kernel, a stage splits off the smallest prime factor the kernel lacks (a dense
stage of up to 127 points; llvm-cpu's kernel lacks none of them) and leaves the rest to
the kernel.

Real transforms of even n do half the work of a complex one (the half-length trick): RFFT
packs ``z[j] = x[2j] + i x[2j+1]``, transforms it with the n/2-point FFT above and splits
the result, ``X[k] = (Z[k] + conj(Z[n/2 - k])) / 2 - i/2 w^k (Z[k] - conj(Z[n/2 - k]))``
with ``w = exp(-2 pi i / n)``, two constant factors times ``Z[k]`` and the mirrored
``conj(Z[n/2 - k])``; IRFFT inverts that step (``Z[k]`` from ``X[k]`` and
``conj(X[n/2 - k])``), does one n/2-point IFFT and unpacks ``x[2j]``, ``x[2j+1]`` from the
real and imaginary parts. Odd n (where the packing does not apply) take the complex
transform of n points: RFFT of ``x + 0i`` cut to ``n // 2 + 1`` terms, IRFFT of the full
spectrum rebuilt from the conjugate mirror.

The twiddles (DFT matrices, factors between stages, chirps, the real kinds' split
factors, the kernel's tables) are computed when the graph is compiled by ``unit`` (defined with
the op, ``hlo/ops/fft.py``, so that every lowering computes the same bits), to
about half an ulp: integer turns reduced exactly to a small angle from a multiple of pi/2
(quarter turns exact), its cosine and sine in long double, rounded to float64. They
become constants bound to the executable (``bind_constants``), so a cached call plans
nothing.
Single precision is transformed in double and rounded once (``expand``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...hlo.ir import Instruction
from ...hlo.ops.fft import bluestein_tables, real_split_factors, unit
from ...hlo.literal import Literal
from ...hlo.shape import Shape
from ..lowering import Expansion, register_lowering

#: Lengths transformed by one dense matrix product, and the largest radix of a stage.
DENSE_MAX = 16
#: Prime factors up to this are radices of their own; a larger one makes the length a
#: Bluestein transform.
LARGEST_RADIX_PRIME = 127


def _constant(values: np.ndarray, dtype: np.dtype) -> Instruction:
    return Instruction.make("constant", (), value=Literal(values.astype(dtype)))


def _dft_matrix(n: int, sign: int, dtype: np.dtype) -> Instruction:
    j = np.arange(n)
    return _constant(unit(np.outer(j, j) % n, n, sign), dtype)


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


@dataclass(frozen=True)
class RowKernel:
    """A backend's own transform of rows, which the expansion uses where it can (the
    hook by which llvm-cpu puts its compiled FFT, ``backend/llvm_cpu/fft.py``, under the
    expansion's Bluestein, mixed-radix and odd real-kind steps): ``supports(n)`` says whether
    it transforms rows of n points, ``transform(x, sign)`` builds the unscaled transform
    of each row of ``x`` (rows, n), complex128, with ``exp(sign 2 pi i ...)``."""

    supports: Callable[[int], bool]
    transform: Callable[[Instruction, int], Instruction]


def _transform(x: Instruction, sign: int, kernel: RowKernel | None) -> Instruction:
    """The unscaled transform of each row of ``x`` (rows, n). Each call it makes (and
    Bluestein's, of 5-smooth or power-of-two lengths) splits a prime factor off the
    length: it recurses at most 2 log2(n) + 3 deep."""
    rows, n = x.shape.dims
    if n == 1:
        return x
    if kernel is not None and kernel.supports(n):
        return kernel.transform(x, sign)
    if n <= DENSE_MAX:
        return _dense(x, n, sign)
    if _prime_factors(n)[-1] > LARGEST_RADIX_PRIME:
        return _bluestein(x, sign, kernel)
    # With a kernel, a stage of the smallest prime it lacks, the rest for the kernel.
    a = _radix(n) if kernel is None else next(p for p in _prime_factors(n) if not kernel.supports(p))
    if a == n:
        return _dense(x, n, sign)
    b = n // a
    # x[b * n1 + n2] at (n1, n2): transform along n1, to (rows, b, a) = (n2, k1).
    y = _op("dot_general", _reshape(x, (rows, a, b)), _dft_matrix(a, sign, x.shape.dtype), lhs_batch=(),
            rhs_batch=(), lhs_contracting=(1,), rhs_contracting=(0,))
    y = _times(y, _constant(unit(np.outer(np.arange(b), np.arange(a)) % n, n, sign), x.shape.dtype))
    # Along n2, each k1 a row of its own: X[k1 + a * k2] at (k2, k1).
    y = _transform(_reshape(_op("transpose", y, permutation=(0, 2, 1)), (rows * a, b)), sign, kernel)
    y = _op("transpose", _reshape(y, (rows, a, b)), permutation=(0, 2, 1))
    return _reshape(y, (rows, n))


def _bluestein(x: Instruction, sign: int, kernel: RowKernel | None) -> Instruction:
    """``X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k - j])`` with the chirp
    ``c[j] = exp(sign * pi i j^2 / n)``: a circular convolution of length m, a power of
    two >= 2n - 1, computed by transforms of length m."""
    rows, n = x.shape.dims
    dtype = x.shape.dtype
    m = 1 << (2 * n - 2).bit_length()
    if kernel is not None:  # the smallest 5-smooth length it transforms: up to half the work
        m = next(k for k in range(2 * n - 1, m + 1) if _prime_factors(k)[-1] <= 5 and kernel.supports(k))
    chirp, spectrum_values = bluestein_tables(n, m, sign)
    c = _constant(chirp, dtype)
    padded = _op("pad", _times(x, c), _constant(np.zeros(()), dtype), low=(0, 0), high=(0, m - n),
                 interior=(0, 0))
    # The response's spectrum, with the inverse transform's 1 / m.
    spectrum = _constant(spectrum_values, dtype)
    convolution = _transform(_times(_transform(padded, -1, kernel), spectrum), 1, kernel)
    return _times(_columns(convolution, 0, n), c)


def _columns(x: Instruction, start: int, stop: int, stride: int = 1) -> Instruction:
    """Columns ``start:stop:stride`` of ``x`` (rows, n)."""
    rows = x.shape.dims[0]
    return _op("slice", x, start=(0, start), limit=(rows, stop), strides=(1, stride))


def _zeros(shape: Shape) -> Instruction:
    return _op("broadcast_in_dim", _constant(np.zeros(()), shape.dtype), dims=shape.dims, broadcast_dimensions=())


def _mirror(x: Instruction) -> Instruction:
    """``conj(x[m - 1 - k])`` for each row of ``x`` (rows, m)."""
    return _op("conj", _op("reverse", x, dimensions=(1,)))


def _complex(x: Instruction, n: int, sign: int, kernel: RowKernel | None) -> Instruction:
    """FFT / IFFT of each row of ``x`` (rows, n), complex128."""
    y = _transform(x, sign, kernel)
    return _times(y, _constant(np.full(n, 1.0 / n), _WIDE)) if sign > 0 else y


def _real_to_complex(x: Instruction, n: int, kernel: RowKernel | None) -> Instruction:
    """RFFT of each row of ``x`` (rows, n), float64: (rows, n // 2 + 1) complex128."""
    if n % 2:
        return _columns(_transform(_op("complex", x, _zeros(x.shape)), -1, kernel), 0, n // 2 + 1)
    z = _transform(_op("complex", _columns(x, 0, n, 2), _columns(x, 1, n, 2)), -1, kernel)
    z = _op("concatenate", z, _columns(z, 0, 1), dimension=1)  # Z[k mod n/2] for k = 0 ... n/2
    a, b = real_split_factors(n, -1)
    return _op("add", _times(z, _constant(a, _WIDE)), _times(_mirror(z), _constant(b, _WIDE)))


def _complex_to_real(x: Instruction, n: int, kernel: RowKernel | None) -> Instruction:
    """IRFFT of each row of ``x`` (rows, n // 2 + 1), complex128: (rows, n) float64."""
    rows, terms = x.shape.dims
    half = n // 2
    real_parts_only = np.zeros(terms, bool)
    real_parts_only[[0, -1] if n % 2 == 0 else [0]] = True
    imag = _op("select", _op("broadcast_in_dim", _constant(real_parts_only, np.dtype(bool)), dims=(rows, terms),
                             broadcast_dimensions=(1,)),
               _zeros(Shape((rows, terms), _REAL_WIDE)), _op("imag", x))
    x = _op("complex", _op("real", x), imag)
    if n % 2:  # X[n - k] = conj(X[k])
        full = _op("concatenate", x, _mirror(_columns(x, 1, terms)), dimension=1)
        return _op("real", _complex(full, n, 1, kernel))
    # Z[k] = (X[k] + conj(X[n/2 - k])) / 2 + i/2 w^-k (X[k] - conj(X[n/2 - k])), and the
    # IFFT's 1 / (n/2), in the two factors.
    a, b = real_split_factors(n, 1)
    z = _op("add", _times(_columns(x, 0, half), _constant(a, _WIDE)),
            _times(_columns(_mirror(x), 0, half), _constant(b, _WIDE)))
    z = _transform(z, 1, kernel)
    # x[2j] = re z[j], x[2j+1] = im z[j]: a select over (rows, half, 2), which fuses into
    # the result (a concatenation would be a pass of its own).
    pairs = Shape((rows, half, 2), np.dtype(np.int32))
    z = _op("broadcast_in_dim", z, dims=pairs.dims, broadcast_dimensions=(0, 1))
    even = _op("compare", _op("iota", dims=pairs.dims, iota_dimension=2, dtype=pairs.dtype), _zeros(pairs),
               direction="EQ")
    return _reshape(_op("select", even, _op("real", z), _op("imag", z)), (rows, n))


#: fft_type -> the transform of each row of a (rows, m) operand in the wide dtypes, given
#: the transform's length n and the backend's row kernel.
_LOWERINGS: dict[str, Callable[[Instruction, int, RowKernel | None], Instruction]] = {
    "FFT": lambda x, n, kernel: _complex(x, n, -1, kernel),
    "IFFT": lambda x, n, kernel: _complex(x, n, 1, kernel),
    "RFFT": _real_to_complex,
    "IRFFT": _complex_to_real,
}


def expand(inst: Instruction, x: Instruction, kernel: RowKernel | None = None) -> Instruction:
    """The HLO computing ``inst`` (an ``fft`` of ``x``): the expansion of the module
    docstring, with ``kernel`` transforming the rows of the lengths it supports."""
    kind, shape = inst.attrs["fft_type"], inst.shape
    rows, n = math.prod(shape.dims[:-1]), (shape if kind == "IRFFT" else x.shape).dims[-1]
    if rows == 0 or n == 0:
        return x if x.shape == shape else _zeros(shape)
    # Single precision is transformed in double and rounded once: in single precision the
    # stages' roundings and twiddles took the error to 3-9x pocketfft's (measured).
    wide = _REAL_WIDE if kind == "RFFT" else _WIDE
    y = _reshape(x, (rows, x.shape.dims[-1]))
    y = _LOWERINGS[kind](y if y.shape.dtype == wide else _op("convert", y, dtype=wide), n, kernel)
    if y.shape.dtype != shape.dtype:
        y = _op("convert", y, dtype=shape.dtype)
    return _reshape(y, shape.dims)


_WIDE = np.dtype(np.complex128)
_REAL_WIDE = np.dtype(np.float64)


register_lowering("fft", Expansion(expand))
