"""llvm-cpu's FFT library: the HLO ``fft`` of any length run on code built once, its plan
made when it is bound to a length (XLA's CPU FFT thunk, which plans per shape at run
time; FFTW's and cuFFT's plans).

Code that ``lower_fft`` makes for one length (``fft.py``) bakes the length into its
loops, so a script transforming signals of 40 lengths compiled 80 times. The baseline
tier (``trace/baseline.py``) runs an ``fft`` on an executable made here instead, alone
(``Compiler.without_compiling``) or as a call of its graph's shape-generic sequence
(``Compiler.sized_kernel``, ``_part``): a *template*, one shape-generic executable per kind,
dtype and (real kinds) parity of n, built and cached like any (in the persistent cache,
and at installation by the prebuild's corpus), bound to the rows and length, with the
plan of that length (``fft_plan.plan``: stages and twiddles) and the inverse's scale
1 / n as constants. A length served here costs no compile; a plan is a few microseconds
to tens of microseconds of NumPy on the length's twiddles, kept for ``KEPT_PLANS``
lengths.

A template is the HLO that ``lower_fft`` makes for a length, with its transform of rows
``llvm_cpu.fft_rows`` (``stockham.generic_fft``: the same butterflies on the same
twiddles, with run-time trip counts; an odd IRFFT's mirror and scaling, and Bluestein's
algorithm, inside the routine, in the expansion's operations) and its constants that
depend on n (the plan, the scale) as parameters: the same operations on the same
values, so the baseline tier's result is the fused code's, bit for bit (tests compare
them length by length). Served: every length. RFFT and IRFFT of an even n whose half
has a prime factor above ``fft_plan.LARGEST_KERNEL_PRIME`` (2 p for a prime p above 127)
are the expansion's step between n real points and n / 2 complex ones around
Bluestein's transform of the half: that step is in the template's HLO, as the
expansion writes it, its factors (``real_split_factors``) parameters.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import cast

import numpy as np

from ...hlo import Computation, Instruction, Module
from ...hlo.literal import Literal
from ...hlo.ops.fft import forget_spectra, real_split_factors
from ...hlo.opdef import OpDef
from ...hlo.shape import Shape
from ...hlo.symbolic import Dim, Sym, is_static
from ..cache import EXECUTABLES
from ..executable import Compiler, Executable
from . import fft_plan, op_catalogue
from .executable import PerSize, ShapeGenericExecutable
from .platform import OPS, PLATFORM

_COMPLEX, _REAL = np.dtype(np.complex128), np.dtype(np.float64)
#: The transform of rows of any length (``stockham.generic_fft``).
FFT_ROWS = "llvm_cpu.fft_rows"
#: Plans kept, by kind and length; the least recently used goes first.
KEPT_PLANS = 256


def _infer_rows(shapes, attrs):
    """``fft_rows(x, plan)``: ``x`` (rows, columns) complex128 (float64 for RFFT, sign -1
    and ``real``), transformed along its rows into (rows, ``length``): the complex
    transform (``length`` n), RFFT (``length`` n / 2 + 1 terms of n points, n even) or
    IRFFT (``real``, sign 1: ``length`` n points from n / 2 + 1 terms; n even, or odd
    with ``odd``); ``plan`` the plan of n (``fft_plan.plan``: of n / 2 complex points for
    the real kinds of even n, of n for the others)."""
    x, plan = shapes
    sign, real, length = attrs.get("sign"), attrs.get("real"), attrs.get("length")
    odd, bluestein = attrs.get("odd", False), attrs.get("bluestein", False)
    wanted = _REAL if real and sign == -1 else _COMPLEX
    if sign not in (-1, 1) or type(real) is not bool or odd not in (False, True) or bluestein not in (False, True) or \
            (odd and not (real and sign > 0)) or (bluestein and real and not odd) or x.rank != 2 or \
            x.dtype != wanted or plan.rank != 1 or plan.dtype != _COMPLEX or length is None:
        raise ValueError(f"{FFT_ROWS}: expects sign -1 or 1, real True or False (odd only for real and sign 1; "
                         f"bluestein for the complex transform and odd IRFFT), a length and rows of {wanted}; got "
                         f"{x} and {plan} with sign={sign!r}, real={real!r}, odd={odd!r}, bluestein={bluestein!r}")
    if is_static((length, x.dims[1])):
        n = x.dims[1] if not real or sign < 0 else length
        columns, result = (n, n) if not real else (n, n // 2 + 1) if sign < 0 else (n // 2 + 1, n)
        if (real and n % 2 != odd) or (x.dims[1], length) != (columns, result):
            raise ValueError(f"{FFT_ROWS}: {x} does not transform into rows of {length}")
    return Shape((x.dims[0], length), _REAL if real and sign > 0 else _COMPLEX)


def _evaluate_rows(args, attrs, shape):
    x, length = args[0], shape.dims[1]
    if not attrs["real"]:
        return np.fft.fft(x, axis=1) if attrs["sign"] < 0 else np.fft.ifft(x, axis=1) * length
    return np.fft.rfft(x, axis=1) if attrs["sign"] < 0 else np.fft.irfft(x, length, axis=1)


OPS.register(OpDef(FFT_ROWS, _infer_rows, _evaluate_rows, arity=2))


def served(kind: str, n: int) -> bool:
    """Whether an ``fft`` of ``kind`` and length n runs on this library: every n at least
    2 (every run-time size of a template is; a transform of one point is a copy)."""
    return n >= 2


def _bluestein(kind: str, n: int) -> bool:
    """Whether a served n is transformed by Bluestein's algorithm (a prime factor above
    127; of the real kinds' n / 2 for an even n, whose pairs are transformed)."""
    return fft_plan.radices(n // 2 if kind in ("RFFT", "IRFFT") and n % 2 == 0 else n) is None


def _sizes(kind: str, split: bool) -> tuple[str, ...]:
    """A template's run-time sizes after its rows and before its plan's length, in the
    order its HLO takes them: n, t (the real kinds' n // 2 + 1 terms), and h = n / 2
    where the real kinds' step between n real points and n / 2 complex ones is in the
    template's HLO (``split``: Bluestein's half)."""
    return {"FFT": ("n",), "IFFT": ("n",), "RFFT": ("n", "t"), "IRFFT": ("t", "n")}[kind] + (("h",) if split else ())


def executable(module: Module, compiler: Compiler) -> Executable | None:
    """The executable of ``module`` if it is one ``fft`` of a parameter, of static sizes,
    that this library serves (its template bound without compiling, the template
    compiled or loaded on first use); else None."""
    comp = module.entry
    if module.n_symbols or len(comp.outputs) != 1 or len(comp.parameters) != 1:
        return None
    inst = comp.outputs[0]
    if inst.opcode != "fft" or inst.operands[0] is not comp.parameters[0]:
        return None
    found = sized_kernel(inst, comp.parameters[0].shape, inst.shape, compiler)
    if found is None:
        return None
    part, sizes = found
    return part.bind(cast("list[int]", list(sizes)), seen_as=[inst.shape])


def sized_kernel(inst: Instruction, operand: Shape, result: Shape,
                 compiler: Compiler) -> tuple[ShapeGenericExecutable, tuple[Dim, ...]] | None:
    """``Compiler.sized_kernel`` for an ``fft`` (in run-time sizes, or of static sizes;
    ``operand`` and ``result`` its shapes at the sizes met now): its template that serves
    the length met now (``_part``) and the template's rows, n and t in ``inst``'s sizes;
    None for a length this library does not serve, or an empty result."""
    kind = inst.attrs["fft_type"]
    n = result.dims[-1] if kind == "IRFFT" else operand.dims[-1]
    if not served(kind, n) or not result.size:
        return None
    real = kind in ("RFFT", "IRFFT")
    part = _part(kind, operand.dtype, result.dtype, real and n % 2 == 1, _bluestein(kind, n), compiler)
    x, y = inst.operands[0].shape.dims, inst.shape.dims
    sizes: dict[str, Dim] = {"n": (y if kind == "IRFFT" else x)[-1], "t": (x if kind == "IRFFT" else y)[-1]}
    return part, (math.prod(x[:-1]), *(sizes[name] for name in _given(kind)))


def _given(kind: str) -> tuple[str, ...]:
    """The sizes after the rows that a template's binding is given (``_sizes`` but h,
    which it makes, as the plan's length)."""
    return _sizes(kind, False)


#: Templates as parts of sequences (``_part``), by kind, dtypes, class and target;
#: emptied with the executable cache (their code goes with it).
_PARTS: dict[tuple, ShapeGenericExecutable] = {}


def _part(kind: str, dtype: np.dtype, result: np.dtype, odd: bool, bluestein: bool,
          compiler: Compiler) -> ShapeGenericExecutable:
    """The template of ``kind`` as an executable of one parameter, the signal, whose
    binding to the rows and the sizes of ``_given`` makes the rest itself (``PerSize``): h
    where the template takes it, the plan's length, and the parameters after the signal
    (the plan, the scale, the factors, ``_constants``) as its first constants (the table
    holds the parameters, then the constants: the same slots). It serves lengths whose
    template this is (parity, Bluestein's or not): a shape-generic sequence of op kernels
    (``trace/baseline.py``) runs a transform of any such length on it, no longer once
    per length."""
    key = (kind, dtype.str, result.str, odd, bluestein, compiler.target)
    found = _PARTS.get(key)
    if found is not None:
        return found
    template = _template(kind, dtype, result, odd, bluestein, compiler)
    real, sign = kind in ("RFFT", "IRFFT"), -1 if kind in ("FFT", "RFFT") else 1
    split = real and not odd and bluestein
    given = 1 + len(_given(kind))
    at_n = 1 + _given(kind).index("n")
    made_count = len(_sizes(kind, split)) + 2 - given  # h where taken, and the plan's length
    per_length = template.n_params - 1

    def fits(sizes: Sequence[int]) -> bool:
        n = sizes[at_n]
        return served(kind, n) and (real and n % 2 == 1) == odd and _bluestein(kind, n) == bluestein

    def made(sizes: Sequence[int]) -> tuple[list[int], list[np.ndarray]]:
        n = sizes[at_n]
        constants = _constants(n, sign, real and not odd, bluestein, kind == "IFFT")
        return [*([n // 2] if split else []), len(constants[0])], constants

    hook = PerSize(tuple(Sym(i, 0) for i in range(given)), tuple(range(given, given + made_count)),
                   tuple(range(per_length)), fits, made)
    placeholders = [np.zeros(1, _COMPLEX) for _ in range(per_length)]
    part = ShapeGenericExecutable(template.steps, 1, [*placeholders, *template.constants], template.output_slots,
                                  *template.shapes, template.limits, template.derived, [hook])
    part.from_disk = template.from_disk
    if len(_PARTS) >= KEPT_PLANS:
        _PARTS.clear()
    _PARTS[key] = part
    return part


_PLANS: OrderedDict[tuple, list[np.ndarray]] = OrderedDict()
_PLANS_LOCK = threading.Lock()


def _constants(n: int, sign: int, even_real: bool, bluestein: bool, scaled: bool) -> list[np.ndarray]:
    """The template's parameters after the signal, for n: the plan, and the scale 1 / n
    of IFFT (as ``lower_fft`` makes it); for the real kinds of an even n by Bluestein's
    algorithm, the plan of n / 2 points, the step's factors (``real_split_factors``)
    and IRFFT's terms whose imaginary part is left out (the first and the last)."""
    key = (n, sign, even_real, bluestein, scaled)
    with _PLANS_LOCK:
        found = _PLANS.get(key)
        if found is not None:
            _PLANS.move_to_end(key)
            return found
    if even_real and bluestein:
        found = [fft_plan.bluestein_plan(n // 2, sign), *real_split_factors(n, sign)]
        if sign > 0:  # the first and the last term (``np.isin`` of the two took ~25 us a length)
            ends = np.zeros(n // 2 + 1, np.bool_)
            ends[[0, n // 2]] = True
            found.append(ends)
    else:
        found = [fft_plan.bluestein_plan(n, sign) if bluestein else fft_plan.plan(n, sign, even_real)]
    if scaled:
        found.append(np.asarray(1.0 / n, _COMPLEX))
    with _PLANS_LOCK:
        _PLANS[key] = found
        while len(_PLANS) > KEPT_PLANS:
            _PLANS.popitem(last=False)
    return found


def _template(kind: str, dtype: np.dtype, result: np.dtype, odd: bool, bluestein: bool,
              compiler: Compiler) -> ShapeGenericExecutable:
    """The shape-generic executable of ``kind`` on rows of ``dtype`` (real kinds: of odd
    or even n; by Bluestein's algorithm or not) giving ``result`` (the ``fft`` op's shape
    rule's dtype, which ``dtype`` decides), from the executable cache, the persistent
    cache or a compile."""
    key = ("fft-library", kind, dtype.str, odd, bluestein, compiler.target)
    made = EXECUTABLES.get(key, PLATFORM, lambda: _loaded_or_compiled(kind, dtype, result, odd, bluestein, compiler))
    if not isinstance(made, ShapeGenericExecutable):
        raise TypeError(f"llvm-cpu: the FFT template {key} compiled to {type(made).__name__}")
    return made


def _loaded_or_compiled(kind: str, dtype: np.dtype, result: np.dtype, odd: bool, bluestein: bool,
                        compiler: Compiler) -> Executable:
    """The template, found in the installation's catalogue of op kernels by its kind,
    dtype and class (``op_catalogue.py``) without making and describing its HLO (~0.4 ms of
    each of a script's first transforms of a kind), else compiled or loaded by its HLO (and
    catalogued where the installation is being built)."""
    signature = ("fft-library", kind, dtype.str, odd, bluestein)
    listed = compiler.listed(signature)
    loaded = listed.load() if listed is not None else None
    if loaded is not None:
        return loaded
    module = _template_module(kind, dtype, result, odd, bluestein)
    if op_catalogue.RECORDS_KEPT_IN is not None:
        compiler.list_op_kernel(signature, module, ((), 0, frozenset()))
    return compiler.compile(module)


def _op(opcode: str, *operands: Instruction, **attrs) -> Instruction:
    return Instruction.make(opcode, operands, **attrs)


def _sized(shape: tuple[tuple[Dim, ...], np.dtype], opcode: str, *operands: Instruction, **attrs) -> Instruction:
    """An op of run-time sizes in its attributes, with its shape (dims, dtype) as given
    (shape rules that check such attributes take numbers; ``trace/dynamic.py`` builds so
    too)."""
    return Instruction(opcode, list(operands), attrs, Shape(*shape))  # type: ignore[arg-type]  # run-time sizes


def _parameter(number: int, dims: tuple[Dim, ...], dtype: np.dtype) -> Instruction:
    shape = Shape(dims, dtype)  # type: ignore[arg-type]  # run-time sizes
    return Instruction("parameter", (), {"number": number, "shape": shape}, shape)


def _zeros(dims: tuple[Dim, ...], dtype: np.dtype) -> Instruction:
    zero = _op("constant", value=Literal(np.zeros((), dtype)))
    return _sized((dims, dtype), "broadcast_in_dim", zero, dims=dims, broadcast_dimensions=())


def _convert(x: Instruction, dtype: np.dtype) -> Instruction:
    return x if x.shape.dtype == dtype else _op("convert", x, dtype=dtype)


def _template_module(kind: str, dtype: np.dtype, result: np.dtype, odd: bool, bluestein: bool) -> Module:
    """The template's HLO: ``lower_fft``'s for one length (``fft.py``, and the expansion's
    odd real kinds and real kinds of Bluestein's half, ``codegen/lowerings/fft.py``), in
    the run-time sizes rows, then ``_sizes``, then the plan's length; the plan, the scale
    and the real kinds' factors are parameters after the signal (``_constants``)."""
    real, sign = kind in ("RFFT", "IRFFT"), -1 if kind in ("FFT", "RFFT") else 1
    split = real and not odd and bluestein
    names = _sizes(kind, split)
    hints = {"n": 64, "t": 33, "h": 32}
    rows = Sym(0, 4)
    size: dict[str, Dim] = {name: Sym(1 + i, hints[name]) for i, name in enumerate(names)}
    first = size["t" if kind == "IRFFT" else "n"]  # the signal's columns
    x = _parameter(0, (rows, first), dtype)
    plan = _parameter(1, (Sym(1 + len(names), 48),), _COMPLEX)
    params = [x, plan]
    extra: list[tuple[tuple[Dim, ...], np.dtype]] = []  # _constants' after the plan
    if kind == "IFFT":
        extra = [((), _COMPLEX)]
    elif split:
        factors = (size["t"] if kind == "RFFT" else size["h"],)
        extra = [(factors, _COMPLEX)] * 2 + ([((size["t"],), np.dtype(bool))] if kind == "IRFFT" else [])
    params += [_parameter(2 + i, dims, extra_dtype) for i, (dims, extra_dtype) in enumerate(extra)]
    wide = _REAL if kind == "RFFT" else _COMPLEX
    y = _convert(x, wide)
    if not real:
        y = _op(FFT_ROWS, y, plan, sign=sign, real=False, bluestein=bluestein, length=first)
    elif split and kind == "RFFT":
        y = _split(y, plan, params[2], params[3], rows, size)
    elif split:
        y = _fold(y, plan, params[2], params[3], params[4], rows, size)
    elif kind == "RFFT" and not odd:
        y = _op(FFT_ROWS, y, plan, sign=-1, real=True, length=size["t"])
    elif kind == "RFFT":  # the complex transform of x + 0i, its first n // 2 + 1 terms
        y = _op(FFT_ROWS, _op("complex", y, _zeros((rows, first), _REAL)), plan, sign=-1, real=False,
                bluestein=bluestein, length=first)
        y = _columns(y, 0, size["t"], size["t"])
    else:  # odd n: the full spectrum from its conjugate mirror, transformed, scaled, its real part
        y = _op(FFT_ROWS, y, plan, sign=1, real=True, odd=odd, bluestein=bluestein, length=size["n"])
    if kind == "IFFT":
        y = _times(y, params[2])
    y = _convert(y, result)
    return Module(f"fft_library_{kind.lower()}", Computation("main", params, [y]), frozenset(), len(names) + 2)


def _columns(x: Instruction, start: int, stop: Dim, width: Dim, stride: int = 1) -> Instruction:
    """Columns ``start:stop:stride`` of ``x`` (rows, n), ``width`` of them: the
    expansion's ``_columns`` in run-time sizes."""
    rows = x.shape.dims[0]
    return _sized(((rows, width), x.shape.dtype), "slice", x, start=(0, start), limit=(rows, stop),
                  strides=(1, stride))


def _mirror(x: Instruction) -> Instruction:
    """``conj(x[m - 1 - k])`` for each row of ``x`` (rows, m)."""
    return _op("conj", _op("reverse", x, dimensions=(1,)))


def _split(x: Instruction, plan: Instruction, a: Instruction, b: Instruction, rows: Dim,
           size: dict[str, Dim]) -> Instruction:
    """RFFT of even n from the transform of h = n / 2 pairs (the expansion's
    ``_real_to_complex``): ``z = x[0::2] + i x[1::2]`` transformed, ``Z[k mod h]`` for
    k <= h, ``a Z + b mirror(Z)``."""
    n, t, h = size["n"], size["t"], size["h"]
    z = _op("complex", _columns(x, 0, n, h, 2), _columns(x, 1, n, h, 2))
    z = _op(FFT_ROWS, z, plan, sign=-1, real=False, bluestein=True, length=h)
    z = _sized(((rows, t), _COMPLEX), "concatenate", z, _columns(z, 0, 1, 1), dimension=1)
    return _op("add", _times(z, a), _times(_mirror(z), b))


def _fold(x: Instruction, plan: Instruction, a: Instruction, b: Instruction, ends: Instruction, rows: Dim,
          size: dict[str, Dim]) -> Instruction:
    """IRFFT of even n by the inverse transform of h = n / 2 points (the expansion's
    ``_complex_to_real``): the imaginary parts of the terms ``ends`` left out, the terms
    folded into ``a X + b mirror(X)`` (its first h), transformed, and the pairs unpacked
    into ``x[2j] = re z[j]``, ``x[2j+1] = im z[j]``."""
    t, n, h = size["t"], size["n"], size["h"]
    terms = (rows, t)
    imag = _op("select", _sized((terms, ends.shape.dtype), "broadcast_in_dim", ends, dims=terms,
                                broadcast_dimensions=(1,)), _zeros(terms, _REAL), _op("imag", x))
    x = _op("complex", _op("real", x), imag)
    z = _op("add", _times(_columns(x, 0, h, h), a), _times(_columns(_mirror(x), 0, h, h), b))
    z = _op(FFT_ROWS, z, plan, sign=1, real=False, bluestein=True, length=h)
    pairs = (rows, h, 2)
    z = _sized((pairs, _COMPLEX), "broadcast_in_dim", z, dims=pairs, broadcast_dimensions=(0, 1))
    index = np.dtype(np.int32)
    even = _op("compare", _sized((pairs, index), "iota", dims=pairs, iota_dimension=2, dtype=index),
               _zeros(pairs, index), direction="EQ")
    return _sized(((rows, n), _REAL), "reshape", _op("select", even, _op("real", z), _op("imag", z)), dims=(rows, n))


def _times(x: Instruction, factors: Instruction) -> Instruction:
    """``x`` (rows, ...) times ``factors``, the same for every row (the expansion's ``_times``)."""
    dims = x.shape.dims
    return _op("multiply", x, _sized((dims, factors.shape.dtype), "broadcast_in_dim", factors, dims=dims,
                                     broadcast_dimensions=tuple(range(len(dims) - factors.shape.rank, len(dims)))))


EXECUTABLES.on_clear.append(_PLANS.clear)
EXECUTABLES.on_clear.append(_PARTS.clear)
EXECUTABLES.on_clear.append(forget_spectra)
