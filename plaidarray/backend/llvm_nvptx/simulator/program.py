"""A kernel and the functions it calls, laid out as one flat program with its memory layout.

Every function's instructions are compiled (through the opcode table) into ``Op``s placed one
after another; branch targets, call entries and return copies are resolved to program
counters and param-space offsets here, so the machine only moves program counters and bytes.
Each variable gets an address in its space: shared variables (module and function scope) one
after another with the dynamic ``.extern .shared`` region last, each function's ``.local``
depot in the per-thread local space, kernel parameters, function parameters and call-site
``.param`` slots in the per-thread param space. Recursion is refused: registers and frames are
static per function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import memory_instructions as _memory_instructions  # noqa: F401  (registers its opcodes)
from . import warp as _warp  # noqa: F401  (registers its opcodes)
from .errors import SimulatorError
from .instructions import CARRY, OPCODES, Op
from .memory import SPACE_START
from .operands import OperandCompiler
from .ptx import Function, Instruction, Module, Register, Symbol, Variable
from .scalars import TYPES, ScalarType


@dataclass
class Layout:
    """Where every variable lives: ``symbols`` maps (qualified) names to (space, address)."""

    symbols: dict[str, tuple[str, int]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=lambda: {s: SPACE_START for s in ("shared", "local", "param",
                                                                                     "const")})
    const_init: list[tuple[int, bytes]] = field(default_factory=list)
    kernel_params: list[tuple[Variable, int]] = field(default_factory=list)

    def place(self, key: str, variable: Variable, space: str | None = None) -> int:
        space = space or variable.space
        align = max(variable.align, 1)
        address = -(-self.sizes[space] // align) * align
        self.sizes[space] = address + variable.nbytes
        self.symbols[key] = (space, address)
        if space == "const" and variable.init is not None:
            self.const_init.append((address, variable.init))
        return address


@dataclass
class Program:
    """The compiled kernel: ops, entry points, join points and the memory layout."""

    kernel: Function
    ops: list[Op]
    guards: list[tuple[Register, bool] | None]
    joins: set[int]
    layout: Layout
    returns: dict[int, list[tuple[int, int, int]]]
    registers: dict[str, ScalarType]


def reachable(module: Module, kernel: str) -> list[Function]:
    """The kernel and every function it may call, kernel first; refuses recursion."""
    if kernel not in module.functions or not module.functions[kernel].is_kernel:
        raise SimulatorError(f"no kernel named {kernel!r} in the module")
    order: list[Function] = []
    pending: list[tuple[str, tuple[str, ...]]] = [(kernel, ())]  # depth first, each name with its callers
    while pending:
        name, path = pending.pop()
        if name in path:
            raise SimulatorError(f"recursive call chain {' -> '.join((*path, name))} is not supported")
        function = module.functions.get(name)
        if function is None or not function.defined:
            raise SimulatorError(f"{path[-1]} calls {name}, which the module does not define")
        if function not in order:
            order.append(function)
        callees = [next((op for op in ins.operands if isinstance(op, Symbol)), None)
                   for ins in function.instructions if ins.opcode[0] == "call"]
        pending += [(callee.name, (*path, name)) for callee in reversed(callees) if callee is not None]
    return order


def layout(module: Module, functions: list[Function], dynamic_shared: int, globals_: dict[str, int]) -> Layout:
    """Addresses of all variables the kernel can reach, for one launch."""
    result = Layout()
    for name, variable in module.variables.items():
        if variable.space == "global":
            result.symbols[name] = ("global", globals_[name])
        elif variable.space in ("shared", "const") and variable.count is not None:
            result.place(name, variable)
    for function in functions:
        for variable in function.variables:
            if variable.space in ("shared", "local", "param") and variable.count is not None:
                result.place(f"{function.name}:{variable.name}", variable)
            elif variable.space not in ("shared", "local", "param"):
                raise SimulatorError(f"function-scope .{variable.space} variable {variable.name} is not supported")
        for variable in function.params + function.returns:
            key = variable.name if function.is_kernel else f"{function.name}:{variable.name}"
            address = result.place(key, variable, "param")
            if function.is_kernel:
                result.kernel_params.append((variable, address))
    externs = [(k, v) for k, v in module.variables.items() if v.space == "shared" and v.count is None]
    externs += [(f"{f.name}:{v.name}", v) for f in functions for v in f.variables if v.space == "shared"
                and v.count is None]
    align = max([16] + [v.align for _, v in externs])
    start = -(-result.sizes["shared"] // align) * align
    for key, _ in externs:
        result.symbols[key] = ("shared", start)
    result.sizes["shared"] = start + dynamic_shared
    return result


def compile_function(function: Function, symbols: dict[str, tuple[str, int]]) -> list[Op]:
    """Compile each instruction; SimulatorError names the line of anything unsupported."""
    compiler = OperandCompiler(function.name, function.registers, symbols)
    ops = []
    for ins in function.instructions:
        builder = OPCODES.get(ins.opcode[0])
        try:
            if builder is None:
                raise SimulatorError(f"unsupported instruction {'.'.join(ins.opcode)}")
            op = builder(ins, compiler)
            if ins.guard is not None:
                compiler.key(ins.guard)
        except (SimulatorError, KeyError, ValueError, IndexError) as error:
            raise SimulatorError(f"{function.name}, PTX line {ins.line} ({ins.text!r}): {error}") from None
        ops.append(op)
    return ops


def build(module: Module, kernel: str, dynamic_shared: int, globals_: dict[str, int]) -> Program:
    functions = reachable(module, kernel)
    memory_layout = layout(module, functions, dynamic_shared, globals_)
    ops: list[Op] = []
    guards: list[tuple[Register, bool] | None] = []
    starts: dict[str, int] = {}
    joins: set[int] = set()
    registers: dict[str, ScalarType] = {CARRY: TYPES["u32"]}
    for function in functions:
        starts[function.name] = len(ops)
        joins.update(len(ops) + index for index in function.labels.values())
        compiled = compile_function(function, memory_layout.symbols)
        for op in compiled:
            if op.kind == "branch":
                label = op.extra["label"]
                if label not in function.labels:
                    raise SimulatorError(f"{function.name}, PTX line {op.line}: unknown label {label}")
                op.target = starts[function.name] + function.labels[label]
        ops += compiled
        guards += [_guard(function, ins) for ins in function.instructions]
        registers.update({f"{function.name}:{name}": ty for name, ty in function.registers.items()})
    returns = _link_calls(module, ops, functions, starts, memory_layout)
    joins.update(returns)
    return Program(functions[0], ops, guards, joins, memory_layout, returns, registers)


def _guard(function: Function, ins: Instruction) -> tuple[Register, bool] | None:
    if ins.guard is None:
        return None
    return Register(f"{function.name}:{ins.guard.name}"), ins.guard_negated


def _link_calls(module: Module, ops: list[Op], functions: list[Function], starts: dict[str, int],
                memory_layout: Layout) -> dict[int, list[tuple[int, int, int]]]:
    """Resolve calls: entry pc, argument copies in, return-value copies out (by return pc)."""
    owner = {}
    for function in functions:
        for index in range(len(function.instructions)):
            owner[starts[function.name] + index] = function
    returns: dict[int, list[tuple[int, int, int]]] = {}
    for pc, op in enumerate(ops):
        if op.kind != "call":
            continue
        caller, callee = owner[pc], module.functions[op.extra["callee"]]
        compiler = OperandCompiler(caller.name, caller.registers, memory_layout.symbols)
        if len(op.extra["arguments"]) != len(callee.params) or len(op.extra["returns"]) != len(callee.returns):
            raise SimulatorError(f"{caller.name}, PTX line {op.line}: call to {callee.name} does not match its "
                                 f"declaration")

        op.target = starts[callee.name]
        op.extra["copy_in"] = [(_param_slot(compiler, arg, op.line), memory_layout.symbols[f"{callee.name}:{p.name}"][1],
                                p.nbytes) for arg, p in zip(op.extra["arguments"], callee.params)]
        returns[pc + 1] = [(memory_layout.symbols[f"{callee.name}:{r.name}"][1], _param_slot(compiler, ret, op.line),
                            r.nbytes) for ret, r in zip(op.extra["returns"], callee.returns)]
    return returns


def _param_slot(compiler: OperandCompiler, operand: object, line: int) -> int:
    """The param-space address of a call's argument or return slot."""
    if not isinstance(operand, Symbol):
        raise SimulatorError(f"PTX line {line}: call arguments must be .param names")
    space, address = compiler.symbol(operand)
    if space != "param":
        raise SimulatorError(f"PTX line {line}: {operand.name} is not a .param")
    return address


def validate(module: Module) -> None:
    """Compile every defined function once, so unsupported PTX fails at load time."""
    globals_ = {name: 0 for name, v in module.variables.items() if v.space == "global"}
    for function in module.functions.values():
        if function.defined:
            compile_function(function, layout(module, [function], 0, globals_).symbols)
