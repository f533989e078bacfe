"""The target-neutral lowerings of the HLO op set, one module per op family (as
``hlo/ops/`` defines them). Importing this package registers them in
``plaidarray.codegen.lowering``; a platform registers its own beside them."""

from . import (control_flow, data_movement, determinant, dot, dynamic, elementwise, factor_check, fft, floored,  # noqa: F401
               gather, generators, log_add_exp, positions, reduce, scan, sign_bit, sort, triangle, tuples)
