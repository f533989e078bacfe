"""The backend registry: named backends with priorities.

Backends come from the ``plaidarray.backends`` entry-point group, so a backend can
live in another package (``[project.entry-points."plaidarray.backends"]``, pointing at a
:class:`Backend` or a zero-argument callable returning one). The built-in ones are
also registered directly so a source checkout works without installation metadata.
Selection: :func:`set_backend` > ``PLAIDARRAY_BACKEND`` (read once, at import, as JAX reads
``JAX_PLATFORMS``) > highest priority. The choice is remembered: every materialisation asks
for it, so it must cost next to nothing.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from importlib.metadata import Distribution, EntryPoint, distributions

from .. import config
from .executable import Backend

#: The entry-point group of backends.
GROUP = "plaidarray.backends"
_BUILTIN = {
    "llvm-cpu": "plaidarray.backend.llvm_cpu:backend",
    "reference": "plaidarray.backend.reference:backend",
}
_lock = threading.Lock()
_backends: dict[str, Backend] = {}
_loaders: dict[str, str | EntryPoint] = {}
_ENVIRONMENT_CHOICE: str | None = config.get("PLAIDARRAY_BACKEND")
_selected: str | None = None
#: The backend :func:`current` returns, once chosen (selecting or registering forgets it).
_current: Backend | None = None


def _discover() -> None:
    if _loaders:
        return
    for name, target in _BUILTIN.items():
        _loaders[name] = target
    for ep in _entry_points():
        _loaders.setdefault(ep.name, ep)


def _entry_points() -> list[EntryPoint]:
    """The entry points of ``GROUP``, in ``sys.path`` order. Every process's first
    materialisation waits for this: ``importlib.metadata.entry_points(group=...)`` parses
    every installed distribution's metadata (5 ms with 70 distributions, more in larger
    environments), where only the ``entry_points.txt`` that name the group matter, so
    this reads those files alone and has ``importlib.metadata`` parse the distributions
    that have one naming it (1 ms). As there, a distribution met again further along
    the path is left out. A path entry that is not a directory (a zip archive) is left
    to ``importlib.metadata``'s own search."""
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
        _discover()
        if name not in _backends:
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
            priorities = available()
            backend = get(max(priorities, key=priorities.__getitem__))
        _current = backend
    return backend
