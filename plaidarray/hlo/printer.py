"""HLO text in XLA's style, for dumps, ``lower().as_text()`` and the demo."""

from __future__ import annotations

from .ir import Computation, Instruction, Module


def _attr_text(key: str, value: object) -> str:
    if isinstance(value, tuple):
        return f"{key}={{{','.join(map(str, value))}}}"
    return f"{key}={value}"


def instruction_to_text(inst: Instruction, names: dict[int, str], is_root: bool) -> str:
    """``inst``'s line, its operands and itself called by ``names`` (``Computation.names``)."""
    prefix = "ROOT " if is_root else ""
    if inst.opcode == "parameter":
        args = str(inst.attrs["number"])
        attrs = ""
    elif inst.opcode == "constant":
        args = repr(inst.attrs["value"])
        attrs = ""
    else:
        args = ", ".join(names[id(o)] for o in inst.operands)
        attrs = "".join(", " + _attr_text(k, v) for k, v in sorted(inst.attrs.items()))
    return f"  {prefix}{names[id(inst)]} = {inst.shape} {inst.opcode}({args}){attrs}"


def computation_to_text(comp: Computation, title: str | None = None) -> str:
    lines = [f"{title or 'ENTRY ' + comp.name} {{"]
    roots = {id(o) for o in comp.outputs} if len(comp.outputs) == 1 else set()
    lines += [instruction_to_text(i, comp.names, id(i) in roots) for i in comp.instructions]
    if len(comp.outputs) > 1:
        shapes = ", ".join(str(o.shape) for o in comp.outputs)
        outputs = ", ".join(comp.names[id(o)] for o in comp.outputs)
        lines.append(f"  ROOT tuple = ({shapes}) tuple({outputs})")
    lines.append("}")
    return "\n".join(lines)


def module_to_text(module: Module) -> str:
    comp = module.entry
    params = ", ".join(str(p.shape) for p in comp.parameters)
    results = ", ".join(str(o.shape) for o in comp.outputs)
    header = f"HloModule {module.name}, entry_computation_layout={{({params})->({results})}}"
    nested = "".join(computation_to_text(sub.computation, repr(sub)) + "\n\n" for sub in _nested(comp))
    return header + "\n\n" + nested + computation_to_text(comp) + "\n"


def _nested(comp: Computation) -> list:
    """The nested computations (branches, loop bodies) used by ``comp``, innermost first.
    Recursive on their nesting, the traced program's (tests/project/test_recursion.py)."""
    from .ops.control_flow import Subcomputation

    found: dict[str, Subcomputation] = {}
    for inst in comp.instructions:
        for value in inst.attrs.values():
            if isinstance(value, Subcomputation) and repr(value) not in found:
                for inner in _nested(value.computation):
                    found.setdefault(repr(inner), inner)
                found[repr(value)] = value
    return list(found.values())
