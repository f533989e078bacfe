"""The op kernels built at installation (``plaidarray/prebuild.py``): a fresh process with
an empty compile cache runs on them without the code generator, and the persistent cache
reads them only where nobody but their owner (this user, or root) could have written them,
and never removes or rewrites them."""

from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from jit_helpers import child_env

import plaidarray as xp
from plaidarray import prebuild
from plaidarray.backend import registry
from plaidarray.backend.llvm import object_cache, sources
from plaidarray.backend.llvm_cpu import bundles, cache_entry, installed_library, loaded_code, op_catalogue

pytestmark = pytest.mark.skipif("llvm-cpu" not in xp.backends(), reason="the compiled backend is not installed")

#: A program whose op kernels the "installation" builds, then runs at other sizes.
PROGRAM = """
import sys
from pathlib import Path
import numpy
import plaidarray as xp
from plaidarray.backend.llvm import object_cache
from plaidarray.backend.llvm_cpu import bundles, installed_library
if len(sys.argv) > 2:
    object_cache.INSTALLED = Path(sys.argv[2])
if len(sys.argv) > 3:
    installed_library.OBJECTS_KEPT_IN = Path(sys.argv[3])
if len(sys.argv) > 4:
    from plaidarray.backend.llvm_cpu import op_catalogue
    from plaidarray.trace import baseline
    baseline.LIST_OP_KERNELS, op_catalogue.RECORDS_KEPT_IN = True, Path(sys.argv[4])
n = int(sys.argv[1])
x = xp.asarray(numpy.linspace(0.0, 1.0, n))
m = xp.reshape(xp.asarray(numpy.arange(float(n * 3))), (n, 3))
values = [float(xp.sum(xp.exp(x) * 2.0 + x)), float(xp.max(m @ m.T)), float(xp.mean(m[:, 1]))]
line, grid = numpy.linspace(0.0, 1.0, n), numpy.arange(float(n * 3)).reshape(n, 3)
expected = [float(numpy.sum(numpy.exp(line) * 2.0 + line)), float(numpy.max(grid @ grid.T)), float(numpy.mean(grid[:, 1]))]
assert numpy.allclose(values, expected, rtol=1e-12), (values, expected)
print(xp.cache_info().compiles, "xdsl" in sys.modules)
"""


def _run(args: list[str], cache: Path, **env: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROGRAM, *args], env=child_env(cache, **env), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize("library", [True, False], ids=["library", "files"])
def test_a_fresh_process_runs_on_installed_kernels_without_the_compiler(tmp_path, library):
    """... with the bundles' code linked into the installation's library
    (``installed_library.link``) or, where the build kept no object code, their shared
    objects in files of their own (``bundles.unpack``), as are the vector math functions';
    loaded where they are, and only while nobody else could have written them; each
    executable's entry holds what its kernels' and bundles' entries say
    (``cache_entry.resolve``), so those are not read."""
    installed, empty, kept = tmp_path / "installed", tmp_path / "empty", tmp_path / "installed" / "objects"
    # the build, into what becomes the installed directory
    built = _run(["5", str(tmp_path / "nothing installed"), *([str(kept)] if library else [])], installed,
                 **prebuild.BUILD_ENVIRONMENT)
    assert int(built.split()[0]) > 0
    assert kept.is_dir() == library
    in_library = installed_library.link(installed)
    assert (in_library > 0) == library and not kept.exists()
    assert (installed / installed_library.LIBRARY).exists() == library
    assert bundles.unpack(installed) > 0 and bundles.unpack(installed) == 0
    unpacked = {kind for _, code, meta in object_cache.installed_entries(installed) if meta.get(loaded_code.IN_FILE)
                for kind in ("library", "libraries") if kind in meta and not code}
    # exp's vector math, and the bundles where no library holds them
    assert unpacked == ({"library"} if library else {"library", "libraries"})
    shared_objects = list(installed.glob("*.so"))
    assert shared_objects and all(path.read_bytes()[:4] == b"\x7fELF" for path in shared_objects)
    assert cache_entry.resolve(installed) > 0 and cache_entry.resolve(installed) == 0
    for key, _, meta in list(object_cache.installed_entries(installed)):  # the kernels' and bundles' own entries
        if "symbol" in meta or "libraries" in meta:
            (installed / (key + object_cache.SUFFIX)).unlink()
    assert _run(["9", str(installed)], empty, PLAIDARRAY_FUSE_AFTER_MS="1e9") == "0 False"
    assert not list(empty.glob("*" + object_cache.SUFFIX))  # nothing was compiled, so nothing stored
    assert _run(["9", str(installed)], tmp_path / "off", PLAIDARRAY_FUSE_AFTER_MS="1e9",
                PLAIDARRAY_INSTALLED_KERNELS="0").split()[0] != "0"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for path in shared_objects:  # each the same code, through a symbolic link: not loaded
        path.rename(elsewhere / path.name)
        path.symlink_to(elsewhere / path.name)
    assert _run(["9", str(installed)], tmp_path / "linked", PLAIDARRAY_FUSE_AFTER_MS="1e9").split()[0] != "0"
    for path in shared_objects:
        path.unlink()
        (elsewhere / path.name).rename(path)
        path.chmod(0o666)
    assert _run(["9", str(installed)], tmp_path / "distrusted", PLAIDARRAY_FUSE_AFTER_MS="1e9").split()[0] != "0"
    assert all(path.exists() for path in shared_objects)


