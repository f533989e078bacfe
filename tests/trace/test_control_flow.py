"""cond, while_loop and fori_loop against the same loops written in NumPy, on the compiled
backend and the reference interpreter, eagerly and under jit."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import assert_same
from jit_helpers import isolated_cache_dir  # noqa: F401  (autouse: tests write a temporary cache)

import plaidarray as xp

SEEDS = range(3)


def _data(*shape, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _maybe_jit(fun, jitted):
    return xp.jit(fun) if jitted else fun


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_cond_matches_python_if(backend, seed, jitted):
    x, y = _data(4, 3, seed=seed), _data(3, seed=seed + 10)

    def numpy_version(x, y):
        if x.sum() > y.sum():
            return x * y, y.max()
        return x - y, y.min()

    def plaid_version(x, y):
        return xp.cond(xp.sum(x) > xp.sum(y), lambda a, b: (a * b, xp.max(b)), lambda a, b: (a - b, xp.min(b)), x, y)

    got = _maybe_jit(plaid_version, jitted)(xp.asarray(x), xp.asarray(y))
    want = numpy_version(x, y)
    assert isinstance(got, tuple) and len(got) == 2
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("seed", SEEDS)
def test_while_loop_matches_python_while(backend, seed, jitted):
    """Newton's iteration for sqrt, carried with a step counter, until it converges."""
    a = np.abs(_data(5, seed=seed)) + 0.5

    def numpy_version(a):
        x, steps = a.copy(), 0
        while np.max(np.abs(x * x - a)) > 1e-9 and steps < 50:
            x, steps = 0.5 * (x + a / x), steps + 1
        return x, steps

    def plaid_version(a):
        def going(state):
            x, steps = state
            return (xp.max(xp.abs(x * x - a)) > 1e-9) & (steps < 50)

        def step(state):
            x, steps = state
            return 0.5 * (x + a / x), steps + 1

        return xp.while_loop(going, step, (a, 0))

    x, steps = _maybe_jit(plaid_version, jitted)(xp.asarray(a))
    want_x, want_steps = numpy_version(a)
    assert_same(x, want_x)
    assert int(steps) == want_steps > 0


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("lower, upper", [(0, 6), (2, 5), (4, 4), (5, 2)])
def test_fori_loop_matches_python_for(backend, lower, upper, jitted):
    x0 = _data(3, 3, seed=lower)

    def numpy_version(x):
        for i in range(lower, upper):
            x = 0.5 * x @ x.T + i
        return x

    def plaid_version(x, lower, upper):
        return xp.fori_loop(lower, upper, lambda i, x: 0.5 * x @ x.T + xp.astype(i, xp.float64), x)

    bounds = (xp.asarray(lower), xp.asarray(upper))  # run-time bounds
    got = _maybe_jit(plaid_version, jitted)(xp.asarray(x0), *bounds)
    assert_same(got, numpy_version(x0), rtol=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_nested_control_flow_and_captured_values(backend, seed):
    """A fori_loop whose body branches with cond and runs a while_loop, closing over an
    argument of the jitted function."""
    x0, shift = _data(4, seed=seed), _data(4, seed=seed + 5)

    def numpy_version(x, shift):
        for i in range(7):
            if i % 3 == 0:
                x = x + shift
            else:
                x = -x
            while np.abs(x).sum() > 20.0:
                x = x * 0.5
        return x

    @xp.jit
    def plaid_version(x, shift):
        def body(i, x):
            x = xp.cond(i % 3 == 0, lambda v: v + shift, lambda v: -v, x)
            return xp.while_loop(lambda v: xp.sum(xp.abs(v)) > 20.0, lambda v: v * 0.5, x)

        return xp.fori_loop(0, 7, body, x)

    assert_same(plaid_version(xp.asarray(x0), xp.asarray(shift)), numpy_version(x0, shift))


def test_integer_loop_with_data_dependent_trip_count(backend):
    """Collatz stopping times: integer state, a trip count only the data decides, one trace."""
    def numpy_steps(n):
        steps = 0
        while n != 1:
            n = n // 2 if n % 2 == 0 else 3 * n + 1
            steps += 1
        return steps

    @xp.jit
    def steps(n):
        def step(state):
            n, count = state
            return xp.where(n % 2 == 0, n // 2, 3 * n + 1), count + 1

        return xp.while_loop(lambda s: s[0] != 1, step, (n, xp.asarray(0, dtype=n.dtype)))[1]

    for n in (1, 6, 27, 97):
        assert int(steps(xp.asarray(np.int32(n)))) == numpy_steps(n)
    assert steps.cache_info().misses == 1


def test_only_results_in_use_are_stored_and_both_can_be_used():
    @xp.jit
    def both(x):
        return xp.while_loop(lambda s: s[1] < 100, lambda s: (s[0] + 1.0, s[1] * 3), (x, xp.asarray(1)))

    @xp.jit
    def second_only(x):
        return both(x)[1]

    x = np.zeros(2)
    got_x, got_n = both(xp.asarray(x))
    assert_same(got_x, np.full(2, 5.0))
    assert int(got_n) == 243
    assert int(second_only(xp.asarray(x))) == 243


def test_a_loop_with_several_results_runs_once_on_the_reference_backend(monkeypatch):
    """The loop is one instruction of tuple shape: the reference backend evaluates its
    body once per iteration, not once per iteration and result. (jit makes one program of
    all three results; read one by one, eager results are three programs.)"""
    from plaidarray.hlo.ops import control_flow

    runs: dict[str, int] = {}
    evaluate = control_flow._evaluate

    def counted(comp, args):
        runs[comp.name] = runs.get(comp.name, 0) + 1
        return evaluate(comp, args)

    monkeypatch.setattr(control_flow, "_evaluate", counted)
    xp.set_backend("reference")
    try:
        loop = xp.jit(lambda x: xp.while_loop(lambda s: s[1] < 4, lambda s: (s[0] * 2.0, s[1] + 1, s[2] + xp.sum(s[0])),
                                              (x, xp.asarray(0), xp.asarray(0.0))))
        x, n, total = loop(xp.asarray(np.ones(3)))
        assert_same(x, np.full(3, 16.0))
        assert int(n) == 4 and float(total) == 45.0
    finally:
        xp.set_backend(None)
    assert runs == {"body": 4, "cond": 5}


def test_lowered_through_scf_in_the_compiled_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))

    @xp.jit
    def clipped_growth(x):
        grown = xp.while_loop(lambda v: xp.max(v) < 1000.0, lambda v: v * 3.0 + 1.0, x)
        return xp.cond(xp.sum(grown) > 5000.0, lambda v: v / 2.0, lambda v: v, grown)

    x = np.array([1.0, 2.0, 7.0, 11.0, 13.0])  # a length no other test uses
    text = clipped_growth.lower(xp.asarray(x)).as_text()
    assert "while(" in text and "conditional(" in text and "%body." in text and "%true_branch." in text
    before = xp.cache_info().compiles
    got = clipped_growth(xp.asarray(x))
    assert xp.cache_info().compiles == before + 1
    want = x.copy()
    while want.max() < 1000.0:
        want = want * 3.0 + 1.0
    assert_same(got, want / 2.0 if want.sum() > 5000.0 else want)
    (linalg,) = tmp_path.glob("*.linalg.mlir")
    assert "scf.while" in linalg.read_text() and "scf.if" in linalg.read_text()


