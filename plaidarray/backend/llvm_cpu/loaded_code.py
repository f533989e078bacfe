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


class Code(Protocol):
    """Loaded code: unloaded when collected (or closed)."""

    def close(self) -> None: ...


def package(object_code: bytes) -> tuple[bytes, str]:
    """What to keep of object code, and its format: a shared object when it can be linked."""
    linked = shared_object.link([object_code])
    return (linked, SHARED) if linked is not None else (object_code, OBJECT)


def load(code: bytes, form: str, symbol: str, level: int) -> tuple[Code, int] | None:
    """``code`` of format ``form`` loaded, and the address of ``symbol`` in it; None if it
    does not define it."""
    if form == SHARED:
        library = shared_object.SharedObject(code)
        address = library.address(symbol)
    elif form == OBJECT:
        from . import jit  # only here: MCJIT needs LLVM

        loaded = jit.load_object(code, symbol, level)
        if loaded is None:
            return None
        return loaded, loaded.address
    else:
        return None
    if not address:
        library.close()
        return None
    return library, address


def load_library(code: bytes, form: str, symbols: Sequence[str], level: int) -> Code | None:
    """``code``, for good, its functions ``symbols`` resolvable by every kernel loaded
    after it (the vector math library); what holds it, to keep (None: MCJIT holds it)."""
    if form == SHARED:
        return shared_object.SharedObject(code, global_symbols=True)
    from . import jit

    jit.load_library(code, list(symbols), level)
    return None
