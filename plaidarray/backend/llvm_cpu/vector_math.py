"""Vectorisable exp, expm1, log, log1p, tanh, sin and cos for float32 and float64: the
host's library of the shared functions (``llvm/math_functions.py``).

LLVM turns ``llvm.exp`` and the C library's ``expm1``... into scalar libm calls, which
keep the loop vectoriser away from any kernel that uses them. The shared functions are
straight-line LLVM IR; here each is compiled once (:func:`library_object_code`) and
loaded once per process (``math_library.py``): a scalar function and vector variants of
one and half a register. A kernel module only declares them; the scalar declaration names
the variants in its ``vector-function-abi-variant`` attribute, so the loop vectoriser calls
a variant where it vectorises a loop, and the remainder loop calls the scalar function.
This costs a call per vector (up to ~15% against inlining the polynomial) and saves tens
of milliseconds of LLVM work in every module that uses the function. sin and cos call the
C library past ``TRIG_LIMIT``, for those rare lanes.

Scalar and vector code execute the same IEEE operations, so a result does not depend on
whether it came from a vector body or a remainder loop, and therefore not on the thread
count.
"""

from __future__ import annotations

from llvmlite import ir

from ..llvm import codegen_worker
from ..llvm.math_functions import F32, F64, KERNELS, LIMITED, Ops, define_scalar, evaluate, outside
from . import math_library
from .targets import host

FUNCTIONS = math_library.NAMES
assert set(FUNCTIONS) == set(KERNELS), "math_library.NAMES lists the functions math_functions.py defines"

_PURE = ("nounwind", "readnone", "willreturn")
#: The library's definitions: never inlined where a module holds them with their callers
#: (an export's): the scalar function inlined into a loop would keep the loop vectoriser
#: from calling its vector variant (its libm fallback is a branch and a call).
_DEFINED = (*_PURE, "noinline")


class _Attributes(ir.values.FunctionAttributes):
    """Function attributes, including ones llvmlite does not know (``willreturn`` and
    string attributes such as ``"vector-function-abi-variant"``)."""

    _known = ir.values.FunctionAttributes._known | {"willreturn"}

    def __init__(self, names=(), strings: dict[str, str] | None = None) -> None:
        self.strings = strings or {}
        super().__init__(names)

    def _to_list(self, ret_type):
        return super()._to_list(ret_type) + [f'"{k}"="{v}"' for k, v in self.strings.items()]


def _function(module: ir.Module, name: str, ty: ir.Type, attributes: _Attributes,
              linkage: str = "internal") -> ir.Function:
    fn = ir.Function(module, ir.FunctionType(ty, [ty]), name)
    fn.linkage = linkage
    fn.attributes = attributes
    return fn


def math_function(module: ir.Module, name: str, ty: ir.Type, vector_bits: int) -> ir.Function:
    """The scalar function ``name`` (one of :data:`FUNCTIONS`) for float type ``ty``,
    declared in ``module`` with its vector variants for vector registers of
    ``vector_bits``; the library defines them (the process's, ``math_library.py``, or an
    exported artifact's own copy, ``aot.py``)."""
    bits = 32 if ty == F32 else 64
    symbol = math_library.symbol(name, bits)
    existing = module.globals.get(symbol)
    if existing is not None:
        return existing
    variants = _variants(name, bits, vector_bits)
    fn = _function(module, symbol, ty, _Attributes(_PURE, _mappings(symbol, variants)), "")
    # Declared only: the loop vectoriser needs them in the module to call them.
    _keep(module, [ir.Function(module, ir.FunctionType(ir.VectorType(ty, n), [ir.VectorType(ty, n)]), v)
                   for n, v in variants.items()])
    return fn


def _mappings(symbol: str, variants: dict[int, str]) -> dict[str, str]:
    """The attribute naming a scalar function's vector variants to the loop vectoriser."""
    return {"vector-function-abi-variant": ",".join(f"_ZGV_LLVM_N{n}v_{symbol}({v})" for n, v in variants.items())}


