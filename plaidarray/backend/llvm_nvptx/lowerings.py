"""llvm-nvptx's own lowerings, registered under ``PLATFORM``: the elementwise ops the host
takes from its C library alone (``llvm_cpu/lowerings/elementwise.py``), from libdevice's
functions of the same names (``hypot``, ``nextafter``, ``fmod`` for a float ``remainder``),
which the target's ``math_symbol`` names and ``stages.py`` links. Every other op takes its
target-neutral lowering."""

from __future__ import annotations

from dataclasses import replace
from typing import cast

from ...codegen.lowering import Elementwise, lowering_for, register_lowering
from ...codegen.lowerings.elementwise import Emit, by_kind
from .platform import PLATFORM


def _libdevice(name: str) -> Emit:
    return lambda b, args, inst: b.libm(name, args, inst.shape.dtype)


register_lowering("hypot", Elementwise(_libdevice("hypot"), expensive=True), PLATFORM)
register_lowering("nextafter", Elementwise(_libdevice("nextafter")), PLATFORM)
_remainder = cast(Elementwise, lowering_for("remainder"))
register_lowering("remainder", replace(_remainder, emit=by_kind(_remainder.emit, f=_libdevice("fmod"))), PLATFORM)
