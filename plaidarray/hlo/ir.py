"""HLO intermediate representation: instructions, computations and modules.

Like XLA's HLO, a computation is a DAG of instructions in SSA form kept in a
topological order; every instruction has a static :class:`Shape` (a ``TupleShape`` for
an op with several results, whose ``get_tuple_element`` users select them). Attributes are plain
hashable Python values so that structural identity (for CSE and for the executable
cache) is a tuple comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from ..cached_property import cached_property
from .opdef import lookup
from .shape import Shape

T = TypeVar("T")


class HasOperands(Protocol):
    """A vertex of a dataflow graph: an :class:`Instruction`, or a lazy graph's node."""

    @property
    def operands(self) -> Sequence[Any]: ...


V = TypeVar("V", bound=HasOperands)


class Instruction:
    """One HLO operation: ``opcode(operands) {attrs} -> shape``. Never changed once made:
    passes share the instructions they keep between the computation they read and the one
    they return, so an instruction has no name of its own either (``Computation.names``)."""

    __slots__ = ("opcode", "operands", "attrs", "shape")

    def __init__(self, opcode: str, operands: Sequence[Instruction], attrs: dict[str, Any],
                 shape: Shape) -> None:
        self.opcode = opcode
        self.operands = tuple(operands)
        self.attrs = attrs
        self.shape = shape

    @classmethod
    def make(cls, opcode: str, operands: Sequence[Instruction], **attrs: Any) -> Instruction:
        """Create an instruction, deriving its shape from the op's rule."""
        op = lookup(opcode)
        op.check_arity(len(operands))
        shape = op.infer([o.shape for o in operands], attrs)
        return cls(opcode, operands, attrs, shape)

    def attr_key(self) -> tuple:
        return attr_key(self.attrs)


    def __repr__(self) -> str:
        return f"<{self.opcode}: {self.shape}>"


def attr_key(attrs: dict[str, Any]) -> tuple:
    """Attributes as a hashable, order-independent key (for structural identity)."""
    return tuple(sorted(attrs.items()))


def depth_first(roots: Iterable[T], children: Callable[[T], Iterable[T]],
                key: Callable[[T], Hashable] = id) -> list[T]:
    """``roots`` and everything reachable from them through ``children``, each once (as
    told apart by ``key``) and after its children: a depth-first post-order walk with
    an explicit stack, so that chains far deeper than Python's recursion limit are
    walked like any other graph."""
    order: list[T] = []
    seen: set[Hashable] = set()
    for root in roots:
        k = key(root)
        if k in seen:
            continue
        seen.add(k)
        stack = [(root, iter(children(root)))]
        while stack:
            node, pending = stack[-1]
            for child in pending:
                k = key(child)
                if k not in seen:
                    seen.add(k)
                    stack.append((child, iter(children(child))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def topological_order(outputs: Iterable[V], is_leaf: Callable[[V], bool] = lambda inst: False) -> list[V]:
    """Instructions reachable from ``outputs``, each after its operands; the operands of
    those for which ``is_leaf`` holds are not visited. The lazy graph's nodes are walked
    with it too."""
    return depth_first(outputs, lambda inst: () if is_leaf(inst) else inst.operands)


class Computation:
    """A function over HLO values: numbered parameters in, one or more outputs out. Its
    instructions are exactly those its outputs reach, in the order of a walk from them
    (``topological_order``, the order its kernels run in): dead code is dropped wherever a
    computation is made, so no pass removes it."""

    def __init__(self, name: str, parameters: Sequence[Instruction], outputs: Sequence[Instruction],
                 instructions: Sequence[Instruction] | None = None) -> None:
        """``instructions``: the computation's instructions in that order, given by a caller
        that has them so already, so as not to walk the graph again."""
        self.name = name
        self.parameters = list(parameters)
        self.outputs = list(outputs)
        self.instructions = topological_order(self.outputs) if instructions is None else list(instructions)

    @cached_property
    def names(self) -> dict[int, str]:
        """Each instruction's name in this computation, by id (for the printer and the
        verifier's messages): ``p<number>`` for a parameter, ``<opcode>.<position>``."""
        return {id(inst): f"p{inst.attrs['number']}" if inst.opcode == "parameter" else f"{inst.opcode}.{i}"
                for i, inst in enumerate(self.instructions)}

    def users(self) -> dict[int, list[Instruction]]:
        """Map from ``id(instruction)`` to the instructions that use it."""
        out: dict[int, list[Instruction]] = {id(i): [] for i in self.instructions}
        for inst in self.instructions:
            for o in inst.operands:
                out[id(o)].append(inst)
        return out

    def rewrite(self, fn: Callable[[Instruction, tuple[Instruction, ...]], Instruction]) -> Computation:
        """Rebuild the computation bottom-up: ``fn(old, new_operands)`` returns the
        replacement of each instruction. Parameters are kept as they are. When every
        instruction is its own replacement, the computation itself: a pass that changes
        nothing returns its input, and a graph is rebuilt only where a pass changed it."""
        new: dict[int, Instruction] = {}
        changed = False
        for inst in self.instructions:
            if inst.opcode == "parameter":
                new[id(inst)] = inst
                continue
            operands = tuple(new[id(o)] for o in inst.operands)
            replacement = new[id(inst)] = fn(inst, operands)
            changed = changed or replacement is not inst
        if not changed:
            return self
        return Computation(self.name, self.parameters, [new[id(o)] for o in self.outputs])


def rebuild(inst: Instruction, operands: tuple[Instruction, ...]) -> Instruction:
    """``inst`` itself if its operands did not change, else a copy over ``operands``."""
    if all(a is b for a, b in zip(inst.operands, operands)):
        return inst
    return Instruction(inst.opcode, operands, inst.attrs, inst.shape)


class Module:
    """A compilation unit: one entry computation (XLA's HloModule). ``donated`` numbers
    the parameters whose buffers the caller gives up: the executable may write its
    results into them (XLA's input/output aliasing). ``n_symbols`` counts the run-time
    sizes of a shape-generic computation (``symbolic.py``), whose executable takes them
    when bound (``Executable.bind``).

    ``structure_key`` is the entry computation's structural key when its maker computed
    one already (the lazy graph's key, read off the graph before its HLO was built): a
    compiler names and caches the code by it (``fingerprint.module_description``) instead
    of computing another, so a compile miss computes one. Such a key describes the
    computation completely, and its ``repr`` is the same in every process."""

    def __init__(self, name: str, entry: Computation, donated: frozenset[int] = frozenset(),
                 n_symbols: int = 0, structure_key: Hashable | None = None) -> None:
        self.name = name
        self.entry = entry
        self.donated = donated
        self.n_symbols = n_symbols
        self.structure_key = structure_key

    def to_text(self) -> str:
        from .printer import module_to_text

        return module_to_text(self)
