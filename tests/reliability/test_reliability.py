"""Interrupts, a shared compile cache and hostile files (issue 28): each fault reproduced
as a user at a terminal or an adversary would cause it, and the promise of
docs/reliability.md ("Interrupts", "The persistent cache's threat model") checked.

Most cases run in a child process (``run_child``): a signal, a stopped or killed process,
a hang or a crash there fails the test instead of taking pytest with it. Cases that need
another user (a planted entry, a lock file held by someone else) run that user's part as
uid ``NOBODY`` when the tests run as root, and are skipped otherwise; cgroup limits are
tested where this process may create a memory cgroup.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from ir_samples import SCALE_IR
from jit_helpers import child_env, finish_child, REPO, run_child, start_child

import plaidarray as xp
from plaidarray.backend import memory, transfer
from plaidarray.backend.llvm import codegen, object_cache, storing
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu import parallel, pool
from plaidarray.backend.llvm_cpu.targets import host
from plaidarray.backend.llvm_cpu.executable import CpuExecutable, _Runner
from plaidarray.backend.llvm.kernel_source import Segment

#: The uid other users' parts run as (``nobody``).
NOBODY = 65534
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="acting as another user needs root")

#: Child code: an expression with vector math library calls, compared with NumPy.
_MATH = """
x = np.linspace(-3.0, 3.0, 1001)
value = np.asarray(xp.cos(xp.asarray(x)) * 2.0 + xp.exp(xp.asarray(x)))
right = bool(np.allclose(value, np.cos(x) * 2.0 + np.exp(x), rtol=1e-13))
"""


def _value():
    """This process's version of ``_MATH``: the value, and NumPy's."""
    x = np.linspace(-3.0, 3.0, 1001)
    return np.asarray(xp.cos(xp.asarray(x)) * 2.0 + xp.exp(xp.asarray(x))), np.cos(x) * 2.0 + np.exp(x)


def _entries(directory: Path, field: str) -> list[Path]:
    """The entries whose metadata has ``field``: "steps" (executables), "bundle" (kernels),
    "symbols" (bundles and library functions), once what was compiled is stored."""
    storing.drain()
    found = []
    for path in sorted(directory.glob("*" + object_cache.SUFFIX)):
        entry = object_cache._decode(path.stem, path.read_bytes())
        if entry is not None and field in entry[1]:
            found.append(path)
    return found


def _bundles(directory: Path) -> list[Path]:
    """The bundles: kernels' code (library functions, loaded once per process, excluded)."""
    return [p for p in _entries(directory, "symbols") if not p.name.startswith(object_cache.LIBRARY_PREFIX)]


def _fresh(directory: Path, monkeypatch) -> None:
    """Use ``directory`` as the cache, with nothing of it in memory."""
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", str(directory))
    xp.clear_cache()
    gc.collect()


@pytest.fixture
def ctrl_c():
    """SIGINT raising KeyboardInterrupt in this process for the test's length, as Ctrl-C
    does in an interactive one: a suite run as a background job of a non-interactive
    shell (``cmd &`` in a script, some CI runners) inherits SIGINT ignored, Python then
    installs no handler, and a test's own SIGINT would do nothing."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _as_nobody() -> None:
    os.setgid(NOBODY)
    os.setuid(NOBODY)


# --- 1. an interrupted compile in the code generator process ---------------------------

INTERRUPTED_COMPILE = """
import json, os, signal, sys, threading
signal.signal(signal.SIGINT, signal.default_int_handler)  # it may come ignored: see the ctrl_c fixture
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host
sys.path.insert(0, {tests!r})
from ir_samples import SCALE_IR as IR, scale_copies
codegen_worker.generate(IR, host(), 3)  # the worker has started and served once
big = scale_copies(400)  # seconds of work
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    codegen_worker.generate(big, host(), 3)
    interrupted = False
except KeyboardInterrupt:
    interrupted = True
same = codegen_worker.generate(IR, host(), 3).object == codegen_worker.generate_here(IR, host(), 3).object
{math}
print(json.dumps({{"interrupted": interrupted, "same": same, "right": right}}))
"""


def test_ctrl_c_while_the_code_generator_compiles_leaves_later_compiles_right(tmp_path):
    """A Ctrl-C while the worker compiled left its answer in the pipe: every later compile
    got the previous request's object code, and the vector math library stored in the disk
    cache was a kernel's, so later processes aborted (``Symbol not found``, exit 134)."""
    code = INTERRUPTED_COMPILE.format(tests=str(REPO / "tests"), math=_MATH)
    result = run_child(code, tmp_path, PLAIDARRAY_INPROCESS_COMPILES="0")
    assert result == {"interrupted": True, "same": True, "right": True}
    later = run_child(f"import json\nimport numpy as np\nimport plaidarray as xp\n{_MATH}\n"
                      "print(json.dumps({'right': right}))", tmp_path)
    assert later == {"right": True}


