"""Kernel groups: runs of a fusion plan's kernels that are lowered together, and apart
from the rest of their module.

The loop passes and the emitter see a module's loop nests one after another: sibling
loop nests over the same rows merge (``loop_fusion.py``), and the operations between
nests join the kernel of the loop after them (``backend/llvm/emitter._segments``). Two
consecutive kernels can share code only so. A module's kernels are therefore cut into
groups where that is sure not to happen, and each group is lowered as a module of its
own, on only the buffers it touches, which yields the very kernels the whole module
would: a group's code depends on the group alone, so a group met before (in another
graph, or earlier in the same one: a loop's body cut into a graph several times) is not
lowered again (``group_key``). TorchInductor shares kernels between graphs alike, keyed
by their code; here the key is known before any lowering.

A cut between kernels ``a`` and ``b`` is sure when ``a`` ends with a loop nest (so that
``b`` starts a kernel of its own) and ``b``'s first nest cannot merge with that nest:
``b`` starts with something else than a loop, or a row loop of another trip count, or
``a``'s last loop is no row loop. This is known for the kinds whose nests fusion
builds (elementwise, indexing, reduction) and for kernel ops that say (``Kernel.ends``:
a concatenation, a dynamic slice); other kernel ops (a library call, a sort, a loop
of their own) and tuples stay in the group of their neighbours, and a tuple's kernel in
that of its elements' (``get_tuple_element``) kernels.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import arith, scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation

from ..hlo import Instruction
from ..hlo.fingerprint import Hashed
from ..hlo.ir import depth_first
from ..hlo.shape import Shape, TupleShape
from ..hlo.symbolic import Dim, Sym, SymExpr, rename
from .fusion import FusionPlan
from .linalg_to_loops import LOOP_DIMS, PARALLEL_LOOP, chunked_dimension
from .lowering import Elementwise, Indexing, Kernel, Reduction, TupleElement
from .run_time_sizes import SYMBOL, read_dims


@dataclass(frozen=True)
class Nests:
    """What a kernel's code looks like at its two ends, in ``main`` once its generics are
    loop nests: whether it starts (ends) with a loop, and the trip count of that loop if
    it is a row loop (one that may run in chunks along its own dimension, which is what
    loop fusion merges), else None."""

    starts_with_loop: bool
    first_rows: Dim | None
    ends_with_loop: bool
    last_rows: Dim | None


#: What kernel ops' code looked like when a group of them was lowered, by the op's
#: structure (``_op_key``): an op lowered once can be cut from its neighbours afterwards.
#: Bounded like every table a user's loop could grow.
_SEEN: OrderedDict[Hashable, Nests | None] = OrderedDict()
_SEEN_KEPT = 4096
_seen_lock = threading.Lock()


def op_key(plan: FusionPlan, inst: Instruction, buffer: Callable[[Instruction], Hashable | None]) -> Hashable:
    """What a kernel op's code depends on: its opcode, attributes and shapes, and which of
    its operands' buffers are its own (``buffer`` gives an instruction's buffer, None
    for none): an update in place writes only what changes (``dynamic_update_slice``),
    and a tuple element whose buffer is the element's copies nothing."""
    own = buffer(inst)
    shared = tuple(own is not None and buffer(o) == own for o in inst.operands)
    if isinstance(plan.lowering(inst), TupleElement):
        element = plan.elements.get(id(inst.operands[0]), {}).get(inst.attrs["index"])
        shared += (element is not None and buffer(element) == own,)
    return inst.opcode, inst.attr_key(), inst.shape, tuple(o.shape for o in inst.operands), shared


def _rows(op: Operation) -> Dim | None:
    """The trip count of ``op``'s outer loop once it is a loop nest, if that loop is a
    row loop (see ``Nests``)."""
    if isinstance(op, GenericOp):
        dims = read_dims(op.attributes[LOOP_DIMS])
        return dims[0] if dims and chunked_dimension(op) == 0 else None
    marked = op.attributes.get(PARALLEL_LOOP)
    if marked is None:
        return None
    depth, extent, _ = read_dims(marked)
    return extent if depth == 0 else None


def _is_loop(op: Operation) -> bool:
    if isinstance(op, GenericOp):
        return bool(read_dims(op.attributes[LOOP_DIMS]))
    return isinstance(op, scf.ForOp)


