"""The persistent compile cache: a second process loads object code instead of compiling,
damaged entries are recompiled, concurrent writers both succeed, the size cap evicts
the least recently used entries."""

from __future__ import annotations

import gc
import os
import sys
import time

import numpy as np
import pytest
from jit_helpers import finish_child, isolated_cache_dir, run_child, start_child  # noqa: F401

import plaidarray as xp
from plaidarray.backend.background import BackgroundQueue
from plaidarray.backend.llvm import object_cache, sources, storing
from plaidarray.backend.llvm_cpu.tiering import SCALAR_MAX_ELEMENTS

#: A child process: a jitted function with a loop and a branch, timed from the first
#: call to its values (LLVM's own start-up is done before the clock starts).
WORKLOAD = """
import json, os, sys, time
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm_cpu import targets
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host

@xp.jit
def workload(x, w):
    h = xp.fori_loop(0, 4, lambda i, h: xp.tanh(h @ w + xp.astype(i, xp.float32)), x)
    return xp.cond(xp.sum(h) > 0, xp.exp, xp.negative, h), xp.mean(h, axis=0)

rng = np.random.default_rng(0)
x = rng.standard_normal((8, 16)).astype(np.float32)
w = (rng.standard_normal((16, 16)) * 0.3).astype(np.float32)
targets.host()
go = os.environ.get("START_WHEN_EXISTS")
if go:
    open(f"{go}.{os.getpid()}.ready", "w").close()
while go and not os.path.exists(go):
    time.sleep(0.001)
start = time.perf_counter()
values = [np.asarray(v).tolist() for v in workload(xp.asarray(x), xp.asarray(w))]
seconds = time.perf_counter() - start
info = xp.cache_info()
print(json.dumps({"seconds": seconds, "compiles": info.compiles, "disk_hits": info.disk_hits, "values": values,
                  "kernels": info.kernel_compiles, "kernels_loaded": info.kernel_disk_hits,
                  "llvm_runs": sum(codegen_worker.stats()[where] for where in ("in_process", "worker"))}))
"""


#: The child environment of the ``fused`` fixture, for the module's fixture (made before it).
FUSED = {"PLAIDARRAY_FUSE_AFTER_MS": "0", "PLAIDARRAY_INSTALLED_KERNELS": "0"}


def _entries(directory):
    """The executables' and kernels' entries (not those of vector_math's library functions)."""
    return sorted(p for p in directory.glob("*" + object_cache.SUFFIX)
                  if not p.name.startswith(object_cache.LIBRARY_PREFIX))


def _with(directory, field):
    return [p for p in _entries(directory) if field in object_cache._decode(p.stem, p.read_bytes())[1]]


def _executables(directory):
    """The executables' entries: their steps name their kernels, stored apart."""
    return _with(directory, "steps")


def _kernel_entries(directory):
    """The kernels' entries: each names the bundle holding its code."""
    return _with(directory, "bundle")


def _bundles(directory):
    """The bundles: the code of kernels generated together."""
    return _with(directory, "symbols")


@pytest.fixture(scope="module")
def cold_run(tmp_path_factory):
    """A cache directory filled by one process, and what that process reported."""
    directory = tmp_path_factory.mktemp("cold")
    return directory, run_child(WORKLOAD, directory, **FUSED)


def test_second_process_loads_from_disk_without_compiling_and_faster(cold_run):
    directory, cold = cold_run
    assert cold["compiles"] >= 1 and cold["disk_hits"] == 0
    assert len(_executables(directory)) == cold["compiles"]
    assert len(_kernel_entries(directory)) == cold["kernels"]
    assert len(_entries(directory)) == cold["compiles"] + cold["kernels"] + len(_bundles(directory))
    warm = run_child(WORKLOAD, directory)
    assert warm["compiles"] == 0 and warm["kernels"] == 0
    assert warm["disk_hits"] == cold["compiles"] and warm["kernels_loaded"] == cold["kernels"]
    assert warm["values"] == cold["values"]
    assert warm["seconds"] < cold["seconds"]


