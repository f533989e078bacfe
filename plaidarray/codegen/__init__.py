"""Target-neutral code generation, shared by the LLVM backends: fusion of HLO into kernels
(``fusion``), buffers shared with donated parameters (``buffer_sharing``), kernels as
``linalg.generic`` on memrefs built with xDSL (``linalg_builder``), linalg to loop nests
(``linalg_to_loops``), and loop fusion and contraction of temporaries (``loop_fusion``).

A backend adds what is its own: an emitter from these loops to its machine (llvm-cpu's
``llvm_emitter``), its runtime routines and library calls, and its executable. Nothing
here imports a backend.
"""
