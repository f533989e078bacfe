"""llvm-cpu's elementwise lowerings that call the C math library (``b.libm``: complex
inverse and hyperbolic functions, ``hypot``, ``nextafter``, ``fmod``). Ops lowered here
only for some dtype kinds keep the target-neutral lowering for the others."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from ....codegen.lowering import Elementwise, lowering_for, register_lowering
from ....codegen.lowerings.elementwise import Emit, by_kind
from ..platform import PLATFORM


def _libm(name: str) -> Emit:
    return lambda b, args, inst: b.libm(name, args, inst.shape.dtype)


def _lower(name: str, emit: Emit, expensive: bool = False) -> None:
    register_lowering(name, Elementwise(emit, expensive), PLATFORM)


def _lower_kinds(name: str, **emitters: Emit) -> None:
    """Lower ``name`` on the dtype kinds of ``emitters`` with them, on the others as the
    target-neutral lowering does."""
    neutral = cast(Elementwise, lowering_for(name))
    register_lowering(name, replace(neutral, emit=by_kind(neutral.emit, **emitters)), PLATFORM)


for _name in ("asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"):
    _lower_kinds(_name, c=_libm("c" + _name))
_lower("hypot", _libm("hypot"), expensive=True)
_lower("nextafter", _libm("nextafter"))
_lower_kinds("remainder", f=_libm("fmod"))
