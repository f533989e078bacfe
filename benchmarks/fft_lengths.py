"""FFTs of lengths met once: a filter over signals of many lengths, as a script writes it
(an rfft, a mask of its low terms, the irfft of the masked spectrum, its energy read), one
new length at each step. plaidarray plans each length when a read binds the library's
routines of any length to it (``backend/llvm_cpu/fft_plan.py``): its cost is that plan,
the binding and the recording of a new length, not a compile. Each range is run in a
fresh process that met 20 other lengths first (its op kernels loaded, its structures
planned), NumPy and plaidarray in turn; the median step of the range's lengths.

    python -m benchmarks.fft_lengths [--ranges 100-140 300-340 2000-2040 16000-16040] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]


def step(xp: Any, signal: Any, n: int) -> float:
    """One length's filter: the energy of the signal's first n points without their upper
    three quarters of frequencies."""
    spectrum = xp.fft.rfft(signal[:n])
    keep = xp.arange(spectrum.shape[0]) < spectrum.shape[0] // 4
    return float(xp.sum(xp.fft.irfft(xp.where(keep, spectrum, xp.zeros_like(spectrum)), n=n) ** 2))


def child(library: str, low: int, high: int) -> None:
    """Prints the median seconds of a step over the lengths ``low`` to ``high``."""
    if library == "numpy":
        xp: Any = np
    else:
        import plaidarray as xp
    signal = xp.asarray(np.random.default_rng(0).standard_normal(high + 200))
    for n in range(high + 1, high + 21):
        step(xp, signal, n)
    seconds = []
    for n in range(low, high + 1):
        start = time.perf_counter()
        step(xp, signal, n)
        seconds.append(time.perf_counter() - start)
    print(statistics.median(seconds))


def run(library: str, low: int, high: int) -> float:
    """``child``'s median step, in a fresh process on an empty cache directory."""
    with tempfile.TemporaryDirectory() as cache_dir:
        env = {**os.environ, "PLAIDARRAY_CACHE_DIR": cache_dir,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        done = subprocess.run([sys.executable, "-m", "benchmarks.fft_lengths", "--child", library, str(low),
                               str(high)], env=env, capture_output=True, text=True, cwd=REPO, check=True)
    return float(done.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fft_lengths", description=__doc__.splitlines()[0])
    parser.add_argument("--ranges", nargs="+", default=["100-140", "300-340", "2000-2040", "16000-16040"])
    parser.add_argument("--rounds", type=int, default=3, help="fresh processes per library and range")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]), int(args.child[2]))
    print("| lengths | NumPy | plaidarray | ratio |")
    print("|---|---:|---:|---:|")
    for spec in args.ranges:
        low, high = (int(v) for v in spec.split("-"))
        times: dict[str, list[float]] = {"numpy": [], "plaidarray": []}
        for _ in range(args.rounds):
            for library in times:
                times[library].append(run(library, low, high))
        numpy_s, plaid_s = (statistics.median(times[lib]) for lib in ("numpy", "plaidarray"))
        print(f"| {spec} | {numpy_s * 1e6:.0f} us | {plaid_s * 1e6:.0f} us | {plaid_s / numpy_s:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
