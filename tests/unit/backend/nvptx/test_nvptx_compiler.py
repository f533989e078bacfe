"""The GPU tier without a GPU: llvm-nvptx's kernels for graphs of each op family pass
NVIDIA's assembler for every architecture, and run on the simulated device
(``llvm_nvptx/simulator``) to the host's bits: the same loop IR, the same partial sums
and the same math polynomials (``llvm/math_functions.py``) compute each element as
llvm-cpu's compiled code does, which is the reference here (its own differential tests
compare it with NumPy). Two families are computed by other algorithms on the two, and
agree to rounding (``APPROXIMATE``): matrix products (BLAS on the host, the loops of the
target-neutral lowering on the GPU, whose partial sums add in another order) and the
functions the host takes from the C library (libdevice's on the GPU)."""

from __future__ import annotations

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.api.graph import op
from plaidarray.backend.llvm_cpu.compiler import CpuCompiler
from plaidarray.backend.llvm_nvptx import cuda_driver, ptxas, toolkit
from plaidarray.backend.llvm_nvptx.compiler import NvptxCompiler
from plaidarray.backend.llvm_nvptx.simulated import SimulatedRuntime
from plaidarray.backend.llvm_nvptx.stages import STAGES, Compilation
from plaidarray.backend.llvm_nvptx.targets import ARCHITECTURES, gpu
from plaidarray.backend.pipeline import run_stages

RNG = np.random.default_rng(7)


def _f(*shape, dtype=np.float64):
    return (RNG.standard_normal(shape) * 3).astype(dtype)


def _softmax(x):
    e = xp.exp(x - xp.max(x, axis=1, keepdims=True))
    return e / xp.sum(e, axis=1, keepdims=True)


#: name -> (function, its arguments): graphs of every op family the GPU tier lowers.
CASES = {
    "elementwise f32": (lambda x, y: xp.exp(x) * xp.sin(y) + x * 2.0, [_f(300, dtype=np.float32),
                                                                         _f(300, dtype=np.float32)]),
    "elementwise f64 math": (lambda x: xp.tanh(x) + xp.log1p(xp.abs(x)) - xp.cos(x) + xp.expm1(x / 4),
                             [_f(257)]),
    "libdevice math": (lambda x: xp.atan2(x, 1.5) + xp.sinh(x / 8) + xp.log10(xp.abs(x) + 1) + x ** 1.5,
                       [np.abs(_f(130))]),
    "integers": (lambda a, b: (a * 3 + b) // 7 - (a % 5) + (a >> 2) + xp.where(a > b, a, b),
                 [RNG.integers(-1000, 1000, 200).astype(np.int32), RNG.integers(1, 50, 200).astype(np.int32)]),
    "compare and select": (lambda x, y: xp.where((x > 0) & (y < 1), x, y * 0.5), [_f(7, 33), _f(7, 33)]),
    "broadcast": (lambda x, v: x * v + v[None, :] - x[:, :1], [_f(9, 40), _f(40)]),
    "row sum": (lambda x: xp.sum(x, axis=1), [_f(37, 301)]),
    "column sum": (lambda x: xp.sum(x, axis=0), [_f(65, 19)]),
    "whole-array f32 sum": (lambda x: xp.sum(x), [_f(5000, dtype=np.float32)]),
    "max and argmax": (lambda x: (xp.max(x, axis=1), xp.argmax(x, axis=0)), [_f(12, 17)]),
    "mean and var": (lambda x: (xp.mean(x, axis=0), xp.var(x, axis=1)), [_f(20, 24)]),
    "softmax": (_softmax, [_f(16, 70, dtype=np.float32)]),
    "transpose": (lambda x: xp.permute_dims(x, (2, 0, 1)) * 2.0, [_f(3, 4, 5)]),
    "concat": (lambda x, y: xp.concat([x, y * 2.0, x], axis=1), [_f(6, 4), _f(6, 3)]),
    "slices": (lambda x: x[1:-1:2, :12:3] + x[:-2:2, 1::3], [_f(11, 13)]),
    "iota and astype": (lambda x: xp.astype(xp.arange(60) % 7, xp.float64) * x, [_f(60)]),
    "cumulative sum": (lambda x: xp.cumulative_sum(x, axis=1), [_f(5, 30)]),
    # float products are cuBLAS calls between executables (test_gpu_matrix_products.py): the
    # generated loops compute integer products and dot products of vectors
    "integer matmul": (lambda a, b: a @ b, [RNG.integers(-50, 50, (6, 5)), RNG.integers(-50, 50, (5, 4))]),
    "dot of vectors": (lambda a, b: xp.vecdot(a, b), [_f(7, 33), _f(7, 33)]),
    "sort and argsort": (lambda x: (xp.sort(x, axis=1), xp.argsort(x, axis=0, descending=True)),
                         [np.round(_f(6, 23), 1)]),
    "integer power": (lambda a, b: a ** b, [RNG.integers(-9, 9, 30), RNG.integers(0, 12, 30)]),
    # exponents of run-time values 2, 0.5, -1: a product, a square root, a division on both
    # (``emitter.power``), not libdevice's pow
    "powers taken apart": (lambda x: (x ** 2 - (x * 1e150) ** 2, xp.abs(x) ** 0.5, x ** -1), [_f(40)]),
    # repeated and negative positions: one thread's loop, the last value of a position stays
    "scatter": (lambda x, i, v: op("scatter", x * 2.0, i, v), [_f(40), RNG.integers(-40, 40, 25), _f(25)]),
    # ops that a function records as one and backends expand (hlo/ops/generators.py,
    # determinant.py, factor_check.py): a diagonal of ones, a determinant's parts from LU
    # factors (pivots stored in the factors' dtype), a factor's failure check over a stack
    "eye": (lambda x: xp.eye(7, 9, k=2) * x, [_f(7, 9)]),
    # logaddexp, signbit, tril and triu (hlo/ops/elementwise.py, triangle.py), one op each
    "log-add-exp, sign bits, triangles": (lambda x, y: (xp.logaddexp(x, y), xp.signbit(x * y), xp.tril(x, k=1),
                                                        xp.triu(x - y)), [_f(9, 11), _f(9, 11)]),
    "determinant from factors": (lambda lu, p: tuple(op("lu_determinant", lu, p, part=part)
                                                     for part in ("sign", "logabsdet", "det")),
                                 [_f(3, 5, 5), RNG.integers(0, 5, (3, 5)).astype(np.float64)]),
    "factor check": (lambda f, m: op("factor_failed", f, m), [np.where(np.arange(48).reshape(3, 4, 4) == 16, np.nan,
                                                                       _f(3, 4, 4)), _f(3, 4, 4)]),
}


