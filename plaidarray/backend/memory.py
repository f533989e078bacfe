"""Memory known before it is spent: an executable's buffers are checked against what the
machine has before any of them is allocated.

Linux overcommits: ``np.empty`` of more than the machine has usually succeeds, and the
process is killed by the kernel when the pages are touched. An executable knows the
bytes of its results and temporaries when it is compiled, so a run that cannot fit
raises MemoryError first, naming what it needed and what was available.
"""

from __future__ import annotations

import os

from ..hlo.shape import Shape

#: Runs that need less than this are not checked (reading the system's figure costs
#: microseconds, felt on small calls; such runs cannot take a machine down alone).
CHECK_ABOVE_BYTES = 64 << 20


def available_bytes() -> int | None:
    """Memory the kernel says can be given to programs without swapping
    (``MemAvailable``), or None where that is not known."""
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


def check_fits(nbytes: int, reusable: int, largest: Shape) -> None:
    """MemoryError if ``nbytes`` more bytes cannot fit in available memory plus
    ``reusable`` bytes that are already ours (the buffer pool's free blocks); the error
    names the ``largest`` buffer too."""
    if nbytes < CHECK_ABOVE_BYTES:
        return
    available = available_bytes()
    if available is not None and nbytes > available + reusable:
        raise MemoryError(f"cannot allocate a {largest.dtype} buffer of shape {largest.dims}: this computation needs "
                          f"{nbytes / 2**30:.2f} GiB for its results and temporaries, but only "
                          f"{(available + reusable) / 2**30:.2f} GiB of memory is available")
