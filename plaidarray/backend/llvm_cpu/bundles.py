"""Bundles: the code of kernels generated together, as the persistent cache keeps it.

The kernels a compile generates are linked into one shared object (``kernels.py``); the
cache stores it once, as a bundle entry (its format, its kernels' symbols and the vector
math functions they call), and each kernel's entry names its bundle. A process loading
kernels from the cache loads each bundle once (``_loaded``), however many of its kernels
it finds one by one. Linking and storing happen on a background thread (``storing.py``):
the compiling process already runs the kernels.

The bundles built at installation are linked into one shared object, the installation's
library (``installed_library.py``); one the build kept no objects of keeps its shared
object as a file of its own, loaded where it is (``unpack``).
"""

from __future__ import annotations

import hashlib
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..llvm import object_cache
from . import installed_library, loaded_code, math_library
from .loaded_code import Code
from .shared_object import SharedObject


#: Bundles loaded in this process, by key, while a kernel holds their code.
_loaded: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()


def install(code: bytes, form: str, symbols: list[str], libraries: list[str], level: int) -> tuple[Code, str]:
    """Load a bundle, check that it defines ``symbols``, and only then store it: the cache
    never holds code that does not define what its entries name. Returns the loaded code
    and the bundle's key ("" when the disk cache is off)."""
    holder = load(code, form, libraries, level)
    missing = [symbol for symbol in symbols if not holder.address(symbol)]
    if missing:
        holder.close()
        raise RuntimeError(f"llvm-cpu: generated code does not define {', '.join(missing)}")
    key = store(code, form, symbols, libraries)
    if key:
        _loaded[key] = holder
    return holder, key


def store(code: bytes, form: str, symbols: list[str], libraries: list[str], vectors: bool = True,
          objects: Sequence[bytes] = ()) -> str:
    """Store a bundle whose code was checked to define ``symbols`` (:func:`install`, or
    the objects it was linked from, loaded when they were generated); its key ("" when
    the disk cache is off). The key is the code's digest: equal code is one entry.
    ``vectors``: whether the code calls the library functions' vector variants;
    ``objects``: the object code it was linked from, kept for the installation's library
    while one is built (``installed_library.keep_objects``)."""
    if not object_cache.enabled():
        return ""
    key = object_cache.entry_key("bundle", hashlib.blake2b(code, digest_size=20).hexdigest())
    object_cache.store(key, code, {loaded_code.FORMAT: form, "symbols": symbols, "libraries": libraries,
                                   "vectors": vectors})
    installed_library.keep_objects(key, objects)
    return key


def load(code: bytes, form: str, libraries: list[str], level: int, vectors: bool = True,
         path: str | None = None) -> Code:
    """A bundle's code loaded, once the library functions it calls are (with their vector
    variants if ``vectors``); from the shared object file ``path`` where it is given (an
    installed bundle, ``unpack``)."""
    math_library.load(libraries, shared=form == loaded_code.SHARED, vectors=vectors)
    if path is not None:
        return SharedObject.at(path)
    return loaded_code.load(code, form, level)


def find(key: str, level: int, meta: dict[str, Any] | None = None) -> Code | None:
    """The bundle stored under ``key``, loaded (once per process); None if it is gone or
    damaged. ``meta``: its entry's metadata where the caller holds it (an installed
    executable's, ``cache_entry.resolve``), which spares reading the entry."""
    if meta is None or meta.get(installed_library.IN_LIBRARY) is not True:
        found = _loaded.get(key)
        if found is not None:
            return found
    code = b""
    if meta is None:
        entry = object_cache.load(key)
        if entry is None:
            return None
        code, meta = entry
    form, libraries = meta.get(loaded_code.FORMAT), meta.get("libraries")
    if form not in loaded_code.FORMATS or not isinstance(libraries, list):
        return None
    if meta.get(installed_library.IN_LIBRARY) is True:  # not kept in ``_loaded``: held for the process's life
        return installed_library.load()
    path = None
    if meta.get(loaded_code.IN_FILE) is True:
        path = object_cache.installed_file(key + loaded_code.SUFFIX)
        if path is None or form != loaded_code.SHARED:
            return None
    elif not code:
        return None
    try:
        holder = load(code, str(form), [str(name) for name in libraries], level, meta.get("vectors") is not False, path)
    except (OSError, RuntimeError, ValueError):
        return None
    _loaded[key] = holder
    return holder


def unpack(directory: Path) -> int:
    """At installation, after the kernels are built into ``directory`` (``prebuild.py``):
    each bundle's and each vector math function's shared object as the file
    ``<key>.so`` of its own, its entry keeping the metadata alone (``loaded_code.IN_FILE``).
    A process then loads it where it is; from the entry's bytes, it wrote them to a file
    of its own and read them back, twice the time of the ``dlopen`` itself (0.23 ms a
    bundle, against 0.09). Returns the entries unpacked."""
    unpacked = 0
    for key, code, meta in object_cache.installed_entries(directory):
        shared = ("libraries" in meta or "library" in meta) and meta.get(loaded_code.FORMAT) == loaded_code.SHARED
        if shared and not meta.get(loaded_code.IN_FILE) and not meta.get(installed_library.IN_LIBRARY):
            (directory / (key + loaded_code.SUFFIX)).write_bytes(code)
            object_cache.write_installed(directory, key, b"", {**meta, loaded_code.IN_FILE: True})
            unpacked += 1
    return unpacked
