"""The one exception the simulator raises, so a test can tell a kernel bug from a Python bug."""

from __future__ import annotations


class SimulatorError(RuntimeError):
    """A PTX module the simulator cannot run, or a kernel that misbehaved while running.

    Messages name what went wrong and, where known, the kernel, the PTX line and the thread
    (block and thread index), because a wrong index or a missing barrier is found by reading
    them.
    """