def test_the_catalogue_serves_op_kernels_by_their_signature(tmp_path):
    """The installation's catalogue (``op_catalogue.py``) lists each op kernel the build
    met by its signature (a record half written by a killed build process left out): a
    fresh process finds its op kernels there with no executable's
    entry of its own left, computes what NumPy does, and compiles nothing; a damaged
    record, a catalogue of another environment and one nobody else may not write are not
    read (the kernels are then compiled)."""
    installed = tmp_path / "installed"
    records = installed / op_catalogue.RECORDS
    _run(["5", str(tmp_path / "nothing installed"), str(installed / installed_library.OBJECTS), str(records)],
         installed, **prebuild.BUILD_ENVIRONMENT)
    assert records.is_dir()
    with open(next(records.glob("*")), "a") as half_written:  # as a killed build process leaves a line
        half_written.write('["0123')
    installed_library.link(installed)
    bundles.unpack(installed)
    cache_entry.resolve(installed)
    listed = op_catalogue.write(installed)
    assert listed > 0 and not records.exists()
    catalogue = installed / op_catalogue.CATALOGUE
    magic, _, n_slots, _ = op_catalogue._HEADER.unpack_from(catalogue.read_bytes())
    slots = [op_catalogue._SLOT.unpack_from(catalogue.read_bytes(), op_catalogue._HEADER.size + k * op_catalogue._SLOT.size)
             for k in range(n_slots)]
    keys = {marshal.loads(catalogue.read_bytes()[offset:offset + length])[0]
            for digest, offset, length, _ in slots if digest != bytes(16)}
    assert magic == b"PLAIDCAT" and len(keys) == listed
    for key in keys:  # the catalogued executables' own entries: the catalogue holds what they said
        (installed / (key + object_cache.SUFFIX)).unlink()
    assert _run(["9", str(installed)], tmp_path / "empty", PLAIDARRAY_FUSE_AFTER_MS="1e9") == "0 False"
    good = catalogue.read_bytes()
    damaged = bytearray(good)
    damaged[-3] ^= 0xFF  # the last record's
    for data in (bytes(damaged), good[:16] + b"0" * 40 + good[56:]):  # a record; the environment's key
        catalogue.write_bytes(data)
        assert _run(["9", str(installed)], tmp_path / "compiled", PLAIDARRAY_FUSE_AFTER_MS="1e9").split()[0] != "0"
    catalogue.write_bytes(good)
    catalogue.chmod(0o666)
    assert _run(["9", str(installed)], tmp_path / "distrusted", PLAIDARRAY_FUSE_AFTER_MS="1e9").split()[0] != "0"


def test_the_catalogue_is_found_again_without_looking_for_the_installation(monkeypatch):
    """Once opened, the installation's catalogue is asked for again without finding the
    installed directory (the setting read, the directory checked), but not where the
    installed kernels are switched off (``PLAIDARRAY_INSTALLED_KERNELS=0``, read at each
    use) or where the installation is another directory."""
    target = registry.get("llvm-cpu").compiler.target
    first = op_catalogue.opened(target)
    if first is None:
        pytest.skip("no installed catalogue for this environment (its kernels are not built)")
    looked: list[int] = []
    found_directory = object_cache.installed_directory
    monkeypatch.setattr(object_cache, "installed_directory", lambda: looked.append(1) or found_directory())
    assert op_catalogue.opened(target) is first and not looked
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "0")
    assert op_catalogue.opened(target) is None
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "1")
    monkeypatch.setattr(object_cache, "INSTALLED", Path("/nonexistent/plaidarray/_kernels"))
    op_catalogue.opened(target)
    assert looked


def test_fft_templates_are_found_in_the_catalogue_without_their_hlo(monkeypatch):
    """Each FFT library template (by kind, dtype and class: odd or even, Bluestein's or
    not) is catalogued at the installation's build and found by that alone: a first
    transform of each kind makes no HLO, and computes what NumPy does."""
    from plaidarray.backend.cache import EXECUTABLES
    from plaidarray.backend.llvm_cpu import fft_library

    target = registry.get("llvm-cpu").compiler.target
    if op_catalogue.opened(target) is None:
        pytest.skip("no installed catalogue for this environment (its kernels are not built)")
    monkeypatch.setattr(fft_library, "_template_module", lambda *args: pytest.fail(f"made the HLO of {args}"))
    EXECUTABLES.clear()
    fft_library._PARTS.clear()
    rng = np.random.default_rng(3)
    for n in (64, 63, 262, 131):  # even, odd, an even n of Bluestein's half, an odd one of Bluestein's
        for dtype in (np.float64, np.float32):
            x = rng.standard_normal((2, n)).astype(dtype)
            tolerance = 1e-9 if dtype == np.float64 else 2e-3
            np.testing.assert_allclose(np.asarray(xp.fft.rfft(xp.asarray(x))), np.fft.rfft(x), atol=tolerance * n)
            spectrum = np.fft.rfft(x).astype(np.complex128 if dtype == np.float64 else np.complex64)
            np.testing.assert_allclose(np.asarray(xp.fft.irfft(xp.asarray(spectrum), n=n)), np.fft.irfft(spectrum, n=n),
                                       atol=tolerance)
            z = (x + 1j * x[::-1]).astype(spectrum.dtype)
            np.testing.assert_allclose(np.asarray(xp.fft.fft(xp.asarray(z))), np.fft.fft(z), atol=tolerance * n)
            np.testing.assert_allclose(np.asarray(xp.fft.ifft(xp.asarray(z))), np.fft.ifft(z), atol=tolerance)


def test_a_signature_keys_its_value_alone():
    """Equal signatures share a key whatever objects they share; values of other types
    (1, 1.0, True; dtypes) do not; a signature that does not pickle has none."""
    shared = (2, np.dtype("float64"))
    first = ((shared, shared), (1,), False)
    second = (((2, np.dtype("float64")), (2, np.dtype("float64"))), (1,), False)
    assert op_catalogue.signature_key(first) == op_catalogue.signature_key(second) is not None
    keys = {op_catalogue.signature_key(((value, np.dtype("float64")),)) for value in (1, 1.0, True)}
    keys |= {op_catalogue.signature_key(((1, np.dtype("float32")),))}
    assert len(keys) == 4
    assert op_catalogue.signature_key((lambda: 0,)) is None


