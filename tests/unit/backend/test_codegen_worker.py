"""The code generator process (codegen_worker.py): the same object code as in this
process, a clear error when it dies, a successor after ``RECYCLE_AFTER`` compiles, and
plaidarray's results unchanged when every compile goes through it."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from ir_samples import SCALE_IR as _IR, scale_copies
from jit_helpers import run_child

from plaidarray.backend.llvm import codegen
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host

@pytest.fixture
def all_in_worker(monkeypatch):
    """Every compile goes to a worker; workers start and end with the test (one an earlier
    test's compile started runs with that test's settings, its address-space cap say)."""
    monkeypatch.setenv("PLAIDARRAY_INPROCESS_COMPILES", "0")
    codegen_worker.shutdown()
    yield
    codegen_worker.shutdown()


@pytest.mark.parametrize("level", codegen.OPT_LEVELS)
def test_worker_generates_the_same_object_code(all_in_worker, level):
    before = codegen_worker.stats()["worker"]
    in_worker = codegen_worker.generate(_IR, host(), level, listings=True)
    assert codegen_worker.stats()["worker"] == before + 1
    here = codegen_worker.generate_here(_IR, host(), level, listings=True)
    assert in_worker == here
    assert "define void @scale" in in_worker.ir and "scale:" in in_worker.assembly


def test_ir_errors_come_back_as_runtime_errors(all_in_worker):
    with pytest.raises(RuntimeError, match="expected"):
        codegen_worker.generate("define void @f( {", host(), 3)
    assert codegen_worker.generate(_IR, host(), 3).object  # the worker is still serving


def test_a_worker_dying_mid_compile_fails_that_compile_and_is_replaced(all_in_worker):
    codegen_worker.generate(_IR, host(), 3)
    started = codegen_worker.stats()["workers_started"]
    worker = codegen_worker._workers["serving"]
    big = scale_copies(3000)  # seconds of work
    threading.Timer(0.3, worker.process.kill).start()
    with pytest.raises(RuntimeError, match="died while compiling"):
        codegen_worker.generate(big, host(), 3)
    assert codegen_worker.generate(_IR, host(), 3).object == codegen_worker.generate_here(_IR, host(), 3).object
    assert codegen_worker.stats()["workers_started"] == started + 1


def test_workers_are_recycled(all_in_worker, monkeypatch):
    monkeypatch.setattr(codegen_worker, "RECYCLE_AFTER", 3)
    codegen_worker.generate(_IR, host(), 3)
    first = codegen_worker._workers["serving"]
    for _ in range(200):
        codegen_worker.generate(_IR, host(), 3)
        if codegen_worker._workers["serving"] is not first:
            break
    assert codegen_worker._workers["serving"] is not first
    assert first.process.poll() is not None, "a retired worker must exit"


def test_a_successor_dying_at_start_leaves_the_serving_worker_in_charge(all_in_worker, monkeypatch):
    monkeypatch.setattr(codegen_worker, "RECYCLE_AFTER", 1)
    codegen_worker.generate(_IR, host(), 3)
    codegen_worker.generate(_IR, host(), 3)  # past RECYCLE_AFTER: a successor starts
    serving, successor = codegen_worker._workers["serving"], codegen_worker._workers["starting"]
    assert successor is not None
    successor.process.kill()
    successor.process.wait()
    assert codegen_worker.generate(_IR, host(), 3).object == codegen_worker.generate_here(_IR, host(), 3).object
    assert codegen_worker._workers["serving"] is serving


def test_the_limit_must_be_a_count(monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_INPROCESS_COMPILES", "many")
    with pytest.raises(ValueError, match="PLAIDARRAY_INPROCESS_COMPILES must be a non-negative integer"):
        codegen_worker.inprocess_compiles()


def test_results_through_the_worker_match_numpy(tmp_path):
    code = """
import json
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host
x = np.linspace(-3.0, 3.0, 1001)
got = np.asarray(xp.tanh(xp.asarray(x)) * 2.0 + xp.sum(xp.asarray(x) ** 2))
print(json.dumps({"got": got.tolist(), "stats": codegen_worker.stats()}))
"""
    result = run_child(code, tmp_path, PLAIDARRAY_INPROCESS_COMPILES="0", PLAIDARRAY_CACHE_MAX_BYTES="0")
    x = np.linspace(-3.0, 3.0, 1001)
    np.testing.assert_allclose(result["got"], np.tanh(x) * 2.0 + np.sum(x**2), rtol=1e-13)
    assert result["stats"]["in_process"] == 0 and result["stats"]["worker"] >= 1


def test_a_forked_child_starts_a_worker_of_its_own(tmp_path):
    code = """
import json, os
import numpy as np
import plaidarray as xp
from plaidarray.backend.llvm import codegen_worker
from plaidarray.backend.llvm_cpu.targets import host
x = np.arange(10.0)
first = float(xp.sum(xp.asarray(x) * 2.0))  # starts the parent's worker
parent_worker = codegen_worker._workers["serving"].process.pid
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    value = float(xp.sum(xp.asarray(np.arange(11.0)) * 3.0 + 1.0))  # a new graph: compiles
    child_worker = codegen_worker._workers["serving"].process.pid
    os.write(write, json.dumps([value, child_worker]).encode())
    os._exit(0)
