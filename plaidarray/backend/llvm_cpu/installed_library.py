"""The installation's library: the op kernels built at installation as one shared object.

A package's compiled ops are one library (ATen's), loaded once. The installation's build
(``prebuild.py``) stores each compile's kernels as a bundle (``bundles.py``), a shared
object of its own; a process loading them from there paid one ``dlopen`` a bundle, 40-100
us, and an op's first use in a new script loaded one bundle or more: ~20 a script, 1-2 ms
of a first run of 15. So the build keeps the object code it links (``keep_objects``),
and links all of it, the vector math functions' too, into one library (``link``): a
process loads it once, at its first installed kernel (``load``), and finds each kernel in
it by its symbol. It is the package's own code, as its C extensions are, read only where
the installation is trusted (``object_cache.installed_file``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from ... import config
from ..llvm import object_cache
from . import loaded_code, shared_object
from .shared_object import SharedObject

#: Where the installation's build keeps the object code of what it stores (``prebuild.py``
#: sets it), for ``link``; None elsewhere.
OBJECTS_KEPT_IN: Path | None = None
#: The directory of kept objects within an installation being built, removed once linked.
OBJECTS = "objects"
#: The installation's library among its kernels (``link``).
LIBRARY = "op-kernels" + loaded_code.SUFFIX
#: The field of an installed entry (a bundle's, a vector math function's) whose code is in
#: the installation's library.
IN_LIBRARY = "in_library"


def keep_objects(key: str, objects: Sequence[bytes]) -> None:
    """Keep the object code of the entry ``key`` where the installation's build keeps it
    (``OBJECTS_KEPT_IN``), as ``<key>.<i>.o``, each written whole before it is named
    (the build's processes store at once)."""
    directory = OBJECTS_KEPT_IN
    if directory is None or not objects:
        return
    directory.mkdir(exist_ok=True)
    for i, code in enumerate(objects):
        temporary = directory / f".{key}.{i}.{os.getpid()}.{threading.get_ident()}"
        temporary.write_bytes(code)
        os.replace(temporary, directory / f"{key}.{i}.o")


_library_lock = threading.Lock()
#: The installation's library by its directory, once loaded (never unloaded: its kernels
#: serve the process to its end), or None where it is not there or did not load.
_libraries: dict[str, SharedObject | None] = {}


def load() -> SharedObject | None:
    """The installation's library (``link``), loaded at its first use (the file checked
    then, ``object_cache.installed_file``, not at each bundle's); None where the
    installation has none, or it is untrusted or does not load. Once loaded, it is found
    again by the installation's path (as ``op_catalogue.opened`` finds its catalogue):
    finding the directory again was ~5-15 us of each installed kernel's first use in a
    new process."""
    if config.get("PLAIDARRAY_INSTALLED_KERNELS") != "1":
        return None
    found = _libraries.get(str(object_cache.INSTALLED))
    if found is not None:
        return found
    directory = object_cache.installed_directory()
    if directory is None:
        return None
    where = str(directory)
    if where not in _libraries:
        with _library_lock:
            if where not in _libraries:
                path = object_cache.installed_file(LIBRARY)
                try:
                    _libraries[where] = SharedObject.at(path) if path is not None else None
                except OSError:
                    _libraries[where] = None
    return _libraries[where]


def link(directory: Path) -> int:
    """At installation, after the kernels are built into ``directory`` (``prebuild.py``,
    which kept their object code, ``keep_objects``): every bundle's and vector math
    function's objects linked into one shared object, the installation's library
    (``LIBRARY``; its own calls of the vector math bound within it), and each bundle's entry
    whose symbols it defines keeping the metadata alone (``IN_LIBRARY``). The functions'
    entries keep their code, which ``unpack`` makes files of their own: a kernel compiled
    later by a process calls them where the platform's loader finds them, which the
    library, loaded with its symbols its own, is not. Returns the entries that moved;
    0 (and nothing changed) where there is no linker or the link fails."""
    kept = directory / OBJECTS
    objects: dict[str, list[Path]] = {}
    for path in sorted(kept.glob("*.o")) if kept.is_dir() else ():
        objects.setdefault(path.name.split(".", 1)[0], []).append(path)
    entries = [(key, meta) for key, _, meta in object_cache.installed_entries(directory)
               if key in objects and meta.get(loaded_code.FORMAT) == loaded_code.SHARED]
    functions = [key for key, meta in entries if "library" in meta]
    bundles = [key for key, meta in entries if "libraries" in meta]
    # the functions first: a symbol defined twice (a kernel two builds made) is the first's
    paths = [path for key in functions + bundles for path in objects[key]]
    linked = shared_object.link_files(paths, directory / LIBRARY) if paths else False
    import shutil  # the build's alone: not a process's import

    shutil.rmtree(kept, ignore_errors=True)
    if not linked:
        return 0
    library = SharedObject.at(str(directory / LIBRARY))
    moved = 0
    try:
        for key, meta in entries:
            symbols = meta.get("symbols")
            if "libraries" in meta and isinstance(symbols, list) and all(library.address(str(s)) for s in symbols):
                object_cache.write_installed(directory, key, b"", {**meta, IN_LIBRARY: True})
                moved += 1
    finally:
        library.close()
    return moved
