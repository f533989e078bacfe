"""Where code is generated, for any LLVM backend's target: in this process for its first
compiles, then in a code generator process (``codegen.py`` run as a script), so that a
long-running program compiling thousands of signatures keeps a flat resident set.

llvmlite 0.50 leaks about 80 KB per run of LLVM's optimisation pipeline
(docs/reliability.md, "Memory"). Most programs compile a few dozen signatures; they
never start a process. ``PRESTART_AHEAD`` compiles before the
``PLAIDARRAY_INPROCESS_COMPILES``-th (default 64, so at most about 5 MB leaked here) a
worker is started in the background (it imports only llvmlite: well under 0.1 s, which
the compile that first needed it used to wait for), and every compile past that count is
sent to it. A
worker is retired after ``RECYCLE_AFTER`` compiles, the leak going with it: its
successor starts then, in the background, and the old worker serves until the new one
is ready. Workers exit when their input ends, so also when this process dies.

A worker that dies mid-compile (LLVM aborting, say) fails that compile with a
RuntimeError instead of taking this process with it; the next compile starts another.
One found dead when a compile comes (killed while idle) is replaced first. A compile interrupted while its worker works on it
(KeyboardInterrupt, or any exception) leaves that worker's answer unread: the worker is
out of step with its pipes, so it is killed at once, and the next compile starts another.
After ``os.fork`` the child starts workers of its own: it must not share pipes with its
parent's.
"""

from __future__ import annotations

import atexit
import os
import select
import subprocess
import sys
import threading
from collections.abc import Sequence
from typing import IO, cast

from ... import config
from . import codegen
from .codegen import Product
from .target import Target

#: LLVM IR larger than this (characters) is always compiled in a worker, whose address
#: space is capped (``PLAIDARRAY_CODEGEN_MAX_BYTES``): LLVM's memory grows with a module,
#: and one huge module must fail its compile with an error, not take the process (or the
#: machine) with it. Kernels of eager code are a few kilobytes to a few hundred.
IN_PROCESS_MAX_IR = 4 << 20
#: Compiles a worker serves before it is retired (its leak: about 16 MB).
RECYCLE_AFTER = 200
#: How many compiles before the first one sent to a worker that worker is started.
PRESTART_AHEAD = 16
#: Seconds to wait for a worker's ``ready`` before giving up on it.
START_TIMEOUT = 30.0

#: Guards the counts of compiles and workers (and the choice of where a compile goes).
_lock = threading.Lock()
_stats = {"in_process": 0, "worker": 0, "workers_started": 0}


def max_bytes() -> int:
    """The address space a worker may use (``PLAIDARRAY_CODEGEN_MAX_BYTES``; default half
    the machine's memory; 0: no cap)."""
    return config.get("PLAIDARRAY_CODEGEN_MAX_BYTES")


def inprocess_compiles() -> int:
    """How many compiles ``PLAIDARRAY_INPROCESS_COMPILES`` leaves in this process."""
    return config.get("PLAIDARRAY_INPROCESS_COMPILES")


