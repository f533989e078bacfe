"""A background thread that runs jobs in the order they come: the compiles a program
does not wait for (full code, ``llvm_cpu/tiering.py``; fused code of hot graphs,
``trace/hot.py``).

The thread starts on first use in each process (a forked child starts its own). At exit
the jobs not started are dropped and the one running is waited for: LLVM must not be
inside a compile while the interpreter shuts down, and what was dropped is only speed (the
code it would have made is made again when needed). A job that fails is logged; it
only ever makes something faster, so the program goes on without it.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
from collections.abc import Callable

_log = logging.getLogger("plaidarray.compiles")

#: Whether this thread is one of the queues' threads (``on_background_thread``).
_here = threading.local()


def on_background_thread() -> bool:
    """Whether the calling thread runs a queue's jobs: nobody waits for what it compiles,
    so compilers make full code at once there, not first-tier code (``tiering.py``)."""
    return getattr(_here, "background", False)


class BackgroundQueue:
    """Jobs run one at a time on a thread named ``name``; ``failed`` prefixes the warning
    logged when one raises. With a ``bound``, a submit waits while that many jobs are
    queued; ``finish_at_exit`` runs the queued jobs at exit instead of dropping them
    (stores, whose locks other processes wait for)."""

    def __init__(self, name: str, failed: str, bound: int = 0, finish_at_exit: bool = False) -> None:
        self._name = name
        self._failed = failed
        self._bound = bound
        self._lock = threading.Lock()
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(bound)
        self._thread: threading.Thread | None = None
        self._owner = 0
        atexit.register(self.drain if finish_at_exit else self.stop)

    def submit(self, job: Callable[[], None]) -> None:
        """Queue ``job``; waiting for room (a bounded queue) happens outside the lock, so a
        ``drain`` meanwhile is not held up."""
        with self._lock:
            if self._thread is None or self._owner != os.getpid():  # a forked child starts its own
                self._jobs = queue.Queue(self._bound)
                self._thread = threading.Thread(target=self._serve, args=(self._jobs,), name=self._name, daemon=True)
                self._owner = os.getpid()
                self._thread.start()
            jobs = self._jobs
        jobs.put(job)

    def _serve(self, jobs: queue.Queue) -> None:
        _here.background = True
        while (job := jobs.get()) is not None:
            try:
                job()
            except Exception as error:  # noqa: BLE001  a job only makes something faster
                _log.warning("plaidarray: %s: %s", self._failed, error)
            finally:
                jobs.task_done()

    def drain(self) -> None:
        """Wait until every job submitted so far is done."""
        with self._lock:
            jobs = self._jobs if self._thread is not None and self._owner == os.getpid() else None
        if jobs is not None:
            jobs.join()

    def stop(self) -> None:
        """Drop the jobs not started and wait for the one running (at exit)."""
        with self._lock:
            thread, jobs = self._thread, self._jobs
            self._thread = None
        if thread is None or self._owner != os.getpid():
            return
        try:
            while True:
                jobs.get_nowait()
                jobs.task_done()
        except queue.Empty:
            pass
        jobs.put(None)
        thread.join()
