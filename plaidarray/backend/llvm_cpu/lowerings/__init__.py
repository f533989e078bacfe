"""llvm-cpu's own lowerings, registered under ``PLATFORM`` in
``plaidarray.codegen.lowering``: what calls BLAS (``dot``), LAPACK (``custom_call``),
the C math library (``elementwise``) and the runtime's extremum routine (``arg_reduce``).
Every other op takes its target-neutral lowering (``plaidarray.codegen.lowerings``)."""

from . import arg_reduce, custom_call, dot, elementwise  # noqa: F401
from ..platform import PLATFORM

__all__ = ["PLATFORM"]
