"""Materialising and jitting from 8 threads at once: results are right, each signature
compiles once, and nothing deadlocks (every test waits with a timeout, on daemon
threads, so a deadlock fails the test instead of hanging the run)."""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend.cache import ExecutableCache, HashedKey
from plaidarray.backend.executable import Executable

pytestmark = pytest.mark.usefixtures("fused")  # what compiles, and what it compiles to

THREADS = 8
TIMEOUT = 120
materialize_module = importlib.import_module("plaidarray.trace.materialize")


def run_threads(work: Callable[[int], object], threads: int = THREADS, timeout: float = TIMEOUT) -> list:
    """``work(i)`` on ``threads`` threads released together; their results in order.
    Re-raises the first exception; fails if any thread is still running at ``timeout``."""
    start = threading.Barrier(threads)
    results: list = [None] * threads
    errors: list[BaseException] = []

    def body(i: int) -> None:
        try:
            start.wait(timeout)
            results[i] = work(i)
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    workers = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(threads)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + timeout
    for w in workers:
        w.join(max(0.0, deadline - time.monotonic()))
    stuck = [w.name for w in workers if w.is_alive()]
    assert not stuck, f"threads {stuck} still running after {timeout}s: deadlock?"
    if errors:
        raise errors[0]
    return results


def _builds() -> int:
    info = xp.cache_info()
    return info.compiles + info.disk_hits


@pytest.fixture(autouse=True)
def default_backend():
    xp.set_backend(None)
    yield
    xp.set_backend(None)


def test_one_signature_from_8_threads_compiles_once():
    data = [np.random.default_rng(i).standard_normal(1237) for i in range(THREADS)]
    before = _builds()
    results = run_threads(lambda i: float(xp.sum(xp.tanh(xp.asarray(data[i])) * 3.0 - 0.25)))
    assert _builds() == before + 1
    for got, a in zip(results, data):
        assert got == pytest.approx(float(np.sum(np.tanh(a) * 3.0 - 0.25)), rel=1e-12)


def test_different_signatures_from_8_threads_each_compile_once(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_AUTOMATIC_DYNAMIC", "0")  # each size compiled for itself
    sizes = [1301 + i for i in range(THREADS)]  # shapes no other test uses

    def work(i: int) -> list[np.ndarray]:
        out = []
        for round_ in range(3):
            for n in sizes[i:] + sizes[:i]:  # every thread meets every signature, in its own order
                factor = xp.asarray(np.int64(round_ + 1))  # data, so the signature stays the same
                out.append(np.asarray(xp.cumulative_sum(xp.arange(n, dtype=xp.int64) * factor)))
        return out

    before = _builds()
    results = run_threads(work)
    assert _builds() == before + len(sizes)
    for i, got in enumerate(results):
        order = sizes[i:] + sizes[:i]
        for k, value in enumerate(got):
            n, round_ = order[k % len(sizes)], k // len(sizes)
            np.testing.assert_array_equal(value, np.cumsum(np.arange(n) * (round_ + 1)))


def test_sizes_from_8_threads_share_one_shape_generic_compile():
    """Eight sizes of one structure at once: its first sizes compile, the others share
    one shape-generic executable (``trace/dynamic.py``), compiled once."""
    sizes = [2301 + i for i in range(THREADS)]  # shapes no other test uses

    def work(i: int) -> list[np.ndarray]:
        return [np.asarray(xp.cumulative_sum(xp.arange(n, dtype=xp.int64) * 5 - 2)) for n in sizes[i:] + sizes[:i]]

    before = _builds()
    results = run_threads(work)
    assert _builds() <= before + 2
    for i, got in enumerate(results):
        for n, value in zip(sizes[i:] + sizes[:i], got):
            np.testing.assert_array_equal(value, np.cumsum(np.arange(n) * 5 - 2))


def test_reads_at_new_sizes_from_8_threads_bind_one_plan_while_another_empties_the_planned_table(monkeypatch):
    """Eight threads reading windows of new lengths of one planned structure at once,
    bound from its plan in C's read path (``materialize.planned``), while a ninth empties
    the table of planned structures (``baseline.PLANNED``) and fills it again over and
    over: each reads what NumPy computes, and nothing is compiled."""
    from plaidarray.trace import baseline, hot

    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)  # op by op throughout
    data = np.random.default_rng(11).standard_normal(3000)
    x = xp.asarray(data)

    def read(n: int) -> float:
        window = x[:n]
        return float(xp.max(window) - xp.min(window) + xp.mean(window * window))

    def expected(n: int) -> float:
        window = data[:n]
        return float(np.max(window) - np.min(window) + np.mean(window * window))

    for n in (2000, 2001):  # met, then planned
        read(n)
    before = xp.cache_info().compiles
    planned = dict(baseline.PLANNED)
    assert planned  # the structure's, which the emptying thread takes out and puts back
    stop = threading.Event()

    def empty() -> None:
        while not stop.is_set():
            baseline.PLANNED.clear()
            time.sleep(0.0002)
            baseline.PLANNED.update(planned)
            time.sleep(0.0005)

    emptier = threading.Thread(target=empty, daemon=True)
    emptier.start()
    try:
        results = run_threads(lambda i: [(n, read(n)) for n in range(2010 + 40 * i, 2050 + 40 * i)])
    finally:
        stop.set()
        emptier.join(TIMEOUT)
    for got in results:
        for n, value in got:
            assert value == pytest.approx(expected(n), rel=1e-12)
    assert xp.cache_info().compiles == before


