"""The PTX simulator: LLVM-emitted kernels (through llvmlite's NVPTX target, mostly at -O3)
and hand-written PTX, each checked against NumPy or exact ``Fraction`` arithmetic, never
against the simulator itself; and the bugs it exists to catch (races, missing barriers,
divergent shuffles, out-of-bounds accesses) each raising."""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction

import numpy as np
import pytest

from plaidarray.backend.llvm_nvptx.simulator import SimulatedMemory, SimulatorError, launch, load_module
from plaidarray.backend.llvm_nvptx.simulator.conversions import convert
from plaidarray.backend.llvm_nvptx.simulator.rounding import fma
from plaidarray.backend.llvm_nvptx.simulator.scalars import TYPES

llvm = pytest.importorskip("llvmlite.binding")

HEADER = """
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
declare void @llvm.nvvm.barrier0()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare float @llvm.nvvm.shfl.sync.down.f32(i32, float, i32, i32)
"""


def compile_ir(body: str, optimize: bool = True) -> str:
    """PTX for sm_80 from LLVM IR, after llvmlite's -O3 pipeline unless ``optimize`` is False."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    machine = llvm.Target.from_triple("nvptx64-nvidia-cuda").create_target_machine(cpu="sm_80", features="+ptx75",
                                                                                   opt=3)
    module = llvm.parse_assembly(HEADER + body)
    module.verify()
    if optimize:
        builder = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=3))
        builder.getModulePassManager().run(module, builder)
    return machine.emit_assembly(module)


def device_array(memory: SimulatedMemory, values: np.ndarray) -> int:
    address = memory.allocate(values.nbytes)
    memory.write(address, values)
    return address


def same_bits(actual: np.ndarray, expected: np.ndarray) -> bool:
    """Equal bit for bit, except that any NaN matches any NaN (payloads are not modelled)."""
    both_nan = np.isnan(actual) & np.isnan(expected)
    return bool(np.all(both_nan | (actual.view(f"u{actual.itemsize}") == expected.view(f"u{expected.itemsize}"))))


# ---- element-wise kernels ------------------------------------------------------------------
GRID_STRIDE = """
define ptx_kernel void @axpby(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b, {T} %s, i32 %n) {{
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bi = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %nt = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %nb = call i32 @llvm.nvvm.read.ptx.sreg.nctaid.x()
  %base = mul i32 %bi, %nt
  %i0 = add i32 %base, %t
  %stride = mul i32 %nt, %nb
  br label %cond
cond:
  %i = phi i32 [%i0, %entry], [%next, %body]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %done
body:
  %pa = getelementptr {T}, ptr addrspace(1) %a, i32 %i
  %pb = getelementptr {T}, ptr addrspace(1) %b, i32 %i
  %va = load {T}, ptr addrspace(1) %pa
  %vb = load {T}, ptr addrspace(1) %pb
  %m = fmul {T} %va, %s
  %q = fdiv {T} %m, %vb
  %r = fadd {T} %q, %vb
  %po = getelementptr {T}, ptr addrspace(1) %out, i32 %i
  store {T} %r, ptr addrspace(1) %po
  %next = add i32 %i, %stride
  br label %cond
done:
  ret void
}}
"""


@pytest.mark.parametrize("ir_type, dtype", [("float", np.float32), ("double", np.float64)])
def test_grid_stride_loop_matches_numpy_bit_for_bit(ir_type, dtype):
    module = load_module(compile_ir(GRID_STRIDE.format(T=ir_type)))
    rng = np.random.default_rng(0)
    n = 1000  # not a multiple of the block, and more than grid x block: each thread loops
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    b[:3] = [0.0, -0.0, np.inf]
    memory = SimulatedMemory()
    out = memory.allocate(a.nbytes)
    launch(module, "axpby", grid=3, block=96, args=[out, device_array(memory, a), device_array(memory, b), 2.5, n],
           memory=memory)
    with np.errstate(all="ignore"):
        expected = a * dtype(2.5) / b + b
    assert same_bits(memory.read_array(out, dtype, n), expected)


def test_fmul_fadd_are_not_fused_without_contract_flags():
    """A fact the NVPTX backend's tests rely on: plain fmul+fadd stay two roundings at -O3."""
    ptx = compile_ir(GRID_STRIDE.format(T="float"))
    assert "mul.rn.f32" in ptx and "fma.rn" not in ptx


INDEX_2D = """
define ptx_kernel void @index2d(ptr addrspace(1) %out, i32 %width) {
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %nx = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ny = call i32 @llvm.nvvm.read.ptx.sreg.ntid.y()
  %x0 = mul i32 %bx, %nx
  %x = add i32 %x0, %tx
  %y0 = mul i32 %by, %ny
  %y = add i32 %y0, %ty
  %row = mul i32 %y, %width
  %i = add i32 %row, %x
  %v0 = mul i32 %y, 1000
  %v = add i32 %v0, %x
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %i
  store i32 %v, ptr addrspace(1) %p
  ret void
}
"""


def test_two_dimensional_grid_and_block_indices():
    module = load_module(compile_ir(INDEX_2D))
    memory = SimulatedMemory()
    height, width = 6, 16
    out = memory.allocate(4 * height * width)
    launch(module, "index2d", grid=(2, 3), block=(8, 2), args=[out, width], memory=memory)
    y, x = np.mgrid[0:height, 0:width]
    np.testing.assert_array_equal(memory.read_array(out, np.int32, height * width).reshape(height, width),
                                  y * 1000 + x)