class _Worker:
    """One code generator process and the pipes to it."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        self.compiles = 0
        self.ready = False
        #: From a request's first byte sent to its answer's last byte read: a worker
        #: still busy when the next compile comes was interrupted, and is ended.
        self.busy = False
        # PYTHONSAFEPATH (3.11+): the script's directory, this package's, is not put on
        # the worker's import path, where a module of ours could shadow one llvmlite uses.
        self.process = subprocess.Popen([sys.executable, codegen.__file__], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE,
                                        env={**os.environ, "PYTHONSAFEPATH": "1",
                                             codegen.MAX_BYTES_VARIABLE: str(max_bytes())})
        # Pipes, as asked for above.
        self.requests, self.answers = cast(IO[bytes], self.process.stdin), cast(IO[bytes], self.process.stdout)
        with _lock:  # the two pools start workers independently
            _stats["workers_started"] += 1

    def wait_ready(self, timeout: float) -> bool:
        """Whether the worker has said ``ready`` (waiting up to ``timeout`` seconds)."""
        if not self.ready and select.select([self.answers], [], [], timeout)[0]:
            frame = codegen.read_frame(self.answers)
            if frame != [b"ready"]:
                raise RuntimeError(f"the code generator process failed to start "
                                   f"(exit code {self.process.poll()}; its message is on stderr)")
            self.ready = True
        return self.ready

    def generate(self, texts: Sequence[str], target: Target, level: int, listings: bool,
                 emit_level: int) -> Product:
        self.compiles += 1
        self.busy = True
        try:
            codegen.write_frame(self.requests, b"generate", target.name.encode(), target.triple.encode(),
                                target.cpu.encode(), target.features.encode(), target.code_model.encode(),
                                str(level).encode(), b"1" if listings else b"0", str(emit_level).encode(),
                                *(t.encode() for t in texts))
            answer = codegen.read_frame(self.answers)
        except (BrokenPipeError, OSError):
            answer = None
        if answer is None:
            raise RuntimeError(f"the code generator process died while compiling (exit code "
                               f"{self.process.wait()}; LLVM's message, if any, is on stderr; a module "
                               f"needing more than PLAIDARRAY_CODEGEN_MAX_BYTES={max_bytes()} also ends so)")
        self.busy = False
        if answer[0] == b"error":
            raise RuntimeError(answer[1].decode())
        return Product(answer[1], answer[2].decode(), answer[3].decode())

    @property
    def usable(self) -> bool:
        """Whether the worker can take a request: alive, and not out of step with its pipes."""
        return not self.busy and self.process.poll() is None

    def close(self) -> None:
        """End the worker: it exits when its input closes."""
        if self.owner != os.getpid():
            return  # the parent's worker, inherited through fork: not ours to end
        if self.busy:  # interrupted while it compiled: its work is nobody's
            self.process.kill()
        for pipe in (self.requests, self.answers):
            try:
                pipe.close()
            except OSError:  # a dead worker's unsent bytes
                pass
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class _Pool:
    """Workers serving one stream of compiles, one request at a time: the serving worker,
    and its successor while one starts (a worker is retired after ``RECYCLE_AFTER``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.workers: dict[str, _Worker | None] = {"serving": None, "starting": None}

    def generate(self, texts: Sequence[str], target: Target, level: int, listings: bool, emit_level: int) -> Product:
        with self.lock:
            worker = self._serving()
            try:
                product = worker.generate(texts, target, level, listings, emit_level)
            except BaseException:
                if not worker.usable:  # died compiling, or interrupted: out of step with its pipes
                    self.retire("serving")
                raise
            with _lock:
                _stats["worker"] += 1
            return product

    def _serving(self) -> _Worker:
        """The worker to send the next compile to, started (and waited for) if need be."""
        workers = self.workers
        for role, worker in workers.items():
            if worker is not None and worker.owner != os.getpid():
                workers[role] = None
        starting = workers["starting"]
        if starting is not None:
            try:
                ready = starting.wait_ready(0)
            except RuntimeError:  # the successor died starting: the serving worker goes on
                self.retire("starting")
                ready = False
            if ready:
                self.retire("serving")
                workers["serving"], workers["starting"] = starting, None
        serving = workers["serving"]
        if serving is not None and not serving.usable:  # killed while idle, or left out of step
            self.retire("serving")
            serving = None
        if serving is None:
            serving, workers["starting"] = workers["starting"] or _Worker(), None
            workers["serving"] = serving
        elif serving.compiles >= RECYCLE_AFTER and workers["starting"] is None:
            workers["starting"] = _Worker()
        if not serving.wait_ready(START_TIMEOUT):  # at once if it is ready
            self.retire("serving")
            raise RuntimeError(f"the code generator process did not start in {START_TIMEOUT:.0f} s")
        return serving

    def prestart(self) -> None:
        """Start the first worker now, so that it is ready when compiles come."""
        with self.lock:
            workers = self.workers
            if all(w is None or w.owner != os.getpid() for w in workers.values()):
                workers["serving"], workers["starting"] = None, _Worker()

    def retire(self, role: str) -> None:
        worker, self.workers[role] = self.workers[role], None
        if worker is not None:
            worker.close()

    def shutdown(self) -> None:
        with self.lock:
            for role in list(self.workers):
                self.retire(role)


#: The program's own compiles past the first ones, and background compiles (llvm-cpu's full
#: code, ``tiering.py``): two pools, so that a compile the program waits for never queues behind
#: an upgrade (one worker serving both made such compiles wait 0.1 s each, measured).
_FOREGROUND, _BACKGROUND = _Pool(), _Pool()
_workers = _FOREGROUND.workers


def generate(texts: str | Sequence[str], target: Target, level: int, listings: bool = False,
             emit_level: int | None = None) -> Product:
    """Object code (and with ``listings`` optimised IR and assembly) of LLVM IR texts,
    linked into one module, for ``target`` at ``level`` (machine code emitted at
    ``emit_level``, default ``level``): here for the first compiles of the process, then
    (and for large modules always) in a worker."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    emit_level = level if emit_level is None else emit_level
    limit = inprocess_compiles()
    with _lock:
        here = _stats["in_process"] < limit and sum(map(len, texts)) <= IN_PROCESS_MAX_IR
        if here:
            _stats["in_process"] += 1
        prestart = here and _stats["in_process"] == max(limit - PRESTART_AHEAD, 1)
    if prestart:
        _FOREGROUND.prestart()
    if here:
        return generate_here(texts, target, level, listings, emit_level)
    return generate_in_worker(texts, target, level, listings, emit_level)


def generate_here(texts: str | Sequence[str], target: Target, level: int, listings: bool = False,
                  emit_level: int | None = None) -> Product:
    """:func:`codegen.generate` in this process, holding the LLVM lock."""
    with codegen.LLVM_LOCK:
        return codegen.generate(texts, target, level, listings, emit_level)


def generate_in_worker(texts: str | Sequence[str], target: Target, level: int, listings: bool = False,
                       emit_level: int | None = None, background: bool = False) -> Product:
    """:func:`generate` in a worker whatever the counts; ``background`` compiles (llvm-cpu's
    full code, ``tiering.py``) have workers of their own."""
    texts = [texts] if isinstance(texts, str) else list(texts)
    pool = _BACKGROUND if background else _FOREGROUND
    return pool.generate(texts, target, level, listings, level if emit_level is None else emit_level)


def stats() -> dict[str, int]:
    """Compiles done in this process and in workers, and workers started."""
    with _lock:
        return dict(_stats)


@atexit.register
def shutdown() -> None:
    """End every worker (at exit, or for a test)."""
    for pool in (_FOREGROUND, _BACKGROUND):
        pool.shutdown()
