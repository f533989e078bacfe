"""Simulated device memory: global allocations, and the per-launch shared, local, param and
const spaces, each access checked for bounds, alignment and (shared and global) races.

Addresses are those a GPU uses: global allocations live at large u64 addresses with unmapped
guard bytes between them, so an index one past the end faults instead of reading a neighbour;
shared, local, const and param addresses are offsets in their own space, starting at
``SPACE_START`` so that a null pointer faults; and generic addresses (``ld`` without a state
space) reach shared, local, const and param memory through fixed windows, as ``cvta`` makes them.
Fresh memory is filled with ``POISON`` bytes, because device memory is not zeroed and a kernel
that reads what nobody wrote should produce visibly wrong values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .errors import SimulatorError
from .races import Accessor, Shadow

GLOBAL_START = 0x10_0000_0000
ALIGNMENT = 256
GUARD_BYTES = 256
SPACE_START = 0x100
POISON = 0xCD
WINDOW_SIZE = 1 << 32
#: Generic-address windows of the spaces that are not global (``cvta.<space>`` adds the base).
WINDOWS = {"shared": 0x7000_0000_0000, "local": 0x7100_0000_0000, "const": 0x7200_0000_0000,
           "param": 0x7300_0000_0000}


@dataclass
class Region:
    """Flat bytes that accesses index by position; ``name`` turns a position into words."""

    data: np.ndarray
    shadow: Shadow | None
    name: Callable[[int], str]


class SimulatedMemory:
    """The global memory of a simulated GPU: what ``cudaMalloc`` and ``cudaMemcpy`` act on.

    >>> mem = SimulatedMemory(); a = mem.allocate(16); mem.write(a, np.arange(4, dtype=np.float32))
    >>> mem.read_array(a, np.float32, 4)
    array([0., 1., 2., 3.], dtype=float32)
    """

    def __init__(self) -> None:
        self._allocations: dict[int, np.ndarray] = {}
        self._next = GLOBAL_START
        self._bases = np.zeros(0, np.uint64)
        self._module_symbols: dict[int, tuple[object, dict[str, int]]] = {}

    def allocate(self, nbytes: int) -> int:
        """A new allocation of ``nbytes`` bytes (poisoned): its 256-byte aligned device address."""
        if nbytes < 0:
            raise ValueError(f"allocate: nbytes must be >= 0, got {nbytes}")
        base = self._next
        self._allocations[base] = np.full(nbytes, POISON, np.uint8)
        self._next = -(-(base + nbytes + GUARD_BYTES) // ALIGNMENT) * ALIGNMENT
        self._bases = np.array(sorted(self._allocations), np.uint64)
        return base

    def free(self, address: int) -> None:
        """Release the allocation that starts at ``address``; later accesses to it fault."""
        if address not in self._allocations:
            raise ValueError(f"free: 0x{address:x} is not the start of an allocation")
        del self._allocations[address]
        self._bases = np.array(sorted(self._allocations), np.uint64)

    def write(self, address: int, data: np.ndarray | bytes) -> None:
        """Copy ``data``'s bytes (a NumPy array or bytes) to device memory at ``address``."""
        raw = np.frombuffer(bytes(data) if isinstance(data, (bytes, bytearray)) else
                            np.ascontiguousarray(data).tobytes(), np.uint8)
        buffer, offset = self._host_span(address, len(raw), "write")
        buffer[offset:offset + len(raw)] = raw

    def read(self, address: int, nbytes: int) -> bytes:
        """``nbytes`` bytes of device memory at ``address``."""
        buffer, offset = self._host_span(address, nbytes, "read")
        return buffer[offset:offset + nbytes].tobytes()

    def read_array(self, address: int, dtype: np.typing.DTypeLike, count: int) -> np.ndarray:
        """``count`` elements of ``dtype`` at ``address``, as a new NumPy array."""
        dtype = np.dtype(dtype)
        return np.frombuffer(self.read(address, dtype.itemsize * count), dtype).copy()

    def _host_span(self, address: int, nbytes: int, what: str) -> tuple[np.ndarray, int]:
        for base, buffer in self._allocations.items():
            if base <= address and address + nbytes <= base + len(buffer):
                return buffer, address - base
        raise ValueError(f"{what}: {nbytes} bytes at 0x{address:x} are not inside one allocation")

    def module_symbols(self, module: object, variables: list[tuple[str, int, bytes | None]]) -> dict[str, int]:
        """Addresses of a module's ``.global`` variables, allocated (and initialised, zero by
        default as PTX defines) the first time the module runs on this memory."""
        known = self._module_symbols.get(id(module))
        if known is None or known[0] is not module:
            symbols = {}
            for name, nbytes, init in variables:
                symbols[name] = self.allocate(nbytes)
                self.write(symbols[name], init if init is not None else bytes(nbytes))
            known = self._module_symbols[id(module)] = (module, symbols)
        return known[1]

    def regions(self, addresses: np.ndarray, width: int) -> list[tuple[int, np.ndarray]]:
        """The allocations holding ``width`` bytes at each address: (base, selection) pairs;
        SimulatorError names the first address that no allocation holds."""
        slot = np.searchsorted(self._bases, addresses, side="right").astype(np.int64) - 1
        base = self._bases[np.maximum(slot, 0)] if len(self._bases) else np.zeros_like(addresses)
        sizes = np.array([len(self._allocations[int(b)]) for b in self._bases] or [0], np.uint64)
        end = base + sizes[np.maximum(slot, 0)]
        ok = (slot >= 0) & (addresses >= base) & (addresses + np.uint64(width) <= end)
        if not ok.all():
            i = int(np.argmax(~ok))
            raise _OutOfBounds(i, self._where(int(addresses[i]), width))
        return [(int(b), np.flatnonzero(base == b)) for b in np.unique(base)]

    def _where(self, address: int, width: int) -> str:
        for base, buffer in self._allocations.items():
            if base <= address < base + len(buffer) + GUARD_BYTES:
                return (f"global address 0x{address:x}: {width} bytes at offset {address - base} of the "
                        f"{len(buffer)}-byte allocation at 0x{base:x}")
        return f"global address 0x{address:x}: no allocation there"

    def buffer(self, base: int) -> np.ndarray:
        return self._allocations[base]


