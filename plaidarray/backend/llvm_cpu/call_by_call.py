"""A graph's op kernels run call by call until the graph runs again, then merged.

The baseline tier runs a graph met for the first time on its ops' kernels at its sizes
(``Compiler.generic_sequence`` with no symbol of its own, ``trace/baseline.py``). Most such
graphs run once: a script's read of an expression it never read before. Merging their
kernels into one executable (``sequence.py``) cost ~70 us for a graph of two ops, a third
of its first read, to save ~1 us a call on later runs that most never have. Here each call
runs on its kernel's runner (``ShapeGenericExecutable.runner``: its sizes evaluated in C),
~2-3 us a call; a graph that runs again is merged then, and runs as one executable from
then on (prepared by ``BaselineExecutable`` after that run, as before).
Both run the same kernels on the same values: the same bits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from ...hlo.shape import Shape
from ..buffer_pool import MIN_POOLED_TEMP_BYTES
from ..executable import Call, Executable
from .executable import CpuExecutable, ShapeGenericExecutable, Step
from .sequence import merge, mergeable


class CallByCall(Executable):
    """``calls`` run one by one over a table of values (the parameters, the constants,
    then each call's results), each value let go after its last use; its results reshaped
    to ``shapes`` (a kernel may run on an operand's axes merged), but a parameter passed
    through, returned as it is (as the merged executable does). ``merged`` makes the
    merged executable, at its second run."""

    def __init__(self, runners: list[Any], calls: Sequence[Call], n_params: int,
                 constants: Sequence[np.ndarray], shapes: Sequence[Shape], outputs: Sequence[int],
                 passes_through: bool, merged: Callable[[], Any]) -> None:
        defined = n_params + len(constants)
        last: dict[int, int] = {}
        for index, call in enumerate(calls):
            for value in (*call.inputs, *call.outputs):
                last[value] = index
        kept = set(outputs)
        self._steps = [(runner, call.inputs, call.outputs,
                        tuple([v for v in dict.fromkeys((*call.inputs, *call.outputs))
                               if v >= defined and last[v] == index and v not in kept]))
                       for index, (runner, call) in enumerate(zip(runners, calls))]
        self._constants = list(constants)
        self._n_values = len(shapes)
        self._results = tuple((v, shapes[v - defined].dims) for v in outputs)
        self._make_merged: Callable[[], Any] | None = merged
        self._merged: CpuExecutable | None = None
        self._ran = False
        #: Whether a result may be a parameter passed through (``passes_through``: a call
        #: whose result is its operand, an op its compile found to be the identity).
        self.returns_parameters = passes_through

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps it runs: each call's in turn, or the merged executable's."""
        if self._merged is not None:
            return self._merged.steps
        return tuple(step for runner, *_ in self._steps for step in runner.steps)

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        merged = self._merged
        if merged is not None:
            return merged.run(buffers)
        if self._ran and self._make_merged is not None:  # it runs again: merged from now on
            merged, self._make_merged = self._make_merged(), None
            if merged is not None:
                self._merged, self._steps = merged, []
                return merged.run(buffers)  # which reads the kernels' addresses ``prepared`` takes
        self._ran = True
        values: list[Any] = [*buffers, *self._constants, *[None] * self._n_values]
        for runner, inputs, outputs, freed in self._steps:
            outs = runner.run([values[i] for i in inputs])
            for value, out in zip(outputs, outs):
                values[value] = out
            for value in freed:
                values[value] = None
        results = []
        for value, dims in self._results:
            out = values[value]
            if out.shape != dims and not (self.returns_parameters and any(out is b for b in buffers)):
                out = out.reshape(dims)
            results.append(out)
        return results

    def prepared(self, timed: Any = None) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """The merged executable's prepared run, once merged."""
        return self._merged.prepared(timed) if self._merged is not None else None


def call_by_call(calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray], shapes: Sequence[Shape],
                 outputs: Sequence[int]) -> CallByCall | None:
    """``calls`` (each an op kernel, shape-generic with its sizes as numbers, or bound to
    them) as a ``CallByCall``; None where its values are not all small (``merge``'s then:
    a merged sequence's temporaries of ``MIN_POOLED_TEMP_BYTES`` or more come from the
    buffer pool, where a call's results are its own; checked for memory before its run,
    naming a buffer of the graph's shapes; and running them costs more than merging),
    where ``merge`` would make none (``mergeable``), or where a size is past a library
    call's limit."""
    if any(math.prod(shape.dims) * shape.dtype.itemsize >= MIN_POOLED_TEMP_BYTES for shape in shapes):
        return None
    taken = mergeable(calls, n_params, len(constants), outputs)
    if taken is None:
        return None
    runners: list[Any] = []  # bound kernels and ``ShapeGenericExecutable.runner``'s, each with its steps
    for part, call in zip(taken[0], calls):
        runner = part.runner(cast("tuple[int, ...]", call.symbols)) if type(part) is ShapeGenericExecutable else part
        if runner is None:  # a size past a library call's limit
            return None
        runners.append(runner)
    return CallByCall(runners, calls, n_params, constants, shapes, outputs, bool(taken[1]),
                      functools.partial(merge, calls, n_params, constants, shapes, outputs))