os.close(write)
os.waitpid(pid, 0)
value, child_worker = json.loads(os.read(read, 4096))
again = float(xp.sum(xp.asarray(np.arange(12.0)) * 4.0 - 1.0))  # the parent's worker still serves
print(json.dumps({"first": first, "child": value, "again": again, "parent_worker": parent_worker,
                  "child_worker": child_worker, "stats": codegen_worker.stats()}))
"""
    result = run_child(code, tmp_path, PLAIDARRAY_INPROCESS_COMPILES="0", PLAIDARRAY_CACHE_MAX_BYTES="0")
    assert (result["first"], result["child"], result["again"]) == (90.0, 176.0, 252.0)
    assert result["child_worker"] != result["parent_worker"]
    assert result["stats"]["workers_started"] == 1 and result["stats"]["in_process"] == 0


def test_workers_run_with_a_capped_address_space(all_in_worker, monkeypatch):
    monkeypatch.setenv("PLAIDARRAY_CODEGEN_MAX_BYTES", str(6 << 30))
    codegen_worker.generate(_IR, host(), 3)
    pid = codegen_worker._workers["serving"].process.pid
    with open(f"/proc/{pid}/limits") as f:
        limit = next(line for line in f if line.startswith("Max address space")).split()[3:5]
    assert limit == [str(6 << 30), str(6 << 30)]


def test_a_module_over_the_cap_fails_its_compile_and_the_next_one_works(all_in_worker, monkeypatch):
    # A worker starts in about 180 MB of address space; 12,000 functions take LLVM past 400 MB.
    monkeypatch.setenv("PLAIDARRAY_CODEGEN_MAX_BYTES", str(256 << 20))
    codegen_worker.shutdown()
    big = scale_copies(12000)
    with pytest.raises(RuntimeError, match="the code generator process died while compiling"):
        codegen_worker.generate(big, host(), 3)
    monkeypatch.delenv("PLAIDARRAY_CODEGEN_MAX_BYTES")
    assert codegen_worker.generate(_IR, host(), 3).object == codegen_worker.generate_here(_IR, host(), 3).object


def test_large_modules_are_always_compiled_in_a_worker(monkeypatch):
    monkeypatch.setattr(codegen_worker, "IN_PROCESS_MAX_IR", len(_IR) - 1)
    before = codegen_worker.stats()
    try:
        codegen_worker.generate(_IR, host(), 3)
        after = codegen_worker.stats()
    finally:
        codegen_worker.shutdown()
    assert after["worker"] == before["worker"] + 1 and after["in_process"] == before["in_process"]


def test_a_compile_interrupted_while_waiting_does_not_hand_its_answer_to_the_next(all_in_worker, monkeypatch):
    """An exception raised while a compile waits for its answer (Ctrl-C, pytest-timeout's
    signal) left the answer in the pipe: the next compile read it as its own (the wrong
    object code), or, with an answer larger than the pipe, both processes waited on each
    other for ever (SciPy's suite under clients/run.py hung so). The worker is retired."""
    codegen_worker.generate(_IR, host(), 3)
    real_read = codegen.read_frame

    def interrupted(stream):
        monkeypatch.setattr(codegen, "read_frame", real_read)
        raise KeyboardInterrupt
    monkeypatch.setattr(codegen, "read_frame", interrupted)
    with pytest.raises(KeyboardInterrupt):
        codegen_worker.generate(_IR, host(), 3)
    other = _IR.replace("@scale", "@other").replace("3.0", "5.0")
    product = codegen_worker.generate(other, host(), 3, listings=True)
    assert "@other" in product.ir and "@scale" not in product.ir


def test_the_first_worker_starts_ahead_of_the_compiles_it_serves(monkeypatch):
    """``PRESTART_AHEAD`` compiles before the in-process ones run out, the first worker is
    started in the background; the first compile sent to it finds it started."""
    monkeypatch.setattr(codegen_worker, "_stats", {"in_process": 0, "worker": 0, "workers_started": 0})
    monkeypatch.setenv("PLAIDARRAY_INPROCESS_COMPILES", str(codegen_worker.PRESTART_AHEAD + 2))
    try:
        codegen_worker.generate(_IR, host(), 0)
        assert codegen_worker.stats()["workers_started"] == 0
        codegen_worker.generate(_IR, host(), 0)  # the second: PRESTART_AHEAD before the last in-process one
        assert codegen_worker.stats()["workers_started"] == 1
        starting = codegen_worker._workers["starting"]
        for _ in range(codegen_worker.PRESTART_AHEAD + 1):  # the last in-process ones, then one in the worker
            codegen_worker.generate(_IR, host(), 0)
        assert codegen_worker.stats() == {"in_process": codegen_worker.PRESTART_AHEAD + 2, "worker": 1,
                                          "workers_started": 1}
        assert codegen_worker._workers["serving"] is starting
    finally:
        codegen_worker.shutdown()
