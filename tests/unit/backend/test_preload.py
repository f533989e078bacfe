"""The loads the backend's import starts on a thread (``preload.py``): what a script's
first read and first matrix product would wait for, done before they come, and a fork
that waits for them."""

from __future__ import annotations

import os

import pytest
from jit_helpers import run_child

from plaidarray.backend.llvm import object_cache
from plaidarray.backend.llvm_cpu import blas_lapack, installed_library


#: Whether a child's import loads both extension modules' files before any product needs
#: them, and the installation's library and catalogue before any read does, on the
#: loading thread (``preload.py``), and nothing else of SciPy.
LOADED_AT_IMPORT = """
import json, sys, threading
import plaidarray
from plaidarray.backend.llvm_cpu import blas_lapack, installed_library, op_catalogue
loaders = [t for t in threading.enumerate() if t.name == "plaidarray-preload"]
for t in loaders:
    t.join(60)
print(json.dumps({"loaders": len(loaders), "loaded": blas_lapack._loaded_extension.cache_info().currsize,
                  "scipy": "scipy" in sys.modules, "library": list(installed_library._libraries),
                  "catalogues": [where for where, _ in op_catalogue._opened]}))
"""


def test_the_import_loads_blas_and_lapack_in_the_background(tmp_path):
    found = run_child(LOADED_AT_IMPORT, tmp_path)
    assert found["loaded"] == len(blas_lapack.LIBRARIES)
    assert found["loaders"] <= 1 and not found["scipy"]


@pytest.mark.skipif(not (object_cache.INSTALLED / installed_library.LIBRARY).is_file(),
                    reason="no kernels built at installation")
def test_the_import_opens_the_installed_library_and_catalogue_in_the_background(tmp_path):
    found = run_child(LOADED_AT_IMPORT, tmp_path, PLAIDARRAY_INSTALLED_KERNELS="1")
    installed = str(object_cache.INSTALLED)
    assert found["library"] == [installed] and found["catalogues"] == [installed]


#: Whether a child's loading thread has done its loads (the catalogue, whose first key
#: needs plaidarray's version, and the library) while the package is still being imported:
#: the import, about to import ``plaidarray.trace.jit`` (after the backend), waits for the
#: thread if it still runs, then counts the catalogues and libraries opened. A thread that
#: imported the version from the package waited for the package's import to end, so its
#: loads came after it, when a script's first read wanted them; here that wait never
#: ends, and the join times out.
LOADS_DURING_THE_IMPORT = """
import importlib.abc, json, sys, threading
finished = []
class WaitForTheLoads(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "plaidarray.trace.jit":
            sys.meta_path.remove(self)
            for t in threading.enumerate():
                if t.name == "plaidarray-preload":
                    t.join(20)
            catalogue = sys.modules["plaidarray.backend.llvm_cpu.op_catalogue"]
            library = sys.modules["plaidarray.backend.llvm_cpu.installed_library"]
            finished.append([len(catalogue._opened), len(library._libraries)])
        return None
sys.meta_path.insert(0, WaitForTheLoads())
import plaidarray
print(json.dumps({"finished": finished}))
"""


@pytest.mark.skipif(not (object_cache.INSTALLED / installed_library.LIBRARY).is_file(),
                    reason="no kernels built at installation")
def test_the_loads_finish_while_the_package_is_still_being_imported(tmp_path):
    found = run_child(LOADS_DURING_THE_IMPORT, tmp_path, PLAIDARRAY_INSTALLED_KERNELS="1")
    assert found == {"finished": [[1, 1]]}


#: A child process whose load is slow (0.3 s) and which forks at once: the fork waits for
#: it, so the forked child finds it done (the platform's loader's lock not held).
FORK_WAITS = """
import json, os, time
import plaidarray
from plaidarray.backend.llvm_cpu import backend, blas_lapack, preload
done = []
blas_lapack.load_extensions = lambda: (time.sleep(0.3), done.append(True))
preload.start(backend.compiler)
pid = os.fork()
if pid == 0:
    os._exit(0 if done else 1)
_, status = os.waitpid(pid, 0)
print(json.dumps({"loaded_before_the_fork": os.waitstatus_to_exitcode(status) == 0}))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_fork_waits_for_the_background_load(tmp_path):
    assert run_child(FORK_WAITS, tmp_path)["loaded_before_the_fork"]