def test_jit_from_8_threads_traces_and_compiles_each_signature_once():
    traces = []

    @xp.jit
    def step(x, y):
        traces.append(x.shape)
        return xp.sqrt(x * x + y * y), xp.max(x, axis=-1)

    shapes = [(3, 411), (5, 411)]
    before = _builds()

    def work(i: int) -> None:
        rng = np.random.default_rng(i)
        for k in range(10):
            shape = shapes[(i + k) % 2]
            a, b = rng.standard_normal(shape), rng.standard_normal(shape)
            norm, top = step(a, b)
            np.testing.assert_allclose(np.asarray(norm), np.hypot(a, b), rtol=1e-12)
            np.testing.assert_array_equal(np.asarray(top), a.max(axis=-1))

    run_threads(work)
    assert sorted(traces) == sorted(shapes)
    assert step.cache_info().misses == 2 and step.cache_info().hits == THREADS * 10 - 2
    assert _builds() == before + 2


def test_a_graph_shared_by_threads_while_some_materialise_it(monkeypatch):
    # Compiles are slowed so other threads materialise the shared nodes while a graph
    # built on them is still being compiled: the executable must be the one for the
    # graph as it was when its cache key was taken.
    real = materialize_module._compile
    monkeypatch.setattr(materialize_module, "_compile", lambda *a, **k: time.sleep(0.05) or real(*a, **k))
    data = np.arange(40.0)
    for trial in range(3):
        shared = [xp.asarray(data) * float(k + 10 * trial) + 0.5 for k in range(6)]

        def work(i: int, shared: list = shared) -> list[np.ndarray]:
            return [np.asarray(s if i % 2 else s - float(i)) for s in shared]

        for i, got in enumerate(run_threads(work)):
            for k, value in enumerate(got):
                expected = data * float(k + 10 * trial) + 0.5
                np.testing.assert_array_equal(value, expected if i % 2 else expected - float(i))


def test_tracing_captures_arrays_other_threads_materialise():
    base = xp.asarray(np.arange(30.0)) * 2.0  # pending, captured by every trace below

    def work(i: int) -> np.ndarray:
        if i % 2:
            return np.asarray(base)
        return np.asarray(xp.jit(lambda x: x + base)(np.full(30, float(i))))

    for i, got in enumerate(run_threads(work)):
        np.testing.assert_array_equal(got, np.arange(30.0) * 2.0 + (0.0 if i % 2 else float(i)))


