"""Ahead-of-time export (plaidarray.export, plaidarray.aot.load; docs/aot.md).

Exported code must compute what the JIT computes, bit for bit where no BLAS is involved:
through the Python loader and through a C program (tests/aot/aot_driver.c) on the host, and
through the same C program under qemu for aarch64 and riscv64, where Debian's cross
compilers and qemu-user are installed (.ci/run installs them when it runs as root).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import plaidarray as xp
from plaidarray import aot

HERE = Path(__file__).parent
#: A value the exported function closes over: built into the library.
TABLE = np.random.default_rng(7).standard_normal(256)


def exact(x32, x64, z64, z128):
    """Every kind of code without BLAS: vector math in both precisions, reductions,
    complex library calls (the C ABI's complex convention), an FFT (bound twiddles), a
    captured constant, an input passed through and a result returned twice."""
    e = xp.exp(x32) * xp.tanh(x32) + xp.log1p(xp.abs(x32))
    return (e, xp.sin(x64) + xp.cos(x64) * xp.asarray(TABLE), xp.sum(x64 * x64), xp.mean(x32), xp.max(x64),
            xp.sum(xp.reshape(x64, (16, 16)), axis=0), xp.exp(z64), xp.sqrt(z128) * xp.log(z128), xp.abs(z64),
            xp.fft.fft(z128), x64, e)


def exact_inputs() -> list[np.ndarray]:
    x = np.linspace(-4.0, 4.0, 256)
    z = x[::-1] + 1j * np.linspace(-2.0, 3.0, 256)
    return [x.astype(np.float32), x * 1.5, z.astype(np.complex64), z]


def with_blas(a32, b32, a, b, s):
    """Matrix products (BLAS) in both precisions and a decomposition (LAPACK)."""
    return xp.matmul(a32, b32), xp.matmul(a, b), xp.linalg.cholesky(s)


def blas_inputs() -> list[np.ndarray]:
    rng = np.random.default_rng(11)
    a, b, m = rng.standard_normal((24, 40)), rng.standard_normal((40, 12)), rng.standard_normal((6, 6))
    return [a.astype(np.float32), b.astype(np.float32), a, b, m @ m.T + 6 * np.eye(6)]


def blas_reference(inputs: list[np.ndarray]) -> list[np.ndarray]:
    a32, b32, a, b, s = inputs
    return [a32 @ b32, a @ b, np.linalg.cholesky(s)]


def jit_values(fn, inputs) -> list[np.ndarray]:
    return [np.asarray(v) for v in xp.jit(fn)(*inputs)]


def assert_blas_close(got, want) -> None:
    for g, w in zip(got, want):
        tolerance = 1e-6 if g.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(g, w, rtol=tolerance, atol=tolerance * np.abs(w).max())


@pytest.fixture(scope="module")
def exported_exact(tmp_path_factory) -> Path:
    return xp.export(exact, *exact_inputs(), out=tmp_path_factory.mktemp("exact"))


@pytest.fixture(scope="module")
def exported_blas(tmp_path_factory) -> Path:
    return xp.export(with_blas, *blas_inputs(), out=tmp_path_factory.mktemp("blas"))


# --- the host, through the loader -------------------------------------------------------

def test_exported_code_computes_what_the_jit_computes_bit_for_bit(exported_exact):
    got = aot.load(exported_exact)(*exact_inputs())
    want = jit_values(exact, exact_inputs())
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_blas_and_lapack_calls_take_scipys_routines_in_the_loader(exported_blas):
    artifact = aot.load(exported_blas)
    assert artifact.manifest["routines"] == ["blas_sgemm", "blas_dgemm", "lapack_dpotrf"]
    assert_blas_close(artifact(*blas_inputs()), blas_reference(blas_inputs()))


def test_the_manifest_names_the_c_library_symbols_the_code_needs(exported_exact):
    manifest = json.loads((exported_exact / "exact.json").read_text())
    assert {"cexpf", "csqrt", "clog"} <= set(manifest["needed"])  # complex64 exp, complex128 sqrt and log
    assert [i["name"] for i in manifest["inputs"]] == ["x32", "x64", "z64", "z128"]
    assert manifest["outputs"][2] == {"dtype": "float64", "shape": [], "bytes": 8}


def test_the_inputs_are_named_by_where_they_lie_in_the_arguments(tmp_path):
    """A pytree parameter's arrays are named by their place in it, and a flag that is no
    input names none (the names were the parameters' whenever the counts matched: input
    1 was called ``flag`` and the loader's error named it)."""
    def f(pair, flag, params):
        return pair[0] * 2 - pair[1] + params["w"] if flag else pair[0]

    a = np.arange(12.0).reshape(3, 4)
    out = xp.export(f, (a, a[0]), True, {"w": a[1]}, out=tmp_path, name="named")
    manifest = json.loads((out / "named.json").read_text())
    assert [i["name"] for i in manifest["inputs"]] == ["pair_0", "pair_1", "params_w"]
    with pytest.raises(ValueError, match="'pair_1'"):
        aot.load(out)(a, a, a[1])


def test_a_lowered_jit_function_exports_alike(tmp_path):
    x = np.linspace(0.0, 1.0, 33)
    lowered = xp.jit(lambda v: xp.cos(v) * 2.0).lower(x)
    artifact = aot.load(xp.export(lowered, out=tmp_path, name="twice_cos"))
    np.testing.assert_array_equal(artifact(x), np.asarray(xp.cos(xp.asarray(x)) * 2.0))


# --- what the loader refuses, before any native code runs --------------------------------

def test_arguments_of_another_dtype_or_shape_are_a_value_error_naming_them(exported_exact):
    artifact = aot.load(exported_exact)
    inputs = exact_inputs()
    with pytest.raises(ValueError, match=r"argument 1 \('x64'\) must be float64\[256\], got float32\[256\]"):
        artifact(inputs[0], inputs[1].astype(np.float32), *inputs[2:])
    with pytest.raises(ValueError, match=r"argument 3 \('z128'\) must be complex128\[256\], got complex128\[255\]"):
        artifact(*inputs[:3], inputs[3][:255])
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        artifact(*inputs[:3])


def test_a_library_needing_a_cpu_feature_this_machine_lacks_is_refused(exported_exact, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(exported_exact, copy)
    manifest = json.loads((copy / "exact.json").read_text())
    manifest["requires"].append("avx10.9-2048")
    (copy / "exact.json").write_text(json.dumps(manifest))
    with pytest.raises(aot.LoadError, match="this machine lacks avx10.9-2048"):
        aot.load(copy)


def test_the_loader_imports_neither_the_compiler_nor_llvmlite(exported_exact):
    program = textwrap.dedent(f"""
        import sys, numpy as np
        import plaidarray.aot as aot
        artifact = aot.load({str(exported_exact)!r})
        x = np.linspace(-4.0, 4.0, 256)
        z = x[::-1] + 1j * np.linspace(-2.0, 3.0, 256)
        result = artifact(x.astype(np.float32), x * 1.5, z.astype(np.complex64), z)
        print(float(result[2]), sorted(m for m in ("xdsl", "llvmlite") if m in sys.modules))
    """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout.split()
    assert float(out[0]) == float(np.sum((np.linspace(-4.0, 4.0, 256) * 1.5) ** 2))
    assert out[1:] == ["[]"]


def test_export_errors_name_the_problem(tmp_path):
    x = np.ones(4)
    with pytest.raises(aot.ExportError, match="no export target 'mips64'"):
        xp.export(xp.sin, x, target="mips64", out=tmp_path)
    with pytest.raises(aot.ExportError, match="not a C identifier"):
        xp.export(xp.sin, x, name="2fast", out=tmp_path)


# --- C programs: the host, and other architectures under qemu ----------------------------

#: The results of ``exact`` computed by the C library (cexpf, csqrt and clog, hypotf),
#: whose code is the target's, not ours.
BY_THE_C_LIBRARY = (6, 7, 8)
#: Cross targets: (export target, C compiler, emulator).
CROSS = {"aarch64-linux-gnu": ("aarch64-linux-gnu-gcc", "qemu-aarch64"),
         "riscv64-linux-gnu": ("riscv64-linux-gnu-gcc", "qemu-riscv64")}


def build_driver(directory: Path, name: str, cc: str, *flags: str) -> Path:
    exe = directory / f"{name}_driver"
    command = [cc, "-O1", f'-DHEADER="{directory / name}.h"', f"-DFN={name}", f"-DUFN={name.upper()}",
               str(HERE / "aot_driver.c"), str(directory / f"lib{name}.a"), *flags, "-lm", "-o", str(exe)]
    subprocess.run(command, check=True, capture_output=True)
    return exe


def run_driver(command: list[str], directory: Path, inputs: list[np.ndarray], manifest: dict) -> list[np.ndarray]:
    files = []
    for i, array in enumerate(inputs):
        files.append(directory / f"in{i}.bin")
        np.ascontiguousarray(array).tofile(files[-1])
    outs = [directory / f"out{j}.bin" for j in range(len(manifest["outputs"]))]
    subprocess.run([*command, *map(str, files), *map(str, outs)], check=True, capture_output=True, timeout=120)
    return [np.fromfile(path, np.dtype(o["dtype"])).reshape(o["shape"]) for path, o in zip(outs, manifest["outputs"])]


def test_a_c_program_on_the_host_computes_what_the_jit_computes(exported_exact):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    manifest = json.loads((exported_exact / "exact.json").read_text())
    exe = build_driver(exported_exact, "exact", shutil.which("cc") or "gcc")
    got = run_driver([str(exe)], exported_exact, exact_inputs(), manifest)
    for g, w in zip(got, jit_values(exact, exact_inputs())):
        np.testing.assert_array_equal(g, w)


def test_a_c_program_takes_blas_and_lapack_from_the_system(exported_blas, tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    probe = subprocess.run([cc or "cc", "-x", "c", "-", "-lblas", "-llapack", "-o", str(tmp_path / "probe")],
                           input="int main(void) { return 0; }", capture_output=True, text=True) if cc else None
    if probe is None or probe.returncode != 0:
        pytest.skip("no system BLAS and LAPACK to link (Debian: libblas-dev liblapack-dev)")
    manifest = json.loads((exported_blas / "with_blas.json").read_text())
    exe = build_driver(exported_blas, "with_blas", cc, "-DROUTINES", "-Wl,--no-as-needed", "-llapack", "-lblas", "-ldl")
    got = run_driver([str(exe)], exported_blas, blas_inputs(), manifest)
    assert_blas_close(got, blas_reference(blas_inputs()))


@pytest.mark.parametrize("target", sorted(CROSS))
def test_code_for_another_architecture_computes_what_the_jit_computes_under_qemu(target, tmp_path):
    cc, emulator = CROSS[target]
    missing = [tool for tool in (cc, emulator) if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (Debian: gcc-{target.replace('-linux-gnu', '')}-linux-gnu, "
                    f"qemu-user)")
    directory = xp.export(exact, *exact_inputs(), target=target, out=tmp_path)
    manifest = json.loads((directory / "exact.json").read_text())
    assert manifest["target"]["triple"].startswith(target.split("-")[0])
    exe = build_driver(directory, "exact", cc, "-static")
    got = run_driver([emulator, str(exe)], directory, exact_inputs(), manifest)
    for i, (g, w) in enumerate(zip(got, jit_values(exact, exact_inputs()))):
        if i in BY_THE_C_LIBRARY:  # each architecture's libm rounds its own way
            np.testing.assert_allclose(g, w, rtol=4 * np.finfo(g.dtype).eps, atol=0)
        else:
            np.testing.assert_array_equal(g, w)
    with pytest.raises(aot.LoadError, match=f"an {target.split('-')[0]} processor"):
        aot.load(directory)


def test_the_shared_library_has_no_text_relocations(exported_exact):
    if shutil.which("readelf") is None:
        pytest.skip("readelf not installed")
    dynamic = subprocess.run(["readelf", "-d", str(exported_exact / "libexact.so")], capture_output=True,
                             text=True, check=True).stdout
    assert "NEEDED" in dynamic and "TEXTREL" not in dynamic


def test_two_libraries_link_into_one_program(tmp_path):
    """Both contain the same kernel and the same vector math function: only each one's
    entry and routine table are global, so nothing clashes."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    x = -1.0 + 2.0 * np.arange(64) / 63.0  # as the C program makes it
    for name in ("one", "two"):
        xp.export(lambda v: xp.exp(v) * 3.0, x, name=name, out=tmp_path)
    (tmp_path / "main.c").write_text(textwrap.dedent("""
        #include <stdio.h>
        #include "one.h"
        #include "two.h"
        int main(void) {
            double x[64], a[64], b[64];
            for (int i = 0; i < 64; i++) x[i] = -1.0 + 2.0 * i / 63.0;
            const void *in[1] = {x};
            void *oa[1] = {a}, *ob[1] = {b};
            if (one_run(in, oa) || two_run(in, ob)) return 1;
            for (int i = 0; i < 64; i++) printf("%.17g %.17g\\n", a[i], b[i]);
            return 0;
        }
    """))
    exe = tmp_path / "both"
    subprocess.run([cc, "-I", str(tmp_path), str(tmp_path / "main.c"), str(tmp_path / "libone.a"),
                    str(tmp_path / "libtwo.a"), "-lm", "-o", str(exe)], check=True, capture_output=True)
    values = np.array([line.split() for line in subprocess.run([str(exe)], capture_output=True, text=True,
                                                                 check=True).stdout.splitlines()], dtype=float)
    want = np.asarray(xp.exp(xp.asarray(x)) * 3.0)
    np.testing.assert_array_equal(values[:, 0], want)
    np.testing.assert_array_equal(values[:, 1], want)


def test_the_command_line_exports_a_function_of_a_module(tmp_path):
    (tmp_path / "shapes_module.py").write_text("import plaidarray as xp\n\ndef area(w, h):\n    return w * h\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-m", "plaidarray", "export", "shapes_module:area", "--arg", "float32[3,4]",
                    "--arg", "float32[3,4]", "--out", str(tmp_path / "out")], check=True, env=env,
                   capture_output=True)
    artifact = aot.load(tmp_path / "out")
    w, h = np.full((3, 4), 2.0, np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(artifact(w, h), w * h)
