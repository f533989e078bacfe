"""Memory known before it is spent: an executable's buffers are checked against what the
machine has before any of them is allocated.

Linux overcommits: ``np.empty`` of more than the machine has usually succeeds, and the
process is killed by the kernel when the pages are touched. An executable knows the
bytes of its results and temporaries when it is compiled, so a run that cannot fit
raises MemoryError first, naming what it needed and what was available.

What is available is the smaller of the machine's figure (``MemAvailable``) and what the
memory cgroups this process runs in leave below their limits (a container's, a batch
job's, a systemd unit's: the kernel kills a process past them however much memory the
machine has free), from cgroup v2's ``memory.max`` or v1's ``memory.limit_in_bytes``,
for its own cgroup and every one above it.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..hlo.shape import Shape

#: Runs that need less than this are not checked (reading the system's figure costs
#: microseconds, felt on small calls; such runs cannot take a machine down alone).
CHECK_ABOVE_BYTES = 64 << 20

#: Where the process's own files are (a test points it at a made-up tree).
PROC = Path("/proc/self")

#: The files of a memory cgroup, by cgroup version: its limit, its usage, and the field of
#: its ``memory.stat`` counting file cache it can reclaim.
_V2 = ("memory.max", "memory.current", "inactive_file")
_V1 = ("memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file")


def available_bytes() -> int | None:
    """Memory that can be given to this process without swapping or being killed: the
    machine's, or less in a memory cgroup (see the module docstring); None where neither
    is known."""
    figures = [f for f in (_machine_available(), cgroup_available()) if f is not None]
    return min(figures, default=None)


def _machine_available() -> int | None:
    """The kernel's ``MemAvailable``, else the free pages."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return None


def cgroup_available() -> int | None:
    """The least any memory cgroup of this process leaves below its limit (its usage net
    of reclaimable file cache), or None when none has a limit that can be read."""
    figures = []
    for directory, (limit_file, usage_file, reclaimable) in _memory_cgroups():
        limit, usage = _number(directory / limit_file), _number(directory / usage_file)
        if limit is not None and usage is not None:
            figures.append(max(limit - usage + _stat_field(directory / "memory.stat", reclaimable), 0))
    return min(figures, default=None)


def _memory_cgroups() -> list[tuple[Path, tuple[str, str, str]]]:
    """The directories of this process's memory cgroups (v2's, v1's memory controller's),
    its own and every one above it up to the mount, with their version's file names."""
    try:
        membership = (PROC / "cgroup").read_text().splitlines()
        mounts = (PROC / "mountinfo").read_text().splitlines()
    except OSError:
        return []
    paths = {}  # file system type -> this process's cgroup in that hierarchy
    for entry in membership:
        number, controllers, path = entry.split(":", 2)
        if number == "0" and not controllers:
            paths["cgroup2"] = path
        elif "memory" in controllers.split(","):
            paths["cgroup"] = path
    found = []
    for line in mounts:
        fields = line.split()
        if "-" not in fields:
            continue
        root, point = fields[3].rstrip("/"), Path(fields[4])
        kind, options = fields[fields.index("-") + 1], fields[-1].split(",")
        mine = paths.get(kind)
        if mine is None or (kind == "cgroup" and "memory" not in options) or not (mine + "/").startswith(root + "/"):
            continue
        directory = point / mine[len(root):].lstrip("/")
        while True:  # limits of the cgroups above apply too
            found.append((directory, _V2 if kind == "cgroup2" else _V1))
            if directory == point:
                break
            directory = directory.parent
    return found


def _number(path: Path) -> int | None:
    """The integer in a cgroup file; None when it is missing or ``max`` (no limit)."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _stat_field(path: Path, name: str) -> int:
    try:
        with open(path) as f:
            for line in f:
                key, _, value = line.partition(" ")
                if key == name:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def check_fits(nbytes: int, reusable: int, largest: Shape, available: int | None = None) -> None:
    """MemoryError if ``nbytes`` more bytes cannot fit in available memory plus
    ``reusable`` bytes that are already ours (the buffer pool's free blocks); the error
    names the ``largest`` buffer too. ``available``: a device's free memory, where it is
    not the host's (``available_bytes``)."""
    if nbytes < CHECK_ABOVE_BYTES:
        return
    if available is None:
        available = available_bytes()
    if available is not None and nbytes > available + reusable:
        raise MemoryError(f"cannot allocate a {largest.dtype} buffer of shape {largest.dims}: this computation needs "
                          f"{nbytes / 2**30:.2f} GiB for its results and temporaries, but only "
                          f"{(available + reusable) / 2**30:.2f} GiB of memory is available")