#: First uses of the kinds NumPy-style scripts make at shapes the corpus does not run
#: (``prebuild.corpus``): QR and SVD of tall and wide matrices, square operands, steps
#: of slices of computed arrays, contractions and joins of distinct arrays, joins of one
#: row, a reduction over two of three axes, a block written, a batch of solves, a computed
#: matrix reversed, a row tiled, a rolled int32 matrix's differences, reductions over
#: alternate axes of rank 4, a vector times a batch of matrices, a stack of ten columns,
#: descending sorts, searches for one value and for a matrix of them, int32 and int16
#: indices, a matrix times a batch, the middle axes of rank 4 swapped, an outer product by
#: tensordot, a batch's squared norms along its middle axis, a column times one number, a
#: sum of a 5-d array, a column times a 1 x 1 block and two of them multiplied, a batch of
#: matrices times a batch of columns and a batch of rows times a batch of matrices, the
#: axes of a 3-d array reversed, of a 4-d one swapped and a 5-d one's permuted, a tensordot
#: over two axes, reductions of a 5-d array over alternate axes and over all but one, of a
#: 6-d one over all, windows of a 5-d array, a batch's pairwise dot products, a boolean
#: mask broadcast along a middle axis, the diagonals of a batch of int8 matrices, int64
#: sums over three of four axes, arg-extrema along a 4-d array's middle axes, tiles and
#: rolls and differences of 3-d and 4-d arrays, an element and every second frame of 5-d ones,
#: complex and boolean values taken along an axis, a join of an array repeated, a 1 x 1
#: matrix times a vector of one and a product contracting nothing, a 1 x 1 matrix squared
#: and a search in an empty array, int32 sums, products and scans kept in int32, a column
#: and a 3-d array's inner slice picked by a 0-d index, a single feature's X X^T and a
#: single sample's by tensordot, a 5-d array's transforms padded to a longer length and its
#: determinants, a strided write into every other axis of a 5-d array, a stack's
#: eigenvalues and a matrix's eigenvectors, the bounds of a linspace read from arrays, arrays
#: repeated once, a
#: mask as its own branch, a sorted array's ranks in itself and a permutation composed with
#: itself, and reductions, broadcasts, flips and strided slices of rank 6 and 7 along
#: alternate axes.
FIRST_USES = """
import sys
import numpy
import plaidarray as xp
rng = numpy.random.default_rng(0)
tall, wide, square = (xp.asarray(rng.standard_normal(s)) for s in ((9, 4), (4, 7), (6, 6)))
cube = xp.asarray(rng.standard_normal((5, 6, 7)))
hyper = xp.asarray(rng.standard_normal((3, 4, 5, 2)))
penta = xp.asarray(rng.standard_normal((2, 3, 4, 2, 3)))
a = xp.asarray(rng.standard_normal((6, 8)))
b = xp.zeros((5, 6))
b[1:3] = 1.0
counts = xp.asarray(rng.integers(0, 9, (7, 5)).astype(numpy.int32))
counts4 = xp.asarray(rng.integers(0, 9, (2, 3, 4, 5)))
calls = [xp.linalg.qr(tall), xp.linalg.qr(wide, mode="complete"), xp.linalg.svd(tall, full_matrices=False),
         xp.linalg.svdvals(wide), xp.linalg.pinv(tall), square @ square.T, xp.cumulative_sum(square, axis=1),
         xp.sort(square, axis=0), xp.tensordot(a, a * 2.0, axes=2), xp.vecdot(a, a * 2.0),
         xp.concat([a, a[:, :3]], axis=1), xp.stack([a[0], a[1], a[2]], axis=1), xp.mean(cube, axis=(0, 2)),
         (a * 2.0)[:, ::3], (cube * 2.0)[:, 1:-1, ::2], (a * 2.0)[::-1], b, xp.concat([a[0, 1:], a[1, :1]]),
         xp.concat([a[:1], a, a[-1:]]), xp.vecdot(a[0], a[1]), xp.take_along_axis(a, xp.argsort(a, axis=1)[:, :1], axis=1),
         xp.linalg.solve(xp.stack([square, square.T]) + xp.eye(6) * 9, xp.stack([square, square.T])[..., :1]),
         xp.flip(a * 2.0, axis=(0, 1)), xp.tile(a[:1], (3, 1)), xp.diff(xp.roll(counts, 1, axis=0) * 2, axis=0),
         xp.min(hyper, axis=(1, 3)), xp.sum(hyper, axis=(0, 2)), a[0, :6] @ cube,
         xp.stack([a[:, k] * 2.0 for k in range(8)] + [a[0, :6], a[1, :6]], axis=1),
         xp.argsort(a, axis=1, descending=True), xp.sort(cube, axis=1, descending=True),
         xp.searchsorted(xp.sort(a[0]), a[1, 2], side="right"), xp.searchsorted(xp.sort(a[0]), a),
         xp.take(a, xp.asarray(numpy.array([0, 2], numpy.int32)), axis=1), a[xp.asarray(numpy.array([1], numpy.int16))],
         square @ xp.stack([square, square.T]), xp.permute_dims(hyper, (0, 2, 1, 3)),
         xp.tensordot(a[0], a[1], axes=0), xp.vecdot(cube, cube, axis=1), a[:, :1] @ a[0, :1],
         xp.tensordot(a, a[:, 0], axes=([0], [0])), xp.tensordot(a[0], a, axes=([0], [1])),
         xp.vecdot(a, a[:, :1] * 2.0, axis=0), xp.vecdot(a[:1], a[1:2], axis=0), xp.tensordot(a[0, :1], a[1, :1], axes=0),
         xp.vecdot(cube[:, :1], cube[:, 1:2], axis=1), xp.tensordot(a[0, :1], a, axes=0),
         xp.sum(xp.reshape(cube[:4, :, :4], (2, 2, 6, 2, 2)) * 2.0), a[:, :1] @ a[:1, :1], a[:1, :1] @ a[1:2, :1],
         cube[:, :3, :3] @ cube[:, :3, :1], cube[:, :1, :3] @ cube[:, :3, :], xp.permute_dims(cube * 2.0, (2, 1, 0)),
         xp.permute_dims(hyper * 2.0, (0, 3, 2, 1)), xp.permute_dims(penta * 2.0, (0, 3, 1, 4, 2)),
         xp.tensordot(hyper, hyper * 2.0, axes=((1, 2), (1, 2))), xp.mean(penta, axis=(1, 3)),
         xp.var(penta, axis=(1, 2, 3, 4)), xp.sum(xp.reshape(penta, (2, 3, 2, 2, 2, 3)) * 2.0),
         (penta * 2.0)[:, 2, 1], (penta * 2.0)[:, :, 0], xp.vecdot(cube[:, :, None, :], cube[:, None, :4, :]),
         xp.broadcast_to(cube[:, :1] > 0, cube.shape),
         xp.linalg.diagonal(xp.asarray(rng.integers(-1, 2, (4, 3, 3)).astype(numpy.int8))),
         xp.sum(counts4, axis=(1, 2, 3)), xp.max(counts4, axis=(0, 2, 3)), xp.argmax(hyper, axis=-2),
         xp.argmin(hyper, axis=1), xp.tile(cube, (2, 2, 2)), xp.tile(counts, (2, 2)), xp.roll(hyper, 1, axis=-1),
         xp.diff(counts4, axis=-1), xp.diff(hyper, axis=0), penta[0, 0, 0, 0, 1], (penta * 2.0)[:, ::2],
         xp.take_along_axis(xp.astype(a, xp.complex64), xp.argsort(a, axis=0)[:2], axis=0),
         xp.take_along_axis(a > 0, xp.argsort(a, axis=1)[:, :3], axis=1), xp.concat([a, a * 2.0, a]),
         xp.stack([counts, counts, counts + 1], axis=1), a[:1, :1] @ a[0, :1], a[:, :0] @ a[:0, :],
         (m11 := a[:1, :1] * 2.0) @ m11, xp.searchsorted(a[0, :0], a[1, :3]), xp.sum(counts[0], dtype=xp.int32),
         xp.prod(counts, axis=1, dtype=xp.int32), xp.cumulative_sum(counts, axis=1, dtype=xp.int32),
         xp.vecdot(hyper, hyper * 2.0, axis=1), xp.vecdot(a[0], a), xp.tensordot(cube, a[:6, :3], axes=([1], [0])),
         xp.tril(hyper), xp.triu(penta, k=1), (hyper * 2.0)[:, 1], (hyper * 2.0)[0],
         (xp.astype(counts4 // 2, xp.uint8) * 2)[..., 1], xp.linalg.inv(xp.stack([hyper[:, :2, :2, 0]] * 2) * 0 + xp.eye(2)),
         xp.linalg.svdvals(cube[:, :3, :]), xp.linalg.svd(cube[:2, :, :3], full_matrices=False),
         xp.linalg.eigh(xp.stack([square @ square.T] * 2)[None])]
hyper_written, small_written = hyper * 1.0, xp.zeros((3, 4, 5), dtype=xp.uint8)
hyper_written[1] = 0.0
small_written[:, 1] = 7
upsampled = xp.zeros((2, 3, 6, 5), dtype=xp.float32)
upsampled[:, 1:, ::2, :] = 1.0
ints4 = xp.asarray(rng.integers(0, 9, (2, 3, 4, 5)).astype(numpy.int16))
mask4 = xp.asarray(rng.integers(0, 2, (2, 1, 3, 1)).astype(bool))
video = xp.asarray(rng.standard_normal((2, 4, 6, 8)).astype(numpy.float32))
calls += [hyper_written, small_written, upsampled, xp.flip(ints4, axis=(0, 2)) + 1, (hyper * 2.0)[::-1, :, ::-1, :] + 1,
          ints4 - xp.max(ints4, axis=(1, 3), keepdims=True), xp.where(mask4, xp.ones((2, 4, 3, 5)), 0.0),
          video[:, :3, ::2, ::2] * 2, xp.flip(penta, axis=(0, 2, 4)) * 2, xp.vecdot(cube, cube[0] * 2.0),
          xp.vecdot(cube, cube[0] * 2.0, axis=-2), xp.vecdot(cube[0] * 2.0, cube), xp.ones((2, 3, 4, 5)) @ xp.ones((3, 5, 2))]
strided5 = xp.zeros((4, 3, 4, 3, 4), dtype=xp.float32)
strided5[::2, :, ::2, :, ::2] = 1.0
best = xp.argmax(a[0])
calls += [a[:, best], cube[:, best % 6], hyper[..., best % 2], xp.tensordot(a[:, :1], a[:, :1] * 2.0, axes=([1], [1])),
          xp.tensordot(a[:1], a[:1] * 2.0, axes=([0], [0])), xp.fft.fft(xp.astype(penta, xp.complex128), n=5),
          xp.fft.rfft(penta, n=6, axis=1), xp.linalg.det(xp.reshape(xp.stack([square] * 4), (2, 1, 2, 6, 6))),
          strided5, xp.linalg.eigvals(xp.stack([square, square.T])), xp.linalg.eig(square),
          xp.linspace(xp.min(a), xp.max(a), 5), xp.repeat(a[0], 1), xp.repeat(cube, 1, axis=1)]
unit_kept = xp.asarray(rng.standard_normal((2, 1, 3, 1, 2, 1)))
calls += [xp.sum(unit_kept, axis=(0, 2, 4)), xp.var(unit_kept, axis=(0, 2, 4), keepdims=True),
          xp.max(unit_kept, axis=(1, 2, 4, 5))]
mask = a[0] > 0
ranks = xp.sort(a[1])
permutation = xp.argsort(a[2])
calls += [xp.where(mask, mask, False), xp.searchsorted(ranks, ranks), xp.take(permutation, permutation),
          permutation[permutation]]
scattered, table = a * 1.0, xp.zeros((5, 6), dtype=xp.int32)
float(scattered[0, 0])
picks = xp.asarray(numpy.array([3, 0, 3], numpy.uint64))
scattered[picks] = 1.0
scattered[picks, picks] += 2.0
row = scattered[0] * 1.0
row[xp.asarray(numpy.array([1, 1, -2], numpy.int32))] = xp.asarray(numpy.array([1.0, 2.0, 3.0]))
table[xp.sum(xp.asarray(numpy.array([1, 0, 1], numpy.uint8)))] += 1
table[1:3, ...] = table[0]
calls += [scattered, row, table, xp.take(a[0], picks)]
kron = xp.asarray(rng.standard_normal((2, 1, 3, 1, 2, 1))) * xp.asarray(rng.standard_normal((1, 2, 1, 3, 1, 2)))
seven = xp.asarray(rng.integers(0, 9, (2, 3, 2, 2, 3, 2, 2)).astype(numpy.int32))
calls += [xp.sum(kron, axis=(0, 2, 4)), xp.max(kron, axis=(1, 3, 5)), xp.sum(seven, axis=(0, 2, 4, 6)),
          xp.any(seven > 4, axis=(1, 3, 5)), xp.where(kron > 0, kron, xp.zeros((1, 1, 1, 1, 1, 2))),
          xp.flip(kron * 2.0, axis=(0, 2, 4)), xp.flip(seven + 1, axis=(1, 3, 5)), (kron * 2.0)[:, ::2, :, ::2, :, ::2],
          (seven + 1)[::2, :, ::-2, :, ::2, :, ::2]]
image = xp.asarray(rng.integers(0, 255, (6, 8, 3)).astype(numpy.uint8))
image[::2, ::2, :] = 0
pcm = xp.asarray(rng.integers(-99, 99, (4, 3, 6, 4)).astype(numpy.int16))
pcm[:, :, ::2, :] = 1
volume = xp.asarray(rng.standard_normal((2, 3, 4, 5, 6)))
volume[:, 1:, 1:, 1:, 1:] = volume[:, :-1, :-1, :-1, :-1]
six = xp.asarray(rng.standard_normal((2, 3, 4, 5, 6, 7)))
six[:, 1:, :, 2:4, :, 3:] = 1.0
calls += [image, pcm, volume, six]
for name in ("int8", "uint16", "int32"):  # sums and products in an integer array's own dtype, any axes
    small = xp.asarray(rng.integers(0, 3, (2, 3, 4, 5)).astype(name))
    own = getattr(xp, name)
    calls += [xp.sum(small[0], axis=axes, dtype=own) for axes in (None, 0, 2, (0, 1), (1, 2), (0, 2))]
    calls += [xp.prod(small[0], axis=(0, 1), dtype=own), xp.sum(small, dtype=own), xp.prod(small, dtype=own)]
for value in calls:
    for part in value if isinstance(value, tuple) else (value,):
        numpy.asarray(part)
print(xp.cache_info().compiles)
"""


