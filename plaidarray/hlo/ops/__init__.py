"""The HLO op set. Importing this package registers every op in ``plaidarray.hlo.opdef.OPS``."""

from . import control_flow, custom_call, data_movement, determinant, dot, dynamic, elementwise, factor_check, fft, gather, generators, reduce, scan, sort, triangle, tuples  # noqa: F401
