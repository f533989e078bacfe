"""Walks on structures far deeper than Python's recursion limit: graphs, size and affine
expressions, pytrees.

A graph walk that recurses on operands fails with RecursionError once a chain is about
``sys.getrecursionlimit()`` (1,000) ops deep, and one that walks down the chain from
every node takes hours at 100,000. Lazy graphs get that deep whenever a loop never
reads its values (``PLAIDARRAY_MAX_PENDING=0`` keeps them uncut), and traced functions get
that deep whatever the bound. So each walk runs here on a 100,000-node chain, built as HLO
and through the lazy API: building a computation, each HLO pass and the pipeline, the
verifier, fingerprints, the printer, fusion planning, the reference evaluator, lazy
graph -> HLO and jit tracing, and the compiled path. Every test checks the value computed
against the chain's closed form (or the exact plan or text the walk produces).

The chain alternates ``x + 1`` and ``x * 3`` on a ``uint32[4]`` array, so it wraps and
every step changes the result: a walk that lost or repeated a step would show.

Sizes of a shape-generic module are polynomials in run-time sizes, and code reads them as
affine expressions: a size of 100,000 terms is evaluated, stored and renamed, its affine
expression (and one as deep as it is long) walked, and one of 20,000 terms compiled.
Pytrees 100,000 levels deep are flattened, rebuilt and described, and pass through
``jit``. tests/project/test_recursion.py keeps every other recursive function bounded.
"""

from __future__ import annotations

import math
import sys
from collections import Counter, namedtuple

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.codegen.fusion import plan_fusion
from plaidarray.backend import registry
from plaidarray.backend.reference import Evaluator
from plaidarray.codegen.run_time_sizes import affine, fold, symbol_positions, symbols_renumbered, symbols_used
from plaidarray.hlo import Computation, Instruction, Module, Shape
from plaidarray.hlo.fingerprint import module_description, structure
from plaidarray.hlo.literal import Literal
from plaidarray.hlo.passes import HLO_PASSES, run_hlo_passes
from plaidarray.hlo.symbolic import Sym, SymExpr, decode, encode, hint, rename
from plaidarray.hlo.verifier import VerificationError, verify
from plaidarray.trace import node as node_module
from plaidarray.trace import pytree
from plaidarray.trace.to_hlo import PendingGraph
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineExpr, AffineSymExpr

DEPTH = 100_000
#: Every this many steps the HLO chain also multiplies by a fresh ``broadcast(1)``,
#: which CSE merges and the algebraic simplifier removes: work for every pass.
NOISE_EVERY = 1_000
U32 = np.dtype(np.uint32)
SHAPE = Shape((4,), U32)
X0 = np.array([0, 1, 12345, 2**32 - 1], dtype=U32)


