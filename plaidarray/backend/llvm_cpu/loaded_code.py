"""Generated code as it is kept and loaded: a shared object, or object code for MCJIT.

Code generation makes position-independent object code. Where the system has a linker,
it is linked into a shared object (``shared_object.py``), which the persistent cache
stores and any process loads with the platform's loader, without LLVM; elsewhere the
object code itself is stored and loaded into LLVM's MCJIT (``jit.py``). Each cache entry
says which (``FORMAT``, in its metadata).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from . import shared_object

#: The metadata field naming an entry's format, and its values.
FORMAT = "format"
SHARED = "shared-object"
OBJECT = "object"
FORMATS = (SHARED, OBJECT)
#: The metadata field of an installed entry (a bundle's, a library function's) whose shared
#: object is the file ``<key>`` + ``SUFFIX`` beside it (``bundles.unpack``).
IN_FILE = "in_file"
SUFFIX = ".so"


class Code(Protocol):
    """Loaded code: unloaded when collected (or closed)."""

    def address(self, symbol: str) -> int: ...

    def close(self) -> None: ...


def package(objects: Sequence[bytes]) -> tuple[bytes, str]:
    """What to keep of object code (several objects' only when they link into one shared
    object), and its format."""
    linked = shared_object.link(objects)
    if linked is not None:
        return linked, SHARED
    if len(objects) != 1:
        raise ValueError("object code of several modules needs a linker to be kept as one")
    return objects[0], OBJECT


def load(code: bytes, form: str, level: int) -> Code:
    """``code`` of format ``form``, loaded."""
    if form == SHARED:
        return shared_object.SharedObject(code)
    if form != OBJECT:
        raise ValueError(f"llvm-cpu: unknown code format {form!r}")
    from . import jit  # only here: MCJIT needs LLVM

    return jit.load_object(code, level)


def load_library(code: bytes, form: str, symbols: Sequence[str], level: int) -> Code | None:
    """``code``, for good, its functions ``symbols`` resolvable by every kernel loaded
    after it (the vector math library); what holds it, to keep (None: MCJIT holds it).
    A RuntimeError if it does not define them all (then nothing of it stays loaded)."""
    if form == SHARED:
        library = shared_object.SharedObject(code, global_symbols=True)
        return _defining(library, symbols)
    if form != OBJECT:
        raise ValueError(f"llvm-cpu: unknown code format {form!r}")
    from . import jit

    jit.load_library(code, list(symbols), level)
    return None


def load_library_at(path: str, symbols: Sequence[str]) -> Code:
    """``load_library`` of an installed shared object, loaded where it is."""
    return _defining(shared_object.SharedObject.at(path, global_symbols=True), symbols)


def _defining(library: shared_object.SharedObject, symbols: Sequence[str]) -> Code:
    """``library``, checked to define ``symbols`` (else unloaded, and a RuntimeError)."""
    missing = [symbol for symbol in symbols if not library.address(symbol)]
    if missing:
        library.close()
        raise RuntimeError(f"llvm-cpu: library code does not define {', '.join(missing)}")
    return library
