"""Generate docs/coverage.md: every name of the Array API standard and its status here.

The standard's names and signatures come from its stubs (``src/array_api_stubs/_<version>``
in the data-apis/array-api repository): pass ``--stubs DIR`` to refresh the committed
list ``tools/array_api_names.json``; without it, that list is used. The status of each
name is read from plaidarray itself (presence and parameter names/kinds), never typed
by hand; what a table cannot say (a note on a name, an extension's row, a chapter's
introduction, the GPU's host round trips) is in the tables below, and
tests/project/test_coverage_doc.py checks the page is this script's output.

    python tools/coverage.py [--stubs PATH/TO/array_api_stubs] [--version 2024.12]
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = ROOT / "tools" / "array_api_names.json"
CHAPTERS = {
    "array_object": "Array object", "constants": "Constants", "creation_functions": "Creation",
    "data_type_functions": "Data types", "elementwise_functions": "Element-wise", "indexing_functions": "Indexing",
    "info": "Inspection", "linear_algebra_functions": "Linear algebra", "manipulation_functions": "Manipulation",
    "searching_functions": "Searching", "set_functions": "Set", "sorting_functions": "Sorting",
    "statistical_functions": "Statistical", "utility_functions": "Utility", "linalg": "linalg extension",
    "fft": "fft extension",
}

#: What the table alone does not say: a name's note, after its status.
NOTES = {
    ("data_type_functions", "finfo"): "and NumPy's `tiny`, an extension: `smallest_normal` by its NumPy name",
}
#: Rows after a chapter's names: what plaidarray adds to it.
EXTENSIONS = {
    "fft": [("`fft2`, `ifft2`, `rfft2`, `irfft2`", "yes (an extension: NumPy's, `fftn`'s kinds over the last two axes)")],
}
#: Text before a chapter's table.
INTROS = {
    "fft": """Every transform is the HLO op `fft` along one axis at a time: O(n log n) for every length
