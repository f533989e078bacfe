"""No walk recurses on the depth of what it walks (docs/architecture.md): graphs, IR,
affine and size expressions and pytrees can be 100,000 levels deep
(tests/trace/test_deep_graphs.py builds each), and Python's recursion limit is 1,000.

The search reads every module of plaidarray/ and finds the functions that call
themselves, directly or through other functions of the same module: a function's bare
name called in its body (resolved as Python would: a nested function, else the module's)
and a method's ``self.name``, ``cls.name`` or ``ClassName.name``. Each one found must be
in ``BOUNDED``, with why its depth is bounded whatever the input; a new recursive walk
fails here until it is iterative or shown bounded. Recursion through a table of rules
(the LLVM emitter's, the HLO evaluator's: an op's rule walks its nested regions or
computations) is not a call the search can see; it follows the nesting of the traced
program, as the entries marked "nesting" below do.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "plaidarray"

#: Nesting of a traced program: each ``cond``/``while_loop`` inside another is traced by a
#: call inside its parent's trace, so its depth is bounded by Python's own call depth.
NESTING = "bounded by the nesting of the traced program's cond/while_loop (each traced inside its parent's call)"

#: ``module:qualified name`` (a cycle through several: its members joined by " <-> ") -> why it is bounded.
BOUNDED = {
    "api/creation.py:_stacked_items.level": "a level per list of the nested sequence, _MOST_LEVELS (NumPy's 64 "
                                            "dimensions) at most; a deeper one is a ValueError",
    "api/recipes.py:_add": "an argument's sequences are keyed MAX_NESTING deep at most; a deeper one is not recorded",
    "backend/llvm_cpu/op_catalogue.py:_written": "a level per tuple of an op signature, _DEPTH (32) at most; a deeper "
                                                 "one has no written form (its C twin stops at the same depth)",
    "api/indexing.py:_advanced <-> getitem": "getitem passes on the key's basic parts alone, which _advanced never gets",
    "api/manipulation.py:roll": "axis=None calls it once with axis=0",
    "api/indexing.py:_dynamic_window": "each split halves the window's cut axes: log2 of the rank deep",
    "api/indexing.py:_window_update": "each split halves the window's cut axes: log2 of the rank deep",
    "api/graph.py:reduce_axes": "past BUILT_RUNS it reduces one run at a time, each call of at most three runs: one level",
    "api/searching.py:_arg_extremum": "axis=None calls it once with axis=0",
    "backend/llvm/emitter.py:llvm_type": "a complex type asks for its part's type, a float",
    "backend/llvm_nvptx/simulator/operands.py:OperandCompiler.reader": "a negated operand reads its register, never "
                                                                         "another negated operand",
    "backend/llvm_nvptx/simulator/ptx.py:_Body.items <-> _Body.operand": "a vector's or group's items are never lists "
                                                                        "(``listed``): one level",
    "codegen/element_types.py:element_bytes": "a complex type asks for its part's size, a float's",
    "backend/llvm/emitter.py:_fingerprint.walk": "IR regions: one loop per dimension of a nest, and " + NESTING,
    "backend/llvm_nvptx/warp_reductions.py:_shared_reductions": "a kernel's loop nest: one loop per dimension of "
                                                               "its arrays (a branch or call ends it)",
    "backend/llvm_cpu/stockham.py:_Arithmetic.butterfly": "8 points are two butterflies of 4",
    "codegen/kernel_groups.py:_Symbols.value": "attribute values nest as their op's definition writes them "
                                                "(tuples of tuples at most); a tuple shape holds array shapes",
    "codegen/lowerings/fft.py:_bluestein <-> _transform": "each transform splits a prime factor off its length, "
                                                          "Bluestein's are 5-smooth or powers of two: 2 log2(n) + 3 deep",
    "codegen/lowerings/gather.py:_before": "side 'right' asks side 'left' once",
    "hlo/printer.py:_nested": NESTING,
    "prebuild.py:_read": "the corpus's calls return arrays, or lists and tuples of arrays",
    "trace/materialize.py:finish <-> materialize": "retried once with shape_generic=False, which never retries, "
                                                   "or once after the host computed the ops held from the device "
                                                   "(none is held then)",
    "trace/scalars.py:value": "each pending operand is entered before it is evaluated, MOST_OPS in all",
}


def _functions(tree: ast.Module) -> dict[str, tuple[ast.AST, str | None]]:
    """Every function by qualified name, with its class's qualified name if a method."""
    found: dict[str, tuple[ast.AST, str | None]] = {}
    stack: list[tuple[ast.AST, str, str | None]] = [(tree, "", None)]
    while stack:
        node, prefix, cls = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found[prefix + child.name] = (child, cls)
                stack.append((child, f"{prefix}{child.name}.", None))
            elif isinstance(child, ast.ClassDef):
                stack.append((child, f"{prefix}{child.name}.", prefix + child.name))
            else:
                stack.append((child, prefix, cls))
    return found


