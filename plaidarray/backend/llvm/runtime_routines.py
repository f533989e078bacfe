"""plaidarray's runtime routines: loops with data-dependent control flow that have no
natural ``linalg.generic`` form (sorting, a mask's positions, integer powers), written
directly in LLVM IR for any LLVM target. Each is generated once per LLVM module that calls
it, with internal linkage, so it is optimised together with its caller; a kernel calls it
with ``func.call @plaidarray_<name>_<type>`` (``Renderer.runtime_function``). llvm-cpu adds
its FFT kernel (``llvm_cpu/runtime.py``); on a GPU each runs on the one thread of its
kernel's call.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir

from .ir_loops import Loop

I1, I64 = ir.IntType(1), ir.IntType(64)
PTR = ir.PointerType()

#: element-type suffix -> (LLVM type, kind: f float / i signed / u unsigned)
ELEMENT_TYPES = {
    "f32": (ir.FloatType(), "f"), "f64": (ir.DoubleType(), "f"),
    **{f"i{w}": (ir.IntType(w), "i") for w in (8, 16, 32, 64)},
    **{f"u{w}": (ir.IntType(w), "u") for w in (8, 16, 32, 64)},
    "b1": (ir.IntType(8), "u"),
}


def _strictly_before(b: ir.IRBuilder, x: ir.Value, y: ir.Value, kind: str, descending: ir.Value) -> ir.Value:
    """``x`` goes strictly before ``y``: ascending with NaN last, or descending with NaN
    first (the mirror image), so equal keys keep their order (stability)."""
    if kind == "f":
        asc = b.or_(b.fcmp_ordered("<", x, y), b.and_(b.fcmp_unordered("uno", y, y), b.fcmp_ordered("ord", x, x)))
        desc = b.or_(b.fcmp_ordered(">", x, y), b.and_(b.fcmp_unordered("uno", x, x), b.fcmp_ordered("ord", y, y)))
    else:
        cmp = b.icmp_signed if kind == "i" else b.icmp_unsigned
        asc, desc = cmp("<", x, y), cmp(">", x, y)
    return b.select(descending, desc, asc)


def _argsort(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """``void f(T* keys, i64 offset, i64 stride, i64 n, i64* out, i64 out_offset,
    i64 out_stride, i1 descending, i64* scratch, i64 scratch_offset)``: a stable bottom-up
    merge sort of indices 0..n-1 by key, written to ``out``. Its 2n indices of scratch are
    the caller's (a buffer the executable allocates, ``codegen/lowerings/sort.py``), not
    malloc's: a GPU kernel has no host heap, and its device heap is 8 MB unless raised."""
    ty, kind = ELEMENT_TYPES[suffix]
    fnty = ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, PTR, I64, I64, I1, PTR, I64])
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    keys, offset, stride, n, out, out_offset, out_stride, descending, scratch, scratch_offset = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))

    def key_at(index_ptr_base, i):
        idx = b.load(b.gep(index_ptr_base, [i], source_etype=I64), typ=I64)
        pos = b.add(offset, b.mul(idx, stride))
        return b.load(b.gep(keys, [pos], source_etype=ty), typ=ty)

    a_buf = b.gep(scratch, [scratch_offset], source_etype=I64)
    t_buf = b.gep(a_buf, [n], source_etype=I64)

    # --- merge passes: src -> dst, doubling the run width --------------------------------
    fill = Loop(b, fn, ir.Constant(I64, 0), n, "fill")
    b.store(fill.i, b.gep(a_buf, [fill.i], source_etype=I64))
    fill.close()
    filled = b.block
    pass_head, pass_body, pass_exit = (fn.append_basic_block(x) for x in ("pass.head", "pass.body", "pass.exit"))
    b.branch(pass_head)
    b.position_at_end(pass_head)
    width, src, dst = b.phi(I64), b.phi(PTR), b.phi(PTR)
    width.add_incoming(ir.Constant(I64, 1), filled)
    src.add_incoming(a_buf, filled)
    dst.add_incoming(t_buf, filled)
    b.cbranch(b.icmp_signed("<", width, n), pass_body, pass_exit)
    b.position_at_end(pass_body)
    two_w = b.add(width, width)
    runs = Loop(b, fn, ir.Constant(I64, 0), n, "runs")
    lo = runs.i
    mid = b.select(b.icmp_signed("<", b.add(lo, width), n), b.add(lo, width), n)
    hi = b.select(b.icmp_signed("<", b.add(lo, two_w), n), b.add(lo, two_w), n)
    merge_head, merge_body, merge_exit = (fn.append_basic_block(x) for x in ("m.head", "m.body", "m.exit"))
    pre = b.block
    b.branch(merge_head)
    b.position_at_end(merge_head)
    i, j, k = b.phi(I64), b.phi(I64), b.phi(I64)
    for phi, start in ((i, lo), (j, mid), (k, lo)):
        phi.add_incoming(start, pre)
    b.cbranch(b.icmp_signed("<", k, hi), merge_body, merge_exit)
    b.position_at_end(merge_body)
    left_done = b.icmp_signed(">=", i, mid)
    right_left = b.icmp_signed("<", j, hi)
    safe_i = b.select(left_done, lo, i)
    safe_j = b.select(right_left, j, lo)
    right_first = _strictly_before(b, key_at(src, safe_j), key_at(src, safe_i), kind, descending)
    take_right = b.and_(right_left, b.or_(left_done, right_first))
    chosen = b.select(take_right, safe_j, safe_i)
    value = b.load(b.gep(src, [chosen], source_etype=I64), typ=I64)
    b.store(value, b.gep(dst, [k], source_etype=I64))
    one = ir.Constant(I64, 1)
    i.add_incoming(b.select(take_right, i, b.add(i, one)), b.block)
    j.add_incoming(b.select(take_right, b.add(j, one), j), b.block)
    k.add_incoming(b.add(k, one), b.block)
    b.branch(merge_head)
    b.position_at_end(merge_exit)
    runs.close(two_w)
    width.add_incoming(two_w, b.block)
    src.add_incoming(dst, b.block)
    dst.add_incoming(src, b.block)
    b.branch(pass_head)

    # --- copy the merged order out ---------------------------------------------------------
    b.position_at_end(pass_exit)
    copy = Loop(b, fn, ir.Constant(I64, 0), n, "copy")
    value = b.load(b.gep(src, [copy.i], source_etype=I64), typ=I64)
    b.store(value, b.gep(out, [b.add(out_offset, b.mul(copy.i, out_stride))], source_etype=I64))
    copy.close()
    b.ret_void()
    return fn


