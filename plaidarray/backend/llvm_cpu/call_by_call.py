"""A graph's op kernels run call by call, merged into one executable once it runs often.

The baseline tier runs a graph met for the first time on its ops' kernels at its sizes
(``Compiler.generic_sequence`` with no symbol of its own, ``trace/baseline.py``). Most such
graphs run once or a few times: a script's read of an expression it never read before, and
that script's second run. Merging their kernels into one executable (``sequence.py``)
costs ~50-150 us of Python a graph of one to seven ops, which a script's second run of 20
API calls each met once paid for each (2.9 ms against NumPy's 0.12, the merges 1.6 ms).
Here each call runs on its kernel bound to its sizes in C (``_bound``: an ``_entry.Bound``,
whose run makes its buffers and runs the kernel, first-tier code timed for its upgrade, from
C), where binding each to a runner (``ShapeGenericExecutable.runner``) and preparing its run
(``_entry.Prepared``) cost ~20 us a call of a new graph's first read; a call whose sizes need
the runner's Python (steps run in chunks, a parameter passed through, an FFT's plan) runs on
its runner's prepared run. All of them run in turn from one C object (``_entry.Chain``,
which its ``BaselineExecutable`` takes at its making) from its first run, ~0.5 us a call
slower than the merged executable's run. A script's second run thus pays no Python for each call
of each graph it met once: two new graphs of ~5 small ops each read a second time took
~50 us, ~110 where their calls ran from Python at the first two runs. A graph is merged at
its chain's ``MERGED_AFTER``-th run, when it is likely to run many more. A graph some call of
which has no prepared run (a runner's first-tier code compiled in this process, which its
Python run times; a build without ``_entry``) runs from Python, and is chained or merged
after its second run (new code may have landed between). All of them run the same kernels
on the same values: the same bits.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, cast

import numpy as np

from ...hlo.shape import Shape
from ..buffer_pool import MIN_POOLED_TEMP_BYTES
from ..cache import EXECUTABLES
from ..executable import Call, Executable
from .executable import _ENTRY, CpuExecutable, ShapeGenericExecutable, Step
from .sequence import merge, mergeable, results_taken

#: A template's run bound to sizes in C (``_bound``), whose ``run`` is its prepared run.
_BOUND = _ENTRY.Bound if _ENTRY is not None else None


#: The run of a chain (``_entry.Chain``) at which its graph is merged. A chained run costs
#: ~0.5 us a call more than the merged executable's (8-9% of a small read), a merge ~20 us a
#: call: a graph read this often is most often in a loop that reads it many more times, and
#: its 16 chained runs cost it less than half its merge; a script's second run of API calls
#: each met once merges nothing.
MERGED_AFTER = 16


class CallByCall(Executable):
    """``calls`` run one by one over a table of values (the parameters, the constants,
    then each call's results), each value let go after its last use; its results reshaped
    to ``shapes`` (a kernel may run on an operand's axes merged), but a parameter passed
    through, returned as it is (as the merged executable does). Each call runs on its
    run bound in C or its runner's prepared run where every one has one (``chain``: at its
    making, else after its second run); else, after its second run, ``merged`` makes the
    merged executable, which runs it from then on."""

    def __init__(self, runners: list[Any], calls: Sequence[Call], n_params: int,
                 constants: Sequence[np.ndarray], shapes: Sequence[Shape], outputs: Sequence[int],
                 passes_through: bool, merged: Callable[[], Any], chained: bool = False) -> None:
        defined = n_params + len(constants)
        seen = set(outputs)  # walked from the last call: a value first met is at its last use
        steps = []
        for runner, call in zip(reversed(runners), reversed(calls)):
            freed = []
            for value in (*call.inputs, *call.outputs):
                if value not in seen:
                    seen.add(value)
                    if value >= defined:
                        freed.append(value)
            steps.append((runner.run, call.inputs, call.outputs, tuple(freed)))
        steps.reverse()
        self._runners, self._calls = runners, calls
        self._steps = tuple(steps)
        self._constants = tuple(constants)
        self._n_values = len(shapes)
        self._results = tuple((v, shapes[v - defined].dims) for v in outputs)
        self._make_merged: Callable[[], Any] | None = merged
        self._merged: CpuExecutable | None = None
        self._ran = False
        #: Whether its steps run on their runners' prepared runs (``chain``; at its making,
        #: ``chained``: runs bound in C, which are their own prepared runs).
        self._chained = chained
        #: Whether a result may be a parameter passed through (``passes_through``: a call
        #: whose result is its operand, an op its compile found to be the identity).
        self.returns_parameters = passes_through

    @property
    def prepared_cheaply(self) -> bool:  # type: ignore[override]  # a property over the class attribute
        """Whether its chain (``prepared``) is made of prepared calls already."""
        return self._chained and self._merged is None

    @property
    def steps(self) -> tuple[Step, ...]:
        """The steps it runs: each call's in turn, or the merged executable's."""
        if self._merged is not None:
            return self._merged.steps
        return tuple(step for runner, call in zip(self._runners, self._calls) for step in _steps(runner, call))

    def run(self, buffers: list[np.ndarray]) -> list[np.ndarray]:
        merged = self._merged
        if merged is not None:
            return merged.run(buffers)
        values: list[Any] = [*buffers, *self._constants, *[None] * self._n_values]
        for run, inputs, outputs, freed in self._steps:
            outs = run([values[i] for i in inputs])
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
        if not self._ran:
            self._ran = True
        elif not self._chained and self._make_merged is not None:  # it ran again: chained or merged
            self._chain_or_merge()
        return results

    def _chain_or_merge(self) -> None:
        """After its second run (its runners' addresses read anew, where new code landed
        since the first): its steps on their runners' prepared runs, or, where one has none,
        its merged executable from now on."""
        if not self.chain():
            self._merge()

    def chain(self) -> bool:
        """Whether its steps now run on their runs bound in C or their runners' prepared
        runs: they do where every runner has one (none runs first-tier code, which its
        Python run times)."""
        prepared = [runner.run if type(runner) is _BOUND else runner.prepared() for runner in self._runners]
        if all(p is not None for p in prepared):
            self._steps = tuple((p, *step[1:]) for p, step in zip(prepared, self._steps))
            self._chained = True
            return True
        return False

    def _merge(self) -> CpuExecutable | None:
        """Its merged executable, which runs it from now on; None where ``merge`` makes none
        or it was made already (once: another thread's run may have taken it)."""
        make, self._make_merged = self._make_merged, None
        merged = make() if make is not None else None
        if merged is not None:
            self._merged, self._steps, self._runners, self._calls = merged, (), [], ()
        return merged

    def prepared(self, timed: Any = None) -> Callable[[list[np.ndarray]], list[np.ndarray]] | None:
        """Its run as one C object: its prepared calls in turn (``_entry.Chain``), or the
        merged executable's prepared run."""
        if self._merged is not None:
            return self._merged.prepared(timed)
        if not self._chained or _ENTRY is None:
            return None
        return _ENTRY.Chain(self._steps, self._constants, self._n_values, self._results, self.returns_parameters,
                            timed, MERGED_AFTER, functools.partial(self._merged_run, timed))

    def _merged_run(self, timed: Any, buffers: list[np.ndarray]) -> tuple[list[np.ndarray], Any]:
        """A chain's run at ``MERGED_AFTER``: the merged executable's first run and its
        prepared run timed as the chain's, which runs the graph from then on (else this
        run, and None: the chain goes on)."""
        merged = self._merge()
        if merged is None:
            return self.run(buffers), None
        return merged.run(buffers), merged.prepared(timed)


def call_by_call(calls: Sequence[Call], n_params: int, constants: Sequence[np.ndarray], shapes: Sequence[Shape],
                 outputs: Sequence[int]) -> CallByCall | None:
    """``calls`` (each an op kernel, shape-generic with its sizes as numbers, or bound to
    them) as a ``CallByCall``; None where its values are not all small (``merge``'s then:
    a merged sequence's temporaries of ``MIN_POOLED_TEMP_BYTES`` or more come from the
    buffer pool, where a call's results are its own; checked for memory before its run,
    naming a buffer of the graph's shapes; and running them costs more than merging),
    where ``merge`` would make none (``mergeable``), or where a size is past a library
    call's limit. Calls whose kernels at these sizes were all bound before (``_RUNS``)
    are chained at once, without ``mergeable``'s walk: a run bound in C is of a template
    that ``merge`` takes at numbers as sizes, which returns no parameter."""
    if any(math.prod(shape.dims) * shape.dtype.itemsize >= MIN_POOLED_TEMP_BYTES for shape in shapes):
        return None
    merged = functools.partial(merge, calls, n_params, constants, shapes, outputs)
    known = _runs_bound_before(calls)
    if known is not None:
        if not results_taken(outputs, n_params, len(constants)):
            return None
        return CallByCall(known, calls, n_params, constants, shapes, outputs, False, merged, chained=True)
    taken = mergeable(calls, n_params, len(constants), outputs)
    if taken is None:
        return None
    runners: list[Any] = []  # bound kernels, templates' runs bound in C and ``ShapeGenericExecutable.runner``'s
    for part, call in zip(taken[0], calls):
        runner = _bound(cast(ShapeGenericExecutable, part), cast("tuple[int, ...]", call.symbols)) \
            if type(part) is ShapeGenericExecutable else part
        if runner is None:  # a size past a library call's limit
            return None
        runners.append(runner)
    made = CallByCall(runners, calls, n_params, constants, shapes, outputs, bool(taken[1]), merged)
    made.chain()
    return made


#: Templates' runs bound in C (``_entry.Bound``) by the template and a call's sizes: a
#: script's new graphs are mostly ops met in other graphs at the same sizes (the same
#: arrays read in other expressions), whose bindings were a fifth of a new graph's
#: assembly. A bound run holds nothing of a graph: each run makes its own buffers and
#: reads the kernels' addresses of now. Emptied at ``KEPT_RUNS`` and with the cache.
_RUNS: dict[tuple[Executable, tuple], Any] = {}
KEPT_RUNS = 4096
EXECUTABLES.on_clear.append(_RUNS.clear)  # the templates' code goes with the cache's


def _runs_bound_before(calls: Sequence[Call]) -> list[Any] | None:
    """Each call's run bound in C before (``_RUNS``), or None where one has none."""
    runs = []
    for call in calls:
        found = _RUNS.get((call.executable, call.symbols))  # any other executable: not found
        if found is None:
            return None
        runs.append(found)
    return runs


def _steps(runner: Any, call: Call) -> tuple[Step, ...]:
    """A call's steps: its runner's, or, bound in C, those of its template's runner at its sizes."""
    if type(runner) is _BOUND:
        runner = cast(ShapeGenericExecutable, call.executable).runner(cast("tuple[int, ...]", call.symbols))
    return runner.steps


def _bound(template: ShapeGenericExecutable, symbols: tuple[int, ...]) -> Any:
    """A template's run at a call's sizes: bound from C where it can be
    (``ShapeGenericExecutable.untimed_any_size``: a ``_entry.Bound``, ~2 us, which runs from
    C; kept in ``_RUNS``), else its runner (~20 us with its prepared run; None past a
    library call's limit)."""
    key = (template, symbols)
    bound = _RUNS.get(key)
    if bound is None:
        any_size = template.untimed_any_size(len(symbols))
        bound = any_size(list(symbols)) if any_size is not None else None
        if bound is not None:
            if len(_RUNS) >= KEPT_RUNS:
                _RUNS.clear()
            _RUNS[key] = bound
    return bound if bound is not None else template.runner(symbols)
