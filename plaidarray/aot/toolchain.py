"""The linker and archiver an export packages its object file with: the target's GNU
cross tools (Debian's ``gcc-aarch64-linux-gnu``, ``gcc-riscv64-linux-gnu``), or the
host's own for the host. Without a C compiler for the target there is no shared library
(the object file and, with ``ar``, the static library are still written)."""

from __future__ import annotations

import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Tools:
    """The programs that package code for one target (None: not installed)."""

    cc: str | None
    ar: str | None


def tools_for(target: str, architecture: str) -> Tools:
    """The tools for an export ``target`` ("host" or a multiarch tuple) whose triple
    starts with ``architecture``: the tuple's prefixed tools, or the host's own when the
    target is this machine's architecture."""
    native = architecture == platform.machine()
    cc = ar = None
    if target != "host":
        cc, ar = shutil.which(f"{target}-gcc"), shutil.which(f"{target}-ar")
    if native:
        cc = cc or shutil.which("cc") or shutil.which("gcc")
    return Tools(cc, ar or shutil.which("ar"))


def static_library(tools: Tools, obj: Path, out: Path) -> bool:
    """``out`` as an archive of ``obj`` (with its symbol index); whether it was made."""
    if tools.ar is None:
        return False
    out.unlink(missing_ok=True)
    return subprocess.run([tools.ar, "rcs", str(out), str(obj)], capture_output=True).returncode == 0


def shared_library(tools: Tools, obj: Path, out: Path) -> str | None:
    """``out`` linked from ``obj`` as a shared library needing only the C library and
    libm; None if it was made, else why not."""
    if tools.cc is None:
        return "no C compiler for the target is installed"
    done = subprocess.run([tools.cc, "-shared", "-o", str(out), str(obj), "-lm"], capture_output=True, text=True)
    return None if done.returncode == 0 else done.stderr.strip() or f"{tools.cc} failed"