def test_threads_running_kernels_split_across_the_pool(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "3")
    a = np.random.default_rng(1).standard_normal((256, 700))
    expected = np.exp(a) * 2.0 - a
    results = run_threads(lambda i: np.asarray(xp.exp(xp.asarray(a)) * 2.0 - xp.asarray(a)))
    for got in results:
        np.testing.assert_allclose(got, expected, rtol=1e-14)


# --- the cache itself ---------------------------------------------------------------

class _Built(Executable):
    def __init__(self, key):
        self.key = key

    def run(self, buffers):
        return []


def test_cache_compiles_each_key_once_and_evicts_under_concurrency():
    cache = ExecutableCache(maxsize=3)
    compiles: list = []
    lock = threading.Lock()

    def compile_for(key):
        def build():
            with lock:
                compiles.append(key)
            time.sleep(0.01)
            return _Built(key)
        return build

    def work(i: int) -> None:
        for k in range(40):
            key = ("k", (i + k) % 6)
            assert cache.get(key, "test", compile_for(key)).key == key

    run_threads(work)
    info = cache.info()
    assert info.size == 3 and info.hits + info.misses == THREADS * 40
    assert info.compiles == len(compiles)
    # Without eviction a key compiles once; with 6 keys over 3 slots some compile again,
    # but never two threads at once for the same key (they would wait for each other).
    first = ExecutableCache(maxsize=16)
    run_threads(lambda i: [first.get(k, "test", compile_for(k)) for k in range(5)])
    assert first.info().compiles == 5


def test_eviction_spares_the_executables_used_since_they_came_round():
    cache = ExecutableCache(maxsize=3)
    for key in "abc":
        cache.get(key, "test", lambda key=key: _Built(key))
    assert cache.lookup("a").key == "a"  # used: "b" is now the least recently used
    cache.get("d", "test", lambda: _Built("d"))
    assert sorted(cache._lru) == ["a", "c", "d"]
    cache.lookup("c")
    cache.lookup("d")
    cache.get("e", "test", lambda: _Built("e"))  # "a" has not been used since it came round
    assert sorted(cache._lru) == ["c", "d", "e"]
    for key in "cde":
        cache.lookup(key)
    # All used: one pass unmarks them, then the first in order goes; the order is d, c, e
    # ("c" came round at the last eviction), so "d" goes, where exact LRU would drop "c".
    cache.get("f", "test", lambda: _Built("f"))
    assert sorted(cache._lru) == ["c", "e", "f"] and cache.lookup("d") is None


def test_a_loaded_executable_is_cached_once_and_counted_as_a_disk_hit():
    """``ExecutableCache.loaded`` caches an executable loaded from the disk under its key
    and counts a miss and a disk hit, as ``get`` counts a load; threads loading one key
    at once all get the one it kept; and it evicts as ``get`` does."""
    cache = ExecutableCache(maxsize=2)
    made = [_Built("a") for _ in range(THREADS)]
    for exe in made:
        exe.from_disk = True
    kept = run_threads(lambda i: cache.loaded("a", "test", made[i]))
    assert all(exe is kept[0] for exe in kept) and cache.lookup("a") is kept[0]
    info = cache.info()
    assert info.disk_hits == info.misses and 1 <= info.misses <= THREADS and info.compiles == 0
    for key in "bc":
        exe = _Built(key)
        exe.from_disk = True
        assert cache.loaded(key, "test", exe) is exe
    assert cache.info().size == 2 and cache.lookup("c").key == "c"


def test_a_hashed_key_is_its_tuple_hashed_once():
    """A ``HashedKey`` equals the tuple of its items and hashes as it does, so a lookup by
    that tuple (the C read's) finds what was cached under it; its items are hashed once,
    when it is made, however often the cache asks for its hash."""
    hashes = []

    class Counted:
        def __hash__(self):
            hashes.append(1)
            return 7

    item = Counted()
    key = HashedKey(((1, 2), item, "tag"))
    assert len(hashes) == 1
    cache = ExecutableCache(maxsize=4)
    exe = _Built("x")
    cache.insert(key, exe, family="f", sizes=(1, 2))
    assert cache.lookup(((1, 2), item, "tag")) is exe and cache.lookup(key) is exe
    assert key == ((1, 2), item, "tag") and hash(key) == hash(((1, 2), item, "tag"))
    assert len(hashes) == 3  # the key's making, the lookup by the plain tuple, its hash above


