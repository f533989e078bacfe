"""The background thread that writes what compiles made to the persistent cache.

A compiling process runs its kernels from memory at once; linking their shared object
and writing the cache's entries, milliseconds each, happen here (``store_later``), in the
order they were submitted, each job's cross-process locks released once it is done (a
process waiting for them then finds the entries). A process compiling faster than its
entries are written waits once ``PENDING_JOBS`` are queued: each job holds its object
code, so an unbounded queue grew with every compile. At exit the queue is finished: an
entry not stored is compiled again by the next process.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import threading
from collections.abc import Callable

from . import object_cache

#: Stores queued at most; a compile submitting one more waits for the oldest.
PENDING_JOBS = 16


class _Storer:
    """The thread and its queue, started on first use in each process (a forked child
    starts its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: queue.Queue[tuple[Callable[[], None], object_cache.Locks] | None] = queue.Queue(PENDING_JOBS)
        self._thread: threading.Thread | None = None
        self._owner = 0

    def submit(self, job: Callable[[], None], held: object_cache.Locks) -> None:
        if not object_cache.enabled():
            held.release()
            return
        with self._lock:
            if self._thread is None or self._owner != os.getpid():  # a forked child starts its own
                self._jobs = queue.Queue(PENDING_JOBS)
                self._thread = threading.Thread(target=self._serve, args=(self._jobs,),
                                                name="plaidarray-store", daemon=True)
                self._owner = os.getpid()
                self._thread.start()
            jobs = self._jobs
        try:
            jobs.put((job, held))
        except BaseException:  # interrupted while the queue was full: the job is dropped, its locks too
            held.release()
            raise

    @staticmethod
    def _serve(jobs: queue.Queue) -> None:
        while (item := jobs.get()) is not None:
            job, held = item
            try:
                job()
            except Exception as error:  # noqa: BLE001  the code runs from memory; the cache just lacks it
                _log.warning("plaidarray: storing compiled code failed: %s", error)
            finally:
                held.release()
                jobs.task_done()

    def drain(self) -> None:
        """Wait until every job submitted so far is done."""
        with self._lock:
            jobs = self._jobs if self._thread is not None and self._owner == os.getpid() else None
        if jobs is not None:
            jobs.join()


_log = logging.getLogger("plaidarray.compiles")
_STORER = _Storer()
atexit.register(_STORER.drain)

#: Run ``job`` (storing what a compile made) on the background thread, then release ``held``.
store_later = _STORER.submit
#: Wait until every store submitted so far is done (the cache then holds what was compiled).
drain = _STORER.drain
