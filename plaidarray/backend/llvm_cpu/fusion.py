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
  are duplicated into every consumer instead of being stored.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...hlo import Computation, Instruction
from ...hlo.lowering import Elementwise, Indexing, Kernel, Reduction
from ...hlo.opdef import lookup


def lowering_of(inst: Instruction) -> object:
    return lookup(inst.opcode).lowering


def is_fusible(inst: Instruction) -> bool:
    return isinstance(lowering_of(inst), (Elementwise, Indexing))


@dataclass
class FusionPlan:
    computation: Computation
    materialized: set[int]
    kernels: list[Instruction]  # materialized non-parameters, in execution order

    def is_buffer(self, inst: Instruction) -> bool:
        return id(inst) in self.materialized


def _cheap(inst: Instruction, materialized: set[int]) -> bool:
    """A generator, or re-indexings down to a generator or a buffer."""
    while isinstance(lowering_of(inst), Indexing):
        inst = inst.operands[0]
    return inst.opcode in ("constant", "iota") or id(inst) in materialized


#: A value with two users is computed in both when its fused expression has at most
#: this many elementwise ops, none of them expensive: that is cheaper than writing and
#: re-reading a buffer. An expensive value (softmax's exp(x - max), which feeds both the
#: sum and the division) is stored once; when its consumers walk the same rows, the
#: loop passes (loop_fusion.py) fuse them and shrink the stored value to one row.
RECOMPUTE_LIMIT = 4


def _recomputed(inst: Instruction, n_users: int) -> bool:
    if n_users != 2:
        return False
    fused = _fused_elementwise(inst)
    return len(fused) <= RECOMPUTE_LIMIT and not any(low.expensive for low in fused)


def _fused_elementwise(inst: Instruction) -> list[Elementwise]:
    """The lowerings of the elementwise ops of the expression fused into ``inst``, down
    to values that cannot fuse (parameters, reductions, kernel ops)."""
    seen: set[int] = set()
    stack = [inst]
    found = []
    while stack:
        i = stack.pop()
        if id(i) not in seen and is_fusible(i):
            seen.add(id(i))
            if isinstance(lowering_of(i), Elementwise):
                found.append(lowering_of(i))
            stack.extend(i.operands)
    return found


def plan_fusion(comp: Computation) -> FusionPlan:
    users = comp.users()
    required = {id(p) for p in comp.parameters} | {id(o) for o in comp.outputs}
    preferred: set[int] = set()
    for inst in comp.instructions:
        low = lowering_of(inst)
        if isinstance(low, (Kernel, Reduction)):
            required.add(id(inst))
        if isinstance(low, Kernel):
            required.update(id(o) for o in inst.operands)
        if inst.opcode == "broadcast_in_dim" and inst.shape.size > inst.operands[0].shape.size:
            preferred.add(id(inst.operands[0]))
        if len(users[id(inst)]) > 1 and is_fusible(inst) and not _recomputed(inst, len(users[id(inst)])):
            preferred.add(id(inst))
    materialized = set(required)
    for inst in comp.instructions:  # operands first, so a chain sees its operands' fate
        if id(inst) in preferred and not _cheap(inst, materialized):
            materialized.add(id(inst))
    kernels = [i for i in comp.instructions if id(i) in materialized and i.opcode != "parameter"]
    return FusionPlan(comp, materialized, kernels)