def test_shape_and_type_errors_name_the_primitive_and_function():
    x = xp.ones(3)

    def wrong_dtype(v):
        return xp.astype(v, xp.float32)

    with pytest.raises(TypeError, match=r"while_loop: body_fun wrong_dtype \(.*\) must return the structure"):
        xp.while_loop(lambda v: xp.sum(v) < 10.0, wrong_dtype, x)
    with pytest.raises(TypeError, match=r"cond: false_fun .* must return what true_fun returns"):
        xp.cond(xp.asarray(True), lambda v: v, lambda v: (v, v), x)
    with pytest.raises(TypeError, match=r"cond: pred must be a 0-d boolean array"):
        xp.cond(x > 0, lambda v: v, lambda v: v, x)
    with pytest.raises(TypeError, match=r"fori_loop: lower and upper must be 0-d integers"):
        xp.fori_loop(0.0, 3, lambda i, v: v, x)


def test_python_if_inside_a_loop_body_raises_with_the_fix():
    def body(v):
        if xp.sum(v) > 3:  # needs cond
            return v
        return v + 1.0

    with pytest.raises(xp.TracerError, match=r"while_loop\(body_fun=body .*\): bool\(\) needs the value(.|\n)*"
                                             r"plaidarray.cond"):
        xp.while_loop(lambda v: xp.sum(v) < 10.0, body, xp.ones(2))
