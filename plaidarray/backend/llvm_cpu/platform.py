"""What llvm-cpu registers its own things under: the platform of its lowerings
(``codegen/lowering.py``: ``register_lowering(..., PLATFORM)``) and the namespace of its
own HLO ops (``hlo/opdef.py``: ``llvm_cpu.<op>``, which its passes make)."""

from ...hlo.opdef import op_namespace

PLATFORM = "llvm-cpu"

OPS = op_namespace("llvm_cpu")
