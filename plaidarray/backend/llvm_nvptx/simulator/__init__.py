"""A simulated NVIDIA GPU that runs PTX kernels on the CPU, a warp's lanes in lockstep.

Why: the NVPTX backend emits PTX that CI cannot run without a GPU. The simulator runs that
same PTX, every thread of a block vectorised with NumPy, with the GPU's exact arithmetic
(integer wrap-around and PTX's division, shift and conversion rules; correctly rounded
``fma``; ``cvt`` rounding modes and saturation), so a value test on the simulator checks the
bits the GPU would produce. Like Triton's interpreter, numba's CUDA simulator and tinygrad's
PYTHON device, it trades speed for testability; unlike them it runs the compiler's output,
not the source.

What it checks, each failure a SimulatorError naming the kernel, the PTX line and the thread:

* every load, store and atomic is inside an allocation (or its space) and aligned;
* no data race: two threads touching one byte of shared or global memory, one a write, not both
  atomic, with no barrier (block) or warp sync (warp) between them (``races.py``);
* barriers and warp collectives (``shfl.sync``, ``vote.sync``, ...) are reached by every thread
  they wait for, and a lane never reads a shuffled value from a lane not taking part;
* ``trap``, deadlocks, endless loops, and PTX it does not support (at load time, by line).
"""

from .errors import SimulatorError
from .machine import launch
from .memory import SimulatedMemory
from .program import validate
from .ptx import Module, parse_module


def load_module(ptx: str) -> Module:
    """Parse PTX text and compile every function once, so unsupported syntax or instructions
    raise SimulatorError (naming the line) here rather than at the first launch."""
    module = parse_module(ptx)
    validate(module)
    return module


__all__ = ["Module", "SimulatedMemory", "SimulatorError", "launch", "load_module"]
