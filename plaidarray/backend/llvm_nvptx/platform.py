"""What llvm-nvptx registers its own things under: the platform of its lowerings
(``codegen/lowering.py``). It has none of its own yet: every op takes its target-neutral
lowering, and an op that has none (a BLAS or LAPACK call, a sort) is a NotImplementedError
naming it and the platform."""

PLATFORM = "llvm-nvptx"
