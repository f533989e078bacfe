"""Which graph structures have run long enough in the baseline tier to be worth fused
code, and the background thread that compiles it.

A graph no compiled executable serves runs op by op (``baseline.py``) at once. Fused code
of its structure is faster per run, but its compile costs tens of milliseconds, and
hundreds for a process's first (the code generator's import): most scripts, notebook
cells and tests run a structure a few times and end, and would wait for compiles that
never pay back. So a structure is compiled fused only once its op-by-op runs have taken
``PLAIDARRAY_FUSE_AFTER_MS`` milliseconds (the ski-rental rule that ``tiering.py``
applies to full code: buy once the rent paid reaches the price), on a background thread,
while its runs go on op by op; the executable is cached when it is ready and serves the
next read, as full code replaces first-tier code between runs. JavaScript engines and
PyPy interpret first and compile what runs hot alike, and both tiers here compute the
same bits. ``PLAIDARRAY_FUSE_AFTER_MS=0`` compiles every graph fused at its first read,
in the reading thread (no baseline tier).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable

from .. import config
from ..backend.background import BackgroundQueue
from ..backend.cache import EXECUTABLES

#: Structures whose op-by-op time is kept; the least recently run goes first, so a
#: program making ever new graphs does not grow it.
KEPT_STRUCTURES = 1024

#: Seconds of op-by-op runs after which a structure is compiled fused (0: at once). Read at
#: import: every read of a value that no executable serves asks it.
FUSE_AFTER_SECONDS = config.get("PLAIDARRAY_FUSE_AFTER_MS") / 1000.0


class Heat:
    """One structure's op-by-op runs (callers hold ``GRAPH_LOCK``, but for ``add``, a
    float's sum, whose rare lost update costs nothing): the seconds they took, the sizes
    of the first graph and whether later graphs had others, whether its fused compile is
    submitted, and how many have landed (``generation``: a baseline executable made before
    the last one may now have fused code to run instead)."""

    __slots__ = ("seconds", "sizes", "sizes_changed", "submitted", "generation")

    def __init__(self, sizes: tuple[int, ...]) -> None:
        self.seconds = 0.0
        self.sizes = sizes
        self.sizes_changed = False
        self.submitted = False
        self.generation = 0

    def add(self, seconds: float) -> None:
        self.seconds += seconds

    @property
    def due(self) -> bool:
        """Whether the structure's fused code is to be compiled now."""
        return not self.submitted and self.seconds >= FUSE_AFTER_SECONDS

    def saw(self, sizes: tuple[int, ...]) -> None:
        """A graph of the structure with these sizes is run op by op."""
        if sizes != self.sizes:
            self.sizes_changed = True

    def landed(self) -> None:
        """Its fused compile is done (or failed): a graph it does not serve (other sizes)
        runs op by op, until hot again."""
        self.submitted = False
        self.seconds = 0.0
        self.generation += 1


class Heats:
    """The ``Heat`` of each structure run op by op, the least recently run dropped first
    past ``kept`` (callers hold ``GRAPH_LOCK``)."""

    def __init__(self, kept: int) -> None:
        #: Each structure's heat (``_graph.read`` finds whether a heat is still its
        #: structure's here, for reads that ``baseline.quick``'s entries serve).
        self.by_structure: OrderedDict[Hashable, Heat] = OrderedDict()
        self._kept = kept

    def of(self, structure: Hashable, sizes: tuple[int, ...]) -> Heat:
        heat = self.by_structure.get(structure)
        if heat is None:
            heat = self.by_structure[structure] = Heat(sizes)
            while len(self.by_structure) > self._kept:
                self.by_structure.popitem(last=False)
        else:
            self.by_structure.move_to_end(structure)
            heat.saw(sizes)
        return heat

    def clear(self) -> None:
        self.by_structure.clear()


HEATS = Heats(KEPT_STRUCTURES)
EXECUTABLES.on_clear.append(HEATS.clear)


#: The thread compiling hot structures' fused code.
_WORKER = BackgroundQueue("plaidarray-fuse", "a fused compile failed; the graph runs op by op")

#: Compile ``job`` (a hot structure's fused executable, cached when made) in the background.
submit = _WORKER.submit


def drain() -> None:
    """Wait for every fused compile submitted so far (tests, benchmarks timing fused code)."""
    _WORKER.drain()
