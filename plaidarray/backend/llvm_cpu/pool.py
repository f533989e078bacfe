"""Pool threads for kernels' chunks, and a wait for them that a signal cannot break.

A signal's Python handler (Ctrl-C's KeyboardInterrupt, a timeout's alarm) runs in the
main thread and raises there at almost any point: at a call or at a jump back to a
loop's start. Python-level locking is not safe against that. ``threading.Condition.wait``
(behind ``concurrent.futures.wait`` and ``Future.result``) interrupted inside its own
``finally`` leaves its lock released and raises ``RuntimeError: release unlocked lock``
instead of the interrupt; ``ThreadPoolExecutor.submit`` takes a ``Semaphore`` whose
Python-level ``__exit__`` can be interrupted before it releases, and the next submit
waits forever. So the calling thread here touches only C-level objects: it puts a
task on a ``queue.SimpleQueue``, starts a thread with ``_thread.start_new_thread``
(which, unlike ``Thread.start``, waits for nothing), and waits on bare locks, trusting
flags that pool threads set before they release them, never what an acquire returned.

A task not yet started may be claimed by its waiter (``Task.claim``): it then never
runs. Chunks of a step are taken from a shared counter, so once the calling thread has
run out of chunks a queued task has nothing left to do, and claiming it means no
thread waits on a task queued behind busy pool threads (a run on a pool thread splits
its own steps). A task whose submission an interrupt cut short is claimed the same way.
"""

from __future__ import annotations

import _thread
import os
import queue
import threading
from collections.abc import Callable, Sequence

#: A bound on pool threads: a task starts one only when it finds none idle.
MAX_THREADS = 256


class Task:
    """Work for a pool thread. ``done`` is set before ``wakeup`` (held from the start) is
    released; ``claim`` is taken by whichever of the pool thread and the waiter comes
    first, and the work runs only if the pool thread took it."""

    def __init__(self, work: Callable[[], None]) -> None:
        self.work = work
        self.done = False
        self.error: BaseException | None = None
        self.wakeup = threading.Lock()
        self.wakeup.acquire()
        self.claim = threading.Lock()

    def run(self) -> None:
        """Run on a pool thread (where no signal handler runs)."""
        if self.claim.acquire(blocking=False):
            try:
                self.work()
            except BaseException as error:
                self.error = error
        self.done = True
        self.wakeup.release()


class _Pool:
    """Threads taking tasks from one queue, started as tasks find none idle."""

    def __init__(self) -> None:
        self.tasks: queue.SimpleQueue[Task] = queue.SimpleQueue()
        self.threads = 0
        self.idle = 0
        self._count = threading.Lock()  # taken on pool threads only

    def put(self, task: Task) -> None:
        self.tasks.put(task)
        # unlocked reads: a race starts one thread too many, or leaves a task queued a
        # little longer (its waiter claims it once it has nothing else to do)
        if self.idle == 0 and self.threads < MAX_THREADS:
            _thread.start_new_thread(self._serve, ())  # a RuntimeError where none can start
            self.threads += 1

    def _serve(self) -> None:
        while True:
            with self._count:
                self.idle += 1
            task = self.tasks.get()
            with self._count:
                self.idle -= 1
            task.run()


_pool = _Pool()


def _forget_threads() -> None:
    """A forked child has none of its parent's pool threads."""
    global _pool
    _pool = _Pool()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_threads)


def submit(tasks: list[Task], work: Callable[[], None]) -> None:
    """Queue ``work`` for a pool thread, listed in ``tasks`` first, so that an interrupt
    between the two leaves it where the waiter claims it."""
    task = Task(work)
    tasks.append(task)
    _pool.put(task)


def wait_through(tasks: Sequence[Task], claim: bool) -> None:
    """Wait until ``tasks`` have ended, whatever is raised in this thread meanwhile (a
    signal's exception), then raise a task's own exception, or else the first one raised
    here. ``claim``: tasks not yet started never start (they would have nothing to do);
    otherwise only once an exception has been raised here.

    A signal's exception raised at the inner loop's jump back, outside the inner ``try``,
    is caught by the outer one, and the wait resumes (only a third signal within the
    microseconds between the two would escape)."""
    interrupts: list[BaseException] = []
    while True:
        try:
            for task in tasks:
                while not task.done:
                    try:
                        if (claim or interrupts) and task.claim.acquire(blocking=False):
                            task.done = True
                        else:
                            task.wakeup.acquire()
                    except BaseException as error:
                        interrupts.append(error)
            break
        except BaseException as error:
            interrupts.append(error)
    for task in tasks:
        if task.error is not None:
            raise task.error
    if interrupts:
        raise interrupts[0]


def ended(tasks: Sequence[Task]) -> bool:
    """Whether every one of ``tasks`` has ended (or was claimed): whether what
    :func:`wait_through` raised came after its wait, not before it began (see
    ``parallel.py``)."""
    return all(task.done for task in tasks)