def test_a_family_of_bound_executables_holds_at_most_its_share_of_the_cache():
    from plaidarray.backend.cache import FAMILY_SHARE

    cache = ExecutableCache(maxsize=8)
    share = int(8 * FAMILY_SHARE)
    assert 1 <= share < 7
    cache.get("compiled", "test", lambda: _Built("compiled"))
    for size in range(10):  # a loop over ever new sizes: a scan
        cache.insert(("window", size), _Built(size), family="window")
    kept = [key for key in cache._lru if key != "compiled"]
    assert kept == [("window", size) for size in range(share)]
    assert cache.lookup("compiled").key == "compiled"  # the scan did not flush it
    assert cache.lookup(("window", 0)).key == 0  # the sizes cached are hit as before
    cache.insert(("window", 0), _Built("again"), family="window")  # a key it holds is replaced
    assert cache.lookup(("window", 0)).key == "again"
    for name in "abcdefgh":  # other entries evict the family's: it may cache new sizes again
        cache.insert(name, _Built(name))
    assert ("window", 1) not in cache._lru
    cache.insert(("window", 99), _Built(99), family="window")
    assert cache.lookup(("window", 99)).key == 99
    cache.clear()
    for size in range(share):
        cache.insert(("window", size), _Built(size), family="window")
    assert len(cache._lru) == share


def test_a_full_family_admits_a_size_met_again_in_place_of_one_met_once():
    from plaidarray.backend.cache import FAMILY_SHARE

    cache = ExecutableCache(maxsize=8)
    share = int(8 * FAMILY_SHARE)
    for size in range(20):  # a scan: the share filled, the later sizes run uncached
        cache.insert(("window", size), _Built(size), family="window")
    assert [key[1] for key in cache._lru] == list(range(share))
    assert cache.lookup(("window", 0)).key == 0  # used since it came in: spared
    cache.insert(("window", 15), _Built(15), family="window")  # its second miss
    assert cache.lookup(("window", 15)).key == 15
    assert [key[1] for key in cache._lru] == [0, *range(2, share), 15]  # in place of 1, met once and unused
    assert len(cache._families["window"]) == share


def test_a_cyclic_scan_longer_than_the_share_keeps_the_sizes_it_holds():
    """Each size met once a cycle: no size is met more often than those cached, so none
    is admitted in their place (a least-recently-used cache would hit none)."""
    from plaidarray.backend.cache import FAMILY_SHARE

    cache = ExecutableCache(maxsize=8)
    share = int(8 * FAMILY_SHARE)
    for cycle in range(6):
        hits = []
        for size in range(12):
            if cache.lookup(("window", size)) is not None:
                hits.append(size)
            else:
                cache.insert(("window", size), _Built(size), family="window")
        assert hits == ([] if cycle == 0 else list(range(share)))


def test_the_admission_counts_stay_bounded_over_ever_new_sizes():
    from plaidarray.backend.cache import AGED_AFTER

    cache = ExecutableCache(maxsize=8)
    for size in range(2000):
        cache.insert(("window", size), _Built(size), family="window")
        if size % 3 == 0:
            cache.lookup(("window", 0))
    assert len(cache._misses) <= AGED_AFTER * 8 + 1
    assert set(cache._hit_counts) <= {id(exe) for exe in cache._lru.values()}