# ---- warps ---------------------------------------------------------------------------------
WARP_SUM = """
define ptx_kernel void @warp_sum(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr float, ptr addrspace(1) %in, i32 %t
  %v = load float, ptr addrspace(1) %p
  %x16 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v, i32 16, i32 31)
  %s16 = fadd float %v, %x16
  %x8 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %s16, i32 8, i32 31)
  %s8 = fadd float %s16, %x8
  %x4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %s8, i32 4, i32 31)
  %s4 = fadd float %s8, %x4
  %x2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %s4, i32 2, i32 31)
  %s2 = fadd float %s4, %x2
  %x1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %s2, i32 1, i32 31)
  %s1 = fadd float %s2, %x1
  %d4 = call float @llvm.nvvm.shfl.sync.down.f32(i32 -1, float %v, i32 4, i32 31)
  %sd = fadd float %v, %d4
  %po = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %s1, ptr addrspace(1) %po
  %t2 = add i32 %t, 64
  %po2 = getelementptr float, ptr addrspace(1) %out, i32 %t2
  store float %sd, ptr addrspace(1) %po2
  ret void
}
"""


def test_warp_shuffles_bfly_and_down():
    module = load_module(compile_ir(WARP_SUM))
    rng = np.random.default_rng(1)
    values = rng.standard_normal(64).astype(np.float32)
    memory = SimulatedMemory()
    out = memory.allocate(4 * 128)
    launch(module, "warp_sum", grid=1, block=64, args=[out, device_array(memory, values)], memory=memory)
    result = memory.read_array(out, np.float32, 128)
    lanes = np.arange(64)
    tree = values.copy()
    for offset in (16, 8, 4, 2, 1):  # the butterfly's own order of additions
        tree = tree + tree[lanes ^ offset]
    assert same_bits(result[:64], tree)
    source = np.where(lanes % 32 + 4 <= 31, lanes + 4, lanes)  # out-of-range lanes keep their own value
    assert same_bits(result[64:], values + values[source])


DIVERGENT_SHUFFLE = """
define ptx_kernel void @divergent_shuffle(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %f = uitofp i32 %t to float
  %low = icmp ult i32 %t, 16
  br i1 %low, label %shuffle, label %other
shuffle:
  %x = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %f, i32 1, i32 31)
  br label %join
other:
  call void @llvm.nvvm.barrier0()
  br label %join
join:
  %r = phi float [%x, %shuffle], [%f, %other]
  %p = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %r, ptr addrspace(1) %p
  ret void
}
"""


def test_divergent_shuffle_raises():
    module = load_module(compile_ir(DIVERGENT_SHUFFLE, optimize=False))
    memory = SimulatedMemory()
    with pytest.raises(SimulatorError, match="deadlock|divergent"):
        launch(module, "divergent_shuffle", grid=1, block=32, args=[memory.allocate(128)], memory=memory)


# ---- shared memory, barriers and races -----------------------------------------------------
def block_reduction(with_barrier: bool) -> str:
    barrier = "call void @llvm.nvvm.barrier0()" if with_barrier else ""
    return f"""
@smem = internal addrspace(3) global [128 x float] undef, align 4
define ptx_kernel void @reduce(ptr addrspace(1) %out, ptr addrspace(1) %in) {{
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %g0 = mul i32 %b, 128
  %g = add i32 %g0, %t
  %pin = getelementptr float, ptr addrspace(1) %in, i32 %g
  %v = load float, ptr addrspace(1) %pin
  %ps = getelementptr float, ptr addrspace(3) @smem, i32 %t
  store float %v, ptr addrspace(3) %ps
  {barrier}
  br label %loop
loop:
  %s = phi i32 [64, %entry], [%s2, %next]
  %active = icmp ult i32 %t, %s
  br i1 %active, label %add, label %next
add:
  %o = add i32 %t, %s
  %po = getelementptr float, ptr addrspace(3) @smem, i32 %o
  %a = load float, ptr addrspace(3) %ps
  %c = load float, ptr addrspace(3) %po
  %sum = fadd float %a, %c
  store float %sum, ptr addrspace(3) %ps
  br label %next
next:
  call void @llvm.nvvm.barrier0()
  %s2 = lshr i32 %s, 1
  %again = icmp ugt i32 %s, 1
  br i1 %again, label %loop, label %done
done:
  %first = icmp eq i32 %t, 0
  br i1 %first, label %write, label %exit
write:
  %r = load float, ptr addrspace(3) @smem
  %pout = getelementptr float, ptr addrspace(1) %out, i32 %b
  store float %r, ptr addrspace(1) %pout
  br label %exit
exit:
  ret void
}}
"""


def test_shared_memory_tree_reduction_with_barriers():
    module = load_module(compile_ir(block_reduction(with_barrier=True)))
    rng = np.random.default_rng(2)
    values = rng.standard_normal(3 * 128).astype(np.float32)
    memory = SimulatedMemory()
    out = memory.allocate(12)
    launch(module, "reduce", grid=3, block=128, args=[out, device_array(memory, values)], memory=memory)
    tree = values.reshape(3, 128).copy()
    for s in (64, 32, 16, 8, 4, 2, 1):
        tree[:, :s] = tree[:, :s] + tree[:, s:2 * s]
    assert same_bits(memory.read_array(out, np.float32, 3), tree[:, 0])


def test_missing_barrier_is_a_race():
    module = load_module(compile_ir(block_reduction(with_barrier=False)))
    memory = SimulatedMemory()
    values = device_array(memory, np.ones(128, np.float32))
    with pytest.raises(SimulatorError, match=r"data race on shared address .* no barrier"):
        launch(module, "reduce", grid=1, block=128, args=[memory.allocate(4), values], memory=memory)


