"""SciPy's array-API functions on plaidarray and on array_api_strict, against NumPy.

SciPy (1.15+, with ``SCIPY_ARRAY_API=1``) computes with the namespace of its inputs in the
functions listed below (special, stats, fft, signal, cluster). Each case calls one with
NumPy arrays and with the namespace's arrays, made from the same values, and compares
the results; the namespace's result must be one of its own arrays, not a NumPy array
SciPy fell back to. Run by ``clients/run.py scipy`` (``-k plaidarray`` or
``-k array_api_strict`` selects a namespace); not part of plaidarray's own test suite.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable

import numpy as np
import pytest

if os.environ.get("SCIPY_ARRAY_API") != "1":
    pytest.skip("SciPy's array-API support needs SCIPY_ARRAY_API=1 before SciPy is imported",
                allow_module_level=True)

from scipy import fft, signal, special, stats
from scipy.cluster import hierarchy, vq

NAMESPACES = ("array_api_strict", "plaidarray")

_RNG = np.random.default_rng(0)
UNIT = _RNG.uniform(0.1, 0.9, 64)  # values in (0, 1)
NORMAL = _RNG.standard_normal(64)
OTHER = _RNG.standard_normal(64)
POINTS = _RNG.standard_normal((30, 3))

#: name -> (function of the arrays, the NumPy inputs). Results that are tuples or result
#: objects are reduced to their arrays by the lambda.
CASES: dict[str, tuple[Callable, tuple[np.ndarray, ...]]] = {
    "special.erf": (special.erf, (NORMAL,)),
    "special.erfc": (special.erfc, (NORMAL,)),
    "special.erfinv": (lambda x: special.erfinv(x - 0.5), (UNIT,)),
    "special.expit": (special.expit, (NORMAL,)),
    "special.logit": (special.logit, (UNIT,)),
    "special.gamma": (lambda x: special.gamma(x * 4), (UNIT,)),
    "special.gammaln": (lambda x: special.gammaln(x * 5), (UNIT,)),
    "special.ndtr": (special.ndtr, (NORMAL,)),
    "special.ndtri": (special.ndtri, (UNIT,)),
    "special.log_ndtr": (special.log_ndtr, (NORMAL,)),
    "special.xlogy": (special.xlogy, (UNIT, UNIT)),
    "special.entr": (special.entr, (UNIT,)),
    "special.rel_entr": (special.rel_entr, (UNIT, UNIT[::-1].copy())),
    "special.i0": (special.i0, (NORMAL,)),
    "special.logsumexp": (special.logsumexp, (NORMAL,)),
    "special.softmax": (special.softmax, (NORMAL,)),
    "special.log_softmax": (special.log_softmax, (NORMAL,)),
    "stats.moment": (lambda x: stats.moment(x, order=3), (NORMAL,)),
    "stats.skew": (stats.skew, (NORMAL,)),
    "stats.kurtosis": (stats.kurtosis, (NORMAL,)),
    "stats.zscore": (stats.zscore, (NORMAL,)),
    "stats.sem": (stats.sem, (NORMAL,)),
    "stats.variation": (stats.variation, (UNIT,)),
    "stats.gmean": (stats.gmean, (UNIT,)),
    "stats.hmean": (stats.hmean, (UNIT,)),
    "stats.pmean": (lambda x: stats.pmean(x, 2.0), (UNIT,)),
    "stats.tmean": (stats.tmean, (NORMAL,)),
    "stats.tvar": (stats.tvar, (NORMAL,)),
    "stats.tstd": (stats.tstd, (NORMAL,)),
    "stats.entropy": (stats.entropy, (UNIT,)),
    "stats.describe": (lambda x: stats.describe(x).variance, (NORMAL,)),
    "stats.quantile": (lambda x: stats.quantile(x, 0.3), (NORMAL,)),
    "stats.trim_mean": (lambda x: stats.trim_mean(x, 0.1), (NORMAL,)),
    "stats.iqr": (stats.iqr, (NORMAL,)),
    "stats.rankdata": (stats.rankdata, (NORMAL,)),
    "stats.ttest_1samp": (lambda x: stats.ttest_1samp(x, 0.0).pvalue, (NORMAL,)),
    "stats.ttest_ind": (lambda x, y: stats.ttest_ind(x, y).pvalue, (NORMAL, OTHER)),
    "stats.pearsonr": (lambda x, y: stats.pearsonr(x, y).statistic, (NORMAL, OTHER)),
    "stats.chatterjeexi": (lambda x, y: stats.chatterjeexi(x, y).statistic, (NORMAL, OTHER)),
    "stats.skewtest": (lambda x: stats.skewtest(x).pvalue, (NORMAL,)),
    "stats.jarque_bera": (lambda x: stats.jarque_bera(x).pvalue, (NORMAL,)),
    "fft.fft": (fft.fft, (NORMAL,)),
    "fft.ifft": (fft.ifft, (NORMAL,)),
    "fft.rfft": (fft.rfft, (NORMAL,)),
    "fft.irfft": (fft.irfft, (NORMAL,)),
    "fft.fftshift": (fft.fftshift, (NORMAL,)),
    "fft.dct": (fft.dct, (NORMAL,)),
    "signal.convolve": (signal.convolve, (NORMAL, UNIT)),
    "signal.correlate": (signal.correlate, (NORMAL, UNIT)),
    "signal.fftconvolve": (signal.fftconvolve, (NORMAL, UNIT)),
    "signal.oaconvolve": (signal.oaconvolve, (NORMAL, UNIT)),
    "signal.detrend": (signal.detrend, (NORMAL,)),
    "signal.lfilter": (lambda b, a, x: signal.lfilter(b, a, x), (UNIT[:3].copy(), np.array([1.0, -0.5]), NORMAL)),
    "signal.hilbert": (signal.hilbert, (NORMAL,)),
    "cluster.vq.whiten": (vq.whiten, (POINTS,)),
    "cluster.vq.vq": (lambda obs, codes: vq.vq(obs, codes)[0], (POINTS, POINTS[:4].copy())),
    "cluster.hierarchy.linkage": (hierarchy.linkage, (POINTS,)),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("namespace", NAMESPACES)
def test_matches_numpy(namespace: str, case: str) -> None:
    xp = importlib.import_module(namespace)
    fn, inputs = CASES[case]
    expected = np.asarray(fn(*inputs))
    got = fn(*(xp.asarray(a) for a in inputs))
    assert not isinstance(got, np.ndarray), f"SciPy returned a NumPy array for {namespace} inputs"
    np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-10, atol=1e-12)