def _on_installed_kernels(program: str, cache: Path) -> str:
    """The last line ``program`` prints, run in a fresh process with an empty cache on the
    kernels built at installation (skipped where this installation built none)."""
    if not any(object_cache.INSTALLED.glob("*" + object_cache.SUFFIX)):
        pytest.skip("this installation built no kernels (pip install builds them)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          env=child_env(cache, PLAIDARRAY_INSTALLED_KERNELS="1", PLAIDARRAY_FUSE_AFTER_MS="1e9"))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_installation_serves_first_uses_at_new_shapes(tmp_path):
    """A fresh process with an empty cache runs ``FIRST_USES`` on the kernels built at
    installation: nothing compiles (where this installation built its kernels)."""
    assert _on_installed_kernels(FIRST_USES, tmp_path / "cache") == "0"


#: A battery of first uses, family by family, at unit and other shapes of ranks 1 to 4 and
#: over seven dtypes, as scripts written against NumPy meet them: each call that compiles
#: is named. (Written for new scripts, not from the corpus: it found ``repeat(x, 1)``, whose
#: broadcast repeated nothing, compiling in a process that otherwise compiled nothing.)
BATTERY = """
import numpy
import plaidarray as xp
rng = numpy.random.default_rng(1)
SHAPES = [(1,), (7,), (1, 6), (6, 1), (4, 5), (1, 1), (2, 3, 4), (3, 1, 4), (2, 2, 1, 3)]
ANY = [("repeat once", lambda a: xp.repeat(a, 1)), ("repeat", lambda a: xp.repeat(a, 2, axis=0)),
       ("tile", lambda a: xp.tile(a, (2,) + (1,) * (a.ndim - 1))), ("tile once", lambda a: xp.tile(a, (1,) * a.ndim)),
       ("expand_dims", lambda a: xp.expand_dims(a, axis=-1) + a[..., :1, None]),
       ("broadcast_to", lambda a: xp.broadcast_to(a, (2, *a.shape))), ("flip", xp.flip),
       ("roll", lambda a: xp.roll(a, 1, axis=-1)), ("sum", lambda a: xp.sum(a, axis=-1)),
       ("count_nonzero", lambda a: xp.count_nonzero(a, axis=-1)),
       ("concat", lambda a: xp.concat([a, a], axis=-1)), ("stack", lambda a: xp.stack([a, a], axis=-1)),
       ("permute_dims", lambda a: xp.permute_dims(a, tuple(reversed(range(a.ndim)))) + a.T[..., :1] * 0
        if a.ndim == 2 else xp.permute_dims(a, tuple(reversed(range(a.ndim))))),
       ("moveaxis", lambda a: xp.moveaxis(a, 0, -1)), ("reshape", lambda a: xp.reshape(a * 1, (-1,))),
       ("step", lambda a: (a * 1)[..., ::2]), ("last", lambda a: (a * 1)[..., -1]),
       ("take", lambda a: xp.take(a, xp.asarray([0, 0]), axis=0)), ("setitem", lambda a: _written(a)),
       ("unique_counts", lambda a: xp.unique_counts(a)[1]),
       ("meshgrid", lambda a: xp.meshgrid(xp.reshape(a, (-1,)), xp.reshape(a, (-1,))[:1])[0])]
REAL = [("max", lambda a: xp.max(a, axis=0, keepdims=True)), ("sort", lambda a: xp.sort(a, axis=-1)),
        ("argsort", lambda a: xp.argsort(a, axis=0)), ("argmax", lambda a: xp.argmax(a, axis=-1)),
        ("where", lambda a: xp.where(a > a[..., :1], a, 0)), ("clip", lambda a: xp.clip(a, 0, 5)),
        ("mask", lambda a: a[a > a[(0,) * a.ndim]]), ("rows masked", lambda a: _rows_masked(a)), ("nonzero", lambda a: xp.nonzero(a > a[(0,) * a.ndim])[0]),
        ("searchsorted", lambda a: xp.searchsorted(xp.sort(xp.reshape(a, (-1,))), a)),
        ("cumulative_sum", lambda a: xp.cumulative_sum(a, axis=-1)), ("diff", lambda a: xp.diff(a, axis=-1)),
        ("mean", lambda a: xp.mean(xp.astype(a, xp.float64), axis=0)),
        ("std", lambda a: xp.std(xp.astype(a, xp.float64), axis=-1))]
NUMERIC = [("matmul", lambda a: a @ xp.ones((a.shape[-1], 2), dtype=a.dtype)), ("vecdot", lambda a: xp.vecdot(a, a)),
           ("outer", lambda a: xp.linalg.outer(xp.reshape(a, (-1,)), xp.reshape(a, (-1,))))]
FLOATING = [("solve", lambda m: xp.linalg.solve(m @ m.T + xp.eye(m.shape[0], dtype=m.dtype) * 9, m)),
            ("cholesky", lambda m: xp.linalg.cholesky(m @ m.T + xp.eye(m.shape[0], dtype=m.dtype) * 9)),
            ("inv", lambda m: xp.linalg.inv(m @ m.T + xp.eye(m.shape[0], dtype=m.dtype) * 9)),
            ("det", xp.linalg.det), ("eigh", lambda m: xp.linalg.eigh(m @ m.T)[1]), ("svd", lambda m: xp.linalg.svd(m)[0]),
            ("qr", lambda m: xp.linalg.qr(m)[1]), ("matrix_norm", xp.linalg.matrix_norm),
            ("rfft", lambda m: xp.fft.rfft(m, axis=0)), ("fft", lambda m: xp.fft.fft(m)),
            ("irfft", lambda m: xp.fft.irfft(xp.fft.rfft(m), n=m.shape[-1]))]


def _rows_masked(a):
    # rows a mask over the leading axes picks set to 0 (of an (n, 1) array: a broadcast of
    # the mask that repeats nothing)
    a = a * 1
    if a.ndim > 1:
        a[a[..., 0] > a[(0,) * a.ndim]] = 0
    return a


def _written(a):
    a = a * 1
    a[..., 0] = a[..., -1] * 2
    return a


def values(shape, dtype):
    drawn = rng.uniform(0.1, 0.9, shape)
    drawn = drawn > 0.5 if dtype == "bool" else rng.integers(1, 9, shape) if dtype[0] in "iu" else drawn
    return xp.asarray(drawn.astype(dtype) + (0.3j if dtype.startswith("complex") else 0))


compiled, made = [], 0
for dtype in ("float64", "float32", "int64", "int32", "uint8", "bool", "complex128"):
    kind = numpy.dtype(dtype).kind
    families = ANY + (REAL if kind in "iuf" else []) + (NUMERIC if kind in "iufc" else [])
    for shape in SHAPES:
        calls = [(name, fn, values(shape, dtype)) for name, fn in families]
        if kind == "f" and len(shape) == 2 and shape[0] == shape[1] or kind == "f" and shape == (4, 5):
            calls += [(name, fn, values(shape[:1] * 2, dtype)) for name, fn in FLOATING]
        for name, fn, a in calls:
            before = xp.cache_info().compiles
            result = fn(a)
            for part in result if isinstance(result, tuple) else (result,):
                numpy.asarray(part)
            made += 1
            if xp.cache_info().compiles > before:
                compiled.append(f"{name} of {dtype}{list(shape)}")
print(made, compiled)
"""


def test_the_installation_serves_a_battery_of_first_uses_of_every_family(tmp_path):
    """``BATTERY`` in a fresh process with an empty cache: nothing compiles (where this
    installation built its kernels)."""
    made, compiled = _on_installed_kernels(BATTERY, tmp_path / "cache").split(" ", 1)
    assert int(made) > 1500 and compiled == "[]", compiled


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """An installed directory holding one entry, written by this process's cache."""
    directory = tmp_path / "installed"
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(directory))
    object_cache.store("k" * 40, b"code", {"symbol": "s"})
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path / "user"))
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "1")
    monkeypatch.setattr(object_cache, "INSTALLED", directory)
    object_cache._installed_directory_trusted.cache_clear()
    yield directory
    object_cache._installed_directory_trusted.cache_clear()