def test_library_functions_load_from_disk_too(cold_run):
    """tanh and exp, vector_math's functions, are compiled once and stored, so a second
    process runs LLVM for nothing at all."""
    directory, cold = cold_run
    libraries = list(directory.glob(object_cache.LIBRARY_PREFIX + "*" + object_cache.SUFFIX))
    # Kernels generated together are one LLVM run per tier of code, a library function one each.
    assert len(libraries) >= 2 and len(libraries) < cold["llvm_runs"] < len(libraries) + cold["kernels"]
    warm = run_child(WORKLOAD, directory)
    assert warm["llvm_runs"] == 0 and warm["values"] == cold["values"]


def test_a_damaged_entry_is_recompiled_by_the_next_process(cold_run, tmp_path):
    directory, cold = cold_run
    for path in _entries(directory):
        (tmp_path / path.name).write_bytes(path.read_bytes()[:-100])
    survived = run_child(WORKLOAD, tmp_path)
    assert survived["compiles"] == cold["compiles"] and survived["disk_hits"] == 0
    assert survived["values"] == cold["values"]
    assert all(object_cache._decode(p.stem, p.read_bytes()) for p in _entries(tmp_path))  # rewritten whole


def _truncate(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _flip_last_byte(data: bytes) -> bytes:  # inside the object code
    return data[:-1] + bytes([data[-1] ^ 0xFF])


def _flip_header(data: bytes) -> bytes:
    return b"X" + data[1:]


def _empty(data: bytes) -> bytes:
    return b""


def _garbage(data: bytes) -> bytes:
    return os.urandom(len(data))


@pytest.mark.parametrize("which", ["executable", "kernel", "bundle"])
@pytest.mark.parametrize("damage", [_truncate, _flip_last_byte, _flip_header, _empty, _garbage])
def test_a_damaged_entry_is_ignored_and_rewritten(monkeypatch, tmp_path, damage, which):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    x = xp.asarray(np.linspace(0.0, 1.0, 31))

    def value():
        return np.asarray(xp.exp(x) * xp.cos(x) + 2.0)

    xp.clear_cache()  # compiled here, whatever ran before
    expected = value()
    storing.drain()  # stored in the background
    entry = {"executable": _executables, "kernel": _kernel_entries, "bundle": _bundles}[which](tmp_path)[0]
    entry.write_bytes(damage(entry.read_bytes()))
    xp.clear_cache()
    gc.collect()
    np.testing.assert_array_equal(value(), expected)
    info = xp.cache_info()
    assert (info.compiles, info.disk_hits) == (1, 0)
    storing.drain()
    assert object_cache._decode(entry.stem, entry.read_bytes()) is not None


def test_two_processes_needing_the_same_kernels_at_once_generate_each_once(tmp_path):
    """Released together on an empty cache (Dask workers starting): each kernel's lock lets
    one process generate it while the other waits and loads what it stored."""
    go = tmp_path / "go"
    cache = tmp_path / "cache"
    children = [start_child(WORKLOAD, cache, START_WHEN_EXISTS=str(go)) for _ in range(2)]
    deadline = time.monotonic() + 60
    while len(list(tmp_path.glob("go.*.ready"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # until both are past their imports, waiting
    go.touch()
    first, second = (finish_child(c) for c in children)
    assert first["values"] == second["values"]
    kernels = len(_kernel_entries(cache))
    assert first["kernels"] + second["kernels"] == kernels
    assert first["kernels_loaded"] + second["kernels_loaded"] == kernels
    after = run_child(WORKLOAD, cache)
    assert after["compiles"] == 0 and after["values"] == first["values"]


WRITER = """
import json, sys
from plaidarray.backend.llvm import object_cache
fill = int(sys.argv[1])
for i in range(100):
    object_cache.store("contended", bytes([fill]) * 100_000, {"writer": fill})
print(json.dumps({"done": fill}))
"""


def test_concurrent_writers_never_expose_a_partial_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    writers = [start_child(f"import sys; sys.argv[1:] = ['{fill}']\n" + WRITER, tmp_path) for fill in (1, 2)]
    seen = set()
    while any(w.poll() is None for w in writers):
        entry = object_cache.load("contended")
        if entry is not None:
            code, meta = entry
            assert code == bytes([meta["writer"]]) * 100_000
            seen.add(meta["writer"])
    assert [finish_child(w)["done"] for w in writers] == [1, 2]
    assert object_cache.load("contended") is not None
    assert seen  # the reader did see entries while they were being replaced
    assert not list(tmp_path.glob(".tmp-*"))


def test_same_process_reload_after_clearing_the_in_memory_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    x = xp.asarray(np.arange(23, dtype=np.float32))

    def value():
        return np.asarray(xp.cumulative_sum(xp.sin(x) * 3.0))

    xp.clear_cache()
    expected = value()
    xp.clear_cache()
    gc.collect()  # the first executable's code is freed
    again = value()
    info = xp.cache_info()
    assert (info.compiles, info.disk_hits) == (0, 1)
    np.testing.assert_array_equal(again, expected)


def test_a_shape_generic_entry_keeps_the_dims_table_entries_binding_computes(monkeypatch, tmp_path):
    """A concatenation's offsets past the second are entries of the dims table computed
    when the executable is bound (``KernelBuilder.one_value``): loaded from disk, the
    executable computes them for other lengths too."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    rng = np.random.default_rng(3)

    def value(lengths):
        parts = [rng.standard_normal(n) for n in lengths]
        return np.asarray(xp.concat([xp.asarray(p) for p in parts]) + 1.0), np.concatenate(parts) + 1.0

    xp.clear_cache()
    np.testing.assert_array_equal(*value([2, 3, 4, 5]))
    xp.clear_cache()
    gc.collect()
    got, want = value([5, 2, 7, 3])
    info = xp.cache_info()
    assert (info.compiles, info.disk_hits) == (0, 1)
    np.testing.assert_array_equal(got, want)


def test_store_and_load_round_trip_and_damage_detection(monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    object_cache.store("k1", b"\x7fELF code", {"symbol": "f", "shapes": [[2, 3], "<f4"]})
    assert object_cache.load("k1") == (b"\x7fELF code", {"symbol": "f", "shapes": [[2, 3], "<f4"]})
    (path,) = _entries(tmp_path)
    path.write_bytes(path.read_bytes()[:-1])
    assert object_cache.load("k1") is None
    assert not path.exists()  # a damaged entry is removed
    assert object_cache.load("missing") is None


def test_size_cap_evicts_least_recently_used(monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    payload = b"x" * 10_000
    object_cache.store("a", payload, {})
    entry_size = _entries(tmp_path)[0].stat().st_size
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", str(int(entry_size * 2.5)))
    object_cache.store("b", payload, {})
    os.utime(tmp_path / f"a{object_cache.SUFFIX}", (1000, 1000))
    os.utime(tmp_path / f"b{object_cache.SUFFIX}", (2000, 2000))
    assert object_cache.load("a") is not None  # a is now the most recently used
    object_cache.store("c", payload, {})
    assert [p.stem for p in _entries(tmp_path)] == ["a", "c"]


def test_a_zero_cap_turns_the_disk_cache_off(monkeypatch, tmp_path):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PLAIDARRAY_CACHE_MAX_BYTES", "0")
    np.asarray(xp.asarray(np.arange(29.0)) ** 2 + 1.0)
    object_cache.store("k", b"code", {})
    assert not any(tmp_path.iterdir())


def test_the_key_covers_the_code_and_the_target():
    key = object_cache.entry_key("hlo", "x86_64/skylake", "+avx2")
    assert key == object_cache.entry_key("hlo", "x86_64/skylake", "+avx2")
    assert len({key, object_cache.entry_key("hlo2", "x86_64/skylake", "+avx2"),
                object_cache.entry_key("hlo", "x86_64/znver4", "+avx2"),
                object_cache.entry_key("hlo", "x86_64/skylake", "-avx2")}) == 4


def test_code_for_fewer_parameters_is_never_loaded(monkeypatch, tmp_path):
    """The disk entry of g(x) = exp(x) must not serve f(x, y) = exp(x), whose code takes
    one more buffer: loading it wrote f's result into y."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    a, b = np.linspace(-3, 3, 31, dtype=np.float32), np.full(31, 5.0, np.float32)
    x, y = xp.asarray(a), xp.asarray(b)
    xp.clear_cache()
    np.asarray(xp.jit(lambda u: xp.exp(u))(x))
    xp.clear_cache()
    gc.collect()
    value = np.asarray(xp.jit(lambda u, v: xp.exp(u))(x, y))
    assert xp.cache_info().disk_hits == 0
    np.testing.assert_allclose(value, np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(y), b)


def test_the_key_covers_every_source_of_the_package(tmp_path):
    """An edit anywhere in plaidarray (codegen/, once left out, included) misses old entries."""
    import shutil
    from pathlib import Path

    package = Path(xp.__file__).resolve().parent
    copy = tmp_path / "plaidarray"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    assert sources.sources_digest(copy, object_cache.INSTALLED.name) == object_cache._compiler_digest()
    digests = {sources.sources_digest(copy, object_cache.INSTALLED.name)}
    for path in sorted(copy.rglob("*.py"))[::7]:  # every seventh file, from every package
        path.write_text(path.read_text() + "\n")
        digests.add(sources.sources_digest(copy, object_cache.INSTALLED.name))
    assert len(digests) == 1 + len(sorted(copy.rglob("*.py"))[::7])
    assert any("codegen" in str(p) for p in sorted(copy.rglob("*.py"))[::7])


WARM_START = """
import json, sys
import numpy as np
import plaidarray as xp
x = xp.asarray(np.arange(1000.0))
value = float(xp.sum(xp.exp(x[:900]) * 2.0 + x[:900]))
info = xp.cache_info()
print(json.dumps({"value": value, "compiles": info.compiles, "disk_hits": info.disk_hits,
                  "imported": sorted(m for m in ("xdsl", "llvmlite.binding", "plaidarray.codegen",
                                                 "plaidarray.backend.llvm_cpu.stages") if m in sys.modules)}))
"""


def test_a_process_whose_code_is_cached_loads_it_without_the_compiler(tmp_path):
    """The executable's key is read off its module and its kernels are shared objects
    loaded by the platform's loader: neither xDSL, nor LLVM, nor the code generator is
    imported (they took 0.4-1 s to import)."""
    from plaidarray.backend.llvm_cpu import shared_object

    cold = run_child(WARM_START, tmp_path)
    assert cold["compiles"] == 1 and "xdsl" in cold["imported"]
    warm = run_child(WARM_START, tmp_path)
    assert (warm["compiles"], warm["disk_hits"], warm["value"]) == (0, 1, cold["value"])
    if shared_object.linker() is not None:
        assert warm["imported"] == []
    else:  # object code loads into MCJIT, which needs LLVM; the code generator is still not imported
        assert "xdsl" not in warm["imported"] and "plaidarray.codegen" not in warm["imported"]


@pytest.mark.parametrize("n, stored", [(1000, True), (1 << 17, False)])  # 2^17 points: MBs of twiddles
def test_a_transforms_constants_are_stored_with_it_when_small(tmp_path, n, stored):
    """An FFT's twiddles are constants its compile binds as parameters: stored with the
    executable when small, so a process loading it needs none of the compiler's stages
    (which made them again, importing the code generator); larger ones are made again.
    Either way the loaded executable computes the compiled one's bits."""
    from plaidarray.backend.llvm_cpu import shared_object

    program = WARM_START.replace("float(xp.sum(xp.exp(x[:900]) * 2.0 + x[:900]))",
                                 f"np.asarray(xp.fft.fft(xp.asarray(np.linspace(0.0, 1.0, {n})) * 3.0)).tobytes().hex()")
    cold = run_child(program, tmp_path)
    warm = run_child(program, tmp_path)
    assert (warm["compiles"], warm["disk_hits"], warm["value"]) == (0, 1, cold["value"])
    if shared_object.linker() is not None:
        assert ("plaidarray.backend.llvm_cpu.stages" not in warm["imported"]) == stored


def _counted(monkeypatch, function) -> list:
    """The calls to ``function`` from now on, wherever a module of plaidarray refers to it."""
    calls: list = []

    def counting(*args, **kwargs):
        calls.append(args)
        return function(*args, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("plaidarray") and \
                getattr(module, function.__name__, None) is function:
            monkeypatch.setattr(module, function.__name__, counting)
    return calls


def test_a_compile_miss_computes_one_structural_key(monkeypatch, tmp_path):
    """A miss names the module's code and keys it on disk by the structural key it was
    looked up by: a lazy graph's walk (the key of the executable cache) for a graph that
    compiles for its sizes or shape-generic, the traced computation's structure for a
    jitted function; no key of the HLO computed again (``fingerprint.structure``)."""
    from plaidarray.hlo import fingerprint
    from plaidarray.trace import to_hlo

    from plaidarray.trace import materialize

    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    for module in (sys.modules["plaidarray.trace.array"], sys.modules["plaidarray.trace.exports"]):
        monkeypatch.setattr(module, "read", materialize._read_in_python)  # the walk in Python, to be counted
    walks, structures = _counted(monkeypatch, to_hlo.walk_pending), _counted(monkeypatch, fingerprint.structure)
    described = _counted(monkeypatch, fingerprint.module_description)
    xp.clear_cache()
    for n in (SCALAR_MAX_ELEMENTS + 1, SCALAR_MAX_ELEMENTS + 7):  # large: compiled for its sizes, then shape-generic
        x = xp.asarray(np.arange(n, dtype=np.float32))
        before = xp.cache_info().compiles
        np.testing.assert_allclose(np.asarray(xp.cos(x) * 1.5), np.cos(np.arange(n, dtype=np.float32)) * 1.5,
                                   rtol=1e-6)
        assert xp.cache_info().compiles == before + 1
        assert (len(walks), len(structures), len(described)) == (1, 0, 1), n
        assert described[0][0].structure_key is not None
        walks.clear(), described.clear()
    y = xp.asarray(np.ones((3, 41), dtype=np.float32))
    np.testing.assert_allclose(np.asarray(xp.jit(lambda a: xp.tanh(a) * 2.0)(y)), np.tanh(1.0) * 2.0, rtol=1e-6)
    assert (len(walks), len(structures), len(described)) == (0, 1, 1)


def test_a_store_interrupted_while_its_queue_is_full_releases_its_locks(tmp_path, monkeypatch):
    """A compile submitting its store waits while ``storing.PENDING_JOBS`` are queued; a
    Ctrl-C then drops the job, and with it its locks: kept, the process's lookups of those
    keys would wait ``LOCK_TIMEOUT`` for a store that never comes."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(tmp_path))
    storer = BackgroundQueue("plaidarray-store-test", "storing failed", bound=1, finish_at_exit=True)
    monkeypatch.setattr(storing, "_QUEUE", storer)
    gate = __import__("threading").Event()
    storing.store_later(gate.wait, object_cache.Locks([]))  # the thread is busy with it...
    storing.store_later(lambda: None, object_cache.Locks([]))  # ...and the queue full
    key = "0" * 56 + "deadbeef"
    held = object_cache.Locks([key])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(storer._jobs, "put", interrupted)
    with pytest.raises(KeyboardInterrupt):
        storing.store_later(lambda: None, held)
    start = time.monotonic()
    object_cache.wait_stored(key)
    assert time.monotonic() - start < 1.0
    gate.set()
    storer.drain()
