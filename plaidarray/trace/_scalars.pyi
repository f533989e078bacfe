"""Types of ``_scalars.c``. Its Python definition: ``scalars.value``."""

from typing import Any

def configure(node_type: type, shape_type: type, ndarray: type, host: Any, dtype_codes: dict, op_codes: dict,
              directions: dict, most_ops: int, fallback: Any, op_defs: dict, /) -> None: ...
def value(node: Any, /) -> Any: ...