def test_installed_entries_are_read_where_they_are(installed):
    assert object_cache.load("k" * 40) == (b"code", {"symbol": "s"})
    assert not (Path(os.environ["PLAIDARRAY_CACHE_DIR"]) / ("k" * 40 + object_cache.SUFFIX)).exists()


def test_an_installed_entry_writable_by_others_is_neither_read_nor_removed(installed):
    entry = installed / ("k" * 40 + object_cache.SUFFIX)
    entry.chmod(0o666)
    assert object_cache.load("k" * 40) is None
    assert entry.exists()


def test_an_installed_directory_writable_by_others_is_not_read(installed):
    installed.chmod(0o777)
    object_cache._installed_directory_trusted.cache_clear()
    assert object_cache.load("k" * 40) is None


def test_a_damaged_installed_entry_is_a_miss_and_stays(installed):
    entry = installed / ("k" * 40 + object_cache.SUFFIX)
    data = bytearray(entry.read_bytes())
    data[-1] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert object_cache.load("k" * 40) is None
    assert entry.read_bytes() == bytes(data)


def test_switched_off_installed_kernels_are_not_read(installed, monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "0")
    assert object_cache.load("k" * 40) is None


def test_the_corpus_records_every_family_it_names():
    """A sample of the installation's corpus runs op by op (each refused call is a dtype or
    rank its function does not take, which the build counts and skips)."""
    thunks = list(prebuild.corpus(xp))
    assert len(thunks) > 5000
    ran = 0
    for thunk in thunks[::400]:
        try:
            prebuild._read(thunk())
            ran += 1
        except (TypeError, ValueError, NotImplementedError):
            pass
    assert ran >= len(thunks[::400]) // 2


