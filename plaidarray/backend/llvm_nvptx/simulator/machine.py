"""Executing a kernel launch: blocks in batches, every thread of a batch in one NumPy vector.

Each thread has its own program counter. A step runs the instruction at the *lowest* program
counter for every running thread there, the reconvergence heuristic of GPU simulators: after
a divergent branch the side with the lower address runs until it reaches the join label, where
the other side waits, so if/else and loops with per-thread trip counts reconverge. A converged
group runs straight on until it diverges or reaches a label where others wait.

Threads wait in three ways. At ``bar.sync`` until every non-exited thread of the block has
arrived (threads that exited do not hold a barrier back, as on sm_70 and later); the barrier
then completes and starts a new barrier epoch for race detection. At a warp collective
(``shfl.sync``, ``vote.sync``, ``redux.sync``, ``bar.warp.sync``) until every non-exited lane of
the member mask is waiting at the same instruction: a lane waiting at another collective is a
divergent collective and raises at once. And when nothing can run while threads still wait, the
launch has deadlocked, which raises naming who waits where.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .context import Context, RegisterFile, Selection
from .errors import SimulatorError
from .memory import BankedSpace, LaunchMemory, SimulatedMemory
from .operands import SPECIAL_REGISTERS
from .program import Program, build
from .ptx import Module
from .races import SEVERAL, Accessor, Shadow

RUNNING, AT_BARRIER, AT_WARP, EXITED = 0, 1, 2, 3
WARP_SIZE = 32
BATCH_THREADS = 1 << 15
MAX_CALL_DEPTH = 32
Dim3 = tuple[int, int, int]


def _dim3(value: int | Sequence[int], what: str) -> Dim3:
    dims = (value,) if isinstance(value, int) else tuple(value)
    dims = tuple(dims) + (1,) * (3 - len(dims))
    if len(dims) != 3 or any(int(d) < 1 for d in dims):
        raise ValueError(f"launch: {what} must be 1 to 3 positive integers, got {value!r}")
    return int(dims[0]), int(dims[1]), int(dims[2])


def _coords(linear: np.ndarray | int, dims: Dim3) -> tuple[Any, Any, Any]:
    return linear % dims[0], (linear // dims[0]) % dims[1], linear // (dims[0] * dims[1])


class Launch:
    """One kernel launch: the program, the grid, and the race state shared by its batches."""

    def __init__(self, module: Module, kernel: str, grid: Dim3, block: Dim3, memory: SimulatedMemory,
                 shared_bytes: int, check_races: bool, max_steps: int):
        globals_ = memory.module_symbols(module, [(n, v.nbytes, v.init) for n, v in module.variables.items()
                                                  if v.space == "global"])
        self.program: Program = build(module, kernel, shared_bytes, globals_)
        self.kernel, self.grid, self.block, self.memory = kernel, grid, block, memory
        self.block_size = block[0] * block[1] * block[2]
        self.warps_per_block = -(-self.block_size // WARP_SIZE)
        self.check_races, self.max_steps, self.steps = check_races, max_steps, 0
        self.global_shadows: dict[int, Shadow] = {}

    def describe(self, thread: int, warp: int = 0, block: int = 0) -> str:
        """A launch-wide thread id (or a SEVERAL record) in CUDA's terms."""
        if thread == SEVERAL:
            if block == SEVERAL:
                return "threads of several blocks"
            where = f"block {tuple(int(v) for v in _coords(block, self.grid))}"
            return f"several threads of {where}" + (f", warp {warp % self.warps_per_block}" if warp != SEVERAL else "")
        b, t = divmod(thread, self.block_size)
        return (f"thread {tuple(int(v) for v in _coords(t, self.block))} of block "
                f"{tuple(int(v) for v in _coords(b, self.grid))}")

    def global_shadow(self, base: int, size: int) -> Shadow | None:
        if not self.check_races:
            return None
        if base not in self.global_shadows:
            self.global_shadows[base] = Shadow(size, self.describe, lambda p: f"global address 0x{base + p:x}")
        return self.global_shadows[base]

    def run(self, params: bytes) -> None:
        blocks = self.grid[0] * self.grid[1] * self.grid[2]
        per_batch = max(1, BATCH_THREADS // self.block_size)
        for first in range(0, blocks, per_batch):
            _Batch(self, np.arange(first, min(blocks, first + per_batch)), params).run()


class _Batch:
    """Whole blocks executing together; ``threads`` is their count times the block size."""

    def __init__(self, launch: Launch, blocks: np.ndarray, params: bytes):
        self.launch, self.program = launch, launch.program
        bs, n = launch.block_size, len(blocks) * launch.block_size
        thread = np.arange(n)
        self.block_of, linear = thread // bs, thread % bs
        self.global_block = blocks[self.block_of]
        self.warp_of = self.block_of * launch.warps_per_block + linear // WARP_SIZE
        lane = linear % WARP_SIZE
        self.block_epoch = np.zeros(len(blocks), np.int64)
        self.warp_epoch = np.zeros(len(blocks) * launch.warps_per_block, np.int64)
        sizes = self.program.layout.sizes
        shared_shadow = Shadow(len(blocks) * sizes["shared"], self._describe_global,
                               self._shared_name) if launch.check_races else None
        spaces = {"shared": BankedSpace("shared", len(blocks), sizes["shared"], shared_shadow),
                  "local": BankedSpace("local", n, sizes["local"]),
                  "param": BankedSpace("param", n, sizes["param"]),
                  "const": BankedSpace("const", 1, sizes["const"])}
        spaces["param"].data.reshape(n, -1)[:, :len(params)] = np.frombuffer(params, np.uint8)
        for address, init in self.program.layout.const_init:
            spaces["const"].data[address:address + len(init)] = np.frombuffer(init, np.uint8)
        self.params = spaces["param"].data.reshape(n, -1)
        banks = {"shared": lambda t: self.block_of[t], "local": lambda t: t, "param": lambda t: t,
                 "const": lambda t: np.zeros(len(t), np.int64)}
        memory = LaunchMemory(launch.memory, spaces, banks, self._accessor, self._describe, launch.global_shadow)
        self.ctx = Context(n, RegisterFile(self.program.registers, n), self._special(blocks, linear, lane), memory,
                           lane, self.warp_of, linear, bs)
        self.pc = np.zeros(n, np.int64)
        self.state = np.full(n, RUNNING, np.int8)
        self.barrier = np.zeros(n, np.int64)
        self.wait_mask = np.zeros(n, np.uint64)
        self.stack = np.zeros((n, MAX_CALL_DEPTH), np.int64)
        self.depth = np.zeros(n, np.int64)

    # ---- identities ---------------------------------------------------------------------
    def _special(self, blocks: np.ndarray, linear: np.ndarray, lane: np.ndarray) -> dict[str, np.ndarray]:
        launch = self.launch
        u32 = lambda v: np.broadcast_to(np.asarray(v, np.uint32), linear.shape).copy()  # noqa: E731
        special = {}
        for name, values in (("tid", _coords(linear, launch.block)), ("ctaid", _coords(self.global_block, launch.grid)),
                             ("ntid", launch.block), ("nctaid", launch.grid)):
            for axis, value in zip("xyz", values):
                special[f"%{name}.{axis}"] = u32(value)
        special.update({"%laneid": u32(lane), "%warpid": u32(linear // WARP_SIZE),
                        "%nwarpid": u32(launch.warps_per_block)})
        bit = np.uint64(1) << lane.astype(np.uint64)
        for name, mask in (("eq", bit), ("lt", bit - 1), ("le", bit * 2 - 1), ("gt", ~(bit * 2 - 1)), ("ge", ~(bit - 1))):
            special[f"%lanemask_{name}"] = u32(mask.astype(np.uint32))
        assert set(special) == SPECIAL_REGISTERS
        return special

    def _global_thread(self, t: np.ndarray) -> np.ndarray:
        return self.global_block[t] * self.launch.block_size + self.ctx.linear[t]

    def _accessor(self, threads: np.ndarray, line: int) -> Accessor:
        warps = self.warp_of[threads]
        blocks = self.block_of[threads]
        return Accessor(self._global_thread(threads).astype(np.int32),
                        (self.global_block[blocks] * self.launch.warps_per_block + warps % self.launch.warps_per_block
                         ).astype(np.int32),
                        self.global_block[blocks].astype(np.int32),
                        (self.block_epoch[blocks] << 32) | self.warp_epoch[warps],
                        np.full(len(threads), line, np.int32))

    def _describe(self, thread: int) -> str:
        return self.launch.describe(int(self._global_thread(np.array([thread]))[0]))

    def _describe_global(self, thread: int, warp: int, block: int) -> str:
        return self.launch.describe(thread, warp, block)

    def _shared_name(self, position: int) -> str:
        block, offset = divmod(position, self.program.layout.sizes["shared"])
        first = self.global_block[0]
        return f"shared address 0x{offset:x} of block {tuple(int(v) for v in _coords(first + block, self.launch.grid))}"

    # ---- scheduling ---------------------------------------------------------------------
    def run(self) -> None:
        with np.errstate(all="ignore"):
            while True:
                running = self.state == RUNNING
                if not running.any():
                    if (self.state == EXITED).all():
                        return
                    if not (self._release_barriers() or self._release_warps()):
                        raise self._deadlock()
                    continue
                pcs = np.where(running, self.pc, np.iinfo(np.int64).max)
                pc = int(pcs.min())
                group = np.flatnonzero(pcs == pc)
                everyone = len(group) == int(running.sum())
                self._run_group(pc, slice(None) if len(group) == self.ctx.size else group, everyone)

    def _run_group(self, pc: int, sel: Selection, everyone: bool) -> None:
        """Run the group from ``pc`` until it diverges, waits, leaves or meets a join point."""
        ops, guards, joins = self.program.ops, self.program.guards, self.program.joins
        while True:
            self.launch.steps += 1
            if self.launch.steps > self.launch.max_steps:
                raise SimulatorError(f"kernel {self.launch.kernel}: no end after {self.launch.max_steps} steps "
                                     f"(an endless loop?), at PTX line {ops[pc].line}")
            op = ops[pc]
            active = self._guarded(pc, sel, guards[pc])
            if op.kind == "simple":
                if active is not None:
                    self._execute(op, active)
            elif op.kind == "branch" and active is not None:
                taken_all = active is sel
                if not taken_all:
                    ids = self.ctx.ids(sel)
                    self.pc[ids] = pc + 1
                    self.pc[active] = op.target
                    return
                pc = op.target
                if not everyone:
                    self.pc[sel] = pc
                    return
                continue
            elif op.kind != "branch":
                self.pc[sel] = pc + 1
                if active is not None:
                    self._control(op, pc, self.ctx.ids(active))
                return
            pc += 1
            if pc in joins and not everyone:
                self.pc[sel] = pc
                return

    def _guarded(self, pc: int, sel: Selection, guard: tuple[Any, bool] | None) -> Selection | None:
        if guard is None:
            return sel
        value = self.ctx.registers[guard[0].name][sel]
        value = ~value if guard[1] else value
        if value.all():
            return sel
        if not value.any():
            return None
        return self.ctx.ids(sel)[value]

    def _execute(self, op: Any, sel: Selection) -> None:
        try:
            op.run(self.ctx, sel)
        except SimulatorError as error:
            raise SimulatorError(f"kernel {self.launch.kernel}, PTX line {op.line} ({op.text!r}): {error}") from None

    def _control(self, op: Any, pc: int, threads: np.ndarray) -> None:
        """Non-straight-line ops for the threads that execute them (the others moved on)."""
        if op.kind == "trap":
            raise SimulatorError(f"kernel {self.launch.kernel}, PTX line {op.line}: {op.text!r} executed by "
                                 f"{self._describe(int(threads[0]))}")
        if op.kind == "exit":
            self.state[threads] = EXITED
        elif op.kind == "ret":
            self._return(threads)
        elif op.kind == "call":
            self._call(op, threads)
        elif op.kind == "barrier":
            self.state[threads], self.barrier[threads], self.pc[threads] = AT_BARRIER, op.extra["id"], pc
        else:
            self._arrive(op, pc, threads)

    def _call(self, op: Any, threads: np.ndarray) -> None:
        if (self.depth[threads] >= MAX_CALL_DEPTH).any():
            raise SimulatorError(f"kernel {self.launch.kernel}, PTX line {op.line}: calls nested too deeply")
        for source, target, size in op.extra["copy_in"]:
            self.params[threads, target:target + size] = self.params[threads, source:source + size]
        self.stack[threads, self.depth[threads]] = self.pc[threads]
        self.depth[threads] += 1
        self.pc[threads] = op.target

    def _return(self, threads: np.ndarray) -> None:
        leaving = self.depth[threads] == 0
        self.state[threads[leaving]] = EXITED
        threads = threads[~leaving]
        self.depth[threads] -= 1
        back = self.stack[threads, self.depth[threads]]
        self.pc[threads] = back
        for target in np.unique(back):
            those = threads[back == target]
            for source, dest, size in self.program.returns.get(int(target), []):
                self.params[those, dest:dest + size] = self.params[those, source:source + size]

    # ---- warps --------------------------------------------------------------------------
    def _lane_bits(self, threads: np.ndarray) -> np.ndarray:
        """Per warp of the batch, the bit set of ``threads``' lanes."""
        weights = np.ldexp(1.0, self.ctx.lane[threads])
        return np.bincount(self.warp_of[threads], weights, minlength=len(self.warp_epoch)).astype(np.uint64)

    def _arrive(self, op: Any, pc: int, threads: np.ndarray) -> None:
        masks = np.broadcast_to(np.asarray(op.extra["mask"](self.ctx, threads)).astype(np.uint64), threads.shape)
        lane_bit = np.uint64(1) << self.ctx.lane[threads].astype(np.uint64)
        if ((masks & lane_bit) == 0).any():
            i = int(np.argmax((masks & lane_bit) == 0))
            raise self._error(op, f"{self._describe(int(threads[i]))} is not in its own member mask "
                                  f"0x{int(masks[i]):08x}")
        self.state[threads], self.pc[threads], self.wait_mask[threads] = AT_WARP, pc, masks
        self._release_warp_op(pc, np.unique(self.warp_of[threads]))

    def _release_warp_op(self, pc: int, warps: np.ndarray) -> bool:
        """Run the collective at ``pc`` for those of ``warps`` whose member lanes all wait there."""
        op = self.program.ops[pc]
        waiting = np.flatnonzero((self.state == AT_WARP) & np.isin(self.warp_of, warps))
        here = waiting[self.pc[waiting] == pc]
        elsewhere = waiting[self.pc[waiting] != pc]
        mask = np.zeros(len(self.warp_epoch), np.uint64)
        mask[self.warp_of[here]] = self.wait_mask[here]
        if (mask[self.warp_of[here]] != self.wait_mask[here]).any():
            raise self._error(op, "lanes of one warp give different member masks")
        alive = self._lane_bits(np.flatnonzero(self.state != EXITED))
        required = mask & alive
        clash = required & self._lane_bits(elsewhere)
        if clash.any():
            w = int(np.argmax(clash != 0))
            other = elsewhere[self.warp_of[elsewhere] == w][0]
            raise self._error(op, f"divergent warp collective: lanes of warp {w % self.launch.warps_per_block} in the "
                                  f"member mask wait at PTX line {self.program.ops[self.pc[other]].line} "
                                  f"({self._describe(int(other))}) instead")
        ready = (required & ~self._lane_bits(here)) == 0
        lanes = here[ready[self.warp_of[here]]]
        if len(lanes) == 0:
            return False
        self._execute(op, lanes)
        if op.extra.get("sync"):
            full = np.unique(self.warp_of[lanes])
            full = full[(self._lane_bits(lanes)[full] == alive[full])]
            self.warp_epoch[full] += 1
        self.state[lanes], self.pc[lanes] = RUNNING, pc + 1
        return True

    def _release_warps(self) -> bool:
        waiting = np.flatnonzero(self.state == AT_WARP)
        return any([self._release_warp_op(int(pc), np.unique(self.warp_of[waiting[self.pc[waiting] == pc]]))
                    for pc in np.unique(self.pc[waiting])])

    # ---- barriers -----------------------------------------------------------------------
    def _release_barriers(self) -> bool:
        blocks = len(self.block_epoch)
        alive = np.bincount(self.block_of[self.state != EXITED], minlength=blocks)
        waiting_threads = np.flatnonzero(self.state == AT_BARRIER)
        waiting = np.bincount(self.block_of[waiting_threads], minlength=blocks)
        complete = np.flatnonzero((waiting == alive) & (waiting > 0))
        for block in complete:
            members = waiting_threads[self.block_of[waiting_threads] == block]
            pcs, ids = np.unique(self.pc[members]), np.unique(self.barrier[members])
            aligned = any(self.program.ops[p].extra["aligned"] for p in pcs)
            if len(ids) > 1 or (aligned and len(pcs) > 1):
                lines = sorted({self.program.ops[p].line for p in pcs})
                raise SimulatorError(f"kernel {self.launch.kernel}: threads of block "
                                     f"{tuple(int(v) for v in _coords(self.global_block[members[0]], self.launch.grid))}"
                                     f" wait at different barriers (PTX lines {lines}): a barrier in divergent code")
            self.state[members], self.pc[members] = RUNNING, self.pc[members] + 1
            self.block_epoch[block] += 1
        return len(complete) > 0

    def _deadlock(self) -> SimulatorError:
        stuck = np.flatnonzero(self.state != EXITED)
        t = int(stuck[0])
        kind = "a barrier" if self.state[t] == AT_BARRIER else "a warp collective"
        op = self.program.ops[self.pc[t]]
        exited = int((self.block_of[self.state == EXITED] == self.block_of[t]).sum())
        return SimulatorError(f"kernel {self.launch.kernel}: deadlock: {self._describe(t)} waits at {kind} "
                              f"(PTX line {op.line}, {op.text!r}) that the other threads never reach "
                              f"({exited} threads of its block have exited)")

    def _error(self, op: Any, message: str) -> SimulatorError:
        return SimulatorError(f"kernel {self.launch.kernel}, PTX line {op.line} ({op.text!r}): {message}")


def _pack_params(program: Program, args: Sequence[Any]) -> bytes:
    """The kernel's param space: each argument converted to its ``.param`` declaration's type."""
    params = program.layout.kernel_params
    if len(args) != len(params):
        raise SimulatorError(f"kernel {program.kernel.name} takes {len(params)} arguments, got {len(args)}")
    end = max((address + v.nbytes for v, address in params), default=0)
    data = bytearray(end)
    for (variable, address), value in zip(params, args):
        ty = variable.type
        if variable.count != 1 or isinstance(value, (bytes, bytearray, np.ndarray)):
            raw = bytes(value) if isinstance(value, (bytes, bytearray)) else np.ascontiguousarray(value).tobytes()
            if len(raw) != variable.nbytes:
                raise SimulatorError(f"argument {variable.name}: {variable.nbytes} bytes expected, got {len(raw)}")
        elif ty.is_float:
            raw = np.asarray(value, ty.dtype).tobytes()
        else:
            number = int(value)
            if not -(1 << (ty.width - 1)) <= number < (1 << ty.width):
                raise SimulatorError(f"argument {variable.name}: {value} does not fit .{ty.name}")
            raw = (number % (1 << ty.width)).to_bytes(ty.size, "little")
        data[address:address + len(raw)] = raw
    return bytes(data)


def launch(module: Module, kernel: str, grid: int | Sequence[int], block: int | Sequence[int], args: Sequence[Any],
           memory: SimulatedMemory, shared_bytes: int = 0, check_races: bool = True,
           max_steps: int = 10_000_000) -> None:
    """Run ``kernel`` of ``module`` on ``grid`` x ``block`` simulated threads, like a CUDA launch.

    ``args`` follow the kernel's ``.param`` declarations (ints for integer and pointer
    parameters, floats for ``.f32``/``.f64``, bytes for byval arrays); ``shared_bytes`` sizes the
    dynamic (``.extern .shared``) shared memory. Raises SimulatorError for out-of-bounds or
    misaligned accesses, data races (unless ``check_races`` is False), divergent barriers and
    collectives, deadlocks, ``trap``, and kernels still running after ``max_steps`` steps.
    """
    run = Launch(module, kernel, _dim3(grid, "grid"), _dim3(block, "block"), memory, shared_bytes, check_races,
                 max_steps)
    run.run(_pack_params(run.program, args))