def _ipow(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """``base ** exponent`` by squaring, wrapping like NumPy. For signed types a negative
    exponent gives trunc(1 / base**-e): 1 for base 1, +-1 for base -1, else 0."""
    ty, kind = ELEMENT_TYPES[suffix]
    fn = ir.Function(module, ir.FunctionType(ty, [ty, ty]), name)
    fn.linkage = "internal"
    base, exponent = fn.args
    entry, negative, loop, done = (fn.append_basic_block(n) for n in ("entry", "negative", "loop", "done"))
    b = ir.IRBuilder(entry)
    zero, one = ir.Constant(ty, 0), ir.Constant(ty, 1)
    is_negative = b.icmp_signed("<", exponent, zero) if kind == "i" else ir.Constant(I1, 0)
    b.cbranch(is_negative, negative, loop)
    b.position_at_end(negative)
    is_one = b.icmp_signed("==", base, one)
    is_minus_one = b.icmp_signed("==", base, ir.Constant(ty, -1))
    odd = b.trunc(exponent, I1)
    b.ret(b.select(is_one, one, b.select(is_minus_one, b.select(odd, ir.Constant(ty, -1), one), zero)))
    b.position_at_end(loop)  # runs at least once, so exponent 0 returns 1
    acc, square, e = (b.phi(ty) for _ in range(3))
    acc_next = b.select(b.trunc(e, I1), b.mul(acc, square), acc)
    e_next = b.lshr(e, one)
    square_next = b.mul(square, square)
    b.cbranch(b.icmp_unsigned("==", e_next, zero), done, loop)
    for phi, start, nxt in ((acc, one, acc_next), (square, base, square_next), (e, exponent, e_next)):
        phi.add_incoming(start, entry)
        phi.add_incoming(nxt, loop)
    b.position_at_end(done)
    result = b.phi(ty)
    result.add_incoming(acc_next, loop)
    b.ret(result)
    return fn


def _positions(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """``void f(i8* mask, i64 n, i64* out, i64 count)``: the indices of the nonzero
    elements of ``mask``, in order, the first ``count`` of them, then ``n`` for each
    wanted past them (``true_positions``, ``hlo/ops/gather.py``): one pass over the mask."""
    ty, _ = ELEMENT_TYPES[suffix]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, PTR, I64]), name)
    fn.linkage = "internal"
    mask, n, out, count = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero = ir.Constant(I64, 0)
    taken = b.alloca(I64)
    b.store(zero, taken)
    scan = Loop(b, fn, zero, n, "scan")
    j = b.load(taken, typ=I64)
    hit = b.and_(b.icmp_unsigned("!=", b.load(b.gep(mask, [scan.i], source_etype=ty), typ=ty), ir.Constant(ty, 0)),
                 b.icmp_signed("<", j, count))
    with b.if_then(hit):
        b.store(scan.i, b.gep(out, [j], source_etype=I64))
        b.store(b.add(j, ir.Constant(I64, 1)), taken)
    scan.close()
    rest = Loop(b, fn, b.load(taken, typ=I64), count, "rest")
    b.store(n, b.gep(out, [rest.i], source_etype=I64))
    rest.close()
    b.ret_void()
    return fn


Routine = Callable[[ir.Module, str, str], ir.Function]

#: The routines, by name: ``plaidarray_<name>_<type>``.
ROUTINES: dict[str, Routine] = {"argsort": _argsort, "ipow": _ipow, "positions": _positions}


def runtime_function(module: ir.Module, name: str, routines: dict[str, Routine] = ROUTINES) -> ir.Function | None:
    """The runtime routine ``plaidarray_<routine>_<type>`` of ``routines``, defined in
    ``module`` on first use; None if ``name`` is not one."""
    if not name.startswith("plaidarray_"):
        return None
    if name in module.globals:
        return module.globals[name]
    _, routine, suffix = name.split("_", 2)
    found = routines.get(routine)
    return found(module, name, suffix) if found is not None else None