def test_a_size_read_again_after_a_scan_is_cached(monkeypatch):
    from plaidarray.backend.cache import EXECUTABLES

    xp.clear_cache()  # the admission's counts start from none: an earlier test's misses of this key would admit it at once
    x = xp.asarray(np.linspace(0.0, 1.0, 5000))
    for length in range(2, EXECUTABLES.info().maxsize + 40):  # more sizes than the family's share
        w = x[:length]
        float(xp.max(w) - xp.min(w))
    misses = []
    miss = materialize_module._miss
    monkeypatch.setattr(materialize_module, "_miss", lambda *args: misses.append(args) or miss(*args))
    spreads = []
    for _ in range(3):
        w = x[:4321]
        spreads.append(float(xp.max(w) - xp.min(w)))
    assert spreads == [pytest.approx(4320 / 4999)] * 3
    assert len(misses) == 2  # cached at its second miss, hit at the third read


def test_a_loop_over_ever_new_sizes_leaves_the_other_graphs_cached(monkeypatch):
    from plaidarray.backend.cache import EXECUTABLES, FAMILY_SHARE

    x = xp.asarray(np.linspace(0.0, 1.0, 5000))
    y = xp.asarray(np.linspace(1.0, 2.0, 64))
    limit = EXECUTABLES.info().maxsize
    float(xp.sum(y * y))  # cached before the scan
    held = EXECUTABLES.info().size
    for length in range(2, limit + 40):
        w = x[:length]
        assert float(xp.max(w) - xp.min(w)) == pytest.approx((length - 1) / 4999)
    misses = []
    miss = materialize_module._miss
    monkeypatch.setattr(materialize_module, "_miss", lambda *args: misses.append(args) or miss(*args))
    total = float(xp.sum(y * y))  # (an assert's rewriting would keep ``y * y``: another graph)
    assert total == pytest.approx(float(np.sum(np.linspace(1.0, 2.0, 64) ** 2)))
    assert not misses  # a hit: the windows did not flush it
    assert EXECUTABLES.info().size <= held + int(limit * FAMILY_SHARE) + 2  # the windows' share, their template


def test_a_failing_compile_is_reported_to_every_thread_and_leaves_no_lock():
    cache = ExecutableCache(maxsize=4)
    calls = []

    def broken():
        calls.append(1)
        time.sleep(0.01)
        raise RuntimeError("compiler failed")

    def work(i: int) -> str:
        try:
            cache.get("key", "test", broken)
        except RuntimeError as exc:
            return str(exc)
        return "no error"

    assert run_threads(work) == ["compiler failed"] * THREADS
    assert 1 <= len(calls) <= THREADS
    assert not cache._compiling._entries
    assert cache.get("key", "test", lambda: _Built("key")).key == "key"


def test_threads_running_an_executable_with_temporaries_each_get_their_own():
    """An rfft's executable keeps its small temporaries between runs (a run takes a set
    and gives it back): 8 threads running it at once on different signals each get their
    own signal's transform; a set shared by two runs would mix them."""
    signals = [np.random.default_rng(i).standard_normal(1024) for i in range(THREADS)]
    np.asarray(xp.fft.rfft(xp.asarray(signals[0])))  # compiled before the threads start

    def work(i: int) -> bool:
        x = xp.asarray(signals[i])
        return all(np.allclose(np.asarray(xp.fft.rfft(x)), np.fft.rfft(signals[i]), atol=1e-9) for _ in range(200))

    assert all(run_threads(work))


def test_hits_counted_without_the_lock_are_exact_under_threads():
    """``lookup`` counts hits per thread without taking the cache's lock."""
    cache = ExecutableCache(maxsize=4)
    cache.get("k", "test", lambda: _Built("k"))
    run_threads(lambda i: [cache.lookup("k") for _ in range(5000)])
    assert cache.info().hits == THREADS * 5000


def test_threads_assigning_parts_of_one_array_lose_no_write():
    """scikit-learn's pairwise distances with n_jobs=2 fill column blocks of one result from
    two threads; an assignment that ran before binding its result lost the other's."""
    out = xp.zeros((16, THREADS * 4))

    def fill(i: int) -> None:
        for step in range(4):
            out[:, i * 4 + step] = xp.full((16,), float(i * 4 + step + 1))

    run_threads(fill)
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to(np.arange(1.0, THREADS * 4 + 1), (16, THREADS * 4)))
