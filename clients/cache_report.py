"""pytest plugin: at the end of a plaidarray run, write its compile figures to the file
named by ``PLAIDARRAY_CLIENTS_CACHE_REPORT`` (JSON: compiles, disk loads, the digest of
plaidarray's sources that keys the disk cache), so that ``clients/run.py`` can tell
whether a run it calls warm loaded its code or compiled it again (a source edited
between two runs changes every key). Loaded with ``-p cache_report`` by run.py."""

from __future__ import annotations

import json
import os
import sys


def pytest_sessionfinish(session, exitstatus) -> None:  # noqa: ARG001  pytest's hook signature
    path = os.environ.get("PLAIDARRAY_CLIENTS_CACHE_REPORT")
    plaidarray = sys.modules.get("plaidarray")
    if not path or plaidarray is None:
        return
    from plaidarray.backend.llvm import object_cache

    info = plaidarray.cache_info()
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"compiles": info.compiles, "disk_hits": info.disk_hits, "kernel_compiles": info.kernel_compiles,
                   "kernel_disk_hits": info.kernel_disk_hits, "sources": object_cache._compiler_digest()}, f)
