"""Where a first run's time goes: each eager script (``benchmarks/eager.py``) run once in a
fresh process with an empty ``PLAIDARRAY_CACHE_DIR``, as its cold column runs it, its time
split into

- *assemble*: reads that no executable served, planned and bound op by op
  (``trace/baseline.assemble`` and ``from_plan``: an op kernel's first use in the process,
  a structure's first sequence, a new size's binding, an FFT length's plan);
- *other misses*: the rest of the reads that missed the cache or were cut (``materialize``'s
  ``decide``, ``finish`` and ``planned``, which the C read calls for a new size of a planned
  structure: the generalised key, the structure's heat and plan, the cache's insert, the
  run of the kernels, the results set; but the C read's own part of a ``planned`` read);
- *gc*: the cyclic garbage collector's pauses, wherever they fall (``gc.callbacks``),
  taken out of the part they fell in;
- *recording, cached reads*: the rest, the script's own Python, the recording of its ops
  and the reads the cache served, which run in C (``_graph.read``) but for their
  executable's ``run``.

The same split of a second run in the process (its cache filled) follows, to show what
the first run pays for being first. The timers wrap ``decide``, ``finish``, ``planned``,
``assemble`` and ``from_plan`` in the child (the C read is configured with the wrapped ones), which adds
~1 us a miss; the figures are for finding where to work, not for the performance table
(``benchmarks/eager.py`` gives that).

``--timers`` names functions (``module:function`` or ``module:Class.method``) to time as
well: each one's outermost calls, counted and summed over the scripts' first runs and
second runs, in a second table. A function is replaced where it is defined and wherever a
module of the package holds it by name, before the C read is configured, so that calls
from C and through imported names are timed too. The timers add ~1 us a call, and a
function's time includes the timed functions it calls.

    python -m benchmarks.cold_split [--only SUBSTRING] [--timers module:function ...]
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PARTS = ("assemble", "other misses", "gc", "recording, cached reads")
RECORD = "COLD-SPLIT "


def _timed(function: Callable, totals: dict[str, float], part: str, depth: list[int]) -> Callable:
    """``function`` adding its outermost calls' seconds to ``totals[part]``, but the
    collector's pauses during them (``totals["gc"]``'s)."""
    def timed(*args: Any, **kwargs: Any) -> Any:
        depth[0] += 1
        start, paused = time.perf_counter(), totals["gc"]
        try:
            return function(*args, **kwargs)
        finally:
            depth[0] -= 1
            if not depth[0]:
                totals[part] += time.perf_counter() - start - (totals["gc"] - paused)
    return timed


def _timers(specs: list[str]) -> dict[str, list[float]]:
    """Each function ``specs`` names replaced by one that counts its outermost calls and
    their seconds into the returned totals (``[calls, seconds]`` by spec)."""
    totals: dict[str, list[float]] = {}
    for spec in specs:
        module_name, _, path = spec.partition(":")
        owner: Any = importlib.import_module(module_name)
        *outer, attribute = path.split(".")
        for part in outer:
            owner = getattr(owner, part)
        function = vars(owner)[attribute] if isinstance(owner, type) else getattr(owner, attribute)
        totals[spec] = [0, 0.0]
        timed = _counted(function, totals[spec])
        setattr(owner, attribute, timed)
        if not isinstance(owner, type):
            for module in list(sys.modules.values()):
                if getattr(module, "__name__", "").startswith("plaidarray"):
                    for key, value in list(vars(module).items()):
                        if value is function:
                            setattr(module, key, timed)
    return totals


def _counted(function: Callable, total: list[float]) -> Callable:
    """``function`` adding its outermost calls' number and seconds to ``total``: a
    recursive call (a merge within a merge) is counted once, in its caller's time."""
    depth = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        depth[0] += 1
        start = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            depth[0] -= 1
            if not depth[0]:
                total[0] += 1
                total[1] += time.perf_counter() - start
    return counted


