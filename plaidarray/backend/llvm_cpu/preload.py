"""What a process's first reads would wait for, loaded on a thread as the backend is
imported: the host's target (its CPU's features, ~0.18 ms), the installation's library of
op kernels (its ``dlopen``, ~0.2 ms) and its catalogue (~0.1 ms), which a script's first
read needs, then SciPy's BLAS and LAPACK extension files (2.5 ms), which its first matrix
product needs. They overlap the rest of the user's imports and setup; a first read that
comes sooner waits only for what is left (each load holds its own lock). The platform's
loader runs without Python's lock (``shared_object.dlopen``; ``ctypes``' own ``dlopen`` held
it, and the main thread's first steps stalled for the ~6 ms of OpenBLAS's start), so the
loads cost the main thread little. Nothing the loads run imports from the package, whose
import is still running (the catalogue's first key takes plaidarray's version from
``version.py``): a thread importing from a module being imported waits for that import's
end, and the loads then came after the import, as the script's first read wanted them.

A fork waits for the thread first (``os.register_at_fork``): a child forked while the
platform's loader held its lock would find it held for good, and hang at its first load.
"""

from __future__ import annotations

import os
import threading

from ..executable import Compiler
from . import blas_lapack, installed_library, op_catalogue

#: The longest a fork waits for the loads (they take milliseconds).
FORK_WAITS_SECONDS = 10.0

#: The name of the loading thread.
THREAD_NAME = "plaidarray-preload"


def start(compiler: Compiler) -> threading.Thread:
    """Start the loads on a daemon thread (returned)."""
    loader = threading.Thread(target=load, args=(compiler,), name=THREAD_NAME, daemon=True)
    loader.start()
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(before=lambda: loader.join(FORK_WAITS_SECONDS))
    return loader


def load(compiler: Compiler) -> None:
    """The loads, in the order a script needs them. Each is what its first use would do
    itself, and fails as quietly: where one finds nothing (no installation, no SciPy),
    the first use finds the same and says so."""
    op_catalogue.opened(compiler.target)
    installed_library.load()
    blas_lapack.load_extensions()
