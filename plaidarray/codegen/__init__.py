"""Target-neutral code generation, shared by the LLVM backends: each op's lowering by
platform (``lowering``, the target-neutral ones in ``lowerings/``), ops expanded into
others (``expand``), fusion of HLO into kernels (``fusion``), buffers shared with
donated parameters (``buffer_sharing``), kernels as ``linalg.generic`` on memrefs built
with xDSL (``linalg_builder``), linalg to loop nests (``linalg_to_loops``), and loop
fusion and contraction of temporaries (``loop_fusion``).

A backend adds what is its own: the lowerings it makes differently (library calls,
runtime routines), an emitter from these loops to its machine (the LLVM backends share
``backend/llvm/emitter.py``, each with a renderer of its own) and its executable. Nothing here imports a backend. Importing this
package registers the target-neutral lowerings.
"""

from . import lowerings  # noqa: F401
