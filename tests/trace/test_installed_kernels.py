"""The op kernels built at installation (``plaidarray/prebuild.py``): a fresh process with
an empty compile cache runs on them without the code generator, and the persistent cache
reads them only where nobody but their owner (this user, or root) could have written them,
and never removes or rewrites them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from jit_helpers import child_env

import plaidarray as xp
from plaidarray import prebuild
from plaidarray.backend.llvm_cpu import bundles, object_cache

pytestmark = pytest.mark.skipif("llvm-cpu" not in xp.backends(), reason="the compiled backend is not installed")

#: A program whose op kernels the "installation" builds, then runs at other sizes.
PROGRAM = """
import sys
from pathlib import Path
import numpy
import plaidarray as xp
from plaidarray.backend.llvm_cpu import bundles, object_cache
if len(sys.argv) > 2:
    object_cache.INSTALLED = Path(sys.argv[2])
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


def test_a_fresh_process_runs_on_installed_kernels_without_the_compiler(tmp_path):
    """... with the bundles' shared objects in files of their own (``bundles.unpack``),
    loaded where they are, and only while nobody else could have written them."""
    installed, empty = tmp_path / "installed", tmp_path / "empty"
    built = _run(["5"], installed, **prebuild.BUILD_ENVIRONMENT)  # the build, into what becomes the installed directory
    assert int(built.split()[0]) > 0
    assert bundles.unpack(installed) > 0 and bundles.unpack(installed) == 0
    shared_objects = list(installed.glob("*.so"))
    assert shared_objects and all(path.read_bytes()[:4] == b"\x7fELF" for path in shared_objects)
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
    before = object_cache.sources_digest(package)
    (package / object_cache.INSTALLED.name / "b.py").write_text("y = 2\n")
    assert object_cache.sources_digest(package) == before
    shutil.rmtree(package / object_cache.INSTALLED.name)
    assert object_cache.sources_digest(package) == before