SAME_WORD = """
define ptx_kernel void @same_word(ptr addrspace(1) %out) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %first = icmp eq i32 %t, 0
  br i1 %first, label %write, label %exit
write:
  store i32 %b, ptr addrspace(1) %out
  br label %exit
exit:
  ret void
}
"""


def test_two_blocks_writing_one_word_race():
    module = load_module(compile_ir(SAME_WORD))
    memory = SimulatedMemory()
    out = memory.allocate(4)
    launch(module, "same_word", grid=1, block=64, args=[out], memory=memory)  # one writer: fine
    with pytest.raises(SimulatorError, match=r"data race on global address .*block \(0, 0, 0\).*block \(1, 0, 0\)"):
        launch(module, "same_word", grid=2, block=64, args=[out], memory=memory)


COUNTER = """
define ptx_kernel void @count(ptr addrspace(1) %counter, ptr addrspace(1) %tickets) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %b = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %old = atomicrmw add ptr addrspace(1) %counter, i32 1 monotonic
  %i0 = mul i32 %b, 64
  %i = add i32 %i0, %t
  %p = getelementptr i32, ptr addrspace(1) %tickets, i32 %i
  store i32 %old, ptr addrspace(1) %p
  ret void
}
"""


def test_atomic_counter_counts_exactly_and_is_not_a_race():
    module = load_module(compile_ir(COUNTER))
    memory = SimulatedMemory()
    counter = device_array(memory, np.zeros(1, np.int32))
    tickets = memory.allocate(4 * 256)
    launch(module, "count", grid=4, block=64, args=[counter, tickets], memory=memory)
    assert memory.read_array(counter, np.int32, 1)[0] == 256
    np.testing.assert_array_equal(np.sort(memory.read_array(tickets, np.int32, 256)), np.arange(256))


OUT_OF_BOUNDS = """
define ptx_kernel void @oob(ptr addrspace(1) %out, i32 %n) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %t, ptr addrspace(1) %p
  ret void
}
"""


def test_out_of_bounds_store_names_the_address_and_thread():
    module = load_module(compile_ir(OUT_OF_BOUNDS))
    memory = SimulatedMemory()
    out = memory.allocate(4 * 30)  # a block of 32 writes 2 elements too many
    with pytest.raises(SimulatorError, match=rf"global address 0x{out + 120:x}.*offset 120.*thread \(30, 0, 0\)"):
        launch(module, "oob", grid=1, block=32, args=[out, 30], memory=memory)


# ---- control flow --------------------------------------------------------------------------
DIVERGENCE = """
define ptx_kernel void @diverge(ptr addrspace(1) %out, ptr addrspace(1) %trips) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %odd = and i32 %t, 1
  %isodd = icmp eq i32 %odd, 1
  br i1 %isodd, label %then, label %else
then:
  %a = mul i32 %t, 3
  br label %merge
else:
  %b = sub i32 0, %t
  br label %merge
merge:
  %v = phi i32 [%a, %then], [%b, %else]
  %pt = getelementptr i32, ptr addrspace(1) %trips, i32 %t
  %n = load i32, ptr addrspace(1) %pt
  br label %loop
loop:
  %i = phi i32 [0, %merge], [%i2, %body]
  %acc = phi i32 [%v, %merge], [%acc2, %body]
  %more = icmp slt i32 %i, %n
  br i1 %more, label %body, label %done
body:
  %sq = mul i32 %i, %i
  %acc2 = add i32 %acc, %sq
  %i2 = add i32 %i, 1
  br label %loop
done:
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %acc, ptr addrspace(1) %po
  ret void
}
"""


@pytest.mark.parametrize("optimize", [False, True])
def test_divergent_branches_and_per_thread_trip_counts(optimize):
    module = load_module(compile_ir(DIVERGENCE, optimize=optimize))
    memory = SimulatedMemory()
    trips = np.random.default_rng(3).integers(0, 40, 70).astype(np.int32)
    out = memory.allocate(4 * 70)
    launch(module, "diverge", grid=1, block=70, args=[out, device_array(memory, trips)], memory=memory)
    t = np.arange(70)
    expected = np.where(t % 2 == 1, 3 * t, -t) + np.array([sum(i * i for i in range(k)) for k in trips])
    np.testing.assert_array_equal(memory.read_array(out, np.int32, 70), expected)


CALL = """
define internal float @scale(float %x, i32 %k) noinline {
  %kf = sitofp i32 %k to float
  %r = fmul float %x, %kf
  ret float %r
}
define ptx_kernel void @caller(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr float, ptr addrspace(1) %in, i32 %t
  %v = load float, ptr addrspace(1) %p
  %r = call float @scale(float %v, i32 %t)
  %po = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %r, ptr addrspace(1) %po
  ret void
}
"""


def test_noinline_device_function_call():
    ptx = compile_ir(CALL)
    assert "call.uni" in ptx
    module = load_module(ptx)
    memory = SimulatedMemory()
    values = np.random.default_rng(4).standard_normal(40).astype(np.float32)
    out = memory.allocate(160)
    launch(module, "caller", grid=1, block=40, args=[out, device_array(memory, values)], memory=memory)
    assert same_bits(memory.read_array(out, np.float32, 40), values * np.arange(40, dtype=np.float32))


