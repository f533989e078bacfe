"""Transposes recorded as swaps of adjacent blocks of axes, the transposes the installation
builds kernels for.

A transpose's kernel runs with the runs of axes that stay adjacent merged
(``hlo.opdef.Merge``), so a swap of two adjacent blocks of axes, with axes before and
after them or not, runs on one of four kernels a dtype: (1, 0), (0, 2, 1), (1, 0, 2) and
(0, 2, 1, 3), which the installation builds (``prebuild.py``). Any other permutation (a
3-d array's axes reversed, a 4-d array's axes 1 and 3 swapped, most of rank 5's) would be a
kernel of its own, compiled at a script's first use of it: 0.3 s against NumPy's
microseconds. So the API records such a transpose as the fewest block swaps that compose
to it (a breadth-first search over the permutations of its runs, a greedy insertion past
``SEARCHED_RUNS``). The baseline tier runs each swap as a copy; fused code sees one
transpose again (the algebraic simplifier folds a transpose of a transpose). Moving data
changes no value, so the tiers give the same bits.
"""

from __future__ import annotations

import functools
from collections import deque

#: Permutations of up to this many runs are searched for their fewest swaps (5! states);
#: longer ones take one swap a run put in place.
SEARCHED_RUNS = 5


def _runs(permutation: tuple[int, ...]) -> list[tuple[int, ...]]:
    """The result's runs of adjacent operand axes in order: the axes a transpose merges."""
    groups: list[tuple[int, ...]] = []
    for axis in permutation:
        if groups and axis == groups[-1][-1] + 1:
            groups[-1] += (axis,)
        else:
            groups.append((axis,))
    return groups


def _unit_swaps(n: int) -> list[tuple[int, ...]]:
    """Every swap of two adjacent blocks among ``n`` units, as a permutation of them."""
    return [(*range(a), *range(b, c), *range(a, b), *range(c, n))
            for a in range(n) for b in range(a + 1, n) for c in range(b + 1, n + 1)]


#: The runs' permutations of one block swap with axes before it, after it, or both (and
#: of rank 2 or less, every permutation): the four kernels a dtype the installation builds.
ONE_SWAP = frozenset({(0, 2, 1), (1, 0, 2), (0, 2, 1, 3)})


@functools.lru_cache(maxsize=256)
def _shortest(target: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """The fewest unit swaps whose composition is ``target`` (applied in order)."""
    start = tuple(range(len(target)))
    moves = _unit_swaps(len(target))
    previous: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, ...]] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if state == target:
            break
        for move in moves:
            following = tuple(state[i] for i in move)
            if following not in previous:
                previous[following] = (state, move)
                queue.append(following)
    path: list[tuple[int, ...]] = []
    step = previous[target]
    while step is not None:
        state, move = step
        path.append(move)
        step = previous[state]
    return tuple(reversed(path))


def _greedy(target: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Unit swaps composing to ``target``: each moves the unit due next into place."""
    order, path = list(range(len(target))), []
    for position, unit in enumerate(target):
        at = order.index(unit)
        if at != position:
            move = (*range(position), at, *range(position, at), *range(at + 1, len(order)))
            path.append(move)
            order = [order[i] for i in move]
    return tuple(path)


@functools.lru_cache(maxsize=256)
def swaps(permutation: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Permutations of the axes, each one block swap, whose transposes applied in order
    are ``permutation``'s (itself alone where it is one swap, or merges to rank 2 or less).
    Kept per permutation: a script transposes a few, at every new shape (~1.5 us each)."""
    groups = _runs(permutation)
    by_first = sorted(range(len(groups)), key=lambda g: groups[g][0])
    target = tuple(by_first.index(g) for g in range(len(groups)))  # the runs' permutation
    if len(target) <= 2 or target in ONE_SWAP:
        return (permutation,)
    moves = _shortest(target) if len(target) <= SEARCHED_RUNS else _greedy(target)
    units = [groups[g] for g in by_first]  # unit u: the operand's u-th run
    order, chain = list(range(len(units))), []
    for move in moves:
        offsets, offset = {}, 0
        for unit in order:
            offsets[unit] = offset
            offset += len(units[unit])
        order = [order[i] for i in move]
        chain.append(tuple(offsets[unit] + k for unit in order for k in range(len(units[unit]))))
    return tuple(chain)