def nests_of(ops: Sequence[Operation]) -> Nests | None:
    """The ``Nests`` of the top-level linalg-level operations a kernel's lowering made
    (constants and loads of run-time sizes aside, which every pass after looks through);
    None if it made none."""
    ops = [op for op in ops if not isinstance(op, arith.ConstantOp) and SYMBOL not in op.attributes]
    if not ops:
        return None
    first, last = ops[0], ops[-1]
    return Nests(_is_loop(first), _rows(first) if _is_loop(first) else None,
                 _is_loop(last), _rows(last) if _is_loop(last) else None)


def learn(key: Hashable, nests: Nests | None) -> None:
    """Remember what the lowering of a kernel op of ``key`` (``op_key``) made (``nests_of``)."""
    with _seen_lock:
        _SEEN[key] = nests
        _SEEN.move_to_end(key)
        while len(_SEEN) > _SEEN_KEPT:
            _SEEN.popitem(last=False)


def _nests(plan: FusionPlan, inst: Instruction, buffer: Callable[[Instruction], Hashable | None]) -> Nests | None:
    """The ends of ``inst``'s code: known for the kinds whose nests fusion builds, and for
    kernel ops lowered before (``learn``); None when unknown, and for a kernel that
    makes no code (a kernel of no elements may make none), whose neighbours then meet."""
    low = plan.lowering(inst)
    if isinstance(low, Kernel) and low.ends is not None:
        ends = low.ends(inst)
        return None if ends is None else Nests(*ends)
    if isinstance(inst.shape, TupleShape) or isinstance(low, (Kernel, TupleElement)):
        with _seen_lock:
            return _SEEN.get(op_key(plan, inst, buffer))
    if isinstance(low, Reduction):
        source, out = inst.operands[0].shape.dims, inst.shape.dims
        if not source:
            return None
        last = None if 0 in inst.attrs["dimensions"] else source[0]
        return Nests(bool(out), out[0] if out else None, True, last)
    if isinstance(low, (Elementwise, Indexing)):
        dims = inst.shape.dims
        return Nests(True, dims[0], True, dims[0]) if dims else None
    return None


def _sure_cut(before: Nests | None, after: Nests | None) -> bool:
    """Whether a kernel ending like ``before`` and one starting like ``after`` never share
    a kernel of code (module docstring)."""
    if before is None or after is None or not before.ends_with_loop:
        return False
    if not after.starts_with_loop or before.last_rows is None:
        return True
    return after.first_rows is None or after.first_rows != before.last_rows


def group_kernels(plan: FusionPlan, buffer: Callable[[Instruction], Hashable | None]) -> list[list[Instruction]]:
    """``plan.kernels`` in groups, in order (module docstring); ``buffer`` gives an
    instruction's buffer (None for none)."""
    kernels = plan.kernels
    nests = [_nests(plan, k, buffer) for k in kernels]
    cuts = [_sure_cut(nests[i - 1], nests[i]) for i in range(1, len(kernels))]
    position = {id(k): i for i, k in enumerate(kernels)}
    for i, k in enumerate(kernels):  # a tuple's kernel and its elements' stay together
        for element in plan.elements.get(id(k), {}).values():
            j = position.get(id(element))
            if j is not None:
                for between in range(min(i, j), max(i, j)):
                    cuts[between] = False
    groups: list[list[Instruction]] = [[kernels[0]]] if kernels else []
    for k, cut in zip(kernels[1:], cuts):
        if cut:
            groups.append([])
        groups[-1].append(k)
    return groups


def _reads(plan: FusionPlan, kernel: Instruction) -> Callable[[Instruction], Sequence[Instruction]]:
    """What the code of ``kernel`` computes a value from, as ``linalg_builder`` lowers it:
    nothing for a value it loads from a buffer, the operand an indexing op re-indexes,
    else the operands (a kernel op's are buffers)."""
    def reads(value: Instruction) -> Sequence[Instruction]:
        if value is not kernel and plan.is_buffer(value):
            return ()
        if isinstance(plan.lowering(value), Indexing):
            return value.operands[:1]
        return value.operands
    return reads


def _computed(plan: FusionPlan, kernel: Instruction) -> list[Instruction]:
    """The values the code of ``kernel`` computes or loads, each after those it reads,
    ``kernel`` last. A reduction's code reads its operand; a tuple element's code reads
    the buffer of its element, which the tuple's kernel writes."""
    if isinstance(plan.lowering(kernel), TupleElement):
        element = plan.elements.get(id(kernel.operands[0]), {}).get(kernel.attrs["index"])
        return [kernel] if element is None or element is kernel else [element, kernel]
    return depth_first([kernel], _reads(plan, kernel))


