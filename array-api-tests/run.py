"""Run the public Array API conformance suite (data-apis/array-api-tests) on plaidarray.

Usage: python array-api-tests/run.py [SUITE_DIR] [--version 2024.12] [--examples 20] [--write] [pytest args]

SUITE_DIR (or $ARRAY_API_TESTS_DIR) is a checkout of data-apis/array-api-tests with its
``array-api`` submodule; none of its code lives in this repository. The run uses our
skips.txt / xfails.txt (one reason per entry) and prints, then writes to RESULTS.md, the
result line: command, suite version, examples, passed/failed/skipped/xfailed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _entries(path: Path) -> list[str]:
    """Test ids from a skips/xfails file; '#' starts the reason."""
    out = []
    for line in path.read_text().splitlines():
        test = line.split("#", 1)[0].strip()
        if test:
            out.append(test)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("suite", nargs="?", default=os.environ.get("ARRAY_API_TESTS_DIR"))
    parser.add_argument("--version", default="2024.12")
    parser.add_argument("--examples", type=int, default=20)
    parser.add_argument("--write", action="store_true", help="append the result line to RESULTS.md")
    args, pytest_args = parser.parse_known_args()
    if not args.suite:
        parser.error("give the suite's location (argument or ARRAY_API_TESTS_DIR)")
    suite = Path(args.suite).resolve()
    with tempfile.TemporaryDirectory() as tmp:
        skips, xfails = Path(tmp) / "skips.txt", Path(tmp) / "xfails.txt"
        skips.write_text("\n".join(_entries(HERE / "skips.txt")) + "\n")
        xfails.write_text("\n".join(_entries(HERE / "xfails.txt")) + "\n")
        report = Path(tmp) / "report.json"
        extra = [a for a in pytest_args if a != "--"]
        # Test files given (array_api_tests/...) replace the default of the whole suite.
        targets = [a for a in extra if a.startswith("array_api_tests")] or ["array_api_tests/"]
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *targets,
               f"--max-examples={args.examples}", "--derandomize", "--disable-deadline",
               f"--skips-file={skips}", f"--xfails-file={xfails}", "--json-report",
               f"--json-report-file={report}", *(a for a in extra if a not in targets)]
        env = dict(os.environ, ARRAY_API_TESTS_MODULE="plaidarray", ARRAY_API_TESTS_VERSION=args.version,
                   PLAIDARRAY_API_VERSION=args.version)
        proc = subprocess.run(cmd, cwd=suite, env=env)
        summary = json.loads(report.read_text())["summary"] if report.exists() else {}
    # a test module that fails to import (a missing dependency of the suite) counts as failed
    passed, failed = summary.get("passed", 0), summary.get("failed", 0) + summary.get("error", 0)
    ran = passed + failed
    line = (f"| `python array-api-tests/run.py --version {args.version} --examples {args.examples}"
            f"{' ' + ' '.join(extra) if extra else ''}` | {args.version} | {args.examples} | {passed} | {failed} | "
            f"{summary.get('skipped', 0)} | {summary.get('xfailed', 0)} | "
            f"{100 * passed / ran if ran else 0:.1f}% |")
    print(line)
    if args.write:
        with open(HERE / "RESULTS.md", "a") as f:
            f.write(line + "\n")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
