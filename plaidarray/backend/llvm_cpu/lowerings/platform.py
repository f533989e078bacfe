"""The platform name under which llvm-cpu registers its own lowerings
(``codegen/lowering.py``: ``register_lowering(..., platform)``)."""

PLATFORM = "llvm-cpu"