LOCAL_ARRAY = """
define ptx_kernel void @local_array(ptr addrspace(1) %out) {
entry:
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %arr = alloca [8 x i32], align 4
  br label %fill
fill:
  %i = phi i32 [0, %entry], [%i2, %fill]
  %pi = getelementptr [8 x i32], ptr %arr, i32 0, i32 %i
  %v = mul i32 %i, %t
  store volatile i32 %v, ptr %pi
  %i2 = add i32 %i, 1
  %more = icmp ult i32 %i2, 8
  br i1 %more, label %fill, label %read
read:
  %j = and i32 %t, 7
  %pj = getelementptr [8 x i32], ptr %arr, i32 0, i32 %j
  %r = load volatile i32, ptr %pj
  %po = getelementptr i32, ptr addrspace(1) %out, i32 %t
  store i32 %r, ptr addrspace(1) %po
  ret void
}
"""


def test_local_memory_array_indexed_dynamically():
    ptx = compile_ir(LOCAL_ARRAY)
    assert "__local_depot" in ptx
    module = load_module(ptx)
    memory = SimulatedMemory()
    out = memory.allocate(4 * 48)
    launch(module, "local_array", grid=1, block=48, args=[out], memory=memory)
    t = np.arange(48)
    np.testing.assert_array_equal(memory.read_array(out, np.int32, 48), (t & 7) * t)


VECTOR_AND_NARROW = """
define ptx_kernel void @vectors(ptr addrspace(1) %out, ptr addrspace(1) %in, ptr addrspace(1) %bytes,
                                ptr addrspace(1) %shorts) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr <4 x float>, ptr addrspace(1) %in, i32 %t
  %v = load <4 x float>, ptr addrspace(1) %p, align 16
  %e0 = extractelement <4 x float> %v, i32 0
  %e1 = extractelement <4 x float> %v, i32 1
  %e2 = extractelement <4 x float> %v, i32 2
  %e3 = extractelement <4 x float> %v, i32 3
  %s01 = fadd float %e0, %e1
  %s23 = fadd float %e2, %e3
  %s = fadd float %s01, %s23
  %po = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %s, ptr addrspace(1) %po
  %pb = getelementptr i8, ptr addrspace(1) %bytes, i32 %t
  %b = load i8, ptr addrspace(1) %pb
  %b2 = mul i8 %b, 3
  store i8 %b2, ptr addrspace(1) %pb
  %ph = getelementptr i16, ptr addrspace(1) %shorts, i32 %t
  %h = load i16, ptr addrspace(1) %ph
  %hw = sext i16 %h to i32
  %hs = ashr i32 %hw, 1
  %h2 = trunc i32 %hs to i16
  store i16 %h2, ptr addrspace(1) %ph
  ret void
}
"""


def test_vector_loads_and_narrow_integers():
    ptx = compile_ir(VECTOR_AND_NARROW)
    assert "ld.global.v4" in ptx
    module = load_module(ptx)
    rng = np.random.default_rng(5)
    values = rng.standard_normal((33, 4)).astype(np.float32)
    small = rng.integers(-128, 128, 33).astype(np.int8)
    shorts = rng.integers(-32768, 32768, 33).astype(np.int16)
    memory = SimulatedMemory()
    out = memory.allocate(4 * 33)
    pb, ph = device_array(memory, small), device_array(memory, shorts)
    launch(module, "vectors", grid=1, block=33, args=[out, device_array(memory, values), pb, ph], memory=memory)
    assert same_bits(memory.read_array(out, np.float32, 33), (values[:, 0] + values[:, 1]) + (values[:, 2] + values[:, 3]))
    np.testing.assert_array_equal(memory.read_array(pb, np.int8, 33), (small.astype(np.int32) * 3).astype(np.int8))
    np.testing.assert_array_equal(memory.read_array(ph, np.int16, 33), shorts >> 1)


MIN_MAX = """
declare float @llvm.minnum.f32(float, float)
declare float @llvm.maxnum.f32(float, float)
declare float @llvm.minimum.f32(float, float)
declare float @llvm.maximum.f32(float, float)
define ptx_kernel void @minmax(ptr addrspace(1) %out, ptr addrspace(1) %a, ptr addrspace(1) %b) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %pa = getelementptr float, ptr addrspace(1) %a, i32 %t
  %pb = getelementptr float, ptr addrspace(1) %b, i32 %t
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %r0 = call float @llvm.minnum.f32(float %x, float %y)
  %r1 = call float @llvm.maxnum.f32(float %x, float %y)
  %r2 = call float @llvm.minimum.f32(float %x, float %y)
  %r3 = call float @llvm.maximum.f32(float %x, float %y)
  %lt = fcmp olt float %x, %y
  %r4 = select i1 %lt, float %x, float %y
  %results = insertelement <4 x float> undef, float %r0, i32 0
  %p0 = getelementptr float, ptr addrspace(1) %out, i32 %t
  store float %r0, ptr addrspace(1) %p0
  %i1 = add i32 %t, 16
  %p1 = getelementptr float, ptr addrspace(1) %out, i32 %i1
  store float %r1, ptr addrspace(1) %p1
  %i2 = add i32 %t, 32
  %p2 = getelementptr float, ptr addrspace(1) %out, i32 %i2
  store float %r2, ptr addrspace(1) %p2
  %i3 = add i32 %t, 48
  %p3 = getelementptr float, ptr addrspace(1) %out, i32 %i3
  store float %r3, ptr addrspace(1) %p3
  %i4 = add i32 %t, 64
  %p4 = getelementptr float, ptr addrspace(1) %out, i32 %i4
  store float %r4, ptr addrspace(1) %p4
  ret void
}
"""


