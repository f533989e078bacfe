"""The ``plaidarray`` command (also ``python -m plaidarray``)."""

from __future__ import annotations

import argparse
import sys


def _info(args: argparse.Namespace) -> None:
    import llvmlite
    import numpy
    import xdsl

    import plaidarray
    from plaidarray.backend.llvm_cpu import jit

    target = jit.host_target()
    print(f"plaidarray {plaidarray.__version__} (Array API {plaidarray.__array_api_version__})")
    print(f"numpy {numpy.__version__}, llvmlite {llvmlite.__version__}, xdsl {xdsl.__version__}")
    print(f"target: {target.triple}, cpu {target.cpu}")
    print(f"features: {target.features}")
    for name, priority in sorted(plaidarray.backends().items(), key=lambda kv: -kv[1]):
        print(f"backend {name}: priority {priority}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plaidarray", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("demo", help="trace a small function, print its HLO, time compile vs cached call")
    sub.add_parser("info", help="versions, target CPU and registered backends")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from plaidarray.demo import run

        run()
    elif args.command == "info":
        _info(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
