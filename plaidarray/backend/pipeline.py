"""A compiler as a declared list of named stages (XLA's pass pipeline, xDSL's
``PassPipeline``): each stage reads and updates one state object; the runner times every
stage and, under ``PLAIDARRAY_DUMP``, writes what a stage asks to show after it and the
timings of the whole run (``<module>.timings.txt``)."""

from __future__ import annotations

import contextlib
import gc
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from . import dump

#: A stage's state: a stage written for a state type runs on its subtypes too (the stages
#: LLVM backends share, ``llvm/lowering.py``, on each backend's own compilation).
S = TypeVar("S", contravariant=True)
T = TypeVar("T")


@dataclass(frozen=True)
class Stage(Generic[S]):
    """One named step. ``show`` gives the text dumped after it as ``<module>.<suffix>``."""

    name: str
    run: Callable[[S], None]
    show: Callable[[S], str] | None = None
    suffix: str = ""


def run_stages(stages: Sequence[Stage[T]], state: T, module_name: str, timings: dict[str, float]) -> None:
    """Run ``stages`` in order on ``state``, adding each one's seconds to ``timings``.
    Python's cyclic garbage collector waits meanwhile (``collector_paused``)."""
    dumping = dump.dump_dir() is not None
    with collector_paused():
        for stage in stages:
            start = time.perf_counter()
            stage.run(state)
            timings[stage.name] = timings.get(stage.name, 0.0) + time.perf_counter() - start
            if dumping and stage.show is not None:
                dump.dump(module_name, stage.suffix, stage.show(state))


#: [compiles holding the collector paused, whether it was enabled when the first began].
_pause = [0, False]
_pause_lock = threading.Lock()


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a compile builds its IR: it makes tens of
    thousands of objects (xDSL operations, llvmlite values), and each batch of them started
    a collection that walked the whole heap, a tenth of a compile (k-means' graphs: 308 ->
    271 ms). Their cycles are collected afterwards. Compiles on several threads at once
    pause it once, and the last to finish restores it as it found it."""
    with _pause_lock:
        if _pause[0] == 0:
            _pause[1] = gc.isenabled()
            gc.disable()
        _pause[0] += 1
    try:
        yield
    finally:
        with _pause_lock:
            _pause[0] -= 1
            if _pause[0] == 0 and _pause[1]:
                gc.enable()


def dump_timings(module_name: str, timings: dict[str, float]) -> None:
    """``<module>.timings.txt``: one line per stage, in milliseconds, and the total. A name
    with a ``/`` is a part of the stage before the ``/`` (an HLO pass), not in the total."""
    if dump.dump_dir() is None:
        return
    rows = [f"{name:<32} {seconds * 1e3:9.3f} ms" for name, seconds in timings.items()]
    total = sum(seconds for name, seconds in timings.items() if "/" not in name)
    rows.append(f"{'total':<32} {total * 1e3:9.3f} ms")
    dump.dump(module_name, "timings.txt", "\n".join(rows) + "\n")
