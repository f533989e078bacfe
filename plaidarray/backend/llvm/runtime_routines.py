"""plaidarray's runtime routines: loops with data-dependent control flow that have no
natural ``linalg.generic`` form (sorting, an extremum's index, a mask's positions, integer powers), written
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


def _sortable(b: ir.IRBuilder, value: ir.Value, ty: ir.Type, kind: str, descending: ir.Value) -> ir.Value:
    """``value`` as an i64 whose signed order is the sort's: ascending with NaN last, or
    descending with NaN first (the mirror image, ``~key``). A float's bits, its negative
    numbers' magnitude bits flipped, order as signed integers do; -0.0 is made 0.0 and
    every NaN one NaN, so that equal keys (which a stable sort keeps in their order) are
    equal integers. Unsigned 64-bit keys have their top bit flipped."""
    if kind == "f":
        width = 64 if isinstance(ty, ir.DoubleType) else 32
        bits_type = ir.IntType(width)
        canonical = b.select(b.fcmp_ordered("==", value, ir.Constant(ty, 0.0)), ir.Constant(ty, 0.0), value)
        canonical = b.select(b.fcmp_unordered("uno", value, value), ir.Constant(ty, float("nan")), canonical)
        bits = b.bitcast(canonical, bits_type)
        magnitude = b.lshr(b.ashr(bits, ir.Constant(bits_type, width - 1)), ir.Constant(bits_type, 1))
        key = b.xor(bits, magnitude)
        key = b.sext(key, I64) if width < 64 else key
    elif ty.width == 64:
        key = value if kind == "i" else b.xor(value, ir.Constant(I64, -(1 << 63)))
    else:
        key = b.sext(value, I64) if kind == "i" else b.zext(value, I64)
    return b.select(descending, b.not_(key), key)


#: Rows are cut into runs of this many keys, each sorted by insertion before the merge
#: passes: a row of n keys then takes log2(n / RUN) passes instead of log2(n), and short
#: rows (most batches' rows) none.
RUN = 16


def _argsort(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """``void f(T* keys, i64 offset, i64 stride, i64 n, i64* out, i64 out_offset,
    i64 out_stride, i1 descending, i64* scratch, i64 scratch_offset)``: a stable sort of
    indices 0..n-1 by key, written to ``out``: each key copied in as an integer of the
    same order (``_sortable``), runs of ``RUN`` keys sorted by insertion, then bottom-up
    merge passes, each index moving with its key. A comparison is then one integer
    compare of two keys held in registers (the next key of each run is loaded before it
    is known which run goes on), where comparing floats through their indices made each
    step of a merge wait on two dependent loads and a NaN test. Its 4n slots of scratch
    (2n indices, 2n keys) are the caller's (a buffer the executable allocates,
    ``codegen/lowerings/sort.py``), not malloc's: a GPU kernel has no host heap, and its
    device heap is 8 MB unless raised."""
    ty, kind = ELEMENT_TYPES[suffix]
    fnty = ir.FunctionType(ir.VoidType(), [PTR, I64, I64, I64, PTR, I64, I64, I1, PTR, I64])
    fn = ir.Function(module, fnty, name)
    fn.linkage = "internal"
    keys, offset, stride, n, out, out_offset, out_stride, descending, scratch, scratch_offset = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero, one, run = ir.Constant(I64, 0), ir.Constant(I64, 1), ir.Constant(I64, RUN)

    def at(base: ir.Value, i: ir.Value) -> ir.Value:
        return b.gep(base, [i], source_etype=I64)

    def smaller(x: ir.Value, y: ir.Value) -> ir.Value:
        return b.select(b.icmp_signed("<", x, y), x, y)

    a_index = at(scratch, scratch_offset)
    t_index = at(a_index, n)
    a_key = at(t_index, n)
    t_key = at(a_key, n)

    # --- indices and their keys, copied in ------------------------------------------------
    fill = Loop(b, fn, zero, n, "fill")
    b.store(fill.i, at(a_index, fill.i))
    value = b.load(b.gep(keys, [b.add(offset, b.mul(fill.i, stride))], source_etype=ty), typ=ty)
    b.store(_sortable(b, value, ty, kind, descending), at(a_key, fill.i))
    fill.close()

    # --- each run sorted by insertion: a key moves left past the keys it goes before ------
    runs = Loop(b, fn, zero, n, "run")
    lo = runs.i
    insert = Loop(b, fn, b.add(lo, one), smaller(b.add(lo, run), n), "insert")
    key, index = b.load(at(a_key, insert.i), typ=I64), b.load(at(a_index, insert.i), typ=I64)
    shift_head, compare, shift_body, shift_exit = (fn.append_basic_block(x) for x in
                                                   ("shift.head", "shift.compare", "shift.body", "shift.exit"))
    entered = b.block
    b.branch(shift_head)
    b.position_at_end(shift_head)
    j = b.phi(I64)
    j.add_incoming(insert.i, entered)
    b.cbranch(b.icmp_signed(">", j, lo), compare, shift_exit)
    b.position_at_end(compare)
    previous = b.sub(j, one)
    previous_key = b.load(at(a_key, previous), typ=I64)
    b.cbranch(b.icmp_signed("<", key, previous_key), shift_body, shift_exit)
    b.position_at_end(shift_body)
    b.store(previous_key, at(a_key, j))
    b.store(b.load(at(a_index, previous), typ=I64), at(a_index, j))
    j.add_incoming(previous, shift_body)
    b.branch(shift_head)
    b.position_at_end(shift_exit)
    place = b.phi(I64)
    place.add_incoming(j, shift_head)
    place.add_incoming(j, compare)
    b.store(key, at(a_key, place))
    b.store(index, at(a_index, place))
    insert.close()
    runs.close(run)
    sorted_runs = b.block

    # --- merge passes: src -> dst, doubling the run width ---------------------------------
    pass_head, pass_body, pass_exit = (fn.append_basic_block(x) for x in ("pass.head", "pass.body", "pass.exit"))
    b.branch(pass_head)
    b.position_at_end(pass_head)
    width = b.phi(I64)
    src_index, dst_index, src_key, dst_key = (b.phi(PTR) for _ in range(4))
    width.add_incoming(run, sorted_runs)
    for phi, start in ((src_index, a_index), (dst_index, t_index), (src_key, a_key), (dst_key, t_key)):
        phi.add_incoming(start, sorted_runs)
    b.cbranch(b.icmp_signed("<", width, n), pass_body, pass_exit)
    b.position_at_end(pass_body)
    two_w = b.add(width, width)
    pairs = Loop(b, fn, zero, n, "pairs")
    lo = pairs.i
    mid, hi = smaller(b.add(lo, width), n), smaller(b.add(lo, two_w), n)
    # both runs non-empty: the smaller head goes on (the left one if equal)
    merge_head, merge_body, merge_exit = (fn.append_basic_block(x) for x in ("m.head", "m.body", "m.exit"))
    pre = b.block
    first_left = b.load(at(src_key, lo), typ=I64)
    first_right = b.load(at(src_key, b.select(b.icmp_signed("<", mid, hi), mid, lo)), typ=I64)
    b.branch(merge_head)
    b.position_at_end(merge_head)
    i, j, k, left, right = (b.phi(I64) for _ in range(5))
    for phi, start in ((i, lo), (j, mid), (k, lo), (left, first_left), (right, first_right)):
        phi.add_incoming(start, pre)
    b.cbranch(b.and_(b.icmp_signed("<", i, mid), b.icmp_signed("<", j, hi)), merge_body, merge_exit)
    b.position_at_end(merge_body)
    next_left = b.load(at(src_key, b.add(i, one)), typ=I64)  # at most src_key[mid]: in the table
    next_right = b.load(at(src_key, smaller(b.add(j, one), b.sub(hi, one))), typ=I64)
    take_right = b.icmp_signed("<", right, left)
    b.store(b.select(take_right, right, left), at(dst_key, k))
    b.store(b.load(at(src_index, b.select(take_right, j, i)), typ=I64), at(dst_index, k))
    i.add_incoming(b.select(take_right, i, b.add(i, one)), b.block)
    j.add_incoming(b.select(take_right, b.add(j, one), j), b.block)
    k.add_incoming(b.add(k, one), b.block)
    left.add_incoming(b.select(take_right, left, next_left), b.block)
    right.add_incoming(b.select(take_right, next_right, right), b.block)
    b.branch(merge_head)
    # then what is left of either run, in order
    b.position_at_end(merge_exit)
    rest_left = Loop(b, fn, i, mid, "rest.left")
    to = b.add(k, b.sub(rest_left.i, i))
    b.store(b.load(at(src_key, rest_left.i), typ=I64), at(dst_key, to))
    b.store(b.load(at(src_index, rest_left.i), typ=I64), at(dst_index, to))
    rest_left.close()
    rest_right = Loop(b, fn, j, hi, "rest.right")
    b.store(b.load(at(src_key, rest_right.i), typ=I64), at(dst_key, rest_right.i))
    b.store(b.load(at(src_index, rest_right.i), typ=I64), at(dst_index, rest_right.i))
    rest_right.close()
    pairs.close(two_w)
    width.add_incoming(two_w, b.block)
    for phi, swapped in ((src_index, dst_index), (dst_index, src_index), (src_key, dst_key), (dst_key, src_key)):
        phi.add_incoming(swapped, b.block)
    b.branch(pass_head)

    # --- the merged order, copied out -----------------------------------------------------
    b.position_at_end(pass_exit)
    copy = Loop(b, fn, zero, n, "copy")
    b.store(b.load(at(src_index, copy.i), typ=I64), at(out, b.add(out_offset, b.mul(copy.i, out_stride))))
    copy.close()
    b.ret_void()
    return fn


#: Lanes of ``_extremum``'s vector loop: a 512-bit register of 8-byte elements, two of
#: 4-byte ones (their indices are 8 bytes).
_EXTREMUM_LANES = {8: 8}
_EXTREMUM_LANES_DEFAULT = 16


def _extremum(module: ir.Module, name: str, suffix: str) -> ir.Function:
    """``void f(T* x, i64 offset, i64 n, i64* out, i64 at, i1 maximum)``: the index of
    the first largest (``maximum``) or smallest of the ``n`` contiguous elements from
    ``x[offset]``, the first NaN if there is one (NumPy's ``argmax`` and ``argmin``),
    written to ``out[at]``; 0 for ``n`` 0. One scalar pass would wait on each compare:
    here each of L lanes keeps the first extremum of its elements and its index (a
    vector loop), noting whether any element is NaN; then the lanes' best, the smallest
    index among equal ones (the first: 0.0 and -0.0 are equal, as in NumPy), and the
    last n % L elements one by one. A NaN seen sends the routine back to find the first."""
    ty, kind = ELEMENT_TYPES[suffix]
    element_bytes = ty.width // 8 if isinstance(ty, ir.IntType) else 8 if isinstance(ty, ir.DoubleType) else 4
    lanes = _EXTREMUM_LANES.get(element_bytes, _EXTREMUM_LANES_DEFAULT)
    vector, indices = ir.VectorType(ty, lanes), ir.VectorType(I64, lanes)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, I64, PTR, I64, I1]), name)
    fn.linkage = "internal"
    x, offset, n, out, at, maximum = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    zero, one, width = ir.Constant(I64, 0), ir.Constant(I64, 1), ir.Constant(I64, lanes)
    done = fn.append_basic_block("done")
    answers: list[tuple[ir.Value, ir.Block]] = []

    def answer(value: ir.Value) -> None:
        answers.append((value, b.block))
        b.branch(done)

    def element(i: ir.Value) -> ir.Value:
        return b.load(b.gep(x, [b.add(offset, i)], source_etype=ty), typ=ty)

    def nan(value: ir.Value) -> ir.Value:
        return b.fcmp_unordered("uno", value, value)

    def better(value: ir.Value, best: ir.Value, largest: ir.Value = maximum) -> ir.Value:
        """``value`` strictly beyond ``best`` (neither NaN), element by element
        (``largest``: ``maximum``, in each lane for vectors)."""
        if kind == "f":
            larger, smaller = b.fcmp_ordered(">", value, best), b.fcmp_ordered("<", value, best)
        else:
            compare = b.icmp_signed if kind == "i" else b.icmp_unsigned
            larger, smaller = compare(">", value, best), compare("<", value, best)
        return b.select(largest, larger, smaller)

    def block(i: ir.Value) -> ir.Value:
        """The L elements from ``i`` as a vector."""
        return b.load(b.gep(x, [b.add(offset, i)], source_etype=ty), typ=vector, align=element_bytes)

    def scan(first: ir.Value, best: ir.Value, best_at: ir.Value, label: str) -> None:
        """Elements ``first..n`` one by one against ``best`` (at ``best_at``): the answer."""
        head, body, step = (fn.append_basic_block(f"{label}.{part}") for part in ("head", "body", "step"))
        entered = b.block
        b.branch(head)
        b.position_at_end(head)
        i, kept, kept_at = b.phi(I64), b.phi(ty), b.phi(I64)
        for phi, start in ((i, first), (kept, best), (kept_at, best_at)):
            phi.add_incoming(start, entered)
        exit_ = fn.append_basic_block(f"{label}.exit")
        b.cbranch(b.icmp_signed("<", i, n), body, exit_)
        b.position_at_end(body)
        value = element(i)
        if kind == "f":
            found = fn.append_basic_block(f"{label}.nan")
            b.cbranch(nan(value), found, step)
            b.position_at_end(found)
            answer(i)
        else:
            b.branch(step)
        b.position_at_end(step)
        beyond = better(value, kept)
        i.add_incoming(b.add(i, one), step)
        kept.add_incoming(b.select(beyond, value, kept), step)
        kept_at.add_incoming(b.select(beyond, i, kept_at), step)
        b.branch(head)
        b.position_at_end(exit_)
        answer(kept_at)

    empty, some = fn.append_basic_block("empty"), fn.append_basic_block("some")
    b.cbranch(b.icmp_signed(">", n, zero), some, empty)
    b.position_at_end(empty)
    answer(zero)
    b.position_at_end(some)
    short, vectors = fn.append_basic_block("short"), fn.append_basic_block("vectors")
    b.cbranch(b.icmp_signed("<", n, width), short, vectors)

    # --- fewer than L elements: one by one from the first -------------------------------
    b.position_at_end(short)
    first = element(zero)
    if kind == "f":
        first_nan, rest = fn.append_basic_block("short.nan"), fn.append_basic_block("short.rest")
        b.cbranch(nan(first), first_nan, rest)
        b.position_at_end(first_nan)
        answer(zero)
        b.position_at_end(rest)
    scan(one, first, zero, "short.scan")

    # --- L lanes, each keeping its first extremum and its index ---------------------------
    b.position_at_end(vectors)
    whole = b.mul(b.sdiv(n, width), width)
    lane_numbers = ir.Constant(indices, list(range(lanes)))
    first_block = block(zero)
    first_nan = nan(first_block) if kind == "f" else None
    largest = _splat(b, maximum, lanes)
    head, body, reduce_lanes = (fn.append_basic_block(part) for part in ("lanes.head", "lanes.body", "lanes"))
    b.branch(head)
    b.position_at_end(head)
    i, best, best_at = b.phi(I64), b.phi(vector), b.phi(indices)
    any_nan = b.phi(ir.VectorType(I1, lanes)) if kind == "f" else None
    i.add_incoming(width, vectors)
    best.add_incoming(first_block, vectors)
    best_at.add_incoming(lane_numbers, vectors)
    if any_nan is not None:
        any_nan.add_incoming(first_nan, vectors)
    b.cbranch(b.icmp_signed("<", i, whole), body, reduce_lanes)
    b.position_at_end(body)
    values = block(i)
    beyond = better(values, best, largest)
    i.add_incoming(b.add(i, width), body)
    best.add_incoming(b.select(beyond, values, best), body)
    best_at.add_incoming(b.select(beyond, b.add(_splat(b, i, lanes), lane_numbers), best_at), body)
    if any_nan is not None:
        any_nan.add_incoming(b.or_(any_nan, nan(values)), body)
    b.branch(head)

    b.position_at_end(reduce_lanes)
    if any_nan is not None:
        seen = b.extract_element(any_nan, zero)
        for lane in range(1, lanes):
            seen = b.or_(seen, b.extract_element(any_nan, ir.Constant(I64, lane)))
        search, lanes_done = fn.append_basic_block("nan.search"), fn.append_basic_block("lanes.best")
        b.cbranch(seen, search, lanes_done)
        b.position_at_end(search)  # some element is NaN: the first one is the answer
        scan(zero, ir.Constant(ty, 0.0), zero, "nan.scan")
        b.position_at_end(lanes_done)
    kept, kept_at = b.extract_element(best, zero), b.extract_element(best_at, zero)
    for lane in range(1, lanes):
        lane_number = ir.Constant(I64, lane)
        value, value_at = b.extract_element(best, lane_number), b.extract_element(best_at, lane_number)
        equal = b.fcmp_ordered("==", value, kept) if kind == "f" else b.icmp_signed("==", value, kept)
        take = b.or_(better(value, kept), b.and_(equal, b.icmp_signed("<", value_at, kept_at)))
        kept, kept_at = b.select(take, value, kept), b.select(take, value_at, kept_at)
    scan(whole, kept, kept_at, "tail")

    b.position_at_end(done)
    found = b.phi(I64)
    for value, source in answers:
        found.add_incoming(value, source)
    b.store(found, b.gep(out, [at], source_etype=I64))
    b.ret_void()
    return fn


def _splat(b: ir.IRBuilder, value: ir.Value, lanes: int) -> ir.Value:
    """``value`` in each of ``lanes`` lanes."""
    vector = ir.Constant(ir.VectorType(value.type, lanes), None)
    for lane in range(lanes):
        vector = b.insert_element(vector, value, ir.Constant(I64, lane))
    return vector


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
    wanted past them (``true_positions``, ``hlo/ops/gather.py``): one pass over the mask
    without a branch on its values. Each index is written where the next one found goes,
    which only a nonzero element moves on (a branch on each element mispredicted on
    every other one of a random mask: 5.5 ns an element, NumPy's ``nonzero`` 0.9)."""
    ty, _ = ELEMENT_TYPES[suffix]
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [PTR, I64, PTR, I64]), name)
    fn.linkage = "internal"
    mask, n, out, count = fn.args
    entry = fn.append_basic_block("entry")
    head, body, rest = (fn.append_basic_block(part) for part in ("scan.head", "scan.body", "rest"))
    b = ir.IRBuilder(entry)
    zero = ir.Constant(I64, 0)
    b.branch(head)
    b.position_at_end(head)
    i, taken = b.phi(I64), b.phi(I64)
    i.add_incoming(zero, entry)
    taken.add_incoming(zero, entry)
    b.cbranch(b.and_(b.icmp_signed("<", i, n), b.icmp_signed("<", taken, count)), body, rest)
    b.position_at_end(body)
    b.store(i, b.gep(out, [taken], source_etype=I64))
    hit = b.icmp_unsigned("!=", b.load(b.gep(mask, [i], source_etype=ty), typ=ty), ir.Constant(ty, 0))
    i.add_incoming(b.add(i, ir.Constant(I64, 1)), body)
    taken.add_incoming(b.add(taken, b.zext(hit, I64)), body)
    b.branch(head)
    b.position_at_end(rest)
    fill = Loop(b, fn, taken, count, "fill")
    b.store(n, b.gep(out, [fill.i], source_etype=I64))
    fill.close()
    b.ret_void()
    return fn


Routine = Callable[[ir.Module, str, str], ir.Function]

#: The routines, by name: ``plaidarray_<name>_<type>``.
ROUTINES: dict[str, Routine] = {"argsort": _argsort, "extremum": _extremum, "ipow": _ipow, "positions": _positions}


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