#: The cases computed by other algorithms on the host and the GPU: relative tolerance.
APPROXIMATE = {"libdevice math": 1e-14}


def _module(name):
    fn, args = CASES[name]
    lowered = xp.jit(fn).lower(*[xp.asarray(a) for a in args])
    return lowered.module, [*args, *lowered.constants]  # what it closes over (an index's start) follows


def _ptx(name: str, architecture: str) -> str:
    module, _ = _module(name)
    c = Compilation("unit", module.entry, frozenset(), 3, "unit", 0, target=gpu(architecture), shares_groups=False)
    run_stages(STAGES[:-1], c, "unit", c.timings)
    return c.ptx


def _bits(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind in "fc" else a


@pytest.mark.skipif(toolkit.ptxas() is None, reason=f"ptxas is not installed ({toolkit.INSTALL_HINT})")
@pytest.mark.parametrize("architecture", sorted(ARCHITECTURES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_every_kernel_passes_ptxas(name, architecture):
    cubin, reports = ptxas.assemble(_ptx(name, architecture), architecture)
    assert cubin and reports, "ptxas made a cubin and reported each kernel"
    for report in reports:
        assert report.spill_stores == 0 and report.spill_loads == 0, report
        assert report.registers <= 255, report


#: The runtimes the value tests run on: the simulated device everywhere, and the first GPU
#: where there is one (``tools/gpu_check.sh``).
RUNTIMES = {"simulated": SimulatedRuntime, "cuda": lambda: cuda_driver.CudaRuntime(0)}
PRESENT = ["simulated", *(["cuda"] if cuda_driver.device_count() else [])]


@pytest.mark.parametrize("runtime", PRESENT)
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_gpu_tier_computes_the_hosts_bits(name, runtime):
    module, args = _module(name)
    want = CpuCompiler().compile(module).run([np.ascontiguousarray(a) for a in args])
    got = NvptxCompiler(RUNTIMES[runtime]()).compile(module).run_on_host([np.ascontiguousarray(a) for a in args])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        if name in APPROXIMATE:
            np.testing.assert_allclose(g, w, rtol=APPROXIMATE[name])
        else:
            np.testing.assert_array_equal(_bits(g), _bits(w))


def test_ptxas_refusal_is_an_error_naming_it():
    if toolkit.ptxas() is None:
        pytest.skip(f"ptxas is not installed ({toolkit.INSTALL_HINT})")
    with pytest.raises(ptxas.PtxasError, match="ptxas refused"):
        ptxas.assemble(".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k() { bogus; }\n", "sm_80")


def test_a_library_call_without_gpu_code_is_named():
    module, _ = xp.jit(lambda a: xp.linalg.inv(a)).lower(xp.asarray(_f(3, 3))).module, None
    with pytest.raises(NotImplementedError, match="llvm-nvptx has no code for custom_call.*round trip"):
        NvptxCompiler(SimulatedRuntime()).compile(module)


def test_the_ops_without_gpu_code_are_those_docs_gpu_md_lists():
    """docs/gpu.md names the HLO ops that have no lowering for llvm-nvptx (those the host
    lowers to a library alone); a lowering added or lost changes this list. Read in a
    process of its own: other tests register example ops (tests/project/test_extending.py)."""
    import re
    import subprocess
    import sys

    from jit_helpers import REPO

    program = ("import plaidarray, plaidarray.codegen.lowerings, plaidarray.backend.llvm_cpu.lowerings, "
               "plaidarray.backend.llvm_nvptx.lowerings\n"
               "from plaidarray.codegen.lowering import lowering_for\nfrom plaidarray.hlo.opdef import OPS\n"
               "for op in sorted(OPS):\n    try:\n        lowering_for(op, 'llvm-nvptx')\n"
               "    except NotImplementedError:\n        print(op)\n")
    missing = set(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True,
                                 cwd=REPO).stdout.split())
    line = re.search(r"HLO ops without GPU code: ([^(]*)\(", (REPO / "docs" / "gpu.md").read_text().replace("\n  ", " "))
    assert line is not None
    assert set(re.findall(r"`([a-z_]+)`", line.group(1))) == missing and missing
    assert {op for op, kinds in NvptxCompiler.host_ops.items() if not kinds} <= missing  # none has GPU code