def chain_value(x0: np.ndarray, steps: int) -> np.ndarray:
    """The chain's value in closed form: after k (add 1, multiply by 3) pairs,
    x = 3^k x0 + (3 + 9 + ... + 3^k) = 3^k x0 + 3 (3^k - 1) / 2, taken mod 2^32."""
    pairs, extra = divmod(steps, 2)
    power = 3**pairs
    return np.array([(power * int(v) + 3 * (power - 1) // 2 + extra) % 2**32 for v in x0], dtype=U32)


def evaluate(comp: Computation, *buffers: np.ndarray) -> np.ndarray:
    (out,) = Evaluator(Module("chain", comp)).run(list(buffers))
    return out


# --- HLO chains -------------------------------------------------------------------------

def parameter(number: int) -> Instruction:
    return Instruction("parameter", (), {"number": number, "shape": SHAPE}, SHAPE)


def constant(value: int) -> Instruction:
    return Instruction.make("constant", [], value=Literal(np.asarray(value, dtype=U32)))


def broadcast(x: Instruction) -> Instruction:
    return Instruction.make("broadcast_in_dim", [x], dims=SHAPE.dims, broadcast_dimensions=())


def hlo_chain(x: Instruction, steps: int) -> Instruction:
    """``steps`` ops from ``x``: ``x + 1`` and ``x * 3`` in turn (3 as ``1 + 2``, which
    constant folding computes), with a fresh ``x * broadcast(1)`` every NOISE_EVERY."""
    one = broadcast(constant(1))
    three = broadcast(Instruction.make("add", [constant(1), constant(2)]))
    for i in range(steps):
        x = Instruction.make("multiply" if i % 2 else "add", [x, three if i % 2 else one])
        if i % NOISE_EVERY == NOISE_EVERY - 1:
            x = Instruction.make("multiply", [x, broadcast(constant(1))])
    return x


NOISE = DEPTH // NOISE_EVERY
#: Opcodes of the chain as built, then after each pass of the pipeline in turn.
BUILT = Counter({"parameter": 1, "constant": 3 + NOISE, "broadcast_in_dim": 2 + NOISE,
                 "add": DEPTH // 2 + 1, "multiply": DEPTH // 2 + NOISE})
MERGED = BUILT - Counter({"constant": NOISE + 1, "broadcast_in_dim": NOISE})  # one 1, one broadcast(1)
FOLDED = MERGED - Counter({"add": 1})  # 1 + 2 -> 3: constants 1 and 3
OPTIMIZED = FOLDED - Counter({"multiply": NOISE})  # x * 1 -> x
AFTER_EACH_PASS = [MERGED, FOLDED, OPTIMIZED, OPTIMIZED]


def opcodes(comp: Computation) -> Counter:
    return Counter(inst.opcode for inst in comp.instructions)


@pytest.fixture(scope="module")
def chain() -> Computation:
    x0 = parameter(0)
    return Computation("main", [x0], [hlo_chain(x0, DEPTH)])


@pytest.fixture(scope="module")
def optimized(chain) -> Computation:
    return run_hlo_passes(chain)


def test_computation_orders_and_evaluates_a_deep_chain(chain):
    assert opcodes(chain) == BUILT
    assert chain.instructions[0].opcode == "parameter" and chain.instructions[-1] is chain.outputs[0]
    np.testing.assert_array_equal(evaluate(chain, X0), chain_value(X0, DEPTH))


def test_each_hlo_pass_on_a_deep_chain(chain):
    """The pipeline's passes one by one, each verified and evaluated."""
    comp = chain
    for (name, run), expected in zip(HLO_PASSES, AFTER_EACH_PASS, strict=True):
        comp = run(comp)
        verify(comp)
        assert opcodes(comp) == expected, name
        np.testing.assert_array_equal(evaluate(comp, X0), chain_value(X0, DEPTH), err_msg=name)


def test_pass_pipeline_on_a_deep_chain(optimized):
    assert opcodes(optimized) == OPTIMIZED
    np.testing.assert_array_equal(evaluate(optimized, X0), chain_value(X0, DEPTH))


def test_verifier_reaches_the_top_of_a_deep_chain(chain):
    verify(chain)
    root = chain.outputs[0]
    wrong = Instruction("add", (root, root), {}, Shape((3,), U32))
    with pytest.raises(VerificationError, match=r"add\.\d+ has shape u32\[3\], its rule gives u32\[4\]"):
        verify(Computation("main", chain.parameters, [wrong]))


def test_fingerprint_of_a_deep_chain(chain):
    x0 = parameter(0)
    rebuilt = Computation("main", [x0], [hlo_chain(x0, DEPTH)])
    root = chain.outputs[0]
    longer = Computation("main", chain.parameters, [Instruction.make("add", [root, root])])
    assert structure(rebuilt) == structure(chain)
    assert module_description(Module("chain", chain)) != module_description(Module("chain", longer))


def test_printer_on_a_deep_chain(chain):
    lines = Module("chain", chain).to_text().splitlines()
    assert lines[0] == "HloModule chain, entry_computation_layout={(u32[4])->(u32[4])}"
    assert lines[2] == "ENTRY main {" and lines[-1] == "}"
    body = lines[3:-1]
    assert len(body) == len(chain.instructions)
    assert body[0] == "  p0 = u32[4] parameter(0)"
    root = chain.outputs[0]
    names = chain.names
    assert body[-1] == f"  ROOT {names[id(root)]} = u32[4] multiply({names[id(root.operands[0])]}, " \
                       f"{names[id(root.operands[1])]})"


def test_fusion_plan_of_a_deep_chain(optimized):
    plan = plan_fusion(optimized)
    assert plan.kernels == optimized.outputs  # the whole chain is one fused kernel
    assert plan.buffered == {id(optimized.parameters[0]), id(optimized.outputs[0])}


def test_fusion_plan_of_deep_chains_with_shared_values():
    """``x = x * x + 1``: each value has two users and, but for the first two (2 and 4
    ops, within RECOMPUTE_LIMIT), a fused expression too large to compute twice, so it
    is stored (decided once per value, not by walking down the chain from each);
    ``x = (x + x) + x * 3``: three users, every value stored."""
    x0, one = parameter(0), parameter(1)
    squares = x0
    for _ in range(DEPTH // 2):
        squares = Instruction.make("add", [Instruction.make("multiply", [squares, squares]), one])
    plan = plan_fusion(Computation("main", [x0, one], [squares]))
    assert [i.opcode for i in plan.kernels] == ["add"] * (DEPTH // 2 - 2)
    tripled = x0
    for _ in range(DEPTH // 3):
        tripled = Instruction.make("add", [Instruction.make("add", [tripled, tripled]),
                                           Instruction.make("multiply", [tripled, one])])
    plan = plan_fusion(Computation("main", [x0, one], [tripled]))
    assert [i.opcode for i in plan.kernels] == ["add"] * (DEPTH // 3)


# --- lazy chains -----------------------------------------------------------------------

@pytest.fixture
def unbounded_pending(monkeypatch):
    """Lazy graphs stay uncut however deep (``PLAIDARRAY_MAX_PENDING=0``)."""
    monkeypatch.setenv("PLAIDARRAY_MAX_PENDING", "0")
    monkeypatch.setattr(node_module, "MAX_PENDING", 0, raising=False)


@pytest.fixture
def reference_backend():
    xp.set_backend("reference")
    try:
        yield
    finally:
        xp.set_backend(None)


@pytest.fixture
def llvm_cpu_backend():
    xp.set_backend("llvm-cpu")
    try:
        yield
    finally:
        xp.set_backend(None)


def lazy_chain(x, steps: int):
    """``steps`` lazy ops from ``x``: ``x + 1`` and ``x * 3`` in turn (1 and 3 are arrays
    made once, so that the graph is the chain itself)."""
    one, three = xp.ones(4, dtype=xp.uint32), xp.full(4, 3, dtype=xp.uint32)
    for i in range(steps):
        x = x * three if i % 2 else x + one
    return x


def test_reference_backend_materializes_a_lazy_chain(unbounded_pending, reference_backend):
    y = lazy_chain(xp.asarray(X0), DEPTH)
    graph = PendingGraph([y._node])  # what materialising it compiles
    comp, buffers = graph.computation(), graph.buffers
    assert opcodes(comp)["add"] + opcodes(comp)["multiply"] == DEPTH
    np.testing.assert_array_equal(evaluate(comp, *buffers), chain_value(X0, DEPTH))
    np.testing.assert_array_equal(np.asarray(y), chain_value(X0, DEPTH))


def test_jit_traces_a_deep_chain(reference_backend):
    f = xp.jit(lambda x: lazy_chain(x, DEPTH))
    np.testing.assert_array_equal(np.asarray(f(xp.asarray(X0))), chain_value(X0, DEPTH))
    assert f.cache_info().misses == 1


# --- the compiled path -----------------------------------------------------------------

#: The compiled path walks the same graphs: fusion, linalg building, xDSL's loop
#: lowering and printer, our loop passes, LLVM IR emission, LLVM itself. Compile time
#: of the fused chain (lazy API to result, -O3, this 2-core machine): 1,000 ops 0.3 s,
#: 5,000 ops 1.4 s, 10,000 ops 1.7 s, 20,000 ops 3.9 s, 50,000 ops 11 s, 100,000 ops
#: 30 s; so the test takes the 20,000 ops that compile in a few seconds, twenty times
#: the recursion limit. (LLVM folds this chain of constants into a few instructions. With
#: the constants passed in as arrays it cannot, and its loop vectorizer is superlinear
#: in the size of the loop body: 1,000 ops 0.6 s, 5,000 ops 6.6 s, 20,000 ops 136 s.)
COMPILED_DEPTH = 20_000
#: Steps of ``x = (x + x) + x * 3``, where every value has three users and is stored:
#: as many loop nests, which fuse-parallel-loops merges into one and
#: contract-temporaries shrinks to registers. Compile time: 500 steps 1.8 s, 1,000 steps
#: 3.4 s, 2,000 steps 9 s, 5,000 steps 20 s (before fuse-parallel-loops kept a running
#: summary of the loop it merges into, that pass alone took 22 s at 1,000 steps and
#: 120 s at 2,000).
COMPILED_BUFFER_STEPS = 1_000


def test_llvm_cpu_compiles_a_chain_deeper_than_the_recursion_limit(unbounded_pending, llvm_cpu_backend,
                                                                   monkeypatch, tmp_path, fused):
    assert COMPILED_DEPTH > sys.getrecursionlimit()
    monkeypatch.setenv("PLAIDARRAY_DUMP", str(tmp_path))  # every stage printed, xDSL's too
    y = lazy_chain(xp.asarray(X0), COMPILED_DEPTH)
    np.testing.assert_array_equal(np.asarray(y), chain_value(X0, COMPILED_DEPTH))
    (linalg,) = tmp_path.glob("*.linalg.mlir")
    text = linalg.read_text()
    assert text.count("arith.addi") == text.count("arith.muli") == COMPILED_DEPTH // 2


def test_llvm_cpu_compiles_a_chain_of_stored_values(unbounded_pending, llvm_cpu_backend):
    x = xp.asarray(X0)
    three = xp.full(4, 3, dtype=xp.uint32)
    for _ in range(COMPILED_BUFFER_STEPS):
        x = (x + x) + x * three  # 5x
    expected = np.array([pow(5, COMPILED_BUFFER_STEPS, 2**32) * int(v) % 2**32 for v in X0], dtype=U32)
    np.testing.assert_array_equal(np.asarray(x), expected)


# --- size and affine expressions --------------------------------------------------------

def size_expression(terms: int, hints: bool = True) -> SymExpr:
    """``2 + sum_i (1 + i % 3) s_i``: offsets ``s_i`` (run-time values that may be 0),
    as many terms as a sum of the lengths of that many operands; ``s_i``'s hint is
    ``i % 5``, or 0 (``hints`` False: the code is then for small buffers)."""
    syms = {i: Sym(i, i % 5 * hints, size=False) for i in range(terms)}
    return SymExpr({(): 2, **{(i,): 1 + i % 3 for i in range(terms)}}, syms)


def size_value(values: list[int]) -> int:
    return 2 + sum((1 + i % 3) * v for i, v in enumerate(values))


def affine_value(expr: AffineExpr, symbols: list[int]) -> int:
    """An affine expression of symbols evaluated as Python ints."""
    def leaf(e):
        return symbols[e.position] if isinstance(e, AffineSymExpr) else e.value

    def binary(e, lhs, rhs):
        return {AffineBinaryOpKind.Add: lhs + rhs, AffineBinaryOpKind.Mul: lhs * rhs}[e.kind]
    return fold(expr, leaf, binary)


def depth(expr: AffineExpr) -> int:
    deepest, stack = 0, [(expr, 1)]
    while stack:
        e, at = stack.pop()
        deepest = max(deepest, at)
        if isinstance(e, AffineBinaryOpExpr):
            stack += ((e.lhs, at + 1), (e.rhs, at + 1))
    return deepest


VALUES = [(7 * i) % 5 for i in range(DEPTH)]


def test_a_size_expression_of_100000_terms_evaluates_stores_and_renames():
    size = size_expression(DEPTH)
    assert size.evaluate(VALUES) == size_value(VALUES)
    assert hint(size) == size_value([i % 5 for i in range(DEPTH)])
    assert decode(encode(size))[0] == size
    reversed_values = VALUES[::-1]
    renamed = rename(size, {i: DEPTH - 1 - i for i in range(DEPTH)})
    assert renamed.evaluate(reversed_values) == size_value(VALUES)


def test_affine_expressions_of_100000_terms_are_walked_with_stacks():
    """``affine`` sums the terms pairwise (xDSL's own walks recurse, so the expressions
    we make stay shallow); our walks take one as deep as it is long as well."""
    expr = affine(size_expression(DEPTH))
    assert depth(expr) <= math.ceil(math.log2(DEPTH + 1)) + 2
    assert affine_value(expr, VALUES) == size_value(VALUES)
    chain: AffineExpr = AffineConstantExpr(2)
    for i in range(DEPTH):
        term = AffineExpr.symbol(i) if i % 3 == 0 else \
            AffineBinaryOpExpr(AffineBinaryOpKind.Mul, AffineConstantExpr(1 + i % 3), AffineExpr.symbol(i))
        chain = AffineBinaryOpExpr(AffineBinaryOpKind.Add, chain, term)
    assert depth(chain) == DEPTH + 1
    assert affine_value(chain, VALUES) == size_value(VALUES)
    assert symbol_positions([chain]) == set(range(DEPTH)) and symbols_used([chain]) == DEPTH
    backwards = symbols_renumbered(chain, {i: DEPTH - 1 - i for i in range(DEPTH)})
    assert affine_value(backwards, VALUES[::-1]) == size_value(VALUES)


#: Terms of the size the compiled test reads (an offset of ``pad``): 20,000 compile in
#: 6 s on this machine, 100,000 in 19 s, each term an xDSL op and LLVM instructions.
COMPILED_TERMS = 20_000


def test_llvm_cpu_compiles_a_size_expression_deeper_than_the_recursion_limit(llvm_cpu_backend):
    """``pad`` at an offset of COMPILED_TERMS terms: a map of the generic, an
    ``affine.apply`` of the loops, LLVM IR of the emitter, bound and run."""
    assert COMPILED_TERMS > sys.getrecursionlimit()
    f64 = np.dtype(np.float64)
    low = size_expression(COMPILED_TERMS, hints=False)
    x = Instruction("parameter", (), {"number": 0, "shape": Shape((4,), f64)}, Shape((4,), f64))
    fill = Instruction("parameter", (), {"number": 1, "shape": Shape((), f64)}, Shape((), f64))
    length = Sym(COMPILED_TERMS, 4 + hint(low))
    padded = Instruction("pad", [x, fill], {"low": (low,), "high": (0,), "interior": (0,)}, Shape((length,), f64))
    module = Module("deep_size", Computation("main", [x, fill], [padded]), frozenset(), COMPILED_TERMS + 1)
    executable = registry.current().compiler.compile(module)
    values = [1 if i in (5, 7) else 0 for i in range(COMPILED_TERMS)]  # the offset: 2 + 3 * 1 + 2 * 1
    (got,) = executable.bind([*values, 4 + size_value(values)]).run([np.arange(4.0), np.array(-1.0)])
    np.testing.assert_array_equal(got, [-1.0] * 7 + [0.0, 1.0, 2.0, 3.0])


# --- pytrees ----------------------------------------------------------------------------

Pair = namedtuple("Pair", "first second")


def deep_tree(levels: int, bottom: object, numbered: bool = True) -> object:
    """``levels`` containers, each kind in turn (a tuple, a list, a dict, a named tuple),
    with a None or the level's number (``numbered``, else None) beside each one's child,
    ``bottom`` in the innermost."""
    tree = bottom
    for i in range(levels):
        number = i if numbered else None
        tree = [(tree, number), [None, tree], {"b": tree, "a": number}, Pair(tree, None)][i % 4]
    return tree


def same_tree(a: object, b: object) -> bool:
    """``a == b`` with a stack (``==`` on nested containers recurses in C)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack += [(x[k], y[k]) for k in x]
        elif isinstance(x, (tuple, list)):
            if len(x) != len(y):
                return False
            stack += zip(x, y)
        elif x is not y and x != y:
            return False
    return True


def test_pytrees_100000_levels_deep_flatten_rebuild_and_describe():
    tree = deep_tree(DEPTH, "bottom")
    leaves, structure = pytree.flatten(tree)
    # Depth first, dict keys sorted: the outer levels' ints first (those beside a child
    # after it come after the bottom), then the bottom leaf.
    assert leaves[:2] == [DEPTH - 2, DEPTH - 6] and leaves[DEPTH // 4] == "bottom"
    assert len(leaves) == DEPTH // 2 + 1
    assert hash(structure) == hash(pytree.flatten(deep_tree(DEPTH, 0))[1])  # flat, so hashed without recursion
    assert same_tree(pytree.unflatten(structure, leaves), tree)
    text = pytree.describe(structure)
    assert text.startswith("Pair({'a': *, 'b': [None, (Pair({'a': *,") and text.count("*") == len(leaves)


def test_jit_passes_a_pytree_100000_levels_deep(reference_backend):
    """In and out of a traced function, one array at the bottom of each."""
    def dig(tree):
        for i in reversed(range(DEPTH)):
            tree = tree[[0, 1, "b", 0][i % 4]]
        return deep_tree(DEPTH, tree * 2, numbered=False)

    f = xp.jit(dig)
    x = xp.asarray(X0)
    out = f(deep_tree(DEPTH, x, numbered=False))
    for i in reversed(range(DEPTH)):
        out = out[[0, 1, "b", 0][i % 4]]
    np.testing.assert_array_equal(np.asarray(out), X0 * 2)
    f(deep_tree(DEPTH, x + 1, numbered=False))
    assert f.cache_info().misses == 1
