"""PTX to a cubin with NVIDIA's assembler, and what it reports of each kernel: its
registers, its stack frame and its spills (a kernel that spills reads and writes local
memory where it meant registers). CI runs every kernel the GPU tier generates through it
for each architecture (``tests/unit/backend/nvptx``); a GPU device loads the cubin, where
the driver would otherwise assemble the PTX itself at load (its JIT, slower and cached
apart from ours)."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import cache_entry, toolkit


class PtxasError(RuntimeError):
    """ptxas refused the PTX, or is not installed."""


@dataclass(frozen=True)
class KernelReport:
    """ptxas's report of one kernel (``-v``)."""

    name: str
    registers: int
    stack_bytes: int
    spill_stores: int
    spill_loads: int


_FUNCTION = re.compile(r"Compiling entry function '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_REGISTERS = re.compile(r"Used (\d+) registers")


def assemble(ptx: str, architecture: str) -> tuple[bytes, list[KernelReport]]:
    """The cubin of ``ptx`` for ``architecture`` (``sm_80``...) and the report of each of
    its kernels; a PtxasError with ptxas's message if it refuses it."""
    tool = toolkit.ptxas()
    if tool is None:
        raise PtxasError(f"llvm-nvptx: ptxas is not installed: {toolkit.INSTALL_HINT}")
    with tempfile.TemporaryDirectory(prefix="plaidarray-ptxas-") as directory:
        source, cubin = Path(directory) / "kernels.ptx", Path(directory) / "kernels.cubin"
        source.write_text(ptx)
        done = subprocess.run([str(tool), f"-arch={architecture}", "-v", "-o", str(cubin), str(source)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise PtxasError(f"llvm-nvptx: ptxas refused the PTX for {architecture}: {done.stderr.strip()}")
        return cubin.read_bytes(), _reports(done.stderr)


def cubin(ptx: str, architecture: str) -> bytes:
    """The cubin of ``ptx`` for ``architecture``: the persistent cache's, where this ptxas
    assembled the same PTX before (``cache_entry.cubin_key``), else assembled and stored."""
    tool = toolkit.ptxas()
    if tool is None:
        return assemble(ptx, architecture)[0]  # its error: ptxas is not installed
    key = cache_entry.cubin_key(ptx, architecture, str(tool))
    found = cache_entry.load_cubin(key)
    if found is None:
        found = assemble(ptx, architecture)[0]
        cache_entry.store_cubin(key, found)
    return found


def _reports(text: str) -> list[KernelReport]:
    """The kernels' reports in ptxas's ``-v`` output (each kernel's lines follow its name)."""
    reports: list[KernelReport] = []
    name, frame = "", (0, 0, 0)
    for line in text.splitlines():
        if (m := _FUNCTION.search(line)) is not None:
            name, frame = m.group(1), (0, 0, 0)
        elif (m := _FRAME.search(line)) is not None:
            frame = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := _REGISTERS.search(line)) is not None and name:
            reports.append(KernelReport(name, int(m.group(1)), *frame))
    return reports
