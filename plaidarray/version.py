"""plaidarray's version, in a module of its own: the cache's keys include it
(``backend/llvm/object_cache.py``), and the backend's loading thread makes its first key
while the package's ``__init__`` is still running, which a thread importing the name
from the package would wait for to its end (~40 ms, the rest of the import)."""

__version__ = "0.1.0"