class _OutOfBounds(Exception):
    """Raised by lookups, turned into a SimulatorError naming the thread by LaunchMemory."""

    def __init__(self, index: int, where: str):
        super().__init__(where)
        self.index, self.where = index, where


class BankedSpace:
    """A space of equal banks (one per block for shared, per thread for local and param, one
    for const), addressed by offset within the accessing thread's bank."""

    def __init__(self, name: str, banks: int, size: int, shadow: Shadow | None = None):
        self.name, self.size = name, size
        self.data = np.full(banks * size, POISON, np.uint8)
        self.region = Region(self.data, shadow, self._position_name)

    def positions(self, banks: np.ndarray, offsets: np.ndarray, width: int) -> np.ndarray:
        ok = (offsets >= SPACE_START) & (offsets + np.uint64(width) <= np.uint64(self.size))
        if not ok.all():
            i = int(np.argmax(~ok))
            raise _OutOfBounds(i, f"{self.name} address 0x{int(offsets[i]):x}: outside the {self.name} space "
                                  f"[0x{SPACE_START:x}, 0x{self.size:x})")
        return banks.astype(np.int64) * self.size + offsets.astype(np.int64)

    def _position_name(self, position: int) -> str:
        bank, offset = divmod(position, self.size)
        return f"{self.name} address 0x{offset:x} (bank {bank})"


