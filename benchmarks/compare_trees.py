"""Two revisions of plaidarray on the eager scripts, side by side: each script's first run
(a fresh process, an empty ``PLAIDARRAY_CACHE_DIR``) and three reruns in that process, in
each tree in turn, for some rounds (the trees' order swapped each round), and the totals
of each run over the scripts, each script's least of its rounds.

This machine runs a process at one of two speeds and NumPy's sub-millisecond scripts
move with its phase: a ratio against NumPy measured at one revision and another measured
later compare phases as much as revisions. Two trees run in turn under the same phase;
the least of a script's rounds is its run at the faster speed. Each tree must be a
checkout with its C modules built and its installation's kernels (``plaidarray/_kernels``)
built for its own sources (``python -m plaidarray.prebuild plaidarray/_kernels``): a tree
whose kernels are stale compiles at every first use.

Each build of the kernels lays their code out anew (a source change renames every kernel),
and the layout alone moves single scripts by a millisecond or two and the totals by up to
~3% (two builds of one revision, 2026-12-07: first runs -3.2%, second -2.8%, third -1.5%,
fourth -0.7%; one build 7% slower at the fourth run). A change to the C extensions or to
Python is best compared on one build: a copy of the old tree, the new extension modules
copied in and its Python changes applied after import (a ``sitecustomize`` that runs a
patch once the changed module is loaded), leaving the sources the kernels are keyed by as
they were.

    python -m benchmarks.compare_trees OLD_TREE NEW_TREE [--rounds 2] [--only SUBSTRING] [--json PATH]

``--json`` writes every run's seconds, by tree and script, for a look at single scripts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from .eager import RECORD, SCRIPTS

RUNS = ("first", "second", "third", "fourth")


def runs_of(tree: str, name: str) -> list[float] | None:
    """The seconds of a script's first run and three reruns in a fresh process of ``tree``;
    None where it failed."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PLAIDARRAY_CACHE_DIR": cache, "PYTHONPATH": tree}
        done = subprocess.run([sys.executable, "-m", "benchmarks.eager", "--child", "plaidarray", "--only", name,
                               "--reruns", str(len(RUNS) - 1)], env=env, cwd=tree, capture_output=True, text=True)
    records = [json.loads(line[len(RECORD):]) for line in done.stdout.splitlines() if line.startswith(RECORD)]
    seconds = [r["seconds"] for r in records if "seconds" in r]
    return seconds if len(seconds) == len(RUNS) else None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare_trees", description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", default="", help="the scripts whose name contains this")
    parser.add_argument("--json", default="", help="write every run's seconds here, by tree and script")
    args = parser.parse_args()
    trees = [os.path.abspath(args.old), os.path.abspath(args.new)]
    names = [s.name for s in SCRIPTS if args.only in s.name]
    found: dict[str, dict[str, list[list[float]]]] = {tree: {} for tree in trees}
    for round_ in range(args.rounds):
        for name in names:
            for tree in trees if round_ % 2 == 0 else trees[::-1]:
                seconds = runs_of(tree, name)
                if seconds is None:
                    print(f"{name}: failed in {tree}", file=sys.stderr)
                else:
                    found[tree].setdefault(name, []).append(seconds)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(found, out)
    common = [n for n in names if all(n in found[tree] for tree in trees)]
    print(f"{len(common)} scripts, {args.rounds} rounds, each script's least of its rounds")
    for k, run in enumerate(RUNS):
        old, new = (sum(min(r[k] for r in found[tree][n]) for n in common) * 1e3 for tree in trees)
        print(f"{run:7s} run: {old:8.1f} ms -> {new:8.1f} ms ({(new / old - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