INTERRUPTED_IMPORT = """
import dataclasses, json, sys
import numpy as np
import plaidarray as xp
first_import = "xdsl.ir.core" not in sys.modules
target = dataclasses.Field.__set_name__.__code__
fired = []


def interrupt(frame, event, arg):  # as a signal's handler would, inside a class body of xDSL's
    if frame.f_code is target and not fired:
        fired.append(1)
        raise KeyboardInterrupt
    return None


f = xp.jit(lambda x: xp.sin(x) * 3 + 1)
sys.settrace(interrupt)
try:
    np.asarray(f(xp.asarray(np.arange(10.0))))
    raised = "nothing"
except KeyboardInterrupt:
    raised = "KeyboardInterrupt"
except BaseException as error:
    raised = type(error).__name__
finally:
    sys.settrace(None)
right = bool(np.allclose(np.asarray(f(xp.asarray(np.arange(10.0)))), np.sin(np.arange(10.0)) * 3 + 1))
print(json.dumps({"first_import": first_import, "fired": bool(fired), "raised": raised, "right": right}))
"""


def test_ctrl_c_during_the_code_generators_import_is_a_keyboard_interrupt(tmp_path):
    """A Ctrl-C that landed while a process's first compile imported the code generator
    (inside xDSL's dataclasses' ``__set_name__``) reached the caller as a RuntimeError
    (Python 3.11 wraps it), which ``except KeyboardInterrupt:`` missed; a later compile
    imports again and computes right."""
    result = run_child(INTERRUPTED_IMPORT, tmp_path, PLAIDARRAY_FUSE_AFTER_MS="0")
    assert result["first_import"] and result["fired"]
    assert result == {"first_import": True, "fired": True, "raised": "KeyboardInterrupt", "right": True}


WRONG_LIBRARY = """
import json
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu import vector_math
from plaidarray.backend.llvm_cpu.targets import host
real = vector_math.library_object_code
def wrong(symbol, level, *vectors):  # another module's object code, as an out-of-step worker gave it
    return codegen_worker.generate_here({ir!r}, host(), level).object, real(symbol, level, *vectors)[1]
vector_math.library_object_code = wrong
try:
    np.asarray(xp.cos(xp.asarray(np.linspace(0.0, 1.0, 9))))
    error = ""
except RuntimeError as e:
    error = str(e)
vector_math.library_object_code = real
stored_wrong = [p.name for p in __import__("pathlib").Path({cache!r}).glob("library-*")]
{math}
print(json.dumps({{"error": error, "stored_wrong": stored_wrong, "right": right}}))
"""


def test_library_code_is_stored_only_once_it_defines_its_symbols(tmp_path):
    result = run_child(WRONG_LIBRARY.format(ir=SCALE_IR, cache=str(tmp_path), math=_MATH), tmp_path)
    assert "does not define plaidarray.cos.f64" in result["error"]
    assert result["stored_wrong"] == [] and result["right"]
    assert len(list(tmp_path.glob("library-*"))) == 2  # cos and exp, each checked and stored


def test_an_interrupted_request_ends_the_worker_and_the_next_compile_is_right(monkeypatch):
    """The same fault, deterministic: the interrupt arrives while the answer is awaited."""
    monkeypatch.setenv("PLAIDARRAY_INPROCESS_COMPILES", "0")
    try:
        codegen_worker.generate(SCALE_IR, host(), 3)
        worker = codegen_worker._workers["serving"]
        read = codegen.read_frame

        def interrupted(stream):
            monkeypatch.setattr(codegen, "read_frame", read)
            raise KeyboardInterrupt

        monkeypatch.setattr(codegen, "read_frame", interrupted)
        with pytest.raises(KeyboardInterrupt):
            codegen_worker.generate(SCALE_IR.replace("3.0", "5.0"), host(), 3)
        assert worker.process.wait(timeout=10) is not None  # killed, not left out of step
        assert codegen_worker.generate(SCALE_IR, host(), 3).object == codegen_worker.generate_here(SCALE_IR, host(), 3).object
    finally:
        codegen_worker.shutdown()


