"""llvm-cpu's own lowerings, registered under ``PLATFORM`` in
``plaidarray.codegen.lowering``: what calls BLAS (``dot``), LAPACK (``custom_call``),
the C math library and the runtime's routines (``elementwise``, ``sort``, ``positions``). Every other
op takes its target-neutral lowering (``plaidarray.codegen.lowerings``)."""

from . import custom_call, dot, elementwise, positions, sort  # noqa: F401
from ..platform import PLATFORM

__all__ = ["PLATFORM"]
