"""Running compiled code on several cores.

An executable calls its kernels (loop nests) one after the other; a kernel runs its
chunkable loop (the outermost ``parallel`` loop whose iterations are independent, see
``linalg_to_loops.PARALLEL_LOOP``) over the range it is given. For each large kernel
the executable splits that loop into contiguous
chunks, ``CHUNKS_PER_THREAD`` per thread, which the calling thread and pool threads take
in turn from a shared counter until none is left (OpenMP's dynamic schedule): the cores
of a shared machine run at different speeds from moment to moment, and a helper thread
starts tens of microseconds late, so one equal chunk per thread would leave the whole
kernel waiting for the slowest. Where the chunked loop is not the nest's outermost (a
reduction over rows into a row of results: ``sum(x, axis=0)``), a chunk is a strided
walk, a few kilobytes of each row, on which the hardware prefetcher restarts at every
row; there each thread takes one wide chunk (sum over axis 0 of a 4096x4096 float64
array, old and new rule interleaved in one process: 7.5-8.2 -> 6.0-7.7 ms). ctypes
releases the GIL for the duration of a foreign call, so the chunks run in parallel.
Kernels run in order, each finishing before the next starts, because a kernel reads what
earlier ones wrote.

Chunks never change how an element is computed (a reduction's order along its own
axes does not depend on the chunked loop), so results are identical for any number
of threads.

Interrupts: a signal's exception (Ctrl-C's KeyboardInterrupt, a timeout's alarm) is
raised in the calling thread, between its chunks or while it waits for the pool's. Pool
threads write into the run's buffers, which go back to the buffer pool (and to the next
computation) once the exception propagates, so the exception propagates only after every
chunk started has ended, however many more arrive meanwhile; no chunk or step starts after
it (``pool.py`` says how the wait survives any number of signals). A signal pending when
the wait is called raises at the call, before the wait's own code runs (CPython runs
handlers at a function's entry): each caller calls it in a loop that waits again when what
it raised came before the tasks ended (``pool.ended``), then raises that. A run that writes into
a caller's buffer (an in-place update of a donated one) must never be left half done: all
of its steps run on a pool thread, and an interrupt is raised once they have all run (or,
arriving before they started, once they never will).

``PLAIDARRAY_NUM_THREADS`` sets the number of threads (default: the cores this
process may run on); segments with fewer than ``MIN_PARALLEL_WORK`` iterations run on
the calling thread, where a thread hand-off would cost more than it saves.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from ... import config
from . import pool
from ..llvm.kernel_source import Segment

#: Iterations of a loop nest below which it runs on one thread; no chunk is smaller.
MIN_PARALLEL_WORK = 1 << 16
#: Chunks of a large loop per thread (see the module docstring).
CHUNKS_PER_THREAD = 4

def num_threads() -> int:
    """The number of threads kernels run on: ``PLAIDARRAY_NUM_THREADS``, else
    ``OMP_NUM_THREADS``, else the number of cores available to this process.

    ``OMP_NUM_THREADS`` is how a host that runs several tasks at once tells the libraries
    in each how many threads they may use (BLAS and OpenMP read it): a Dask worker process
    sets it to 1 because its own threads run one task each, so kernels of plaidarray
    running in those tasks do not multiply the worker's threads by the number of cores."""
    return config.get("PLAIDARRAY_NUM_THREADS")


def chunks(extent: int, parts: int) -> list[tuple[int, int]]:
    """``[0, extent)`` as ``parts`` contiguous ranges of nearly equal length."""
    return [(extent * i // parts, extent * (i + 1) // parts) for i in range(parts)]


def _parts(segment: Segment, threads: int) -> int:
    """Chunks of a segment of an executable (whose sizes are bound: ints)."""
    per_thread = 1 if segment.depth else CHUNKS_PER_THREAD
    return min(threads * per_thread, cast(int, segment.extent), cast(int, segment.work) // MIN_PARALLEL_WORK)


def worth_splitting(segments: Sequence[Segment]) -> bool:
    """Whether any segment is large enough to run on several threads."""
    return any(splits(s.extent, s.work) for s in segments)  # type: ignore[arg-type]


def splits(extent: int, work: int) -> bool:
    """Whether a segment of this extent and work runs on several threads: ``_parts(s, 2) > 1``,
    as its bounds say it (a binding asks at every new size)."""
    return extent > 1 and work >= split_work()


def split_work() -> int:
    """The least work of a segment that ``splits`` (of an extent above 1): a runner's code
    tests its ranges against it (``_entry.sizes``, ``ShapeGenericExecutable.runner``)."""
    return 2 * MIN_PARALLEL_WORK


class _Run:
    """One run of steps on ``threads`` threads; ``stopped`` once the calling thread is
    interrupted, after which no chunk or step starts."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self.stopped = False

    def steps(self, calls: Sequence[tuple[Callable[[int, int], None], Segment]]) -> None:
        for call, segment in calls:
            if self.stopped:
                return
            parts = _parts(segment, self.threads) if self.threads > 1 else 1
            if parts < 2:
                call(0, cast(int, segment.extent))
            else:
                self._split(call, chunks(cast(int, segment.extent), parts))

    def _split(self, call: Callable[[int, int], None], pieces: list[tuple[int, int]]) -> None:
        """Run ``pieces`` on this thread and pool threads; return (or raise) only once
        every chunk that started has ended."""
        # next() on the shared counter is atomic under the GIL
        take = functools.partial(self._take_chunks, call, itertools.count(), pieces)
        tasks: list[pool.Task] = []
        try:
            for _ in range(min(self.threads, len(pieces)) - 1):
                pool.submit(tasks, take)
            take()
        except BaseException:
            self.stopped = True
            raise
        finally:
            pending: list[BaseException] = []
            while True:
                try:
                    pool.wait_through(tasks, claim=True)
                    break
                except BaseException as error:
                    if pool.ended(tasks):  # raised after the wait: the run's own or an interrupt's
                        raise
                    self.stopped = True
                    pending.append(error)  # raised on the way into the wait: wait again
            if pending:
                raise pending[0]

    def _take_chunks(self, call: Callable[[int, int], None], taken: Iterator[int],
                     pieces: Sequence[tuple[int, int]]) -> None:
        """Run chunks of a step, the next one not taken each time, until none is left."""
        for i in taken:
            if i >= len(pieces) or self.stopped:
                return
            call(*pieces[i])


def run(calls: Sequence[tuple[Callable[[int, int], None], Segment]], complete: bool = False) -> None:
    """Make each call ``call(start, stop)`` in order over its segment's chunkable range,
    splitting large ones across threads. ``complete``: the run writes into a caller's
    buffer, so it runs to its end even when interrupted (see the module docstring)."""
    steps = _Run(num_threads())
    if not complete:
        steps.steps(calls)
        return
    tasks: list[pool.Task] = []
    submitted = False
    try:
        pool.submit(tasks, functools.partial(steps.steps, calls))
        submitted = True
    finally:  # interrupted before it was queued for sure: it never starts (claimed)
        pending: list[BaseException] = []
        while True:
            try:
                pool.wait_through(tasks, claim=not submitted)
                break
            except BaseException as error:
                if pool.ended(tasks):  # raised after the wait: the run's own or an interrupt's
                    raise
                pending.append(error)  # raised on the way into the wait: wait again
        if pending:
            raise pending[0]
