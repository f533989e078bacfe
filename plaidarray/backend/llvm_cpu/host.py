"""Which host code is generated for, and at which level, known without LLVM.

Compiled code is for this CPU (LLVM's host CPU name and features, ``targets.host``),
so caches key it by the host. Asking LLVM means loading it (llvmlite takes about 0.1 s to
import), which a process whose code is all in the persistent cache should not pay
before its first result. On Linux the kernel already says what LLVM would find: the
processor's identification and feature flags, read from ``/proc/cpuinfo``. Elsewhere
LLVM is asked.
"""

from __future__ import annotations

import functools
import hashlib
import platform

from ... import config

#: The fields of a processor's entry in /proc/cpuinfo that decide LLVM's host CPU name and
#: features (x86: vendor, family, model, stepping and flags; Arm: implementer, part and
#: features).
_FIELDS = ("vendor_id", "cpu family", "model", "model name", "stepping", "flags", "CPU implementer",
           "CPU architecture", "CPU variant", "CPU part", "CPU revision", "Features", "isa", "uarch")


def opt_level() -> int:
    """The optimisation level ``PLAIDARRAY_OPT_LEVEL`` asks for (default 3)."""
    return int(config.get("PLAIDARRAY_OPT_LEVEL"))


@functools.cache
def host_id() -> str:
    """A digest naming this host's CPU for code generation."""
    described = _cpuinfo()
    if described is None:  # not Linux: the description LLVM gives
        from .targets import host

        target = host()
        described = f"{target.triple}/{target.cpu}/{target.features}"
    digest = hashlib.blake2b(f"{platform.machine()}\n{described}".encode(), digest_size=10).hexdigest()
    return f"{platform.machine()}-{digest}"


def _cpuinfo() -> str | None:
    """The first processor's entry of /proc/cpuinfo, reduced to ``_FIELDS``; None where
    there is none. Read up to that entry's end only: the kernel writes the file one
    processor at a time, and a machine of a hundred cores has a hundred entries."""
    text = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            while "\n\n" not in text and (part := f.read(4096)):
                text += part
    except OSError:
        return None
    first = text.split("\n\n", 1)[0]
    fields = []
    for line in first.splitlines():
        name, _, value = line.partition(":")
        if name.strip() in _FIELDS:
            fields.append(f"{name.strip()}={value.strip()}")
    return "\n".join(fields) or None