def _own(plan: FusionPlan, kernel: Instruction) -> list[Instruction]:
    """The instructions whose buffers ``kernel`` writes: its own, or a tuple's elements'."""
    if isinstance(kernel.shape, TupleShape):
        return [element for _, element in sorted(plan.elements.get(id(kernel), {}).items())]
    return [kernel]


def buffers_touched(plan: FusionPlan, kernel: Instruction) -> list[Instruction]:
    """The instructions whose buffers the code of ``kernel`` reads or writes: those it
    writes, and those of the values it loads."""
    loaded = [v for v in _computed(plan, kernel) if v is not kernel and plan.is_buffer(v)]
    return [*_own(plan, kernel), *loaded]


class _Symbols:
    """A group's run-time sizes numbered in the order its key meets them: groups that
    differ only in which of the module's symbols they use (a loop's iterations in a
    shape-generic module, each with sizes of its own) have one key, and their lowering is
    shared through ``order`` (the module's symbol of each number)."""

    def __init__(self) -> None:
        self.number: dict[int, int] = {}
        self.sizes: list[bool] = []  # per number: a size, or an offset (``Sym.size``)

    @property
    def order(self) -> tuple[int, ...]:
        return tuple(self.number)

    def dim(self, d: Dim) -> Dim:
        if isinstance(d, int):
            return d
        syms = {d.index: d} if isinstance(d, Sym) else d.syms
        for k in sorted(syms):
            if k not in self.number:
                self.number[k] = len(self.number)
                self.sizes.append(syms[k].size)
        return rename(d, self.number)

    def value(self, v: object) -> Hashable:
        """An attribute value or a shape with its symbols numbered (recursive on the
        nesting of attribute values, which their ops' definitions fix)."""
        if isinstance(v, TupleShape):
            return ("tuple", tuple(self.value(e) for e in v.elements))
        if isinstance(v, Shape):
            return tuple(self.dim(d) for d in v.dims), v.dtype
        if isinstance(v, (Sym, SymExpr)):
            return self.dim(v)
        if isinstance(v, (tuple, list)):
            return tuple(self.value(x) for x in v)
        return cast(Hashable, v)


def group_key(plan: FusionPlan, group: Sequence[Instruction], buffers: Sequence[int],
              buffer_of: Callable[[Instruction], int], shapes: Mapping[int, Shape], contractible: set[int],
              n_symbols: int, platform: Hashable) -> tuple[Hashable, tuple[int, ...], tuple[int, ...]]:
    """What a group's lowered code depends on, as a hashable value: each value its kernels
    compute (opcode, attributes, shape, and operands: values numbered in the group,
    buffers by their place among the group's ``buffers``, which ``buffer_of`` gives),
    the buffers each kernel writes, the group's buffers (shape, and whether it is a
    temporary no other group touches, which its loops may contract: ``contractible``),
    whether the module has run-time sizes, and the platform. Buffers and run-time sizes
    are numbered in the order the key meets them (``_Symbols``), so that a loop's
    iterations, whose buffers and sizes are others each time, have one key. With the key
    come the module's symbol of each number, and the group's buffers in their order."""
    local: dict[int, int] = {}
    touched = set(buffers)
    numbers: dict[int, Hashable] = {}
    named = _Symbols() if n_symbols else None

    def described(v: object) -> Hashable:
        return cast(Hashable, v) if named is None else named.value(v)

    def place(b: int) -> int:
        return local.setdefault(b, len(local))

    def operand(value: Instruction) -> Hashable:
        if id(value) in numbers:
            return numbers[id(value)]
        b = buffer_of(value)
        return ("buffer", place(b)) if b in touched else ("unread", described(value.shape))

    rows: list[tuple] = []
    for kernel in group:
        for value in _computed(plan, kernel):
            if id(value) in numbers:
                continue
            if value is not kernel and plan.is_buffer(value):
                numbers[id(value)] = ("buffer", place(buffer_of(value)))
                continue
            rows.append((value.opcode, described(value.attr_key()), described(value.shape),
                         tuple(operand(o) for o in value.operands)))
            numbers[id(value)] = len(rows)
        rows.append(("writes", tuple(place(buffer_of(b)) for b in _own(plan, kernel))))
    for b in buffers:
        place(b)
    order = tuple(local)
    table = tuple((described(shapes[b]), b in contractible) for b in order)
    if named is None:
        return Hashed((tuple(rows), table, False, platform)), (), order
    return Hashed((tuple(rows), table, tuple(named.sizes), platform)), named.order, order