(on llvm-cpu a compiled Stockham FFT with radices 8, 4, 2 and the odd primes up to 127,
Bluestein above; the target-neutral expansion otherwise), complex64 computed in complex128 and
rounded once. The op has XLA's four kinds: `FFT` and `IFFT` (complex to complex),
`RFFT` (real to its `n // 2 + 1` non-negative frequency terms: `rfft`, `ihfft` conjugated, the
last axis of `rfftn`) and `IRFFT` with `fft_length=n` (back to n real points: `irfft`, `hfft` of
the conjugate spectrum, the last axis of `irfftn`; the imaginary parts of the zero-frequency and
even-n Nyquist terms are ignored, as in NumPy). For even n the real kinds do one complex
transform of n/2 points (the signal read as `x[2j] + i x[2j+1]`, split with twiddles computed
at compile time, in one routine on llvm-cpu); odd n use the complex transform of n points.
On llvm-cpu a transform run op by op (a script's first run) takes no compile for a new length:
the FFT library's routines of run-time length, on a plan made for that length, compute the
bits of the code compiled for it (docs/architecture.md, "Matrix products").
Accuracy against a long-double result: float32/complex64 within NumPy's own error;
float64/complex128 on llvm-cpu within 2x NumPy's (pocketfft's): fft of 265 lengths up to 4096
at most 1.35x, mean 0.75x; rfft/irfft of every even n up to 600 without a prime factor above
127 at most 1.58x/1.67x, mean
0.89x/0.86x (the tests hold it to 2x; the target-neutral expansion is at 1-5x).
Timings: docs/performance.md, "FFT". A transform inside the body of a jitted
`cond`/`while_loop`/`fori_loop` runs on both backends: on llvm-cpu its twiddle tables are
hoisted out of the nested computation as extra operands and bound to the executable
(`codegen/expand.py`); there the transform is the target-neutral expansion, not the Stockham
kernel, which serves the entry computation.""",
}
#: After the count of names: where the GPU's differences are.
GPU = """On NVIDIA GPUs (llvm-nvptx) every name runs; these run on the host by a logged round trip
inside the read that meets them (docs/gpu.md, "Library calls and host round trips"): the
`linalg` decompositions (`cholesky`, `det`, `eig`, `eigh`, `eigvals`, `eigvalsh`, `inv`,
`matrix_rank`, `pinv`, `qr`, `slogdet`, `solve`, `svd`, `svdvals`, `matrix_norm` with `ord` 2,
-2 or `'nuc'`, `matrix_power` with a negative power), and of complex arrays `exp`, `expm1`,
`log`, `log1p`, `log2`, `log10`, `sqrt`, `pow`, and the trigonometric and hyperbolic functions
and their inverses."""


def _signature(fn: ast.FunctionDef) -> list[str]:
    a = fn.args
    out = [f"{p.arg}/" for p in a.posonlyargs] + [p.arg for p in a.args]
    if a.vararg:
        out.append("*" + a.vararg.arg)
    out += [f"*{p.arg}" for p in a.kwonlyargs]
    return [p for p in out if p not in ("self", "self/")]


def read_stubs(stubs: Path, version: str) -> dict[str, list]:
    folder = stubs / f"_{version.replace('.', '_')}"
    chapters: dict[str, list] = {}
    for module in CHAPTERS:
        path = folder / f"{module}.py"
        if not path.exists():
            continue
        tree = ast.parse(path.read_text())
        entries = []
        for node in ast.walk(tree) if module in ("array_object", "info") else tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") or (
                    isinstance(node, ast.FunctionDef) and node.name.startswith("__") and module == "array_object"):
                entries.append([node.name, _signature(node)])
            elif isinstance(node, ast.Assign) and module == "constants":
                entries += [[t.id, None] for t in node.targets if isinstance(t, ast.Name)]
        chapters[module] = entries
    return chapters


MISSING = object()


def _target(module: str, name: str):
    import plaidarray

    if module == "array_object":
        owner = plaidarray.Array
    elif module == "info":
        owner = plaidarray.__array_namespace_info__()
    elif module in ("linalg", "fft"):
        owner = getattr(plaidarray, module, None)
    else:
        owner = plaidarray
    return getattr(owner, name, MISSING)


def _params(fn) -> list[str] | None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name == "self":
            continue
        prefix = {"POSITIONAL_ONLY": "", "VAR_POSITIONAL": "*", "KEYWORD_ONLY": "*"}.get(p.kind.name, "")
        out.append(prefix + p.name + ("/" if p.kind.name == "POSITIONAL_ONLY" else ""))
    return out


def status(module: str, name: str, spec: list | None) -> str:
    target = _target(module, name)
    if target is MISSING:
        return "missing"
    if spec is None or not callable(target) or isinstance(target, property):
        return "yes"
    ours = _params(target)
    if ours is None or name.startswith("__"):
        return "yes"
    return "yes" if ours == spec else f"yes (signature differs: ours ({', '.join(ours)}), spec ({', '.join(spec)}))"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stubs", type=Path, help="array_api_stubs folder of the spec repository")
    parser.add_argument("--version", default="2024.12")
    args = parser.parse_args()
    if args.stubs:
        NAMES.write_text(json.dumps({"version": args.version, "chapters": read_stubs(args.stubs, args.version)},
                                    indent=1) + "\n")
    (ROOT / "docs" / "coverage.md").write_text(render())
    print("docs/coverage.md written")


def render() -> str:
    """docs/coverage.md's text, from the names' list and plaidarray itself."""
    data = json.loads(NAMES.read_text())
    import plaidarray

    lines = [f"# Coverage of the Array API standard ({data['version']})", "",
             "Generated by `python tools/coverage.py` from plaidarray itself; do not edit by hand.",
             f"Declared `__array_api_version__`: `{plaidarray.__array_api_version__}`.", ""]
    total = present = 0
    for module, entries in data["chapters"].items():
        lines += [f"## {CHAPTERS[module]}", ""]
        if module in INTROS:
            lines += [INTROS[module], ""]
        lines += ["| name | status |", "|---|---|"]
        for name, spec in entries:
            s = status(module, name, spec)
            total += 1
            present += s != "missing"
            note = NOTES.get((module, name))
            if note and s == "yes":
                s = f"yes ({note})"
            lines.append(f"| `{name}` | {s} |")
        lines += [f"| {names} | {s} |" for names, s in EXTENSIONS.get(module, [])]
        lines.append("")
    lines.insert(4, f"{present} of {total} names present.")
    lines.insert(5, GPU + "\n")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
