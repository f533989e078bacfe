"""Fusion planning: which HLO values get a buffer, which are computed inside kernels.

XLA's loop fusion and input fusion, decided per instruction:

* parameters, outputs, reductions and kernel ops own a buffer;
* an elementwise or indexing instruction is fused into its consumer (it becomes
  scalar code or an indexing map inside the consumer's ``linalg.generic``) unless it
  has several consumers (two consumers of a small expression of cheap ops both
  compute it, as XLA duplicates cheap producers), feeds a kernel op (which reads whole
  buffers), or is broadcast to more elements than it has (recomputing it per output
  element would multiply its cost);
* cheap generators (constants, iotas, and re-indexings of buffers or of generators)
  are duplicated into every consumer instead of being stored;
* an instruction of tuple shape (``while``, ``conditional``, ``custom_call``) is a
  kernel without a buffer of its own: each ``get_tuple_element`` of it owns the buffer
  of its element, which the kernel writes (``FusionPlan.elements``), as XLA's buffer
  assignment gives a tuple one buffer per element.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..hlo import Computation, Instruction
from ..hlo.shape import TupleShape
from ..hlo.symbolic import hint
from .lowering import Elementwise, Indexing, Kernel, Reduction, TupleElement, lowering_for


def _is_fusible(lowering: object) -> bool:
    return isinstance(lowering, (Elementwise, Indexing))


@dataclass
class FusionPlan:
    computation: Computation
    #: Ids of the instructions that own a buffer (the others are computed inside kernels).
    buffered: set[int]
    kernels: list[Instruction]  # non-parameters with a buffer and tuples, in execution order
    platform: str | None = None  # whose lowerings the plan follows
    #: id of a tuple instruction -> {element index: the get_tuple_element holding its buffer}
    elements: dict[int, dict[int, Instruction]] = field(default_factory=dict)

    def is_buffer(self, inst: Instruction) -> bool:
        return id(inst) in self.buffered

    def lowering(self, inst: Instruction) -> object:
        """How ``inst`` lowers on the plan's platform."""
        return lowering_for(inst.opcode, self.platform)


def _indexing_sources(comp: Computation, lowerings: dict[int, object]) -> dict[int, Instruction]:
    """For each instruction, the value its chain of re-indexings reads (itself if it is
    no re-indexing), found in one pass in topological order rather than by walking down
    each chain."""
    sources: dict[int, Instruction] = {}
    for inst in comp.instructions:
        indexing = isinstance(lowerings[id(inst)], Indexing)
        sources[id(inst)] = sources[id(inst.operands[0])] if indexing else inst
    return sources


def _cheap(source: Instruction, buffered: set[int]) -> bool:
    """Whether re-indexings of ``source`` are cheap: it is a generator or a buffer."""
    return source.opcode in ("constant", "iota") or id(source) in buffered


#: A value with two users is computed in both when its fused expression has at most
#: this many elementwise ops, none of them expensive: that is cheaper than writing and
#: re-reading a buffer. An expensive value (softmax's exp(x - max), which feeds both the
#: sum and the division) is stored once; when its consumers walk the same rows, the
#: loop passes (loop_fusion.py) fuse them and shrink the stored value to one row.
RECOMPUTE_LIMIT = 4


def _recomputable(comp: Computation, lowerings: dict[int, object]) -> set[int]:
    """Ids of the fusible instructions whose fused expression, down to values that
    cannot fuse (parameters, reductions, kernel ops), has at most ``RECOMPUTE_LIMIT``
    elementwise ops and none expensive. Computed bottom-up from each operand's (at most
    ``RECOMPUTE_LIMIT``) ops, so a long chain costs one step per instruction rather than
    a walk down the chain from each of them."""
    ops: dict[int, frozenset[int]] = {}  # the elementwise ops of each such expression
    for inst in comp.instructions:
        low = lowerings[id(inst)]
        if not _is_fusible(low):
            continue
        if isinstance(low, Elementwise) and low.expensive:
            continue
        found = {id(inst)} if isinstance(low, Elementwise) else set()
        for o in inst.operands:
            if _is_fusible(lowerings[id(o)]):
                if id(o) not in ops:  # too large or expensive already
                    break
                found |= ops[id(o)]
        else:
            if len(found) <= RECOMPUTE_LIMIT:
                ops[id(inst)] = frozenset(found)
    return set(ops)


def plan_fusion(comp: Computation, platform: str | None = None) -> FusionPlan:
    """Which values of ``comp`` get a buffer, with ``platform``'s lowerings (the
    target-neutral ones when None)."""
    lowerings = {id(inst): lowering_for(inst.opcode, platform) for inst in comp.instructions}
    users = comp.users()
    recomputable = _recomputable(comp, lowerings)
    sources = _indexing_sources(comp, lowerings)
    required = {id(p) for p in comp.parameters} | {id(o) for o in comp.outputs}
    preferred: set[int] = set()
    for inst in comp.instructions:
        low = lowerings[id(inst)]
        if isinstance(low, (Kernel, Reduction, TupleElement)):
            required.add(id(inst))
        if isinstance(low, Kernel):
            required.update(id(o) for o in inst.operands)
        if inst.opcode == "broadcast_in_dim" and hint(inst.shape.size) > hint(inst.operands[0].shape.size):
            preferred.add(id(inst.operands[0]))
        n_users = len(users[id(inst)])
        if n_users > 1 and _is_fusible(low) and not (n_users == 2 and id(inst) in recomputable):
            preferred.add(id(inst))
    buffered = set(required)
    for inst in comp.instructions:  # operands first, so a chain sees its operands' fate
        if id(inst) in preferred and not _cheap(sources[id(inst)], buffered):
            buffered.add(id(inst))
    kernels = [i for i in comp.instructions if id(i) in buffered and i.opcode != "parameter"]
    elements: dict[int, dict[int, Instruction]] = {}
    for inst in kernels:
        if isinstance(inst.shape, TupleShape):
            buffered.discard(id(inst))
        elif isinstance(lowerings[id(inst)], TupleElement):
            elements.setdefault(id(inst.operands[0]), {}).setdefault(inst.attrs["index"], inst)
    return FusionPlan(comp, buffered, kernels, platform, elements)
