"""Nodes of the lazy graph that arrays point to.

A node is either pending (an op over operand nodes, not yet computed) or ready (it
holds a device buffer). Materialising a node computes its buffer and drops its
operands, so a long-lived array does not keep its whole history alive. While a
function is traced (``plaidarray.jit``, the bodies of ``cond``/``while_loop``), its
arguments are placeholders: nodes that stand for any value of their shape and dtype.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import config
from ..backend.transfer import HOST
from ..hlo.ir import attr_key
from ..hlo.opdef import OPS, lookup
from ..hlo.shape import Shape

if TYPE_CHECKING:
    from ..backend.devices import Device

#: Held while the graph is walked (cache keys, HLO, traces) and while materialised nodes
#: get their buffers: ``set_buffer`` drops a node's operands, so a walk on another thread
#: could otherwise see a node that is neither pending nor ready.
GRAPH_LOCK = threading.RLock()


#: The depth (longest chain of pending ops) past which a recorded op is run at once, so
#: that a loop that never reads a value still runs in bounded memory and compile time.
#: Read at import; 0 means no bound. 32 keeps each such compile short: compile time grows
#: faster than the graph (measured: a 64-deep chain 85 ms, 128 170 ms, 256 530 ms,
#: 512 1.5 s), while a kernel of 32 fused ops already reads and writes memory once.
MAX_PENDING = config.get("PLAIDARRAY_MAX_PENDING")

#: Depth of nodes that hang off a trace's placeholders: such graphs are never cut (they
#: have no value to compute), and their depth stops counting.
TRACED = -1


#: Numbers nodes in creation order (``Node.serial``); ``next`` on it is atomic.
_SERIALS = itertools.count()

#: The Shapes of ready nodes by (dims, dtype), so that arrays of one shape share one Shape
#: object and the shape checks of each recorded op end at an identity test (``Shape.__eq__``);
#: emptied when it reaches ``_READY_SHAPES_MAX`` entries, so a loop over ever new shapes does
#: not grow it.
_READY_SHAPES: dict[tuple, Shape] = {}
_READY_SHAPES_MAX = 256


class Node:
    """``arrays`` counts the Array objects that point here: a pending node that a live
    array refers to is computed along with whatever graph it is part of, so the next graph
    starts from its buffer instead of its history (``materialize.py``). ``depth`` is the
    longest chain of pending ops below the node (0 when ready, TRACED under a trace).
    ``device`` is the device its value lives on (``backend/devices.py``), that of its
    operands; None for a value of no array's (a Python scalar's, an index), which
    combines with any device."""

    __slots__ = ("op", "operands", "attrs", "shape", "buffer", "arrays", "depth", "owned", "weak", "serial", "reused",
                 "device", "__weakref__")

    def __init__(self, op: str | None, operands: tuple[Node, ...], attrs: dict[str, Any], shape: Shape,
                 buffer: np.ndarray | None = None, depth: int = 0, device: Device | None = None) -> None:
        self.op = op
        self.operands = operands
        self.attrs = attrs
        self.shape = shape
        self.buffer = buffer
        self.arrays = 0
        self.depth = depth
        #: Whether ``buffer`` is memory an executable made (never a caller's NumPy array),
        #: so that it may be updated in place once nothing else can see it.
        self.owned = False
        #: A weakly typed value: a Python scalar argument of a jitted function, traced. Like
        #: the Python scalar it stands for, it takes the dtype of the arrays it meets.
        self.weak = False
        #: Creation order. A node is made after its operands, so sorting a graph's nodes
        #: by it orders them topologically without a post-order walk (``to_hlo.py``).
        self.serial = next(_SERIALS)
        #: For a node that many graphs share (a Python scalar's broadcast, see
        #: ``api.graph.scalar_operand``): the head of its row in a graph's key, which a
        #: walk adds at every use instead of once, so that a graph's structure does not
        #: depend on which of its scalars happen to be equal.
        self.reused: tuple | None = None
        self.device = device

    @classmethod
    def ready(cls, buffer: np.ndarray, device: Device | None = None) -> Node:
        """A node holding ``buffer``, on ``device`` (None: a value of no array's)."""
        key = (buffer.shape, buffer.dtype)
        shape = _READY_SHAPES.get(key)
        if shape is None:
            if len(_READY_SHAPES) >= _READY_SHAPES_MAX:
                _READY_SHAPES.clear()
            shape = _READY_SHAPES[key] = Shape(key[0], _CANONICAL.get(key[1], key[1]))
        return make_ready(buffer, shape, device)

    @classmethod
    def apply(cls, op: str, operands: tuple[Node, ...], attrs: dict[str, Any]) -> Node:
        """Record ``op`` over ``operands``; its shape rule runs now, so shape and dtype
        errors surface at the call that caused them."""
        opdef = OPS.get(op) or lookup(op)
        if opdef.arity is not None and opdef.arity != len(operands):
            opdef.check_arity(len(operands))
        return derive(op, operands, attrs, opdef.infer([o.shape for o in operands], attrs))

    @classmethod
    def derived(cls, op: str, operands: tuple[Node, ...], attrs: dict[str, Any], shape: Shape) -> Node:
        """Record ``op`` whose result ``shape`` the caller knows already (its shape rule
        holds by construction: a Python scalar broadcast to an array's shape)."""
        return derive(op, operands, attrs, shape)

    @classmethod
    def placeholder(cls, shape: Shape, trace: Any) -> Node:
        """An argument of the function ``trace`` is tracing (see ``trace/tracing.py``):
        it has no value, so materialising anything that depends on it is an error."""
        return cls("parameter", (), {"trace": trace}, shape, depth=TRACED)

    @property
    def is_placeholder(self) -> bool:
        return self.op == "parameter"

    def set_buffer(self, buffer: np.ndarray, owned: bool = True) -> None:
        """Make the node ready (the caller holds ``GRAPH_LOCK``)."""
        self.buffer = buffer
        self.op, self.operands, self.attrs, self.depth, self.owned = None, (), {}, 0, owned


def _pending_graph_in_python(node: Node) -> list[Node]:
    """The pending nodes of ``node``'s graph, in the order they were recorded (``node``
    last), but Python scalars' broadcasts, which every graph shares (``Node.reused``).
    ``_graph.pending`` does the same in C."""
    seen = {id(node)}
    pending = [node]
    stack = list(node.operands)
    while stack:
        o = stack.pop()
        if o.buffer is not None or id(o) in seen or o.reused is not None:
            continue
        seen.add(id(o))
        pending.append(o)
        stack.extend(o.operands)
    pending.sort(key=lambda n: n.serial)
    return pending


class _Reads(threading.local):
    """How many values this thread read (``Array._value``, exports) or computed where they
    were recorded (cuts), or decided a view by (``views.view``), without the C module
    (which counts them per thread itself: ``_graph.count_read``). Per thread: only a
    call's own thread reads for it (a run's worker threads read nothing), and a count of
    one thread's needs no lock."""

    count = 0


_READS = _Reads()


def _value_read_in_python() -> None:
    _READS.count += 1


def _reads_mark_in_python() -> int:
    return _READS.count


def serial_mark() -> int:
    """A number above the serial of every node made so far and below that of every node
    made from now on (it takes one from the counter), to tell which nodes a call made."""
    return next(_SERIALS)


def _derive_in_python(op: str, operands: tuple[Node, ...], attrs: dict[str, Any], shape: Shape) -> Node:
    """``Node.derived``: the node of ``op`` over ``operands``, one deeper than the deepest
    of them (``TRACED`` if any is), on their device (``common_device``). ``_graph.derive``
    does the same in C."""
    if op == "dynamic_slice":
        window = shared_window(operands, attrs, shape)
        if window is not None:
            return window
    depth = 0
    for o in operands:
        d = o.depth
        if d == TRACED:
            return Node(op, operands, attrs, shape, depth=TRACED, device=common_device(op, operands))
        if d > depth:
            depth = d
    return Node(op, operands, attrs, shape, depth=depth + 1, device=common_device(op, operands))


def shared_window(operands: tuple[Node, ...], attrs: dict[str, Any], shape: Shape) -> Node | None:
    """A ``dynamic_slice`` of a ready buffer that no update owns (``owned``: a caller's
    input, never written in place) at ready starts, as a ready node sharing its memory
    where its transfers make one (``TransferManager.shared_window``: a contiguous window
    of read-only host memory), as NumPy's ``x[i:j]`` is a view; None otherwise (the op is
    recorded). The node keeps the op's operands and attributes, which no walk reads (it is
    ready): a recipe makes it again of its own call's (``api.recipes._steps``), where the
    first call's view would show the first call's argument. A window of such a window is
    recorded, so that no node holds a chain of others (a loop's ``w = w[1:]``).
    ``_graph.derive`` does the same in C."""
    base = operands[0]
    buffer = base.buffer
    if buffer is None or base.owned or base.operands or any(o.buffer is None for o in operands[1:]):
        return None
    device = base.device
    view = (HOST if device is None else device.transfers).shared_window(
        buffer, tuple([o.buffer for o in operands[1:]]), shape.dims)
    return None if view is None else Node(None, operands, attrs, shape, view, device=device)


def common_device(op: str, operands: Sequence[Node]) -> Device | None:
    """The device of the operands that have one (None if none has): a ValueError naming
    two that differ, which ``op`` may not combine."""
    device = None
    for o in operands:
        on = o.device
        if on is not None and on is not device:
            if device is not None:
                raise ValueError(f"{op}: arrays on different devices, {device} and {on}; move one with to_device")
            device = on
    return device


def _set_buffers_in_python(nodes: list[Node], buffers: list[np.ndarray]) -> None:
    """``Node.set_buffer`` on each node of ``nodes`` whose buffer is still None (another
    thread may have computed it meanwhile) with the buffer at its index (the caller holds
    ``GRAPH_LOCK``). ``_graph.set_buffers`` does the same in C."""
    for node, buffer in zip(nodes, buffers):
        if node.buffer is None:
            node.set_buffer(buffer)


#: NumPy's built-in descriptors, one object per type, which refer to nothing of a program's:
#: a walk's rows of these, ints and strs cannot be in a reference cycle, and ``_graph.c``
#: has the garbage collector stop tracking them (``acyclic``).
LEAF_DTYPES = tuple(dict.fromkeys(np.dtype(code) for code in "?bhilqBHILQefdgFDG"))

#: Each built-in dtype by any dtype equal to it: a buffer's dtype may be an equal object of
#: its own (memory a simulated GPU viewed), and a ready node's Shape, shared by every array
#: of its dims and dtype (``_READY_SHAPES``), holds the built-in one, which C's recording
#: tests by identity (a host product took the Python path after a GPU's test).
_CANONICAL = {d: d for d in LEAF_DTYPES}


def _graph_in_c() -> Any:
    """The C module ``_graph`` (making nodes and walking pending graphs, ``_graph.c``),
    configured with this module's layout, when it is built and ``PLAIDARRAY_PURE_PYTHON``
    does not switch it off; else None."""
    _graph = config.c_module("plaidarray.trace._graph")
    if _graph is None:
        return None
    _graph.configure(Node, Shape, attr_key, _SERIALS, TRACED, LEAF_DTYPES)
    return _graph


#: The C module, or None: the Python definitions here and in ``to_hlo.py`` run instead.
GRAPH_IN_C = _graph_in_c()

#: Counts a value read or computed while recording, or a view's layout decided by
#: (``views.view``: whether a step views its base or copies it, which no call's signature
#: holds: a reshape of a transposed view copies, of a view transposed back it views). The
#: count is the thread's own, in C where the module is in use, whose reads count it there.
value_read: Callable[[], None] = GRAPH_IN_C.count_read if GRAPH_IN_C is not None else _value_read_in_python

#: The count of values this thread read so far (and of layouts it decided by,
#: ``value_read``): a call between two equal marks recorded nothing that depends on a
#: value or a view's layout, only on shapes and arguments (what ``api/recipes.py`` needs).
reads_mark: Callable[[], int] = GRAPH_IN_C.reads_mark if GRAPH_IN_C is not None else _reads_mark_in_python

#: Records a node whose shape is known (``Node.derived``; elementwise functions call it directly).
derive: Callable[[str, tuple[Node, ...], dict[str, Any], Shape], Node] = \
    GRAPH_IN_C.derive if GRAPH_IN_C is not None else _derive_in_python

def _ready_in_python(buffer: np.ndarray, shape: Shape, device: Device | None) -> Node:
    """A ready node of ``buffer``, of ``shape``, on ``device`` (``Node.ready``, which finds
    the shape). ``_graph.ready`` does the same in C."""
    return Node(None, (), {}, shape, buffer, device=device)


#: Makes a ready node (``Node.ready``).
make_ready: Callable[[np.ndarray, Shape, Device | None], Node] = \
    GRAPH_IN_C.ready if GRAPH_IN_C is not None else _ready_in_python

#: The pending nodes of a node's graph in the order they were recorded (``node`` last).
pending_graph: Callable[[Node], list[Node]] = \
    GRAPH_IN_C.pending if GRAPH_IN_C is not None else _pending_graph_in_python

#: Makes the nodes a run computed ready (``materialize``).
set_buffers: Callable[[list[Node], list[np.ndarray]], None] = \
    GRAPH_IN_C.set_buffers if GRAPH_IN_C is not None else _set_buffers_in_python