def test_the_source_digest_leaves_the_built_kernels_out(tmp_path):
    """The kernels' directory holds thousands of entries and no sources: walking it would
    cost every process milliseconds (it is skipped), and the digest is of sources alone."""
    package = tmp_path / "pkg"
    (package / object_cache.INSTALLED.name).mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    before = sources.sources_digest(package, object_cache.INSTALLED.name)
    (package / object_cache.INSTALLED.name / "b.py").write_text("y = 2\n")
    assert sources.sources_digest(package, object_cache.INSTALLED.name) == before
    shutil.rmtree(package / object_cache.INSTALLED.name)
    assert sources.sources_digest(package, object_cache.INSTALLED.name) == before


def _package(tmp_path: Path, age: float = 3600.0) -> Path:
    """A package of two sources last modified ``age`` seconds ago."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    for path, text in ((package / "a.py", "x = 1\n"), (package / "sub" / "b.py", "y = 2\n")):
        path.write_text(text)
        os.utime(path, (path.stat().st_atime - age, path.stat().st_mtime - age))
    return package


#: The two definitions of the sources' stats: C's (where built) and Python's.
STATS = [pytest.param(sources.stats_in_python, id="python"),
         pytest.param(sources.STATS_IN_C, id="c",
                      marks=pytest.mark.skipif(sources.STATS_IN_C is None, reason="_stats.c is not built"))]


@pytest.mark.parametrize("stats", STATS)
def test_the_sources_stamp_gives_their_digest_until_one_changes(tmp_path, monkeypatch, stats):
    """The stamp an installation writes gives the digest of unchanged sources without
    reading them, and nothing once a file changes, however: its contents with its time,
    its time alone, a file removed; a file added changes no code until a stamped one
    imports it."""
    monkeypatch.setattr(sources, "stats", stats)
    package, kernels = _package(tmp_path), tmp_path / "kernels"
    kernels.mkdir()
    digest = sources.sources_digest(package, "_kernels")
    assert sources.write_stamp(kernels, package, "_kernels")
    stamp = str(kernels / sources.STAMP)
    assert sources.stamped_digest(package, "_kernels", stamp) == digest
    b = package / "sub" / "b.py"
    b.write_text("y = 3\n")
    assert sources.stamped_digest(package, "_kernels", stamp) is None
    b.write_text("y = 2\n")
    os.utime(b, (0, 10**9))
    assert sources.stamped_digest(package, "_kernels", stamp) is None
    os.utime(b, ns=(0, json.loads(Path(stamp).read_text())["files"][1][2]))
    assert sources.stamped_digest(package, "_kernels", stamp) == digest
    (package / "c.py").write_text("")
    assert sources.stamped_digest(package, "_kernels", stamp) == digest
    b.unlink()
    assert sources.stamped_digest(package, "_kernels", stamp) is None
    assert sources.stamped_digest(package, "_kernels", None) is None


@pytest.mark.skipif(sources.STATS_IN_C is None, reason="_stats.c is not built")
def test_the_stats_in_c_are_pythons(tmp_path):
    """``_stats.stats`` gives ``os.stat``'s sizes and nanosecond times, None where a file
    is missing, and refuses what ``os.stat`` refuses (a NUL in a path, a path not a str)."""
    files = []
    for i, (size, mtime_ns) in enumerate(((0, 10**9 + 7), (5, 1_700_000_000_123_456_789))):
        path = tmp_path / f"f{i}.py"
        path.write_bytes(b"x" * size)
        os.utime(path, ns=(mtime_ns, mtime_ns))
        files.append(str(path))
    expected = [(0, 10**9 + 7), (5, 1_700_000_000_123_456_789)]
    assert sources.STATS_IN_C(files) == sources.stats_in_python(files) == expected
    assert sources.STATS_IN_C(tuple(files)) == expected
    assert sources.STATS_IN_C([]) == sources.stats_in_python([]) == []
    missing = [*files, str(tmp_path / "gone.py")]
    assert sources.STATS_IN_C(missing) is None and sources.stats_in_python(missing) is None
    with pytest.raises(ValueError):
        sources.STATS_IN_C([files[0] + "\0x"])
    with pytest.raises(TypeError):
        sources.STATS_IN_C([files[0], 3])


def test_a_process_keys_with_the_stamps_its_import_checked_in_the_background(tmp_path):
    """The import starts checking the stamps on a thread (where the stats run in C), and
    the first key waits for it: the environment is the sources' digest of now, also in a
    child forked while the thread may still run (which checks again for itself)."""
    program = ("import os, sys, plaidarray\n"
               "from plaidarray.backend.llvm import object_cache as oc, sources\n"
               "started = oc._checking is not None\n"
               "pid = os.fork()\n"
               "env = oc._environment()\n"
               "ok = env[0] == plaidarray.__version__ and env[2] == oc.sources_digest_now()\n"
               "if pid == 0:\n"
               "    os._exit(0 if ok else 3)\n"
               "_, status = os.waitpid(pid, 0)\n"
               "print(started == (sources.STATS_IN_C is not None), ok, os.waitstatus_to_exitcode(status))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          env=child_env(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "0"]


def test_sources_installed_anew_are_read_once_then_stamped_again(tmp_path):
    """A wheel's installer gives each file the time it installs it, so the build's stamp
    never matches an installation: the first process reads the sources and, finding the
    stamp's digest, stamps them anew for the later ones; sources that changed are never
    stamped with the old digest."""
    package, kernels = _package(tmp_path), tmp_path / "kernels"
    kernels.mkdir()
    assert not sources.write_stamp(kernels, package, "_kernels", "the digest a build started from")
    assert not (kernels / sources.STAMP).exists()  # kernels of other sources: never stamped as these
    assert sources.write_stamp(kernels, package, "_kernels", sources.sources_digest(package, "_kernels"))
    stamp = str(kernels / sources.STAMP)
    digest = sources.stamped_digest(package, "_kernels", stamp)
    for path in (package / "a.py", package / "sub" / "b.py"):  # installed anew: same bytes, new times
        os.utime(path, (path.stat().st_atime - 5, path.stat().st_mtime - 5))
    assert sources.stamped_digest(package, "_kernels", stamp) is None
    assert sources.restamped_digest(package, "_kernels", stamp) == digest
    assert sources.stamped_digest(package, "_kernels", stamp) == digest
    assert Path(stamp).stat().st_mode & 0o777 == 0o644
    (package / "a.py").write_text("x = 2\n")  # an edit: read, never stamped with the old digest
    os.utime(package / "a.py", (0, 10**9))
    changed = sources.restamped_digest(package, "_kernels", stamp)
    assert changed != digest
    assert json.loads(Path(stamp).read_text())["digest"] == digest
    assert sources.stamped_digest(package, "_kernels", stamp) is None
    assert sources.restamped_digest(package, "_kernels", None) == changed


def test_an_interrupted_restamp_leaves_the_stamp_and_no_temporary_file(tmp_path, monkeypatch):
    """Ctrl-C while the stamp is written anew: the old stamp stays whole, and the
    temporary file it was being written to is gone."""
    package, kernels = _package(tmp_path), tmp_path / "kernels"
    kernels.mkdir()
    assert sources.write_stamp(kernels, package, "_kernels")
    before = (kernels / sources.STAMP).read_bytes()
    for path in (package / "a.py", package / "sub" / "b.py"):
        os.utime(path, (path.stat().st_atime - 5, path.stat().st_mtime - 5))

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(sources.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sources.restamped_digest(package, "_kernels", str(kernels / sources.STAMP))
    assert (kernels / sources.STAMP).read_bytes() == before
    assert sorted(p.name for p in kernels.iterdir()) == [sources.STAMP]


def test_a_stamp_of_sources_modified_just_before_it_is_not_used(tmp_path):
    """A file modified within the file system's timestamp resolution of the stamp could
    change again unseen (git's racy entries): its sources are read."""
    package, kernels = _package(tmp_path, age=0.5), tmp_path / "kernels"
    kernels.mkdir()
    assert sources.write_stamp(kernels, package, "_kernels")
    assert sources.stamped_digest(package, "_kernels", str(kernels / sources.STAMP)) is None


def test_the_installed_stamp_is_trusted_as_the_kernels_are(installed, monkeypatch):
    """The process's digest comes from the installed stamp only where the stamp is a
    regular file nobody else can write; a damaged one is left for reading the sources."""
    read = []
    monkeypatch.setattr(sources, "sources_digest", lambda *args: read.append(args) or "read")
    monkeypatch.setattr(sources, "stamped_digest", lambda root, excluded, stamp: stamp and Path(stamp).read_text())
    assert object_cache._compiler_digest() == "read"
    stamp = installed / sources.STAMP
    stamp.write_text("stamped")
    stamp.chmod(0o644)
    assert object_cache._compiler_digest() == "stamped"
    stamp.chmod(0o666)
    assert object_cache._compiler_digest() == "read"
    assert len(read) == 2


def test_the_toolchain_stamp_gives_llvmlites_version_while_its_version_file_is_the_same(tmp_path):
    """llvmlite's version from the installation's toolchain stamp (``sources.py``) where
    the llvmlite an import would load has a version file of the stamped digest (wherever
    it is: an installation builds in pip's build environment); otherwise None, and the
    process imports llvmlite to read it."""
    import llvmlite

    sources.write_toolchain_stamp(tmp_path)
    stamp = tmp_path / sources.TOOLCHAIN_STAMP
    assert sources.stamped_version("llvmlite", str(stamp)) == llvmlite.__version__
    version, digest = json.loads(stamp.read_text())["llvmlite"]
    stamp.write_text(json.dumps({"llvmlite": [version, "0" * len(digest)]}))
    assert sources.stamped_version("llvmlite", str(stamp)) is None
    stamp.write_text("{}")
    assert sources.stamped_version("llvmlite", str(stamp)) is None
    assert sources.stamped_version("llvmlite", None) is None


def test_a_fresh_processs_first_read_imports_no_llvmlite(tmp_path):
    """Where the installation stamped its toolchain, a fresh process keys its first read
    without importing llvmlite (0.35-0.45 ms)."""
    if object_cache.installed_file(sources.TOOLCHAIN_STAMP) is None:
        pytest.skip("this installation built no kernels (pip install builds them)")
    program = ("import sys, numpy, plaidarray as xp\n"
               "print(float(xp.sum(xp.asarray(numpy.arange(4.0)))), 'llvmlite' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300,
                          env=child_env(tmp_path / "cache", PLAIDARRAY_INSTALLED_KERNELS="1"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["6.0", "False"]
