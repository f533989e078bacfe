"""The vector math library kernels call (``vector_math.py``), loaded once per process.

A kernel only declares the functions it calls (``plaidarray.exp.f64`` and its vector
variants); each is compiled once, kept in the persistent cache (entries ``library-*``)
and loaded, before any kernel calling it, so that the loader resolves the kernels' calls
to it (``loaded_code.load_library``). A process whose code is all in the cache loads
both without LLVM; building a missing function generates its IR (``vector_math.py``).
"""

from __future__ import annotations

import re
import threading

from . import loaded_code, object_cache
from .host import host_id, opt_level

#: The functions, as named in symbols (``plaidarray.<name>.f<bits>``).
NAMES = ("exp", "expm1", "log", "log1p", "tanh", "sin", "cos")

#: A scalar function's symbol in code or IR text (vector variants: ``.v<lanes>f<bits>``).
_SYMBOL = re.compile(r"plaidarray\.(%s)\.(?:v[0-9]+)?f(32|64)" % "|".join(NAMES))

_lock = threading.Lock()
#: What is loaded, by scalar symbol; kept for good (kernels resolve their calls to it).
_loaded: dict[str, loaded_code.Code | None] = {}


def symbol(name: str, bits: int) -> str:
    return f"plaidarray.{name}.f{bits}"


def called_by(text: str) -> list[str]:
    """The scalar symbols of the library functions code (IR text) calls."""
    return sorted({symbol(name, int(bits)) for name, bits in _SYMBOL.findall(text)})


def load(symbols: list[str]) -> None:
    """Load the functions ``symbols`` (scalar symbols), once per process each: from the
    persistent cache, or generated (and stored there once loaded and checked)."""
    for name in symbols:
        with _lock:
            if name not in _loaded:
                _loaded[name] = _load_one(name)


def _load_one(name: str) -> loaded_code.Code | None:
    """The function ``name`` and its vector variants, loaded for good. Code is stored
    only after it loaded and defines every symbol (a kernel calling a symbol that the
    library lacks cannot be loaded, and under MCJIT aborts the process); a stored entry
    that fails the same check is made again."""
    key = object_cache.library_key("vector-math", name, f"{host_id()}/O{opt_level()}")
    entry = object_cache.load(key)
    if entry is not None:
        code, meta = entry
        form, defined = meta.get(loaded_code.FORMAT), meta.get("symbols")
        if form in loaded_code.FORMATS and isinstance(defined, list) and name in defined:
            try:
                return loaded_code.load_library(code, str(form), [str(s) for s in defined], opt_level())
            except (OSError, RuntimeError, ValueError):
                pass  # not this function's code: made again below, and the entry replaced
    from .vector_math import library_object_code  # generating needs LLVM

    object_code, defined = library_object_code(name, opt_level())
    code, form = loaded_code.package([object_code])
    holder = loaded_code.load_library(code, form, defined, opt_level())
    object_cache.store(key, code, {"library": name, "symbols": defined, loaded_code.FORMAT: form})
    return holder
