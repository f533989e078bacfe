"""The LLVM core that every LLVM backend imports (llvm-cpu today; a GPU backend through
LLVM's NVPTX target next), as XLA's CPU and GPU compilers share its LLVM IR emitter: not a
backend itself, and it imports none.

- ``target.py``: the one object carrying what code generation knows of a target;
- ``lowering.py``: the stages from an HLO module to each kernel's LLVM IR;
- ``emitter.py``: loop-level IR to LLVM IR, completed by each backend's ``Renderer``
  (its math functions, runtime routines, imports and kernel ABI);
- ``kernel_source.py``, ``group_cache.py``: a kernel's IR as code generation makes it, and
  the kernel groups lowered in this process;
- ``ir_loops.py``: loops for routines written directly in LLVM IR;
- ``codegen.py``, ``codegen_worker.py``: LLVM IR to optimised object code for a target, in
  this process (under the one LLVM lock) or in code generator processes;
- ``lazy_import.py``: the code generator's import at a process's first compile, a Ctrl-C
  during it raised as itself;
- ``object_cache.py``, ``sources.py``, ``storing.py``: the persistent cache of compiled
  code, keyed with the digest of plaidarray's sources, and the thread that writes to it.
"""
