"""Ahead-of-time export (docs/aot.md): ``export`` writes a traced function as a C library
for the host or another LLVM target, ``load`` runs one from Python without the compiler."""

from ..backend.executable import ExportError
from .export import export
from .loader import Artifact, LoadError, load

__all__ = ["Artifact", "ExportError", "LoadError", "export", "load"]