def test_min_max_select_with_nan_and_signed_zeros():
    module = load_module(compile_ir(MIN_MAX))
    nan = np.float32(np.nan)
    x = np.array([1, nan, 2, nan, -0.0, 0.0, -1, np.inf, 3, 5, -2, 0, 1, 1, -np.inf, 7], np.float32)
    y = np.array([2, 1, nan, nan, 0.0, -0.0, -1, 1, 3, -5, -3, 4, nan, 0, 9, 8], np.float32)
    memory = SimulatedMemory()
    out = memory.allocate(4 * 80)
    launch(module, "minmax", grid=1, block=16, args=[out, device_array(memory, x), device_array(memory, y)],
           memory=memory)
    result = memory.read_array(out, np.float32, 80).reshape(5, 16)
    nonzero = ~((x == 0) & (y == 0))  # fmin/fmax may return either zero; PTX and IEEE-2019 minimum may not
    assert same_bits(result[0][nonzero], np.fmin(x, y)[nonzero])
    assert same_bits(result[1][nonzero], np.fmax(x, y)[nonzero])
    assert same_bits(result[2], np.where((x == 0) & (y == 0), np.where(np.signbit(x) | np.signbit(y), -0.0, 0.0),
                                         np.minimum(x, y)).astype(np.float32))
    assert same_bits(result[3], np.where((x == 0) & (y == 0), np.where(np.signbit(x) & np.signbit(y), -0.0, 0.0),
                                         np.maximum(x, y)).astype(np.float32))
    assert same_bits(result[4], np.where(x < y, x, y))


# ---- exact arithmetic ----------------------------------------------------------------------
def ptx_kernel(body: str, params: str, registers: str = "") -> str:
    """A hand-written sm_80 kernel ``k``: PTX pins down instructions LLVM would not emit."""
    return f"""
.version 7.5
.target sm_80
.address_size 64
.visible .entry k({params})
{{
    .reg .pred %p<8>;
    .reg .b16 %h<8>;
    .reg .b32 %r<32>;
    .reg .b64 %rd<16>;
    .reg .f32 %f<8>;
    .reg .f64 %fd<8>;
    {registers}
{body}
}}
"""


INTEGER_OPS = ptx_kernel("""
    ld.param.u64 %rd1, [k_param_0];
    ld.param.u64 %rd2, [k_param_1];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.v2.u32 {%r2, %r3}, [%rd4];
    mul.wide.u32 %rd5, %r1, 40;
    add.s64 %rd6, %rd1, %rd5;
    div.s32 %r4, %r2, %r3;
    rem.s32 %r5, %r2, %r3;
    div.u32 %r6, %r2, %r3;
    rem.u32 %r7, %r2, %r3;
    shl.b32 %r8, %r2, %r3;
    shr.s32 %r9, %r2, %r3;
    shr.u32 %r10, %r2, %r3;
    mul.hi.s32 %r11, %r2, %r3;
    mul.hi.u32 %r12, %r2, %r3;
    bfe.s32 %r13, %r2, %r3, 5;
    st.global.v2.u32 [%rd6], {%r4, %r5};
    st.global.v2.u32 [%rd6+8], {%r6, %r7};
    st.global.v2.u32 [%rd6+16], {%r8, %r9};
    st.global.v2.u32 [%rd6+24], {%r10, %r11};
    st.global.v2.u32 [%rd6+32], {%r12, %r13};
    ret;
""", ".param .u64 k_param_0, .param .u64 k_param_1")


def _wrap(value: int, bits: int = 32, signed: bool = True) -> int:
    value %= 1 << bits
    return value - (1 << bits) if signed and value >= 1 << (bits - 1) else value


def _ptx_integer_reference(a: int, b: int) -> list[int]:
    """PTX's definitions, from Python integers (division by zero: all ones and the dividend)."""
    ua, ub = a % 2**32, b % 2**32

    def tdiv(x: int, y: int) -> int:
        return -1 if y == 0 else _wrap(abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1))
    shift = min(ub, 32)
    field = 0
    pos = ub & 0xFF
    if pos < 32:
        length = min(5, 32 - pos)
        field = (ua >> pos) & ((1 << length) - 1)
        top = (ua >> min(pos + 4, 31)) & 1
        field = field | (~((1 << length) - 1) if top else 0)
    else:
        field = -1 if a < 0 else 0
    return [tdiv(a, b), a if b == 0 else _wrap(a - _wrap(tdiv(a, b) * b)),
            -1 if ub == 0 else ua // ub, ua if ub == 0 else ua % ub,
            0 if shift >= 32 else _wrap(ua << shift), a >> min(shift, 31),
            0 if shift >= 32 else ua >> shift, _wrap((a * b) >> 32), _wrap((ua * ub) >> 32), _wrap(field)]


def test_integer_division_remainder_shift_semantics():
    module = load_module(INTEGER_OPS)
    rng = np.random.default_rng(6)
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (-5, 0), (-2**31, -1), (-2**31, 1), (123, 31), (-123, 32),
             (-123, 33), (2**31 - 1, 40), (-1, 0xFF), (-9, 1 << 20)]
    pairs += [(int(x), int(y)) for x, y in rng.integers(-2**31, 2**31, (50, 2))]
    pairs += [(int(x), int(y)) for x, y in zip(rng.integers(-2**31, 2**31, 30), rng.integers(0, 40, 30))]
    operands = np.array(pairs, np.int64).astype(np.int32)
    memory = SimulatedMemory()
    out = memory.allocate(40 * len(pairs))
    launch(module, "k", grid=1, block=len(pairs), args=[out, device_array(memory, operands)], memory=memory)
    result = memory.read_array(out, np.uint32, 10 * len(pairs)).reshape(-1, 10)
    expected = np.array([[v % 2**32 for v in _ptx_integer_reference(a, b)] for a, b in pairs], np.uint32)
    np.testing.assert_array_equal(result, expected)