def test_a_worker_killed_while_idle_is_replaced_before_the_next_compile(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_INPROCESS_COMPILES", "0")
    try:
        codegen_worker.generate(SCALE_IR, host(), 3)
        worker = codegen_worker._workers["serving"]
        worker.process.kill()
        worker.process.wait()
        assert codegen_worker.generate(SCALE_IR, host(), 3).object == codegen_worker.generate_here(SCALE_IR, host(), 3).object
        assert codegen_worker._workers["serving"] is not worker
    finally:
        codegen_worker.shutdown()


# --- 2. the persistent cache runs only what this user wrote, under its own key ----------

@pytest.mark.parametrize("field", ["steps", "bundle", "symbols"])
def test_a_valid_entry_of_other_code_under_this_key_is_not_run(monkeypatch, tmp_path, field):
    """Entries did not record their key: another kernel's (or executable's, or bundle's)
    valid entry copied under this one's name was loaded as it was (NaN, a wrong value or
    a segfault). The checksum is now keyed by the entry's own key."""
    kind = _bundles if field == "symbols" else lambda directory: _entries(directory, field)
    _fresh(tmp_path, monkeypatch)
    value, expected = _value()
    mine = [p.name for p in kind(tmp_path)]
    np.asarray(xp.sin(xp.asarray(np.linspace(0.0, 1.0, 77))) * 3.0 + 1.0)  # other code of every kind
    strangers = [p for p in kind(tmp_path) if p.name not in mine]
    assert mine and strangers
    for name in mine:
        (tmp_path / name).write_bytes(strangers[0].read_bytes())
    _fresh(tmp_path, monkeypatch)
    value, expected = _value()
    np.testing.assert_allclose(value, expected, rtol=1e-13)
    info = xp.cache_info()
    assert (info.compiles, info.disk_hits) == (1, 0)


def _plant(tmp_path, monkeypatch, how) -> tuple[Path, list]:
    """Fill a cache, let ``how`` tamper with one of its bundles, and compute again with
    warnings recorded; the bundle and the warnings."""
    _fresh(tmp_path, monkeypatch)
    _value()
    bundle = _bundles(tmp_path)[0]
    how(bundle)
    _fresh(tmp_path, monkeypatch)
    with pytest.warns(RuntimeWarning) as warned:
        value, expected = _value()
    np.testing.assert_allclose(value, expected, rtol=1e-13)
    storing.drain()  # what was compiled again is stored
    return bundle, [str(w.message) for w in warned]


def test_an_entry_writable_by_others_is_removed_with_a_warning(monkeypatch, tmp_path):
    bundle, warned = _plant(tmp_path, monkeypatch, lambda path: path.chmod(0o666))
    assert any("is writable by other users (mode 0666)" in w for w in warned)
    assert stat.S_IMODE(bundle.stat().st_mode) == 0o600  # compiled again and stored anew


@as_root
def test_an_entry_owned_by_another_user_is_removed_with_a_warning(monkeypatch, tmp_path):
    bundle, warned = _plant(tmp_path, monkeypatch, lambda path: os.chown(path, NOBODY, NOBODY))
    assert any(f"is owned by uid {NOBODY}" in w for w in warned)
    assert bundle.stat().st_uid == os.geteuid()


def test_a_symbolic_link_entry_is_not_followed(monkeypatch, tmp_path):
    """A link to /dev/zero let a MemoryError escape; a link anywhere else runs what it points at."""
    def link(path):
        path.unlink()
        path.symlink_to("/dev/zero")

    bundle, warned = _plant(tmp_path, monkeypatch, link)
    assert any("is a symbolic link" in w for w in warned)
    assert not bundle.is_symlink()


def test_entries_that_are_directories_are_replaced(monkeypatch, tmp_path):
    """A directory in an entry's place is removed and the entry stored: it stayed, so every
    later process compiled its code again (the executable's too, which no read removes)."""
    _fresh(tmp_path, monkeypatch)
    _value()
    entries = _entries(tmp_path, "steps") + _bundles(tmp_path)
    for path in entries:
        path.unlink()
        path.mkdir()
        (path / "junk").write_bytes(b"not code")
    _fresh(tmp_path, monkeypatch)
    with pytest.warns(RuntimeWarning):
        value, expected = _value()
    np.testing.assert_allclose(value, expected, rtol=1e-13)
    storing.drain()
    assert all(path.is_file() for path in entries)


FIFO = """
import json, os, pathlib
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import object_cache
{math}
xp.clear_cache()
for path in pathlib.Path({cache!r}).glob("*" + object_cache.SUFFIX):
    entry = object_cache._decode(path.stem, path.read_bytes())
    if "steps" in entry[1]:
        path.unlink()
        os.mkfifo(path)
{math}
print(json.dumps({{"right": right}}))
"""


def test_an_entry_that_is_a_fifo_does_not_block(tmp_path):
    process = start_child(FIFO.format(cache=str(tmp_path), math=_MATH), tmp_path)
    try:
        assert finish_child(process, timeout=60) == {"right": True}
    except subprocess.TimeoutExpired:
        process.kill()
        pytest.fail("a compile waited for a FIFO entry")


def test_a_cache_directory_writable_by_others_is_not_used(monkeypatch, tmp_path):
    tmp_path.chmod(0o777)
    _fresh(tmp_path, monkeypatch)
    with pytest.warns(RuntimeWarning, match=r"is writable by other users \(mode 0777\), so the persistent cache is not"):
        value, expected = _value()
    np.testing.assert_allclose(value, expected, rtol=1e-13)
    assert not list(tmp_path.iterdir())


#: The other user's part: write an entry (from standard input) over root's.
ATTACKER = ["/bin/sh", "-c", 'cat > "$1.new" && mv "$1.new" "$1"', "attacker"]

VICTIM_WARNED = f"""
import json, warnings
import numpy as np
import plaidarray as xp
with warnings.catch_warnings(record=True) as warned:
    warnings.simplefilter("always")
{"".join("    " + line + chr(10) for line in _MATH.strip().splitlines())}
print(json.dumps({{"right": right, "warned": [str(w.message) for w in warned]}}))
"""


def _do_nothing(symbols: list[str]) -> bytes:
    """A shared object whose functions ``symbols`` return at once: code of an attacker's
    choosing in the shape of a bundle."""
    from plaidarray.backend.llvm_cpu import loaded_code

    ir = "".join(f'define void @"{s}"(ptr %a, ptr %b, i64 %c, i64 %d, ptr %e) {{\n  ret void\n}}\n' for s in symbols)
    return loaded_code.package([codegen_worker.generate_here(ir, host(), 1).object])[0]


@as_root
def test_code_planted_by_another_user_is_never_run_by_root(tmp_path):
    """In a directory others can write, a user replaced a bundle with code of their choosing
    (a valid entry under the right key): a root process loaded it and called it."""
    from plaidarray.backend.llvm_cpu import shared_object

    if shared_object.linker() is None:
        pytest.skip("the attacker's shared object needs a linker")
    cache = Path(tempfile.mkdtemp(prefix="plaidarray-shared-", dir="/tmp"))
    try:
        assert run_child(VICTIM_WARNED, cache)["right"]
        victim = _bundles(cache)[0]
        code, meta = object_cache._decode(victim.stem, victim.read_bytes())
        planted = object_cache._encode(victim.stem, _do_nothing(meta["symbols"]), meta)
        cache.chmod(0o777)  # another user may now write it
        done = subprocess.run([*ATTACKER, str(victim)], input=planted, preexec_fn=_as_nobody, capture_output=True,
                              cwd="/")
        assert done.returncode == 0, done.stderr
        assert victim.stat().st_uid == NOBODY
        after = run_child(VICTIM_WARNED, cache)  # the directory is not used
        assert after["right"] and any("is writable by other users (mode 0777)" in w for w in after["warned"])
        cache.chmod(0o755)  # the directory is root's alone again; the planted entry is not
        after = run_child(VICTIM_WARNED, cache)
        assert after["right"] and any(f"is owned by uid {NOBODY}" in w for w in after["warned"])
        assert victim.stat().st_uid == 0
    finally:
        shutil.rmtree(cache, ignore_errors=True)


# --- 3. interrupts during a multi-threaded kernel -------------------------------------

def test_a_second_interrupt_waits_for_every_chunk_running_on_the_pool(monkeypatch, ctrl_c):
    """Ctrl-C twice: the second escaped the wait for the pool, whose threads went on
    writing into buffers already given back to the pool (the next computation had 2.6
    million wrong elements, then the process segfaulted)."""
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    main, lock, started = threading.get_ident(), threading.Lock(), threading.Event()
    running, done = set(), []

    def chunk(start, stop):
        if threading.get_ident() == main:
            started.wait(10)
            raise KeyboardInterrupt  # the first Ctrl-C, between two chunks of this thread
        with lock:
            first = not running and not done
            running.add(start)
        started.set()
        if first:
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)  # the second, while the calling thread waits for the pool
        time.sleep(0.3)
        with lock:
            running.discard(start)
            done.append(start)

    with pytest.raises(KeyboardInterrupt):
        parallel.run([(chunk, Segment(1 << 20, 1 << 22, 0))])
    assert not running, "a chunk was still running when the interrupt propagated"
    assert 1 <= len(done) <= 3  # the pool threads' first chunks: none started after the interrupt


