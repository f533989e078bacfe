"""The HLO op set. Importing this package registers every op in ``plaidarray.hlo.opdef.OPS``."""

from . import data_movement, dot, dynamic, elementwise, gather, generators, reduce, scan, sort  # noqa: F401