SATURATING = """
declare i32 @llvm.fptosi.sat.i32.f32(float)
declare i8 @llvm.fptoui.sat.i8.f32(float)
declare i64 @llvm.fptosi.sat.i64.f64(double)
define ptx_kernel void @sat(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %p = getelementptr float, ptr addrspace(1) %in, i32 %t
  %v = load float, ptr addrspace(1) %p
  %a = call i32 @llvm.fptosi.sat.i32.f32(float %v)
  %b = call i8 @llvm.fptoui.sat.i8.f32(float %v)
  %vd = fpext float %v to double
  %c = call i64 @llvm.fptosi.sat.i64.f64(double %vd)
  %i = mul i32 %t, 16
  %pa = getelementptr i8, ptr addrspace(1) %out, i32 %i
  store i32 %a, ptr addrspace(1) %pa
  %ib = add i32 %i, 4
  %pb = getelementptr i8, ptr addrspace(1) %out, i32 %ib
  store i8 %b, ptr addrspace(1) %pb
  %ic = add i32 %i, 8
  %pc = getelementptr i8, ptr addrspace(1) %out, i32 %ic
  store i64 %c, ptr addrspace(1) %pc
  ret void
}
"""


def test_float_to_integer_conversion_saturates_and_maps_nan_to_zero():
    ptx = compile_ir(SATURATING)
    module = load_module(ptx)
    values = np.array([0.0, -0.9, 2.7, -2.7, 1e10, -1e10, np.nan, np.inf, -np.inf, 255.5, 256.0, -1.0, 3e19, 2**31,
                       -2**31, 1e-40], np.float32)
    memory = SimulatedMemory()
    out = memory.allocate(16 * len(values))
    launch(module, "sat", grid=1, block=len(values), args=[out, device_array(memory, values)], memory=memory)
    raw = memory.read(out, 16 * len(values))
    rows = [struct.unpack_from("<iB3xq", raw, 16 * i) for i in range(len(values))]

    def clamp(v: float, lo: int, hi: int) -> int:  # PTX: truncate, saturate, NaN -> 0
        if math.isnan(v):
            return 0
        return lo if v < lo else hi if v > hi else math.trunc(v)
    for value, (s32, u8, s64) in zip(values, rows):
        v = float(value)
        assert (s32, u8, s64) == (clamp(v, -2**31, 2**31 - 1), clamp(v, 0, 255), clamp(v, -2**63, 2**63 - 1)), v


def _exact(x: float) -> Fraction:
    return Fraction(x)