def _calls(function: ast.AST) -> list[ast.expr]:
    """What ``function``'s own body calls (not its nested functions' or classes')."""
    called, stack = [], list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            called.append(node.func)
        stack.extend(ast.iter_child_nodes(node))
    return called


def _callees(name: str, cls: str | None, called: ast.expr, functions: dict) -> str | None:
    if isinstance(called, ast.Name):  # a nested function of an enclosing one, else the module's
        scope = name
        while scope:
            scope = scope.rpartition(".")[0]
            candidate = f"{scope}.{called.id}" if scope else called.id
            if candidate in functions and functions[candidate][1] is None:
                return candidate
        return None
    if isinstance(called, ast.Attribute) and isinstance(called.value, ast.Name) and cls is not None:
        if called.value.id in ("self", "cls", cls.rpartition(".")[2]) and f"{cls}.{called.attr}" in functions:
            return f"{cls}.{called.attr}"
    return None


def recursive_functions(source: str) -> list[str]:
    """The recursive functions of a module: each cycle of calls as its members' qualified
    names, sorted and joined by " <-> " (one name for a function that calls itself)."""
    functions = _functions(ast.parse(source))
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (node, cls) in functions.items():
        for called in _calls(node):
            target = _callees(name, cls, called, functions)
            if target is not None:
                graph[name].add(target)

    def reachable(start: str) -> set[str]:
        seen, stack = set(), list(graph[start])
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                stack.extend(graph[name])
        return seen

    reaches = {name: reachable(name) for name in functions}
    cycles = {" <-> ".join(sorted(n for n in reaches[name] if name in reaches[n]))
              for name in functions if name in reaches[name]}
    return sorted(cycles)


def test_the_search_finds_direct_mutual_and_method_recursion():
    source = '''
def alone(x):
    return alone(x - 1) if x else 0

def ping(x):
    return pong(x)

def pong(x):
    return ping(x) if x else 0

def outer(tree):
    def walk(t):
        return [walk(c) for c in t]
    return walk(tree)

def computation(x):
    return x

class Walker:
    def visit(self, node):
        return [self.visit(c) for c in node]

    def computation(self):
        return computation(self)  # the module's function, not itself

    @classmethod
    def make(cls, n):
        return Walker.make(n - 1) if n else cls()
'''
    assert recursive_functions(source) == ["Walker.make", "Walker.visit", "alone", "outer.walk", "ping <-> pong"]


def test_every_recursive_function_is_bounded_and_says_why():
    found = {f"{path.relative_to(PACKAGE).as_posix()}:{cycle}"
             for path in sorted(PACKAGE.rglob("*.py")) for cycle in recursive_functions(path.read_text())}
    assert sorted(found - BOUNDED.keys()) == [], "recursive: make these walks iterative, or bounded and listed"
    assert sorted(BOUNDED.keys() - found) == [], "no longer recursive: remove from BOUNDED"