def _variants(name: str, bits: int, vector_bits: int) -> dict[int, str]:
    """The vector variants' symbols by width: a full register, and half of one (the loop
    vectoriser picks the width by the widest type in a loop; calls at a width without a
    variant would be split into scalar calls)."""
    return {lanes: f"plaidarray.{name}.v{lanes}f{bits}" for lanes in (vector_bits // bits // 2, vector_bits // bits)}


# --- the library: each function's code, compiled once (math_library.py loads it) ------

def library_ir(symbol: str, vector_bits: int, vectors: bool = True) -> tuple[str, list[str]]:
    """LLVM IR defining the scalar function ``symbol`` (``plaidarray.<name>.f<bits>``) and,
    with ``vectors``, its vector variants for registers of ``vector_bits``, and their
    symbols. Without them the library is the scalar function alone, all that unvectorised
    code calls, at a third of the build."""
    _, name, width = symbol.split(".")
    bits = int(width[1:])
    ty = F32 if bits == 32 else F64
    module = ir.Module(name=symbol)
    variants = _variants(name, bits, vector_bits) if vectors else {}
    # The definition names its variants too: linked with its callers (an export), it is
    # the function they call, and a definition's attributes are the ones that remain.
    fn = _function(module, symbol, ty, _Attributes(_DEFINED, _mappings(symbol, variants) if variants else {}), "")
    define_scalar(fn, name, ty, _c_function)
    for lanes, vector_symbol in variants.items():
        _define_vector(fn, name, vector_symbol, lanes)
    return str(module), [symbol, *variants.values()]


def library_object_code(symbol: str, level: int, vectors: bool = True) -> tuple[bytes, list[str]]:
    """Object code of :func:`library_ir` for the host, and its symbols: the IR as written,
    its machine code generated at ``level``. The functions are straight-line code with
    explicit fused multiply-adds and selects, which LLVM's IR pipeline has nothing to
    improve on: skipping it halves a function's build (exp 8.7 -> 4.7 ms, sin 22 -> 16)
    in a process's first use of it, and the code computes the same bits as fast."""
    text, symbols = library_ir(symbol, host().vector_bits, vectors)
    return codegen_worker.generate(text, host(), 0, emit_level=level).object, symbols


def _c_function(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """The C library's ``name`` (sin, cos past ``TRIG_LIMIT``: Payne-Hanek reduction)."""
    symbol = name + ("f" if ty == F32 else "")
    return module.globals.get(symbol) or ir.Function(module, ir.FunctionType(ty, [ty]), symbol)


def _define_vector(scalar: ir.Function, name: str, symbol: str, lanes: int) -> None:
    """All lanes in straight-line code; for sin and cos, if any lane is out of range,
    the lanes go through memory to :func:`_fallback`."""
    element = scalar.ftype.return_type
    fn = _function(scalar.module, symbol, ir.VectorType(element, lanes), _Attributes(_DEFINED), "")
    (x,) = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    o = Ops(b, element, lanes)
    y = evaluate(o, name, x)
    if name not in LIMITED:
        b.ret(y)
        return
    done, fix = fn.append_basic_block("done"), fn.append_basic_block("fix")
    mask = ir.IntType(lanes)
    b.cbranch(b.icmp_unsigned("!=", b.bitcast(outside(o, x), mask), ir.Constant(mask, 0)), fix, done)
    b.position_at_end(done)
    b.ret(y)
    b.position_at_end(fix)
    xs, ys = b.alloca(x.type), b.alloca(x.type)
    b.store(x, xs)
    b.store(y, ys)
    b.call(_fallback(scalar.module, name, element), [xs, ys, ir.Constant(ir.IntType(64), lanes)])
    b.ret(b.load(ys, typ=x.type))


def _fallback(module: ir.Module, name: str, ty: ir.Type) -> ir.Function:
    """``void f(T* x, T* y, i64 n)``: ``y[i] = name(x[i])`` by the C library where x[i]
    is out of range. A loop over memory keeps the vector variants small to compile. It
    calls the C library, not the scalar function: the vectoriser would turn calls of
    the scalar function back into calls of a vector variant."""
    symbol = f"plaidarray.{name}.f{32 if ty == F32 else 64}.fallback"
    if symbol in module.globals:
        return module.globals[symbol]
    i64 = ir.IntType(64)
    fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType(), ir.PointerType(), i64]), symbol)
    fn.linkage = "internal"
    fn.attributes.add("noinline")
    xs, ys, n = fn.args
    entry, head, call, latch, done = (fn.append_basic_block(s) for s in ("entry", "head", "call", "latch", "done"))
    b = ir.IRBuilder(entry)
    b.branch(head)
    b.position_at_end(head)
    i = b.phi(i64)
    x = b.load(b.gep(xs, [i], source_etype=ty), typ=ty)
    b.cbranch(outside(Ops(b, ty), x), call, latch)
    b.position_at_end(call)
    b.store(b.call(_c_function(module, name, ty), [x]), b.gep(ys, [i], source_etype=ty))
    b.branch(latch)
    b.position_at_end(latch)
    following = b.add(i, ir.Constant(i64, 1))
    b.cbranch(b.icmp_signed("<", following, n), head, done)
    i.add_incoming(ir.Constant(i64, 0), entry)
    i.add_incoming(following, latch)
    b.position_at_end(done)
    b.ret_void()
    return fn


def _keep(module: ir.Module, functions: list[ir.Function]) -> None:
    """List ``functions`` in ``@llvm.compiler.used``: the vector variants are only
    named in an attribute until the vectoriser calls them, and must survive until then."""
    used = module.globals.get("llvm.compiler.used")
    if used is None:
        used = ir.GlobalVariable(module, ir.ArrayType(ir.PointerType(), 0), "llvm.compiler.used")
        used.linkage = "appending"
        used.section = "llvm.metadata"
    kept = [*(used.initializer.constant if used.initializer is not None else []), *functions]
    used.value_type = ir.ArrayType(ir.PointerType(), len(kept))
    used.initializer = ir.Constant(used.value_type, kept)
