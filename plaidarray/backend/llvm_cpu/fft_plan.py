"""The plan of a Stockham FFT of n points (``stockham.py``): its stages' radices and
sizes, its twiddle tables, and the plan a routine of run-time length reads.

Code generated for one length bakes its plan into its loops and binds its table as a
constant; the routines of any length (``stockham.generic_fft``) read the same plan from
a buffer made here when an executable is bound to a length (``fft_library.py``), so
both compute the same bits. Nothing here generates code: an executable loaded from the
cache plans without loading the code generator.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import cast

import numpy as np

from ...hlo.ops.fft import bluestein_tables, signed_unit, unit_parts

#: Prime radices with a butterfly in the kernel; a length with a larger prime factor is
#: not a kernel length (the expansion around the kernel handles that factor).
LARGEST_KERNEL_PRIME = 127
_ODD_PRIMES = tuple(p for p in range(3, LARGEST_KERNEL_PRIME + 1, 2) if all(p % d for d in range(3, p, 2)))
#: Every radix a stage may have.
RADICES = (2, 4, 8, *_ODD_PRIMES)


@functools.lru_cache(maxsize=1024)
def radices(n: int) -> tuple[int, ...] | None:
    """The radices of the stages of an n-point transform, or None if n has a prime factor
    above ``LARGEST_KERNEL_PRIME``. Kept for the last lengths met: a read at a new length
    asks whether its template serves it, and its binding asks again (~8 us each, four a
    length of a filter's rfft and irfft)."""
    twos = (n & -n).bit_length() - 1  # 2^twos divides n: radix 8, then 4 (or 4 and 4 for 8 * 2)
    eights, rest = divmod(twos, 3)
    if rest == 1 and eights:
        eights, rest = eights - 1, 4
    found = [8] * eights + {0: [], 1: [2], 2: [4], 4: [4, 4]}[rest]
    n >>= twos
    for p in _ODD_PRIMES:
        while n % p == 0:
            found.append(p)
            n //= p
    return tuple(found) if n == 1 else None


@dataclass(frozen=True)
class Stage:
    radix: int
    m: int  # butterflies of one interleaved transform (p < m)
    s: int  # interleaved transforms (q < s)
    table: int  # offset of its twiddles in the table (elements); used when m > 1


@functools.lru_cache(maxsize=256)
def stages(n: int) -> tuple[Stage, ...]:
    """The stages of an n-point transform (none where n is not a kernel length). Kept
    for the last lengths met: a length's plan, its inverse's and their tables each ask
    (a fifth of planning a new length)."""
    found, s, offset = [], 1, 0
    for r in radices(n) or ():
        m = n // (s * r)
        found.append(Stage(r, m, s, offset))
        offset += (r - 1) * m if m > 1 else 0
        s *= r
    return tuple(found)


def table_size(n: int) -> int:
    """The number of elements of the twiddle table of n points."""
    return _table_size(stages(n))


def _table_size(found: tuple[Stage, ...]) -> int:
    return max(1, sum((st.radix - 1) * st.m for st in found if st.m > 1))


def twiddles(n: int, sign: int) -> np.ndarray:
    """The twiddle table of the n-point transform with ``exp(sign 2 pi i ...)`` (complex128;
    one unused element when no stage needs twiddles, so that it is never empty)."""
    parts = _parts(n, False)
    return signed_unit(parts, sign) if parts is not None else np.ones(1, np.complex128)


def _turns(found: tuple[Stage, ...]) -> np.ndarray | None:
    """The turns of the twiddles of the stages ``found`` in table order, None where no
    stage needs any: w_l^(p k) with l = n / s is w_n^(s p k); every stage's in one array,
    so that one call of the elementwise ``unit_parts`` makes the table (a call costs tens
    of microseconds whatever its length, and a script's transforms of many lengths each
    make one)."""
    turns = [(st.s * np.arange(st.m)[:, None] * np.arange(1, st.radix)[None, :]).reshape(-1)
             for st in found if st.m > 1]
    return np.concatenate(turns) if turns else None


def real_table_size(n: int) -> int:
    """The number of elements of the twiddle table of the real kinds of n (even) points."""
    return table_size(n // 2) + n


def real_twiddles(n: int, sign: int) -> np.ndarray:
    """The table of the real kinds of even n: that of the n/2-point complex transform,
    then the factors of the step between the two, ``t[k]`` for k < n/2 (:func:`_split`,
    :func:`_fold`): ``-i w^k`` forward, ``i w^-k`` backward, ``w = exp(-2 pi i / n)``;
    then ``i t[k]``, which saves the vector step a shuffle and a negation. Both are
    quarter turns of ``unit``'s values, exact. ``w`` and the n/2-point table are one
    call of ``unit_parts``, each element with its own n."""
    half = n // 2
    both = signed_unit(cast("tuple[np.ndarray, np.ndarray]", _parts(n, True)), sign)
    w, table = both[:half], both[half:]
    if not len(table):
        table = np.ones(1, np.complex128)
    factors = w.imag - 1j * w.real if sign < 0 else -w.imag + 1j * w.real
    return np.concatenate([table, factors, 1j * factors])


#: ``unit_parts`` of the tables of the last lengths planned, by (n, real): a length's
#: transform and its inverse (a filter's rfft and irfft, Bluestein's m points both ways,
#: lengths sharing one m) take the cosines and sines once. Oldest dropped past
#: ``KEPT_PARTS``.
_PARTS: OrderedDict[tuple[int, bool], tuple[np.ndarray, np.ndarray] | None] = OrderedDict()
KEPT_PARTS = 32
_PARTS_LOCK = threading.Lock()


def _parts(n: int, real: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """The sign-free parts of n points' table (of the n/2-point transform's and ``w``'s
    for the real kinds), None where the complex table needs no twiddles."""
    key = (n, real)
    with _PARTS_LOCK:
        if key in _PARTS:
            _PARTS.move_to_end(key)
            return _PARTS[key]
    if real:
        half = n // 2
        turns = _turns(stages(half))
        found: tuple[np.ndarray, np.ndarray] | None = (
            unit_parts(np.arange(half), n) if turns is None else
            unit_parts(np.concatenate([np.arange(half), turns % half]), np.repeat([n, half], [half, len(turns)])))
    else:
        turns = _turns(stages(n))
        found = unit_parts(turns % n, n) if turns is not None else None
    with _PARTS_LOCK:
        _PARTS[key] = found
        while len(_PARTS) > KEPT_PARTS:
            _PARTS.popitem(last=False)
    return found


#: int64 words of a plan's header before its stages: the header's length in complex
#: elements (where the twiddles start), the number of stages, where the real kinds'
#: factors start in the twiddles, and one unused word.
HEADER_WORDS = 4
#: int64 words of each stage in the header: radix, m, s, offset of its twiddles.
STAGE_WORDS = 4


def plan(n: int, sign: int, real: bool) -> np.ndarray:
    """The plan that the routine of any length (``stockham.generic_fft``) reads for n
    points with ``exp(sign 2 pi i ...)``, complex128: a header of int64 words (stored in
    the complex elements' bytes; ``HEADER_WORDS``, then ``STAGE_WORDS`` a stage), then
    the table that code made for n binds (:func:`twiddles`; :func:`real_twiddles` for
    the real kinds of even n, whose complex transform has n / 2 points)."""
    points = n // 2 if real else n
    found = stages(points)
    words = [0, len(found), _table_size(found), 0]
    for st in found:
        words += [st.radix, st.m, st.s, st.table]
    words += [0] * (len(words) % 2)
    words[0] = len(words) // 2
    table = real_twiddles(n, sign) if real else twiddles(points, sign)
    return np.concatenate([np.asarray(words, np.int64).view(np.complex128), table])


def bluestein_length(n: int) -> int:
    """The m of Bluestein's transform of n points: the smallest 5-smooth length >= 2n - 1
    (the expansion's choice with llvm-cpu's kernel, which transforms every 5-smooth
    length: ``codegen/lowerings/fft.py``'s ``_bluestein``)."""
    m = 2 * n - 1
    while True:
        rest = m
        for p in (2, 3, 5):
            while rest % p == 0:
                rest //= p
        if rest == 1:
            return m
        m += 1


@functools.lru_cache(maxsize=16)
def _complex_plan(m: int, sign: int) -> np.ndarray:
    """``plan(m, sign, False)``, kept for the last Bluestein lengths m met: each of a
    length's plans, both ways, holds both of m's, and lengths near each other share an m.
    Copied into the plans that hold it; read-only."""
    found = plan(m, sign, False)
    found.flags.writeable = False
    return found


#: int64 words of a Bluestein plan's header: its length in complex elements, m, and where
#: the chirp, the spectrum and the plans of m points forward and backward start.
BLUESTEIN_WORDS = 6


def bluestein_plan(n: int, sign: int) -> np.ndarray:
    """The plan that Bluestein's routine (``stockham._bluestein``) reads for n points with
    ``exp(sign 2 pi i ...)``: a header (``BLUESTEIN_WORDS``), the chirp and the spectrum
    of ``bluestein_tables``, and the plans (:func:`plan`) of m points both ways."""
    m = bluestein_length(n)
    chirp, spectrum = bluestein_tables(n, m, sign)
    forward, backward = _complex_plan(m, -1), _complex_plan(m, 1)
    header = BLUESTEIN_WORDS // 2
    starts = np.cumsum([header, n, m, len(forward)])
    words = np.asarray([header, m, *starts], np.int64)
    return np.concatenate([words.view(np.complex128), chirp, spectrum, forward, backward])