def _interrupted_on_entry(monkeypatch) -> None:
    """``pool.wait_through``'s first call raises KeyboardInterrupt before it waits, as a
    signal pending when it is called does: CPython runs the handler at the function's
    entry, before any of its own code (a second Ctrl-C or timeout alarm landing while the
    first one's exception unwinds to the wait)."""
    real, calls = pool.wait_through, []

    def wait_through(tasks, claim):
        calls.append(claim)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(tasks, claim)

    monkeypatch.setattr(pool, "wait_through", wait_through)


@pytest.mark.parametrize("first", [True, False])
def test_an_interrupt_pending_as_the_wait_begins_still_waits_for_the_pool(monkeypatch, first):
    """... after a first interrupt between the calling thread's chunks, or alone (the
    calling thread's chunks done): no chunk is running when it propagates."""
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    main, lock, started = threading.get_ident(), threading.Lock(), threading.Event()
    running = set()

    def chunk(start, stop):
        if threading.get_ident() == main:
            started.wait(10)
            if first:
                raise KeyboardInterrupt
            return
        with lock:
            running.add(start)
        started.set()
        time.sleep(0.2)
        with lock:
            running.discard(start)

    _interrupted_on_entry(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        parallel.run([(chunk, Segment(1 << 20, 1 << 22, 0))])
    assert not running, "a chunk was still running when the interrupt propagated"


def test_a_run_writing_a_callers_buffer_runs_to_its_end_when_interrupted_as_its_wait_begins(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    lock, done = threading.Lock(), []

    def chunk(start, stop):
        time.sleep(0.01)
        with lock:
            done.append(start)

    segment = Segment(1 << 20, 1 << 22, 0)
    _interrupted_on_entry(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        parallel.run([(chunk, segment), (chunk, segment)], complete=True)
    assert len(done) == 2 * len(parallel.chunks(1 << 20, parallel._parts(segment, 4)))


def test_a_run_writing_a_callers_buffer_runs_to_its_end_when_interrupted(monkeypatch, ctrl_c):
    """An in-place update must never be left half done: its chunks and steps all run,
    then the interrupt is raised."""
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    lock, done = threading.Lock(), []

    def chunk(start, stop):
        with lock:
            first = not done
            done.append(start)
        if first:
            os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.01)

    segment = Segment(1 << 20, 1 << 22, 0)
    with pytest.raises(KeyboardInterrupt):
        parallel.run([(chunk, segment), (chunk, segment)], complete=True)
    assert len(done) == 2 * len(parallel.chunks(1 << 20, parallel._parts(segment, 4)))


TWO_INTERRUPTS = """
import json, signal, time
import numpy as np
import plaidarray as xp
rng = np.random.default_rng(0)
a = rng.standard_normal(1 << 23).astype(np.float32)
x, y = xp.asarray(a), xp.asarray(a[::-1].copy())
np.asarray(xp.sin(x) * xp.exp(y))  # compiled, and timed below
start = time.perf_counter()
np.asarray(xp.sin(x) * xp.exp(y))
run = time.perf_counter() - start
expected = np.asarray(x * 2.0 + y)
state = {"in_run": False, "signals": 0}

def alarm(signum, frame):  # a timeout's alarm, as pytest-timeout raises it: twice
    state["signals"] += 1
    if state["signals"] % 2 == 0:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if state["in_run"]:
        raise KeyboardInterrupt

signal.signal(signal.SIGALRM, alarm)
interrupted, wrong = 0, 0
for trial in range(12):
    signal.setitimer(signal.ITIMER_REAL, run * (trial + 1) / 14, 0.002)
    state["in_run"] = True
    try:
        np.asarray(xp.sin(x) * xp.exp(y))
        state["in_run"] = False
    except KeyboardInterrupt:
        state["in_run"] = False
        interrupted += 1
    while state["signals"] < 2 * (trial + 1):
        time.sleep(0.001)
    wrong += int(np.count_nonzero(np.asarray(x * 2.0 + y) != expected))
print(json.dumps({"interrupted": interrupted, "wrong": wrong}))
"""


def test_two_interrupts_during_a_multithreaded_kernel_leave_later_results_right(tmp_path):
    result = run_child(TWO_INTERRUPTS, tmp_path, PLAIDARRAY_NUM_THREADS="4")
    assert result["wrong"] == 0 and result["interrupted"] >= 1


def _interrupt_after(monkeypatch, runs: int) -> None:
    """The next executable run raises KeyboardInterrupt: before it starts (``runs`` 0) or
    once it has run (1), as Ctrl-C does arriving between the run and its results' handover.
    (A read's binding at new sizes runs as a ``_Runner``.)"""
    kinds = (CpuExecutable, _Runner)
    real = {kind: kind.run for kind in kinds}

    def run(self, buffers):
        for kind in kinds:
            monkeypatch.setattr(kind, "run", real[kind])
        if runs:
            real[type(self)](self, buffers)
        raise KeyboardInterrupt

    for kind in kinds:
        monkeypatch.setattr(kind, "run", run)


@pytest.mark.parametrize("runs", [0, 1])
def test_an_interrupted_in_place_update_is_applied_whole_or_not_at_all(monkeypatch, runs):
    """``x[1:3] = v`` interrupted before its run left ``x`` bound to the pending update,
    which then took effect anyway (or, failing, failed every later read of ``x``). (A value
    of another dtype, which the update converts: one of ``x``'s own the transfer stores.)"""
    x = xp.asarray(np.arange(8.0)) * 1.0
    np.asarray(x)
    buffer = id(x._node.buffer)
    x[1:3] = xp.asarray(np.full(2, 4.0, np.float32))  # compiled, and written in place (the array alone holds its buffer)
    assert id(x._node.buffer) == buffer
    _interrupt_after(monkeypatch, runs)
    with pytest.raises(KeyboardInterrupt):
        x[1:3] = xp.asarray(np.full(2, 5.0, np.float32))
    expected = np.arange(8.0)
    expected[1:3] = 5.0 if runs else 4.0
    np.testing.assert_array_equal(np.asarray(x), expected)
    np.testing.assert_array_equal(np.asarray(x * 2.0), expected * 2.0)


# --- 4. ulimit -v -----------------------------------------------------------------------

def _limited(soft: int, hard: int):
    return lambda: resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


ULIMIT = f"""
import json
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host
{_MATH}
pid = codegen_worker._workers["serving"].process.pid
with open(f"/proc/{{pid}}/limits") as f:
    limit = next(line for line in f if line.startswith("Max address space")).split()[3:5]
print(json.dumps({{"right": right, "limit": limit, "stats": codegen_worker.stats()}}))
"""


@pytest.mark.parametrize("soft", [2 << 30, 3 << 30])
def test_the_code_generator_process_starts_under_ulimit_v(tmp_path, soft):
    """The worker raised its own RLIMIT_AS to half the machine's memory, above a hard limit
    of 3 GiB (``ulimit -v``): ``not allowed to raise maximum limit``, every compile failed."""
    hard = 3 << 30
    process = subprocess.Popen([sys.executable, "-c", ULIMIT], env=child_env(tmp_path, PLAIDARRAY_INPROCESS_COMPILES="0"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_limited(soft, hard))
    result = finish_child(process)
    assert result["right"] and result["stats"]["worker"] >= 1
    assert result["limit"] == [str(soft), str(soft)]


def test_the_cap_is_lowered_to_an_inherited_limit_never_raised():
    code = ("import resource, json\nfrom plaidarray.backend.llvm import codegen\n"
            "codegen.cap_address_space(8 << 30)\n"
            "print(json.dumps(resource.getrlimit(resource.RLIMIT_AS)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          preexec_fn=_limited(4 << 30, 6 << 30), env=child_env("/nonexistent"))
    assert json.loads(done.stdout) == [4 << 30, 4 << 30], done.stderr


# --- 5. locks: a stopped holder, another user ---------------------------------------------

HOLDER = """
import fcntl, os, sys
directory = sys.argv[1]
os.makedirs(directory, exist_ok=True)
fd = os.open(os.path.join(directory, "stripes"), os.O_RDWR | os.O_CREAT, 0o600)
fcntl.lockf(fd, fcntl.LOCK_EX, 256, 0)  # every stripe: whatever this process's keys
print("held", flush=True)
os.kill(os.getpid(), __import__("signal").SIGSTOP)  # Ctrl-Z, or a debugger's breakpoint
"""

VICTIM = f"""
import json, time, warnings
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import object_cache
object_cache.LOCK_TIMEOUT = 1.0
start = time.monotonic()
with warnings.catch_warnings(record=True) as warned:
    warnings.simplefilter("always")
{"".join("    " + line + chr(10) for line in _MATH.strip().splitlines())}
print(json.dumps({{"right": right, "seconds": time.monotonic() - start,
                  "warned": [str(w.message) for w in warned]}}))
"""


def test_a_stopped_process_holding_the_locks_delays_a_compile_by_the_timeout_only(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "locks")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        victim = start_child(VICTIM, tmp_path)
        try:
            result = finish_child(victim, timeout=60)
        except subprocess.TimeoutExpired:
            victim.kill()
            pytest.fail("a compile waited for a stopped process's lock")
    finally:
        holder.kill()
        holder.wait()
    assert result["right"] and result["seconds"] < 30
    assert any("waited 1 s for another process compiling the same code" in w for w in result["warned"])


def test_lock_files_are_the_users_alone(monkeypatch, tmp_path):
    """Lock files were 0644: another user could open one and hold its lock forever."""
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    used = locks / "stripes"
    used.touch(mode=0o644)  # made by someone else's umask
    _fresh(tmp_path, monkeypatch)
    _value()
    assert stat.S_IMODE(used.stat().st_mode) == 0o600 and stat.S_IMODE(locks.stat().st_mode) == 0o700
    if os.geteuid() == 0:
        tmp_path.chmod(0o755)
        locks.chmod(0o755)
        opened = subprocess.run(["/bin/cat", str(used)], preexec_fn=_as_nobody, capture_output=True, text=True,
                                cwd="/")
        assert opened.returncode != 0 and "Permission denied" in opened.stderr


# --- 6. a NumPy array changed after asarray -------------------------------------------------

@pytest.mark.parametrize("ops", [20, 40])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_a_numpy_array_changed_after_asarray_changes_nothing(ops, layout):
    """The pending graph saw the new data or the old one depending on the pending bound
    (a 20-op chain gave 1020, a 40-op chain 41); Fortran-order inputs the old data."""
    a = np.ones((4, 4), order=layout)
    x = xp.asarray(a)
    y = x
    for _ in range(ops):
        y = y + 1.0
    jitted = xp.jit(lambda u: u * 2.0)(a)
    returned = xp.jit(lambda u: (u, u + 1.0))(a)[0]  # the argument itself: the jitted call used it in place
    mixed = a + x  # a NumPy operand of an operator
    a[...] = 1000.0
    np.testing.assert_array_equal(np.asarray(y), np.full((4, 4), 1.0 + ops))
    np.testing.assert_array_equal(np.asarray(x), np.ones((4, 4)))
    np.testing.assert_array_equal(np.asarray(jitted), np.full((4, 4), 2.0))
    np.testing.assert_array_equal(np.asarray(returned), np.ones((4, 4)))
    np.testing.assert_array_equal(np.asarray(mixed), np.full((4, 4), 2.0))


def test_read_only_memory_is_shared_and_copy_false_shares_writable_memory():
    frozen = np.arange(6.0)
    frozen.flags.writeable = False
    assert np.shares_memory(xp.asarray(frozen)._value(), frozen)
    assert np.shares_memory(xp.asarray(frozen, copy=False)._value(), frozen)
    exported = np.asarray(xp.asarray(frozen))  # writable, so not the frozen memory
    assert exported.flags.writeable and not np.shares_memory(exported, frozen)
    writable = np.arange(6.0)
    assert np.shares_memory(np.asarray(xp.asarray(writable, copy=False)), writable)  # tests/api/test_shared_memory.py
    view = np.arange(6.0)[1:]
    view.flags.writeable = False  # its base is still writable
    assert not transfer.frozen(view)
    assert not np.shares_memory(xp.asarray(view)._value(), view)


# --- 7. smaller faults --------------------------------------------------------------------

def test_a_cache_dir_of_an_unknown_user_is_a_value_error_naming_the_setting(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CACHE_DIR", "~no-such-user-plaidarray/cache")
    with pytest.raises(ValueError, match="PLAIDARRAY_CACHE_DIR must be a path whose ~ can be expanded"):
        np.asarray(xp.asarray(np.arange(5.0)) * 7.0 - 1.0)


def test_without_a_home_directory_the_cache_is_the_users_own_temporary_directory(monkeypatch):
    from plaidarray import config

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", no_home)
    assert config._default_cache_dir() == Path(tempfile.gettempdir()) / f"plaidarray-{os.geteuid()}"


def _fake_cgroups(tmp_path, version: int, limits: dict[str, int], usage: int) -> None:
    """A /proc/self and a cgroup mount where this process's cgroup is ``a/b``."""
    proc, mount = tmp_path / "proc", tmp_path / "mount"
    proc.mkdir()
    files = ("memory.max", "memory.current", "inactive_file") if version == 2 else \
        ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")
    for path, limit in limits.items():
        directory = mount / path
        directory.mkdir(parents=True, exist_ok=True)
        (directory / files[0]).write_text(f"{limit}\n" if limit else "max\n")
        (directory / files[1]).write_text(f"{usage}\n")
        (directory / "memory.stat").write_text(f"anon 5\n{files[2]} {1 << 20}\n")
    kind = "cgroup2 cgroup2 rw" if version == 2 else "cgroup cgroup rw,memory"
    (proc / "mountinfo").write_text(f"35 31 0:32 / {mount} rw,relatime - {kind}\n"
                                    f"31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n")
    (proc / "cgroup").write_text("0::/a/b\n" if version == 2 else "4:memory:/a/b\n1:cpu:/\n")


@pytest.mark.parametrize("version", [1, 2])
def test_the_memory_check_reads_the_tightest_cgroup_limit(monkeypatch, tmp_path, version):
    _fake_cgroups(tmp_path, version, {"": 0, "a": 3 << 30, "a/b": 8 << 30}, 1 << 30)
    monkeypatch.setattr(memory, "PROC", tmp_path / "proc")
    assert memory.cgroup_available() == (2 << 30) + (1 << 20)  # a's limit, less the usage, plus reclaimable cache
    assert memory.available_bytes() <= (2 << 30) + (1 << 20)


def _memory_cgroup_of_mine() -> Path | None:
    """A new memory cgroup below this process's, or None where that cannot be made."""
    for directory, (limit_file, _, _) in memory._memory_cgroups():
        if (directory / limit_file).exists() or (directory / "cgroup.subtree_control").exists():
            child = directory / f"plaidarray-test-{os.getpid()}"
            try:
                child.mkdir()
            except OSError:
                continue
            if (child / limit_file).exists():
                return child
            child.rmdir()
    return None


CGROUP_RUN = """
import json
import plaidarray as xp
try:
    x = xp.ones((11000, 11000)) + 1.0  # 0.9 GiB of results
    x[0, 0] = 3.0
    outcome = "ran"
except MemoryError as e:
    outcome = str(e)
print(json.dumps({"outcome": outcome}))
"""


def test_a_run_larger_than_its_cgroup_allows_raises_memory_error(tmp_path):
    """The check read /proc/meminfo only: in a container or batch job limited to 512 MiB,
    a 0.9 GiB run started and the kernel killed the process."""
    cgroup = _memory_cgroup_of_mine()
    if cgroup is None:
        pytest.skip("this process may not create a memory cgroup")
    try:
        limit_file = "memory.max" if (cgroup / "memory.max").exists() else "memory.limit_in_bytes"
        (cgroup / limit_file).write_text(str(512 << 20))
        process = subprocess.Popen([sys.executable, "-c", CGROUP_RUN], env=child_env(tmp_path),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   preexec_fn=lambda: (cgroup / "cgroup.procs").write_text("0"))
        result = finish_child(process)
    finally:
        cgroup.rmdir()
    assert "cannot allocate a float64 buffer of shape (11000, 11000)" in result["outcome"]


SIGNAL_STORM = """
import json, signal, threading, time
from plaidarray.backend.llvm_cpu import parallel
from plaidarray.backend.llvm.kernel_source import Segment
lock, done, armed = threading.Lock(), [], {"n": 0, "storms": False}

def chunk(start, stop):
    with lock:
        if not done and armed["storms"]:  # 30 alarms 0.2 ms apart while the caller waits
            armed["n"] = 30
            signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
        done.append(start)
    time.sleep(0.002)

def alarm(signum, frame):
    if armed["n"]:
        armed["n"] -= 1
        raise KeyboardInterrupt

segment = Segment(1 << 20, 1 << 22, 0)
parallel.run([(chunk, segment)], complete=True)  # the pool's threads started
signal.signal(signal.SIGALRM, alarm)
armed["storms"] = True
outcomes = []
for _ in range(10):
    done.clear()
    try:
        parallel.run([(chunk, segment)] * 4, complete=True)
        outcome = "not interrupted"
    except KeyboardInterrupt:
        outcome = len(done)
    except BaseException as error:
        outcome = repr(error)
    outcomes.append(outcome)
    while armed["n"]:
        time.sleep(0.001)
signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps({"outcomes": outcomes, "chunks": 4 * len(parallel.chunks(1 << 20, parallel._parts(segment, 4)))}))
"""


def test_a_storm_of_signals_during_a_wait_raises_the_interrupt_once_every_chunk_has_run(tmp_path):
    """The calling thread waits for the pool's chunks; a signal's exception raised inside
    ``threading.Condition.wait``'s own ``finally`` (behind ``concurrent.futures.wait``) left
    its lock released, and the wait raised ``RuntimeError: release unlocked lock`` instead
    of the interrupt (a timeout's two alarms hit it in CI); one raised inside the thread
    pool's submit left a semaphore's lock held, and the next run waited for ever. In a child
    process: an alarm raised inside a finaliser is an unraisable exception, which pytest
    would report as this test's."""
    result = run_child(SIGNAL_STORM, tmp_path, PLAIDARRAY_NUM_THREADS="4")
    assert result["outcomes"] == [result["chunks"]] * 10


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX-only")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_runs_split_kernels_on_threads_of_its_own(monkeypatch):
    """A forked child has none of its parent's pool threads; a run that waits on the pool
    (an in-place update's) must start new ones, not wait for ever on the parent's."""
    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    done: list[int] = []
    segment = Segment(1 << 20, 1 << 22, 0)
    parallel.run([(lambda start, stop: done.append(start), segment)], complete=True)
    assert len(done) > 1
    child = os.fork()
    if child == 0:
        done.clear()
        parallel.run([(lambda start, stop: done.append(start), segment)], complete=True)
        os._exit(0 if len(done) == len(parallel.chunks(1 << 20, parallel._parts(segment, 4))) else 1)
    deadline = time.monotonic() + 60
    while (ended := os.waitpid(child, os.WNOHANG))[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    if ended[0] == 0:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
    assert ended[0] == child and os.waitstatus_to_exitcode(ended[1]) == 0


def test_a_pool_thread_that_cannot_start_fails_the_run_instead_of_waiting_for_ever(monkeypatch):
    """An in-place run waits for its steps on a pool thread; where no thread can start
    (a process at its thread limit), the run raises the error, and its queued steps never run."""
    from plaidarray.backend.llvm_cpu import pool

    def refuse(*args):
        raise RuntimeError("can't start new thread")

    monkeypatch.setenv("PLAIDARRAY_NUM_THREADS", "4")
    monkeypatch.setattr(pool, "_pool", pool._Pool())
    monkeypatch.setattr(pool._thread, "start_new_thread", refuse)
    done: list[int] = []
    with pytest.raises(RuntimeError, match="can't start new thread"):
        parallel.run([(lambda start, stop: done.append(start), Segment(1 << 20, 1 << 22, 0))], complete=True)
    assert done == []
