"""Why a graph compiled: the compile log (``PLAIDARRAY_EXPLAIN_COMPILES=1``).

Like JAX's ``explain_cache_misses``, each compile (or load from the disk cache) is
logged on the ``plaidarray.compiles`` logger with its reason, found by comparing the
graph with the graphs compiled before it:

* ``new op structure``: no earlier graph had these ops wired this way;
* ``new shapes/dtypes``: an earlier graph had the same ops, with other shapes or dtypes
  (the first parameters that differ are named);
* ``new attributes``: same ops and shapes, some op's attributes differ (a static slice
  bound, an axis...): the attribute is named;
* a graph run because it grew past ``PLAIDARRAY_MAX_PENDING`` says so;
* an op kernel that the op-by-op tier compiles (no kernel of its signature installed or
  cached: ``op_kernel``) is named with its operands.

Python scalars never appear: they are run-time arguments, not structure.
"""

from __future__ import annotations

import logging
import sys
from collections import OrderedDict
from collections.abc import Hashable, Sequence

from .. import config
from ..hlo import Computation

LOG = logging.getLogger("plaidarray.compiles")

#: How many earlier graphs are remembered for the comparison (bounded, like every
#: cache that a user's loop could grow).
_REMEMBERED = 256

_by_ops: OrderedDict[Hashable, tuple] = OrderedDict()
_by_shapes: OrderedDict[Hashable, tuple] = OrderedDict()


def enabled() -> bool:
    return LOG.isEnabledFor(logging.INFO)


def _enable_from_environment() -> None:
    """``PLAIDARRAY_EXPLAIN_COMPILES=1`` sends the log to standard error."""
    if config.get("PLAIDARRAY_EXPLAIN_COMPILES") == "1":
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("plaidarray: %(message)s"))
        LOG.addHandler(handler)
        LOG.setLevel(logging.INFO)


def _remember(table: OrderedDict, key: Hashable, rows: tuple) -> tuple | None:
    earlier = table.get(key)
    table[key] = rows
    table.move_to_end(key)
    while len(table) > _REMEMBERED:
        table.popitem(last=False)
    return earlier


def _is_parameter(row: tuple) -> bool:
    return len(row) == 2


def reason(rows: Sequence[tuple], cut: bool) -> str:
    """Why the graph with these key rows (``to_hlo.PendingGraph.key``) is compiled."""
    rows = tuple(rows)
    ops = tuple("parameter" if _is_parameter(r) else (r[0], r[2]) for r in rows)
    shapes = tuple(r if _is_parameter(r) else (r[0], r[2], r[3], r[4]) for r in rows)
    same_ops = _remember(_by_ops, ops, rows)
    same_shapes = _remember(_by_shapes, shapes, rows)
    prefix = f"graph of {len(rows)} nodes" + (", cut at PLAIDARRAY_MAX_PENDING" if cut else "")
    if same_shapes is not None:
        return f"{prefix}: new attributes: {_first_difference(same_shapes, rows, attributes=True)}"
    if same_ops is not None:
        return f"{prefix}: new shapes/dtypes: {_first_difference(same_ops, rows, attributes=False)}"
    names = sorted({r[0] for r in rows if not _is_parameter(r)})
    return f"{prefix}: new op structure ({', '.join(names[:8])}{', ...' if len(names) > 8 else ''})"


def _first_difference(before: tuple, now: tuple, attributes: bool) -> str:
    """The first nodes (at most three) whose attributes, or shapes and dtypes, differ."""
    found = []
    for i, (old, new) in enumerate(zip(before, now)):
        if old == new:
            continue
        if _is_parameter(new):
            found.append(f"parameter at node {i}: {_shape(old)} -> {_shape(new)}")
        elif attributes:
            changed = [f"{k}={dict(old[1]).get(k)!r} -> {v!r}" for k, v in new[1] if dict(old[1]).get(k) != v]
            found.append(f"{new[0]} (node {i}): {', '.join(changed)}")
        else:
            found.append(f"{new[0]} (node {i}): {_shape(old[3:])} -> {_shape(new[3:])}")
        if len(found) == 3:
            break
    return "; ".join(found)


def _shape(row: tuple) -> str:
    dims, dtype = row
    return f"{dtype}{list(dims)}"


def jit_reason(name: str, key: tuple, earlier: Sequence[tuple]) -> str:
    """Why ``jit(name)`` traces for the signature ``key`` (``jit._Call.key``): the
    arguments that differ from an earlier signature of the same structure."""
    structure, leaves, statics, backend = key
    for other in earlier:
        if other[0] == structure and len(other[1]) == len(leaves):
            changed = [f"argument leaf {i}: {a} -> {b}" for i, (a, b) in enumerate(zip(other[1], leaves)) if a != b]
            if other[2] != statics:
                changed.append(f"static arguments: {other[2]} -> {statics}")
            return f"jit({name}): new signature: {'; '.join(changed[:3]) or 'backend ' + backend}"
    return f"jit({name}): first trace for this argument structure"


def op_kernel(comp: Computation, how: str) -> str:
    """Why the op-by-op tier compiles an op's kernel: no kernel of its signature (op,
    attributes, ranks, dtypes) was installed or cached; the op and its operands as the
    computation of it alone has them (``how``: for which sizes)."""
    op = comp.outputs[0]
    while op.opcode == "get_tuple_element":  # an element of a tuple-valued op's result
        op = op.operands[0]
    operands = ", ".join(f"{o.shape.dtype}{list(o.shape.dims)}" for o in op.operands)
    return f"op kernel {op.opcode}({operands}), {how}: no kernel of its signature installed or cached"


def log(why: str, seconds: float, from_disk: bool) -> None:
    """Log one compile (or load from the disk cache) and why it happened."""
    LOG.info("%s in %.1f ms: %s", "loaded from disk" if from_disk else "compiled", seconds * 1e3, why)


_enable_from_environment()
