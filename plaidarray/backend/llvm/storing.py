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

import functools
from collections.abc import Callable

from ..background import BackgroundQueue
from . import object_cache

#: Stores queued at most; a compile submitting one more waits for the oldest.
PENDING_JOBS = 16

_QUEUE = BackgroundQueue("plaidarray-store", "storing compiled code failed", PENDING_JOBS, finish_at_exit=True)


def _stored(job: Callable[[], None], held: object_cache.Locks) -> None:
    try:
        job()
    finally:
        held.release()


def store_later(job: Callable[[], None], held: object_cache.Locks) -> None:
    """Run ``job`` (storing what a compile made) on the background thread, then release ``held``."""
    if not object_cache.enabled():
        held.release()
        return
    try:
        _QUEUE.submit(functools.partial(_stored, job, held))
    except BaseException:  # interrupted while the queue was full: the job is dropped, its locks too
        held.release()
        raise


#: Wait until every store submitted so far is done (the cache then holds what was compiled).
drain = _QUEUE.drain
