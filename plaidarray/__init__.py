"""plaidarray: a lazy Array API namespace compiled through HLO, xDSL linalg and LLVM.

``import plaidarray as xp`` and use it like any Array API library; values are computed
by compiled code when you look at them.
"""

from __future__ import annotations

import gc as _gc
import math as _math
import sys as _sys

from .backend.llvm import object_cache as _object_cache  # noqa: F401  (first: its import starts checking
# the installation's stamps, which the rest of the import overlaps)
from . import api_version as _api_version
from . import hlo as _hlo  # noqa: F401  (registers the HLO op set)
from .aot import export
from .api_version import set_array_api_version
from .api import CHAPTERS as _CHAPTERS
from .api.creation import *  # noqa: F401,F403
from .api.data_types import *  # noqa: F401,F403
from .api.elementwise import *  # noqa: F401,F403
from .api.indexing import *  # noqa: F401,F403
from .api.inspection import __array_namespace_info__  # noqa: F401
from .api.linear_algebra import *  # noqa: F401,F403
from .api.manipulation import *  # noqa: F401,F403
from .api.searching import *  # noqa: F401,F403
from .api.set_functions import *  # noqa: F401,F403
from .api.sorting import *  # noqa: F401,F403
from .api.statistical import *  # noqa: F401,F403
from .api.utility import *  # noqa: F401,F403
from .backend.cache import EXECUTABLES as _EXECUTABLES
from .backend.buffer_pool import POOL as _POOL
from .backend.cache import CacheInfo
from .backend.devices import Device
from .backend.devices import set_default as set_default_device
from .backend.registry import available as backends
from .backend.registry import set_backend
from .dtypes import bool_ as bool
from .dtypes import complex64, complex128, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64
from .trace.array import Array
from .trace.control_flow import cond, fori_loop, while_loop
from .trace.jit import jit
from .trace.tracing import TracerError
from .version import __version__

__array_api_version__ = _api_version.current()
SUPPORTED_VERSIONS = _api_version.SUPPORTED

e = _math.e
pi = _math.pi
inf = _math.inf
nan = _math.nan
newaxis = None


def cache_info() -> CacheInfo:
    """Executable-cache statistics: hits, misses, compiles, compile time, size."""
    return _EXECUTABLES.info()


def clear_cache() -> None:
    """Drop every cached executable (their machine code is freed), reset the counters and
    give the free blocks of the buffer pool back to the system, as well as the results
    of recent concatenations (``api/extended.py``) and what functions recorded for their
    signatures (``api/recipes.py``)."""
    _EXECUTABLES.clear()
    _POOL.clear()
    _extended.forget()
    _recipes.forget()


__all__ = sorted(
    {name for chapter in _CHAPTERS for name in chapter.__all__}
    | {"Array", "bool", "complex64", "complex128", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
       "uint64", "e", "pi", "inf", "nan", "newaxis", "set_array_api_version", "set_backend", "set_default_device", "Device", "backends", "cache_info",
       "clear_cache",
       "jit", "export", "cond", "while_loop", "fori_loop", "TracerError"}
)
from . import fft  # noqa: E402
from . import linalg  # noqa: E402
from .api import extended as _extended  # noqa: E402
from .api import recipes as _recipes  # noqa: E402
from .api.indexing import setitem as _setitem  # noqa: E402
from .api.views import getitem as _getitem, index_step as _index_step  # noqa: E402
from .trace.array import install_namespace as _install_namespace  # noqa: E402

_install_namespace(_sys.modules[__name__], _getitem, _setitem, _index_step)
from . import config as _config  # noqa: E402

# What exists now lives as long as the process: the modules of NumPy, llvmlite and
# plaidarray, ~30k objects the collector walked at each collection of the older generations
# (1.3-2.5 ms at a script's first collection of the middle one, 24 ms at a full one among
# many kept windows), where a script's own objects are a few thousand.
if _config.get("PLAIDARRAY_FREEZE_AT_IMPORT") == "1":
    _gc.freeze()

# Planning and recording a script's graphs makes thousands of containers that refcounting
# frees and no cyclic garbage (the eager scripts' first and second runs: ~850 collections of
# the youngest generation at 700, ~65 ms, collected nothing): the threshold is raised, never
# lowered.
_threshold = _config.get("PLAIDARRAY_GC_THRESHOLD")
if _threshold > _gc.get_threshold()[0]:
    _gc.set_threshold(_threshold, *_gc.get_threshold()[1:])
del _threshold