class LaunchMemory:
    """All memory one batch of blocks sees, with the accessor information races need.

    ``banks[space](threads)`` gives each thread's bank; ``accessor(threads, line)`` says who
    the threads are for race records; ``describe(thread)`` names a thread in errors.
    """

    def __init__(self, memory: SimulatedMemory, spaces: dict[str, BankedSpace],
                 banks: dict[str, Callable[[np.ndarray], np.ndarray]],
                 accessor: Callable[[np.ndarray, int], Accessor], describe: Callable[[int], str],
                 global_shadow: Callable[[int, int], Shadow | None]):
        self.memory, self.spaces, self.banks = memory, spaces, banks
        self.accessor, self.describe, self.global_shadow = accessor, describe, global_shadow

    def resolve(self, space: str, threads: np.ndarray, addresses: np.ndarray, width: int,
                align: int) -> list[tuple[Region, np.ndarray, np.ndarray]]:
        """(region, selection, first-byte positions) triples covering every access."""
        misaligned = addresses % np.uint64(align) != 0
        if misaligned.any():
            i = int(np.argmax(misaligned))
            raise SimulatorError(f"misaligned {width}-byte access at {space} address 0x{int(addresses[i]):x} "
                                 f"(needs {align}-byte alignment) by {self.describe(int(threads[i]))}")
        if space != "generic":
            return self._resolve_space(space, threads, addresses, width, np.arange(len(addresses)))
        window = np.full(len(addresses), "global", object)
        for name, base in WINDOWS.items():
            window[(addresses >= np.uint64(base)) & (addresses < np.uint64(base + WINDOW_SIZE))] = name
        result = []
        for name in np.unique(window):
            sel = np.flatnonzero(window == name)
            offsets = addresses[sel] - np.uint64(WINDOWS.get(name, 0))
            result += self._resolve_space(name, threads[sel], offsets, width, sel)
        return result

    def _resolve_space(self, space: str, threads: np.ndarray, addresses: np.ndarray, width: int,
                       sel: np.ndarray) -> list[tuple[Region, np.ndarray, np.ndarray]]:
        try:
            if space == "global":
                return [(self._global_region(base), sel[part], (addresses[part] - np.uint64(base)).astype(np.int64))
                        for base, part in self.memory.regions(addresses, width)]
            banked = self.spaces[space]
            return [(banked.region, sel, banked.positions(self.banks[space](threads), addresses, width))]
        except _OutOfBounds as fault:
            raise SimulatorError(f"out-of-bounds {width}-byte access at {fault.where}, by "
                                 f"{self.describe(int(threads[fault.index]))}") from None

    def _global_region(self, base: int) -> Region:
        buffer = self.memory.buffer(base)
        return Region(buffer, self.global_shadow(base, len(buffer)), lambda p: f"global address 0x{base + p:x}")

    def load(self, space: str, threads: np.ndarray, addresses: np.ndarray, width: int, align: int,
             line: int) -> np.ndarray:
        """The ``width`` bytes at each address, as an (n, width) uint8 array."""
        out = np.empty((len(addresses), width), np.uint8)
        span = np.arange(width)
        for region, sel, positions in self.resolve(space, threads, addresses, width, align):
            bytes_at = positions[:, None] + span
            out[sel] = region.data[bytes_at]
            if region.shadow is not None:
                region.shadow.read(bytes_at.ravel(), self._per_byte(threads[sel], line, width))
        return out

    def store(self, space: str, threads: np.ndarray, addresses: np.ndarray, data: np.ndarray, align: int,
              line: int) -> None:
        """Write row i of the (n, width) uint8 ``data`` at ``addresses[i]``."""
        width = data.shape[1]
        span = np.arange(width)
        for region, sel, positions in self.resolve(space, threads, addresses, width, align):
            bytes_at = positions[:, None] + span
            if region.shadow is not None:
                region.shadow.write(bytes_at.ravel(), self._per_byte(threads[sel], line, width))
            region.data[bytes_at] = data[sel]

    def atomic(self, space: str, threads: np.ndarray, addresses: np.ndarray, width: int, line: int,
               update: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
        """Read-modify-write: ``update(old_rows, selection)`` gives the new (k, width) rows for
        the selected accesses. Accesses to one address apply one after another in thread order,
        so each sees its predecessor's result. Returns the old rows."""
        old = np.empty((len(addresses), width), np.uint8)
        span = np.arange(width)
        for region, sel, positions in self.resolve(space, threads, addresses, width, width):
            if region.shadow is not None:
                region.shadow.atomic_update((positions[:, None] + span).ravel(),
                                            self._per_byte(threads[sel], line, width))
            order = np.lexsort((sel, positions))
            sorted_positions = positions[order]
            starts = np.r_[True, sorted_positions[1:] != sorted_positions[:-1]]
            group_start = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
            rank = np.empty(len(order), np.int64)
            rank[order] = np.arange(len(order)) - group_start
            for r in range(int(rank.max(initial=-1)) + 1):
                step = np.flatnonzero(rank == r)
                bytes_at = positions[step][:, None] + span
                old[sel[step]] = region.data[bytes_at]
                region.data[bytes_at] = update(old[sel[step]], sel[step])
        return old

    def _per_byte(self, threads: np.ndarray, line: int, width: int) -> Accessor:
        accessor = self.accessor(threads, line)
        return Accessor(*(np.repeat(getattr(accessor, f), width) for f in ("thread", "warp", "block", "stamp",
                                                                             "line")))
