"""llvm-cpu against the reference backend, HLO op by HLO op.

Both backends evaluate the same HLO: the reference with each op's NumPy definition,
llvm-cpu with compiled code. Every op of the registry runs with every dtype its rule
accepts, on shapes that broadcast (an explicit ``broadcast_in_dim``), are empty or are
0-d, with values that include NaN, infinities, -0.0, subnormals and the integer
extremes. The results must agree exactly, except where the two compute with different
algorithms: transcendental functions (the compiled ones are polynomials or the C
library, the reference NumPy's), complex arithmetic (the C library's Annex G special
cases) and float sums and products (compiled reductions are reassociated into vector
partial sums), which agree to a few ulps.

The third party is NumPy itself: the API-level differential tests (test_elementwise.py,
test_statistical.py, test_standard_functions.py, ...) compare every function of the
standard on both backends with NumPy's own functions.

CI runs a thin slice (``examples_in_ci``); ``HYPOTHESIS_PROFILE=thorough`` runs the
campaign recorded in docs/reliability.md.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import plaidarray as xp
from plaidarray.api.graph import op
from plaidarray.backend.llvm_cpu.lowerings import PLATFORM
from plaidarray.codegen.lowering import Elementwise, Expansion, lowering_for
from plaidarray.hlo.opdef import OPS
from plaidarray.hlo.shape import Shape
from strategies import (MAX_SIDE, arrays, broadcastable_shapes, dtype_ids, elementwise_shape_pairs, examples_in_ci,
                        shapes)

DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                                np.uint64, np.float32, np.float64, np.complex64, np.complex128)]
INTEGER = [d for d in DTYPES if d.kind in "iu"]
REAL = [d for d in DTYPES if d.kind in "iuf"]

#: Elementwise ops computed with other algorithms than the reference's: they agree to
#: ``ULPS`` ulps (complex results normwise: |got - want| <= ULPS ulps of |want|, since a
#: complex product's parts can cancel).
TRANSCENDENTAL = {"exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                  "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "atan2", "power", "logaddexp"}
ULPS = 4
#: Ops whose error is ulps of a term larger than their result, and how many: ``logaddexp``'s
#: ``log1p(exp(-|a - b|))`` (at most log 2, its exp's and log1p's errors compounded) is
#: added to the larger operand, and the sum may cancel (-0.3 and -1.5: -0.037, its last
#: bits those of 0.263's rounding); 4 ulps of the larger of the operands and log 2 were
#: seen on 2.4 million random float32 pairs.
ABSOLUTE_SCALE = {"logaddexp": (lambda operands: np.maximum(np.maximum(*(np.abs(a) for a in operands)), np.log(2.0)),
                                2 * ULPS)}
#: Ops that may return either zero when -0.0 and +0.0 compare equal (the standard allows it).
EITHER_ZERO = {"maximum", "minimum"}


def compute(build) -> dict[str, np.ndarray]:
    """``build()`` (a fresh graph each time) on both backends."""
    out = {}
    for backend in ("llvm-cpu", "reference"):
        xp.set_backend(backend)
        try:
            out[backend] = np.asarray(build())
        finally:
            xp.set_backend(None)
    return out


def _parts(a: np.ndarray) -> list[np.ndarray]:
    return [a.real, a.imag] if a.dtype.kind == "c" else [a]


def assert_backends_agree(results: dict[str, np.ndarray], ulps: float = 0, *, signed_zeros: bool = True,
                          scale: np.ndarray | None = None) -> None:
    """The compiled result equals the reference's: exactly (``ulps=0``), or within
    ``ulps`` ulps of ``scale`` (default: the result's magnitude), with NaN and infinities
    in the same places either way."""
    got, want = results["llvm-cpu"], results["reference"]
    assert got.shape == want.shape and got.dtype == want.dtype, f"{got.shape} {got.dtype} vs {want.shape} {want.dtype}"
    if want.dtype.kind not in "fc":
        np.testing.assert_array_equal(got, want, strict=True)
        return
    finite = np.ones(want.shape, bool)
    for g, w in zip(_parts(got), _parts(want)):
        assert np.array_equal(np.isnan(g), np.isnan(w)), f"NaN differs: {got[np.isnan(g) != np.isnan(w)][:5]} != " \
                                                          f"{want[np.isnan(g) != np.isnan(w)][:5]} (reference)"
        special = ~np.isfinite(g) | ~np.isfinite(w)
        same = (g == w) | np.isnan(w)
        assert same[special].all(), f"infinities differ: {got[special & ~same][:5]} != {want[special & ~same][:5]}"
        finite &= ~special
    got, want = got[finite], want[finite]
    if ulps == 0:
        wrong = np.zeros(got.shape, bool)
        for g, w in zip(_parts(got), _parts(want)):
            wrong |= (g != w) | ((np.signbit(g) != np.signbit(w)) if signed_zeros else False)
    else:
        magnitude = np.maximum(np.abs(got), np.abs(want)) if scale is None else np.broadcast_to(scale, finite.shape)[finite]
        part = np.dtype(f"f{want.dtype.itemsize // 2}") if want.dtype.kind == "c" else want.dtype
        bound = ulps * np.spacing(magnitude.astype(part)).astype(np.float64)
        wrong = np.abs(got.astype(np.complex128 if want.dtype.kind == "c" else np.float64) - want) > bound
    assert not wrong.any(), f"{got[wrong][:5]} != {want[wrong][:5]} (reference)"


def values(dtype: np.dtype, shape, bound: float | None = None) -> st.SearchStrategy[np.ndarray]:
    """Arrays of any supported dtype with its special values mixed in; complex ones
    are built from two float arrays, so each part meets NaN, inf and -0.0. With
    ``bound``, floats are finite and within it (for sums and products whose order
    must not decide between overflow and a finite value)."""
    if isinstance(shape, st.SearchStrategy):
        return shape.flatmap(lambda s: values(dtype, s, bound))
    limits = {} if bound is None or dtype.kind not in "fc" else {"min_value": -bound, "max_value": bound}
    if dtype.kind != "c":
        return arrays(dtype, shape, **limits)
    part = np.dtype(f"f{dtype.itemsize // 2}")
    return st.tuples(arrays(part, shape, **limits), arrays(part, shape, **limits)).map(
        lambda parts: _complex(*parts, dtype))


def _complex(re: np.ndarray, im: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def _accepts(name: str, dtype: np.dtype, attrs: dict, arity: int) -> bool:
    try:
        OPS[name].infer([Shape((), dtype)] * arity, attrs)
    except (TypeError, ValueError):
        return False
    return True


# --- elementwise ops -------------------------------------------------------------------

_SPECIAL_ELEMENTWISE = {"constant", "iota", "select", "convert", "compare", "complex"}
# The package's ops only: the extension guide's example ops, registered where its module is
# collected first, are tested there (``cbrt_example`` is the C library's cbrt, whose bits
# NumPy's reference need not have: cbrt(0.125) is 0.5 in one and not the other).
ELEMENTWISE = [(name, dtype) for name, opdef in sorted(OPS.items())
               if (isinstance(lowering_for(name, PLATFORM), Elementwise)  # or expanded into such ops (floored division)
                   or opdef.elementwise and isinstance(lowering_for(name, PLATFORM), Expansion))
               and name not in _SPECIAL_ELEMENTWISE
               and not name.endswith("_example")  # the extension guide's ops (tests/project/test_extending.py)
               for dtype in DTYPES if _accepts(name, dtype, {}, opdef.arity)]


def _operands(data, dtype: np.dtype, count: int) -> tuple[tuple[int, ...], list[np.ndarray]]:
    """``count`` operands of broadcast-compatible shapes, and the shape they broadcast to."""
    shape_pair = data.draw(st.one_of(elementwise_shape_pairs(), broadcastable_shapes(2)), label="shapes")
    chosen = [shape_pair[i % 2] for i in range(count)]
    arrays_ = [data.draw(values(dtype, s), label=f"x{i}") for i, s in enumerate(chosen)]
    return np.broadcast_shapes(*chosen), arrays_


def _broadcast(a: np.ndarray, shape: tuple[int, ...]) -> xp.Array:
    return xp.broadcast_to(xp.asarray(a), shape)


@pytest.mark.parametrize("name, dtype", ELEMENTWISE, ids=[f"{n}-{d.name}" for n, d in ELEMENTWISE])
@examples_in_ci(2)
@given(data=st.data())
def test_elementwise_op(name, dtype, data):
    shape, operands = _operands(data, dtype, OPS[name].arity)
    results = compute(lambda: op(name, *(_broadcast(a, shape) for a in operands)))
    ulps, scale = ULPS if name in TRANSCENDENTAL or dtype.kind == "c" else 0, None
    if name in ABSOLUTE_SCALE:
        of_operands, ulps = ABSOLUTE_SCALE[name]
        scale = of_operands([np.broadcast_to(a, shape).astype(np.float64) for a in operands])
    assert_backends_agree(results, ulps, signed_zeros=name not in EITHER_ZERO, scale=scale)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_ids(DTYPES))
@examples_in_ci(2)
@given(data=st.data())
def test_compare_select_convert_complex(dtype, data):
    shape, (a, b) = _operands(data, dtype, 2)
    directions = ["EQ", "NE"] if dtype.kind == "c" else ["EQ", "NE", "LT", "LE", "GT", "GE"]
    direction = data.draw(st.sampled_from(directions), label="direction")
    target = data.draw(st.sampled_from(DTYPES), label="target")
    x, y = (lambda: _broadcast(a, shape)), (lambda: _broadcast(b, shape))
    assert_backends_agree(compute(lambda: op("compare", x(), y(), direction=direction)))
    assert_backends_agree(compute(lambda: op("select", op("compare", x(), y(), direction=direction), x(), y())))
    if not (dtype.kind == "c" and target.kind != "c" and target.kind != "b"):
        assert_backends_agree(compute(lambda: op("convert", x(), dtype=target)))
    if dtype.kind == "f":
        assert_backends_agree(compute(lambda: op("complex", x(), y())))


# --- reductions and scans ----------------------------------------------------------------

def _monoids(kinds):
    return [(kind, dtype) for kind in kinds for dtype in DTYPES if _accepts(kind, dtype, {}, 2)]


REDUCTIONS = _monoids(["add", "multiply", "maximum", "minimum", "and", "or"])


#: Float sums and products are reassociated (vector partial sums), so they are compared
#: to the sum (product) of magnitudes, on values bounded so that no order overflows.
_ARITHMETIC = {"add": (np.sum, {np.dtype(np.float32): 2.0**120, np.dtype(np.float64): 2.0**1000}),
               "multiply": (np.prod, {np.dtype(np.float32): 3.0, np.dtype(np.float64): 3.0})}


@pytest.mark.parametrize("kind, dtype", REDUCTIONS, ids=[f"{k}-{d.name}" for k, d in REDUCTIONS])
@examples_in_ci(2)
@given(data=st.data())
def test_reduce(kind, dtype, data):
    reassociated = kind in _ARITHMETIC and dtype.kind in "fc"
    part = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype
    bound = _ARITHMETIC[kind][1][part] if reassociated else None
    a = data.draw(values(dtype, shapes(max_dims=3), bound), label="x")
    dims = tuple(sorted(data.draw(st.sets(st.integers(0, max(a.ndim - 1, 0)), max_size=a.ndim), label="dims")
                        if a.ndim else ()))
    results = compute(lambda: op("reduce", xp.asarray(a), dimensions=dims, kind=kind))
    if reassociated:
        scale = _ARITHMETIC[kind][0](np.abs(a).astype(np.float64), axis=dims)
        assert_backends_agree(results, ULPS * max(a.size, 1), scale=scale)
    else:
        assert_backends_agree(results, signed_zeros=kind not in EITHER_ZERO)


SCANS = _monoids(["add", "multiply"])


@pytest.mark.parametrize("kind, dtype", SCANS, ids=[f"{k}-{d.name}" for k, d in SCANS])
@examples_in_ci(2)
@given(data=st.data())
def test_cumulative(kind, dtype, data):
    a = data.draw(values(dtype, shapes(min_dims=1, max_dims=3)), label="x")
    dim = data.draw(st.integers(0, a.ndim - 1), label="dimension")
    results = compute(lambda: op("cumulative", xp.asarray(a), dimension=dim, kind=kind))
    if kind == "multiply" and dtype.kind == "c":  # the parts of complex products may cancel
        with np.errstate(all="ignore"):
            scale = np.cumprod(np.abs(a).astype(np.float64), axis=dim)
        assert_backends_agree(results, ULPS * a.shape[dim], scale=scale)
    else:
        assert_backends_agree(results)


# --- data movement -------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_ids(DTYPES))
@examples_in_ci(2)
@given(data=st.data())
def test_data_movement(dtype, data):
    a = data.draw(values(dtype, shapes(min_dims=1, max_dims=3)), label="x")
    rank = a.ndim
    perm = data.draw(st.permutations(range(rank)), label="permutation")
    reversed_ = data.draw(st.sets(st.integers(0, rank - 1)), label="reversed")
    starts = [data.draw(st.integers(0, n), label=f"start{i}") for i, n in enumerate(a.shape)]
    limits = [data.draw(st.integers(s, n), label=f"limit{i}") for i, (s, n) in enumerate(zip(starts, a.shape))]
    strides = [data.draw(st.integers(1, 3), label=f"stride{i}") for i in range(rank)]
    pads = [data.draw(st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)), label=f"pad{i}")
            for i in range(rank)]
    axis = data.draw(st.integers(0, rank - 1), label="axis")
    wide = (2,) + a.shape
    fill = xp.asarray(a.reshape(-1)[:1].reshape(()) if a.size else np.zeros((), dtype))
    builds = {
        "broadcast_in_dim": lambda: op("broadcast_in_dim", xp.asarray(a), dims=wide,
                                       broadcast_dimensions=tuple(range(1, rank + 1))),
        "reshape": lambda: op("reshape", xp.asarray(a), dims=(a.size,)),
        "transpose": lambda: op("transpose", xp.asarray(a), permutation=tuple(perm)),
        "slice": lambda: op("slice", xp.asarray(a), start=tuple(starts), limit=tuple(limits), strides=tuple(strides)),
        "reverse": lambda: op("reverse", xp.asarray(a), dimensions=tuple(sorted(reversed_))),
        "concatenate": lambda: op("concatenate", xp.asarray(a), xp.flip(xp.asarray(a)), xp.asarray(a), dimension=axis),
        "pad": lambda: op("pad", xp.asarray(a), fill, low=tuple(p[0] for p in pads), high=tuple(p[1] for p in pads),
                          interior=tuple(p[2] for p in pads)),
    }
    for build in builds.values():
        assert_backends_agree(compute(build))


# --- gathers, windows, searches, sorts, products ----------------------------------------------

def _positions(index_dtype: np.dtype, n: int, size: int) -> st.SearchStrategy[np.ndarray]:
    """Positions in and out of ``[-n, n)``, including the index dtype's extremes."""
    info = np.iinfo(index_dtype)
    near = st.integers(max(int(info.min), -2 * n - 2), min(int(info.max), 2 * n + 2))
    return arrays(index_dtype, (size,), st.one_of(near, st.sampled_from([int(info.min), int(info.max)])))


@pytest.mark.parametrize("index_dtype", INTEGER, ids=dtype_ids(INTEGER))
@examples_in_ci(2)
@given(data=st.data())
def test_gathers_and_windows_at_any_position(index_dtype, data):
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    a = data.draw(values(dtype, shapes(min_dims=1, max_dims=2).filter(lambda s: 0 not in s)), label="x")
    axis = data.draw(st.integers(0, a.ndim - 1), label="axis")
    n = a.shape[axis]
    positions = data.draw(_positions(index_dtype, n, data.draw(st.integers(0, MAX_SIDE), label="count")), label="p")
    along = data.draw(_positions(index_dtype, n, math.prod(a.shape)), label="along").reshape(a.shape)
    starts = [data.draw(_positions(index_dtype, d, 1), label=f"start{i}")[0] for i, d in enumerate(a.shape)]
    sizes = tuple(data.draw(st.integers(0, d), label=f"size{i}") for i, d in enumerate(a.shape))
    starts_ = lambda: [xp.asarray(s) for s in starts]  # noqa: E731
    update = data.draw(values(dtype, sizes), label="update")
    builds = {
        "take": lambda: op("take", xp.asarray(a), xp.asarray(positions), axis=axis),
        "take_along_axis": lambda: op("take_along_axis", xp.asarray(a), xp.asarray(along), axis=axis),
        "dynamic_slice": lambda: op("dynamic_slice", xp.asarray(a), *starts_(), slice_sizes=sizes),
        "dynamic_update_slice": lambda: op("dynamic_update_slice", xp.asarray(a), xp.asarray(update), *starts_()),
    }
    for build in builds.values():
        assert_backends_agree(compute(build))


@pytest.mark.parametrize("dtype", REAL, ids=dtype_ids(REAL))
@examples_in_ci(2)
@given(data=st.data())
def test_sorts_and_searches(dtype, data):
    a = data.draw(values(dtype, shapes(min_dims=1, max_dims=2)), label="x")
    dimension = data.draw(st.integers(0, a.ndim - 1), label="dimension")
    descending = data.draw(st.booleans(), label="descending")
    sorted_ = np.sort(a.reshape(-1), kind="stable")
    needles = data.draw(values(dtype, shapes(max_dims=2)), label="values")
    side = data.draw(st.sampled_from(["left", "right"]), label="side")
    assert_backends_agree(compute(lambda: op("argsort", xp.asarray(a), dimension=dimension, descending=descending)))
    assert_backends_agree(compute(lambda: op("searchsorted", xp.asarray(sorted_), xp.asarray(needles), side=side)))


@pytest.mark.parametrize("dtype", [*REAL, np.dtype(np.bool_)], ids=dtype_ids([*REAL, np.dtype(np.bool_)]))
@examples_in_ci(10)
@given(data=st.data())
def test_arg_reduce(dtype, data):
    """The index of each row's first extremum (first NaN), on both backends, and as the
    target-neutral expansion that backends without a kernel of their own compute (run by
    the reference interpreter); rows (and columns: strided) past the kernel's vector lanes (8 or 16), whose first
    elements and last n % lanes go one by one, with ties and NaNs anywhere."""
    from plaidarray.backend.reference import Evaluator
    from plaidarray.codegen.expand import expand
    from plaidarray.hlo import Computation, Instruction, Module

    dims = data.draw(st.tuples(st.integers(1, 40), st.integers(1, 40)), label="dims")
    a = data.draw(arrays(dtype, dims) | _few_values(dtype, dims), label="x")
    dimension = data.draw(st.integers(0, 1), label="dimension")
    kind = data.draw(st.sampled_from(["maximum", "minimum"]), label="kind")
    results = compute(lambda: op("arg_reduce", xp.asarray(a), dimension=dimension, kind=kind))
    assert_backends_agree(results)
    operand = Shape(a.shape, a.dtype)
    x = Instruction("parameter", (), {"number": 0, "shape": operand}, operand)
    expanded = expand(Computation("f", [x], [Instruction.make("arg_reduce", (x,), dimension=dimension, kind=kind)]))
    assert "arg_reduce" not in {i.opcode for i in expanded.instructions}
    np.testing.assert_array_equal(Evaluator(Module("f", expanded)).run([a])[0], results["reference"], strict=True)


def _few_values(dtype: np.dtype, dims: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Arrays of a few distinct values (ties everywhere; NaN and both zeros for floats)."""
    few = [0, 1, 2] + ([float("nan"), -0.0] if dtype.kind == "f" else [])
    return st.lists(st.sampled_from(few), min_size=math.prod(dims), max_size=math.prod(dims)).map(
        lambda values: np.array(values).astype(dtype).reshape(dims))


@given(mask=st.lists(st.booleans(), max_size=70), extra=st.integers(-5, 5))
@example(mask=[True, False, True, False], extra=2)
def test_true_positions(mask, extra):
    """The indices of a mask's first ``count`` True elements, then its length for each
    wanted past them: what a binary search in its running count gives, on both backends."""
    a = np.array(mask, dtype=bool)
    count = max(0, int(a.sum()) + extra)
    want = np.searchsorted(np.cumsum(a, dtype=np.int64), np.arange(count), side="right").astype(np.int64)
    results = compute(lambda: op("true_positions", xp.asarray(a), dims=(count,)))
    assert_backends_agree(results)
    np.testing.assert_array_equal(results["llvm-cpu"], want, strict=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=dtype_ids(DTYPES))
@examples_in_ci(2)
@given(data=st.data())
def test_scatter(dtype, data):
    """Values written at positions one after another (a negative one wrapped once): each
    position keeps the last value naming it, on both backends, as a Python loop of
    element writes leaves it."""
    n = data.draw(st.integers(1, 12), label="n")
    count = data.draw(st.integers(1, 20), label="count")
    x = data.draw(values(dtype, (n,)), label="x")
    written = data.draw(values(dtype, (count,)), label="written")
    positions = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=count, max_size=count),
                                   label="positions"), dtype=np.int64)
    want = x.copy()
    for p, v in zip(positions.tolist(), written):
        want[p] = v
    results = compute(lambda: op("scatter", xp.asarray(x), xp.asarray(positions), xp.asarray(written)))
    assert_backends_agree(results)
    np.testing.assert_array_equal(results["llvm-cpu"], want, strict=True)


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d.kind != "b"], ids=dtype_ids([d for d in DTYPES if d.kind != "b"]))
@examples_in_ci(2)
@given(data=st.data())
def test_dot_general(dtype, data):
    batch, m, k, n = (data.draw(st.integers(0, 3), label=name) for name in ("batch", "m", "k", "n"))
    # Bounded floats: BLAS and NumPy sum the products in other orders.
    a = data.draw(values(dtype, (batch, m, k), bound=1e6), label="a")
    b = data.draw(values(dtype, (batch, k, n), bound=1e6), label="b")
    results = compute(lambda: op("dot_general", xp.asarray(a), xp.asarray(b), lhs_batch=(0,), rhs_batch=(0,),
                                 lhs_contracting=(2,), rhs_contracting=(1,)))
    if dtype.kind in "fc":  # the sum of products is compared to the sum of their magnitudes
        scale = np.matmul(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
        assert_backends_agree(results, ULPS * max(k, 1), scale=scale)
    else:
        assert_backends_agree(results)
