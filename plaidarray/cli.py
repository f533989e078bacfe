"""The ``plaidarray`` command (also ``python -m plaidarray``).

    plaidarray demo                           trace, print the HLO, time compile vs cached call
    plaidarray info                           versions, target CPU, backends, compile cache
    plaidarray cache info | cache clear       the persistent compile cache
    plaidarray bench [ARGS...]                the benchmark harness (python -m benchmarks)
    plaidarray dump SCRIPT --out DIR [ARGS]   run SCRIPT, dumping every module it compiles to DIR
    plaidarray export MODULE:FUNCTION --arg float32[3,4] ... [--target T] [--out DIR]
                                              FUNCTION as a C library for the host or target T
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if n < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _cache_summary() -> list[str]:
    from plaidarray.backend.llvm import object_cache

    present = object_cache.entries()
    state = "" if object_cache.enabled() else " (disabled: PLAIDARRAY_CACHE_MAX_BYTES=0)"
    count = f"{len(present)} {'entry' if len(present) == 1 else 'entries'}"
    used = _size(sum(st.st_size for _, st in present))
    return [f"compile cache: {object_cache.cache_dir()}{state}",
            f"  {count}, {used} of {_size(object_cache.max_bytes())}"]


def _info(args: argparse.Namespace) -> int:
    import llvmlite
    import llvmlite.binding as llvm
    import numpy
    import xdsl

    import plaidarray
    from plaidarray.backend import registry
    from plaidarray.backend.llvm_cpu import targets

    target = targets.host()
    print(f"plaidarray {plaidarray.__version__} (Array API {plaidarray.__array_api_version__})")
    print(f"numpy {numpy.__version__}, llvmlite {llvmlite.__version__} "
          f"(LLVM {'.'.join(map(str, llvm.llvm_version_info))}), xdsl {xdsl.__version__}")
    print(f"target: {target.triple}, cpu {target.cpu}")
    print(f"features: {target.features}")
    current = registry.current().name
    for name, priority in sorted(plaidarray.backends().items(), key=lambda kv: -kv[1]):
        print(f"backend {name}: priority {priority}{' (in use)' if name == current else ''}")
    print("\n".join(_cache_summary()))
    return 0


def _cache(args: argparse.Namespace) -> int:
    from plaidarray.backend.llvm import object_cache

    if args.action == "clear":
        print(f"removed {object_cache.clear()} entries from {object_cache.cache_dir()}")
    else:
        print("\n".join(_cache_summary()))
    return 0


def _bench(args: argparse.Namespace) -> int:
    """``python -m benchmarks`` from the current directory, as a source checkout has it."""
    package = Path.cwd() / "benchmarks"
    if not ((package / "__init__.py").is_file() and (package / "__main__.py").is_file()):
        print("plaidarray bench: no benchmark harness here (expected a benchmarks/ package with __init__.py and "
              "__main__.py in the current directory; run this from a plaidarray source checkout)", file=sys.stderr)
        return 1
    return subprocess.call([sys.executable, "-m", "benchmarks", *args.args])


def _dump(args: argparse.Namespace) -> int:
    """Run the script in a fresh interpreter with ``PLAIDARRAY_DUMP`` set, then list what
    it compiled (a fresh process has empty caches, and a dump bypasses the disk cache,
    so every module the script needs is compiled and written)."""
    out = Path(args.out).resolve()
    started = time.time()
    env = {**os.environ, "PLAIDARRAY_DUMP": str(out)}
    code = subprocess.call([sys.executable, args.script, *args.args], env=env)
    new = [p for p in out.glob("*") if p.stat().st_mtime >= started - 1] if out.is_dir() else []
    modules = sorted({p.name.split(".")[0] for p in new})
    for module in modules:
        stages = sorted(p.name[len(module) + 1:] for p in new if p.name.startswith(module + "."))
        print(f"{module}: {' '.join(stages)}")
    print(f"{len(modules)} compiled modules dumped to {out}")
    return code


def _export(args: argparse.Namespace) -> int:
    """``plaidarray.export`` of a module's function, for arguments given as ``dtype[dims]``."""
    import importlib

    import numpy as np

    import plaidarray

    module_name, _, function_name = args.function.partition(":")
    if not function_name:
        print(f"plaidarray export: expected MODULE:FUNCTION, got {args.function!r}", file=sys.stderr)
        return 2
    function = getattr(importlib.import_module(module_name), function_name)
    examples = []
    for spec in args.arg:
        dtype, _, dims = spec.partition("[")
        if not dims.endswith("]"):
            print(f"plaidarray export: expected an argument like float32[3,4], got {spec!r}", file=sys.stderr)
            return 2
        shape = tuple(int(d) for d in dims[:-1].split(",") if d.strip())
        examples.append(np.zeros(shape, dtype=np.dtype(dtype)))
    try:
        out = plaidarray.export(function, *examples, target=args.target, name=args.name, out=args.out,
                                cpu=args.cpu, features=args.features)
    except plaidarray.aot.ExportError as error:
        print(f"plaidarray export: {error}", file=sys.stderr)
        return 1
    print(f"exported {function_name} to {out}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plaidarray", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="trace a small function, print its HLO, time compile vs cached call")
    sub.add_parser("info", help="versions, target CPU, registered backends and the compile cache")
    cache = sub.add_parser("cache", help="the persistent compile cache")
    cache.add_argument("action", choices=("info", "clear"))
    sub.add_parser("bench", help="run the benchmark harness (python -m benchmarks); other arguments are its own")
    dump = sub.add_parser("dump", help="run a script and dump every module it compiles; other arguments are "
                                       "the script's")
    dump.add_argument("script", help="the Python script to run")
    dump.add_argument("--out", required=True, help="directory for the dumps")
    export = sub.add_parser("export", help="compile a function ahead of time into a C library (docs/aot.md)")
    export.add_argument("function", help="MODULE:FUNCTION, importable from the current directory or PYTHONPATH")
    export.add_argument("--arg", action="append", default=[], help="an example argument's dtype and shape, "
                                                                     "e.g. float32[3,4] (repeat per argument)")
    export.add_argument("--target", default="host", help="host (default), x86_64-linux-gnu, aarch64-linux-gnu or "
                                                         "riscv64-linux-gnu")
    export.add_argument("--name", help="the library's name (default: the function's)")
    export.add_argument("--out", default=".", help="the directory to write to")
    export.add_argument("--cpu", help="LLVM's CPU name (default: the target's)")
    export.add_argument("--features", help="LLVM's feature string, e.g. +avx2,+fma (default: the target's)")
    args, extra = parser.parse_known_args(argv)
    if args.command in ("bench", "dump"):
        args.args = extra[1:] if extra[:1] == ["--"] else extra
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "demo":
        from plaidarray.demo import run

        run()
        return 0
    return {"info": _info, "cache": _cache, "bench": _bench, "dump": _dump, "export": _export}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