def _round(exact: Fraction, dtype: type) -> float:
    """``exact`` correctly rounded to nearest-even in ``dtype`` (f32 via float64 + tie fix)."""
    if dtype is np.float64:
        try:
            return exact.numerator / exact.denominator
        except OverflowError:
            return math.inf if exact > 0 else -math.inf
    info = np.finfo(np.float32)
    with np.errstate(over="ignore"):
        candidate = np.float32(float(exact))  # may double round: fix by checking both neighbours
    best = None
    with np.errstate(over="ignore"):
        neighbours = (np.nextafter(candidate, np.float32(np.inf)), np.nextafter(candidate, np.float32(-np.inf)))
    for c in (candidate, *neighbours):
        if not np.isfinite(c):
            continue
        distance = abs(Fraction(float(c)) - exact)
        key = (distance, int(np.array(c).view(np.uint32)) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    result = best[1]
    if abs(exact) >= Fraction(float(info.max)) + Fraction(2.0 ** (127 - 24)):
        return math.inf if exact > 0 else -math.inf
    return float(result)


def _fma_cases(dtype: type, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = 400
    if dtype is np.float32:
        bits = rng.integers(0, 2**32, (3, n), dtype=np.uint64).astype(np.uint32).view(np.float32)
        scale = rng.standard_normal((3, n)).astype(np.float32)
        a, b, c = np.where(rng.random((3, n)) < 0.5, bits, scale)
    else:
        bits = rng.integers(0, 2**64, (3, n), dtype=np.uint64).view(np.float64)
        a, b, c = np.where(rng.random((3, n)) < 0.5, bits, rng.standard_normal((3, n)))
    eps = np.finfo(dtype).eps
    tiny = np.finfo(dtype).tiny
    big = np.finfo(dtype).max
    hard = [  # cancellation, ties lost by double rounding, over- and underflow, signed zeros, specials
        (1 + eps, 1 - eps, -1.0), (1 + eps, 1 + eps, -(1 + 2 * eps)), (big, 2.0, -big), (big, 1.5, 0.0),
        (tiny, 0.5, 0.0), (tiny, tiny, 0.0), (-tiny, tiny, 0.0), (0.0, -1.0, 0.0), (-0.0, 1.0, -0.0),
        (1.0, 1.0, -1.0), (np.inf, 0.0, 1.0), (np.inf, 1.0, -np.inf), (2.0, 3.0, np.inf), (np.nan, 1.0, 1.0),
        (big, big, -np.inf), (1 + 2 * eps, 1 + 2 * eps, -1.0), (3.0, 1 / 3, -1.0), (tiny * 4, 0.25, -tiny),
        (big / 2, 2.0, big / 2),
    ]
    # a*b lands exactly halfway between two results and c is far below it: only rounding to odd
    # (not a second round-to-nearest) lets c's sign decide the tie (Boldo and Melquiond).
    x, y, tiny_c = (2.0**-12, 2.0**-12, 2.0**-60) if dtype is np.float32 else (2.0**-26, 2.0**-27, 2.0**-120)
    hard += [(1 + x, 1 + y, tiny_c), (1 + x, 1 + y, -tiny_c), (-(1 + x), 1 + y, tiny_c)]
    hard_a, hard_b, hard_c = (np.array(v, dtype) for v in zip(*hard))
    return (np.concatenate([a, hard_a]).astype(dtype), np.concatenate([b, hard_b]).astype(dtype),
            np.concatenate([c, hard_c]).astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fma_is_correctly_rounded(dtype):
    a, b, c = _fma_cases(dtype, np.random.default_rng(7))
    with np.errstate(all="ignore"):
        result = fma(a, b, c)
        fallback = a.astype(np.float64) * b + c  # for non-finite inputs IEEE arithmetic is the definition
    assert result.dtype == dtype
    for x, y, z, r, special in zip(a, b, c, result, fallback):
        if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(z)):
            expected = float(z) if np.isfinite(x) and np.isfinite(y) else float(special)
        else:
            exact = _exact(float(x)) * _exact(float(y)) + _exact(float(z))
            expected = _round(exact, dtype) if exact != 0 else (float(x) * float(y) + float(z) if x == 0 or y == 0
                                                                   else 0.0)
        assert same_bits(np.array([r], dtype), np.array([expected], dtype)), (x, y, z, r, expected)


FMA_KERNEL = """
declare double @llvm.fma.f64(double, double, double)
define ptx_kernel void @fmas(ptr addrspace(1) %out, ptr addrspace(1) %in) {
  %t = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i = mul i32 %t, 3
  %pa = getelementptr double, ptr addrspace(1) %in, i32 %i
  %a = load double, ptr addrspace(1) %pa
  %pb = getelementptr double, ptr addrspace(1) %pa, i32 1
  %b = load double, ptr addrspace(1) %pb
  %pc = getelementptr double, ptr addrspace(1) %pa, i32 2
  %c = load double, ptr addrspace(1) %pc
  %r = call double @llvm.fma.f64(double %a, double %b, double %c)
  %po = getelementptr double, ptr addrspace(1) %out, i32 %t
  store double %r, ptr addrspace(1) %po
  ret void
}
"""


def test_fma_instruction_in_a_kernel():
    ptx = compile_ir(FMA_KERNEL)
    assert "fma.rn.f64" in ptx
    eps = np.finfo(np.float64).eps
    cases = np.array([[1 + eps, 1 - eps, -1.0], [0.1, 10.0, -1.0], [3.0, 1 / 3, -1.0]], np.float64)
    memory = SimulatedMemory()
    out = memory.allocate(24)
    launch(load_module(ptx), "fmas", grid=1, block=3, args=[out, device_array(memory, cases)], memory=memory)
    expected = [_round(_exact(a) * _exact(b) + _exact(c), np.float64) for a, b, c in cases]
    np.testing.assert_array_equal(memory.read_array(out, np.float64, 3), expected)


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_integer_to_float_conversions_round_in_every_mode(mode):
    rng = np.random.default_rng(8)
    values = np.concatenate([rng.integers(-2**63, 2**63, 300, dtype=np.int64),
                             np.array([2**63 - 1, -2**63, 2**24 + 1, -(2**24 + 3), 2**53 + 1, 0, 1, -1], np.int64)])
    rounding = {"rn": None, "rz": 0, "rm": -1, "rp": 1}[mode]
    for target in ("f32", "f64"):
        result = convert(values, TYPES["s64"], TYPES[target], mode, False, False)
        dtype = np.float32 if target == "f32" else np.float64
        for v, r in zip(values, result):
            exact = Fraction(int(v))
            below, above = Fraction(float(r)), None
            assert np.isfinite(r)
            if rounding is None:
                assert r == _round(exact, dtype), (v, r)
                continue
            neighbour = np.nextafter(dtype(r), dtype(np.inf if Fraction(float(r)) < exact else -np.inf))
            above = Fraction(float(neighbour))
            between = min(below, above) <= exact <= max(below, above)
            direction_ok = {0: abs(below) <= abs(exact), -1: below <= exact, 1: below >= exact}[rounding]
            assert between and direction_ok, (v, r, mode)


@pytest.mark.parametrize("statement, message", [
    ("cp.async.ca.shared.global [%rd1], [%rd2], 16;", "unsupported instruction cp.async"),
    ("tex.1d.v4.f32.s32 {%f1, %f2, %f3, %f4}, [tex0, {%r1}];", "expected ']'"),
    ("add.sat.u32 %r1, %r1, 1;", "unsupported modifier"),
    ("mov.b32 {{{%r1}}}, 1;", "a '{' list inside a list"),  # never nested: parsed in one level, whatever the text
])
def test_unsupported_ptx_names_the_line(statement, message):
    ptx = ptx_kernel(f"""
    mov.u32 %r1, %tid.x;
    {statement}
    ret;
""", ".param .u64 k_param_0")
    line = next(i for i, text in enumerate(ptx.splitlines(), 1) if statement in text)
    with pytest.raises(SimulatorError, match=rf"PTX line {line}\b.*{re.escape(message)}"):
        load_module(ptx)


def test_barrier_in_divergent_code_deadlocks():
    ptx = ptx_kernel("""
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p1, %r1, 16;
    @%p1 bra $L_skip;
    bar.sync 0;
$L_skip:
    bar.sync 0;
    ret;
""", ".param .u64 k_param_0")
    memory = SimulatedMemory()
    with pytest.raises(SimulatorError, match="different barriers"):
        launch(load_module(ptx), "k", grid=1, block=64, args=[0], memory=memory)


def test_trap_raises():
    ptx = ptx_kernel("    trap;\n    ret;\n", ".param .u64 k_param_0")
    with pytest.raises(SimulatorError, match="trap"):
        launch(load_module(ptx), "k", grid=1, block=4, args=[0], memory=SimulatedMemory())


DYNAMIC_SHARED = ptx_kernel("""
    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r1, %tid.x;
    mov.u64 %rd2, dyn;
    cvta.shared.u64 %rd3, %rd2;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd3, %rd4;
    st.u32 [%rd5], %r1;
    bar.sync 0;
    xor.b32 %r2, %r1, 31;
    mul.wide.u32 %rd6, %r2, 4;
    add.s64 %rd7, %rd3, %rd6;
    ld.u32 %r3, [%rd7];
    setp.lt.u32 %p1, %r3, 8;
    vote.sync.ballot.b32 %r4, %p1, -1;
    add.s64 %rd8, %rd1, %rd4;
    add.u32 %r5, %r3, %r4;
    st.global.u32 [%rd8], %r5;
    ret;
""", ".param .u64 k_param_0").replace(".visible .entry", ".extern .shared .align 16 .b8 dyn[];\n.visible .entry")


def test_dynamic_shared_memory_through_generic_addresses_and_vote():
    module = load_module(DYNAMIC_SHARED)
    memory = SimulatedMemory()
    out = memory.allocate(4 * 32)
    launch(module, "k", grid=1, block=32, args=[out], memory=memory, shared_bytes=128)
    reversed_ids = np.arange(32) ^ 31
    ballot = sum(1 << lane for lane in range(32) if reversed_ids[lane] < 8)
    np.testing.assert_array_equal(memory.read_array(out, np.uint32, 32), reversed_ids + ballot)
    with pytest.raises(SimulatorError, match="outside the shared space"):
        launch(module, "k", grid=1, block=32, args=[out], memory=memory, shared_bytes=64)  # too little


CONVERSIONS = ptx_kernel("""
    ld.param.u64 %rd1, [k_param_0];
    ld.param.u64 %rd2, [k_param_1];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd3, %r1, 8;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f64 %fd1, [%rd4];
    cvt.rn.f32.f64 %f1, %fd1;
    cvt.rzi.s32.f32 %r2, %f1;
    cvt.rni.u16.f32 %h1, %f1;
    cvt.rmi.s8.f64 %h2, %fd1;
    cvt.rpi.u32.f64 %r3, %fd1;
    cvt.rzi.s64.f64 %rd5, %fd1;
    cvt.sat.s8.s32 %h3, %r2;
    cvt.u32.u16 %r4, %h1;
    cvt.s32.s8 %r5, %h2;
    cvt.s32.s8 %r6, %h3;
    mul.wide.u32 %rd6, %r1, 32;
    add.s64 %rd7, %rd1, %rd6;
    st.global.v4.u32 [%rd7], {%r2, %r4, %r5, %r3};
    st.global.v2.u32 [%rd7+16], {%r6, %r6};
    st.global.u64 [%rd7+24], %rd5;
    ret;
""", ".param .u64 k_param_0, .param .u64 k_param_1")


def test_cvt_rounding_saturation_and_nan_on_hand_written_ptx():
    """LLVM clamps fptosi.sat itself (setp/selp around cvt), so PTX's own saturation is
    checked here on PTX written by hand."""
    values = np.array([0.0, -0.5, 0.5, 1.5, 2.5, -2.5, 2.7, -2.7, 1e10, -1e10, np.nan, np.inf, -np.inf, 65535.5,
                       -129.0, 127.9, 300.0, 4294967296.0, 9.3e18, -9.3e18], np.float64)
    memory = SimulatedMemory()
    out = memory.allocate(32 * len(values))
    launch(load_module(CONVERSIONS), "k", grid=1, block=len(values), args=[out, device_array(memory, values)],
           memory=memory)
    raw = memory.read(out, 32 * len(values))

    def saturate(v: float, lo: int, hi: int) -> int:  # PTX: NaN -> 0, then clamp
        return 0 if math.isnan(v) else lo if v < lo else hi if v > hi else int(v)

    def ties_even(v: float) -> float:
        return v if not math.isfinite(v) else float(round(v))
    for i, v in enumerate(values):
        s32, u16, s8, u32, sat8, _, s64 = struct.unpack_from("<iIiIiiq", raw, 32 * i)
        v32 = float(np.float32(v))
        assert s32 == saturate(math.trunc(v32) if math.isfinite(v32) else v32, -2**31, 2**31 - 1), v
        assert u16 == saturate(ties_even(v32), 0, 65535), v
        assert s8 == saturate(math.floor(v) if math.isfinite(v) else v, -128, 127), v
        assert u32 == saturate(math.ceil(v) if math.isfinite(v) else v, 0, 2**32 - 1), v
        assert s64 == saturate(math.trunc(v) if math.isfinite(v) else v, -2**63, 2**63 - 1), v
        assert sat8 == max(-128, min(127, s32)), v


def test_misaligned_access_raises():
    ptx = ptx_kernel("""
    ld.param.u64 %rd1, [k_param_0];
    ld.global.u32 %r1, [%rd1+2];
    ret;
""", ".param .u64 k_param_0")
    memory = SimulatedMemory()
    buffer = memory.allocate(16)
    with pytest.raises(SimulatorError, match=rf"misaligned 4-byte access at global address 0x{buffer + 2:x}"):
        launch(load_module(ptx), "k", grid=1, block=1, args=[buffer], memory=memory)
