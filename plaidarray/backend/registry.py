"""The backend registry: named backends with priorities.

Backends come from the ``plaidarray.backends`` entry-point group, so a backend can
live in another package (``[project.entry-points."plaidarray.backends"]``, pointing at a
:class:`Backend` or a zero-argument callable returning one). The built-in ones are
also registered directly so a source checkout works without installation metadata.
Selection: :func:`set_backend` > ``PLAIDARRAY_BACKEND`` (read once, at import, as JAX reads
``JAX_PLATFORMS``) > ``DEFAULT``, the built-in backend of highest priority. The choice is remembered:
every materialisation asks for it, so it must cost next to nothing.

A plugin computes only when chosen by name, as PyTorch's out-of-tree devices do: a package
installed for one program never changes what another computes, and the default costs no
search of the installed distributions' metadata (1-3 ms that every process's first read
waited for, most of a script's first read once its kernels are installed). Naming a
backend that is not built in, listing them (:func:`names`, :func:`available`) or
registering one finds the plugins.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from typing import TYPE_CHECKING

from .. import config
from .executable import Backend

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

#: The entry-point group of backends.
GROUP = "plaidarray.backends"
_BUILTIN = {
    "llvm-cpu": "plaidarray.backend.llvm_cpu:backend",
    "reference": "plaidarray.backend.reference:backend",
}
#: The backend arrays compute on when none is chosen: the built-in one of highest priority,
#: named so that choosing it loads no other backend.
DEFAULT = "llvm-cpu"
_lock = threading.Lock()
_backends: dict[str, Backend] = {}
_loaders: dict[str, str | EntryPoint] = {}
#: Whether the plugins' entry points have been read into ``_loaders``.
_discovered = False
_ENVIRONMENT_CHOICE: str | None = config.get("PLAIDARRAY_BACKEND")
_selected: str | None = None
#: The backend :func:`current` returns, once chosen (selecting or registering forgets it).
_current: Backend | None = None


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    found: dict[str, str | EntryPoint] = {**_BUILTIN, **_loaders}  # built-in ones first
    for ep in _entry_points():
        found.setdefault(ep.name, ep)
    _loaders.clear()
    _loaders.update(found)
    _discovered = True


def _entry_points() -> list[EntryPoint]:
    """The entry points of ``GROUP``, in ``sys.path`` order. Every process's first
    materialisation waits for this: ``importlib.metadata.entry_points(group=...)`` parses
    every installed distribution's metadata (5 ms with 70 distributions, more in larger
    environments), where only the ``entry_points.txt`` that name the group matter, so
    this reads those files alone and has ``importlib.metadata`` parse the distributions
    that have one naming it (1 ms). As there, a distribution met again further along
    the path is left out. A path entry that is not a directory (a zip archive) is left
    to ``importlib.metadata``'s own search."""
    from importlib.metadata import Distribution, distributions  # 18 ms to import: only when plugins are searched

    found: list[EntryPoint] = []
    seen: set[str] = set()
    marker = f"[{GROUP}]".encode()
    for path in sys.path:
        try:
            listing = os.scandir(path or ".")
        except NotADirectoryError:
            for distribution in distributions(path=[path]):
                found += distribution.entry_points.select(group=GROUP)
            continue
        except OSError:
            continue
        with listing:
            for entry in listing:
                if not entry.name.endswith((".dist-info", ".egg-info")):
                    continue
                name = re.sub(r"[-_.]+", "_", entry.name.rsplit(".", 1)[0].partition("-")[0]).lower()
                if name in seen:
                    continue
                seen.add(name)
                try:
                    with open(os.path.join(entry.path, "entry_points.txt"), "rb") as f:
                        named = marker in f.read()
                except OSError:
                    continue
                if named:
                    found += Distribution.at(entry.path).entry_points.select(group=GROUP)
    return found


def _load(name: str) -> Backend:
    target = _loaders[name]
    if isinstance(target, str):
        module, attr = target.split(":")
        obj = getattr(__import__(module, fromlist=[attr]), attr)
    else:
        obj = target.load()
    backend = obj() if callable(obj) and not isinstance(obj, Backend) else obj
    if not isinstance(backend, Backend):
        raise TypeError(f"backend entry point {name!r} gave {type(backend).__name__}, not a Backend")
    return backend


def register(backend: Backend) -> None:
    """Register a backend object directly (tests and plugins that are not installed)."""
    global _current
    with _lock:
        _discover()
        _backends[backend.name] = backend
        _loaders.setdefault(backend.name, backend.name)
        _current = None


def names() -> list[str]:
    """The registered backends' names, built-in ones first, without loading any."""
    with _lock:
        _discover()
        return list(_loaders)


def available() -> dict[str, int]:
    """Backend names and their priorities."""
    with _lock:
        _discover()
        names = list(_loaders)
    return {name: get(name).priority for name in names}


def get(name: str) -> Backend:
    with _lock:
        if name not in _backends and name not in _BUILTIN:
            _discover()
        if name not in _backends:
            if name in _BUILTIN:
                _loaders.setdefault(name, _BUILTIN[name])
            if name not in _loaders:
                raise ValueError(f"unknown backend {name!r}; available: {', '.join(sorted(_loaders))}")
            _backends[name] = _load(name)
        return _backends[name]


def set_backend(name: str | None) -> None:
    """Choose the backend by name for this process (None: back to the default)."""
    global _selected, _current
    if name is not None:
        get(name)
    _selected = name
    _current = None


def current() -> Backend:
    """The backend that computes arrays now."""
    global _current
    backend = _current
    if backend is None:
        name = _selected or _ENVIRONMENT_CHOICE
        if name is not None:
            backend = get(name)
        else:
            backend = get(DEFAULT)
        _current = backend
    return backend
