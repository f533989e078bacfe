"""What llvm-nvptx registers its own things under: the platform of its lowerings
(``codegen/lowering.py``, ``lowerings.py``). An op with none for it (a BLAS or LAPACK
call, a sort) is a NotImplementedError naming it and the platform."""

PLATFORM = "llvm-nvptx"