def child(name: str, timer_specs: list[str]) -> None:
    """Runs the script ``name`` twice in this process, printing each run's split (and
    the totals of the functions ``timer_specs`` names)."""
    import numpy as np

    from benchmarks.eager import SCRIPTS  # before plaidarray, as ``eager.py``'s child has it: the import
    import plaidarray  # freezes what exists then (``PLAIDARRAY_FREEZE_AT_IMPORT``)
    from plaidarray.trace import baseline, materialize

    script = next(s for s in SCRIPTS if s.name == name)
    totals = dict.fromkeys(("reads", "assemble", "gc"), 0.0)
    depth = [0]  # decide and finish nest (finish materialises again after host ops): one count
    materialize.decide = _timed(materialize.decide, totals, "reads", depth)
    materialize.finish = _timed(materialize.finish, totals, "reads", depth)
    materialize.planned = _timed(materialize.planned, totals, "reads", depth)
    timers = _timers(timer_specs)
    materialize._read_in_c()  # the C read, configured once for the process, calls the wrapped ones
    assembling = [0]  # from_plan is called by planned and decide, assemble by finish: by the module
    baseline.assemble = _timed(baseline.assemble, totals, "assemble", assembling)
    baseline.from_plan = _timed(baseline.from_plan, totals, "assemble", assembling)
    paused = [0.0]

    def collected(phase: str, info: dict) -> None:
        if phase == "start":
            paused[0] = time.perf_counter()
        else:
            totals["gc"] += time.perf_counter() - paused[0]

    gc.callbacks.append(collected)
    args = [plaidarray.asarray(a) for a in script.inputs(np.random.default_rng(0))]
    for _ in range(2):
        for key in totals:
            totals[key] = 0.0
        for count in timers.values():
            count[:] = [0, 0.0]
        start = time.perf_counter()
        script.run(plaidarray, *args)
        seconds = time.perf_counter() - start
        split = {"assemble": totals["assemble"], "other misses": totals["reads"] - totals["assemble"],
                 "gc": totals["gc"]}
        split["recording, cached reads"] = seconds - sum(split.values())
        print(RECORD + json.dumps({"seconds": seconds, **split, "timers": timers}), flush=True)


def run(name: str, timer_specs: list[str]) -> list[dict]:
    """The two runs' splits of a fresh process on an empty cache directory."""
    with tempfile.TemporaryDirectory() as cache_dir:
        env = {**os.environ, "PLAIDARRAY_CACHE_DIR": cache_dir,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "-m", "benchmarks.cold_split", "--child", name,
                               *(["--timers", *timer_specs] if timer_specs else [])], env=env,
                              capture_output=True, text=True, cwd=REPO, timeout=600)
    if done.returncode:
        raise RuntimeError(f"{name}: {done.stderr.strip().splitlines()[-1:]}")
    return [json.loads(line[len(RECORD):]) for line in done.stdout.splitlines() if line.startswith(RECORD)]


def _row(label: str, record: dict) -> str:
    total = record["seconds"]
    cells = [f"{record[part] * 1e3:.1f} ms ({record[part] / total:.0%})" for part in PARTS]
    return f"| {label} | {total * 1e3:.1f} ms | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cold_split", description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="scripts whose name contains this")
    parser.add_argument("--timers", nargs="+", default=[], metavar="MODULE:FUNCTION",
                        help="functions to time too (module:function or module:Class.method)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.timers)
    from benchmarks.eager import SCRIPTS

    print("| script, run | total | " + " | ".join(PARTS) + " |")
    print("|---|---:|" + "---:|" * len(PARTS))
    sums = [dict.fromkeys(("seconds", *PARTS), 0.0) for _ in range(2)]
    timed = [{spec: [0, 0.0] for spec in args.timers} for _ in range(2)]
    for script in SCRIPTS:
        if args.only not in script.name or script.calls > 1:
            continue
        for k, record in enumerate(run(script.name, args.timers)):
            print(_row(f"{script.name}, {('first', 'second')[k]}", record), flush=True)
            for key in sums[k]:
                sums[k][key] += record[key]
            for spec, (calls, seconds) in record["timers"].items():
                timed[k][spec][0] += calls
                timed[k][spec][1] += seconds
    for k, label in enumerate(("first runs", "second runs")):
        print(_row(f"**all {label}**", sums[k]))
    if args.timers:
        print("\n| function | calls, first runs | first runs | per call | calls, second runs | second runs |")
        print("|---|---:|---:|---:|---:|---:|")
        for spec in sorted(args.timers, key=lambda spec: -timed[0][spec][1]):
            (calls, seconds), (again, later) = timed[0][spec], timed[1][spec]
            per_call = f"{seconds / calls * 1e6:.1f} us" if calls else "-"
            print(f"| `{spec}` | {calls} | {seconds * 1e3:.1f} ms | {per_call} | {again} | {later * 1e3:.1f} ms |")


if __name__ == "__main__":
    main()
