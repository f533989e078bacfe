"""Run real array-API client libraries' own tests on array_api_strict and on plaidarray.

Usage: python clients/run.py {sklearn,extra,scipy,scipy-suite} [--fast] [--namespace NS]
                             [--timeout S] [--workdir DIR] [--causes N] [--warm] [-- pytest args]

sklearn  scikit-learn's installed tests (``--pyargs``), the modules that hold array-API
         cases; ``sklearn_plugin`` adds plaidarray to its namespace generators.
extra    array-api-extra's tests, from its sdist (the wheel ships none), downloaded with
         pip into ``--workdir`` (outside the repository by default); ``extra_plugin``
         adds plaidarray to its backends.
scipy    SciPy's array-API functions (special, stats, fft, signal, cluster) against NumPy
         (``scipy_functions.py``).
scipy-suite  SciPy's own array-API tests (``-m array_api_backends``) of twelve modules;
         ``scipy_plugin`` adds plaidarray to the backends of SciPy's ``xp`` fixture. Also
         prints the figures per module of each run (``--warm``'s too) and lists, in
         ``--workdir``, the tests that pass on array_api_strict and fail on a plaidarray run.

Each namespace runs in its own pytest process (``-k`` selects its cases); the harness
prints passed/failed/skipped and wall time for each, plaidarray's compiles and disk loads
(``cache_report``), then the most common failure messages of each run (from pytest's
JUnit XML, kept in ``--workdir``). A ``--warm`` run whose plaidarray sources differ from
the first run's (an edit in between changes every cache key) is flagged as not warm.
"""

from __future__ import annotations

import argparse
import collections
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMESPACES = ("array_api_strict", "plaidarray")

# scikit-learn test modules whose tests can carry a namespace parameter: they take it
# from these helpers (directly, or through the estimator checks).
SKLEARN_MARKERS = ("yield_namespace", "_array_api_for_tests", "parametrize_with_checks",
                   "check_array_api_input")
# --fast: float64 cases of a cross-section (utilities, metrics, preprocessing, a few
# estimators) instead of every module and both dtypes.
SKLEARN_FAST_MODULES = (
    "sklearn.utils.tests.test_array_api",
    "sklearn.metrics.tests.test_common",
    "sklearn.preprocessing.tests.test_data",
    "sklearn.decomposition.tests.test_pca",
    "sklearn.linear_model.tests.test_ridge",
)


# SciPy modules whose array-API tests scipy-suite runs (the sample); --fast runs
# the test files of SCIPY_FAST, a few minutes in all, that pass on plaidarray.
SCIPY_MODULES = ("special", "stats", "fft", "signal", "cluster", "integrate", "optimize", "differentiate",
                 "interpolate", "spatial", "ndimage", "linalg")
SCIPY_FAST = (
    "scipy.cluster.tests.test_vq",
    "scipy.fft.tests.test_basic",
    "scipy.special.tests.test_logsumexp",
    "scipy.stats.tests.test_morestats",
    "scipy.signal.tests.test_windows",
    "scipy.ndimage.tests.test_filters",
)


@dataclass
class Counts:
    passed: int
    failed: int
    errors: int
    skipped: int
    seconds: float


def _keyword(namespace: str, fast: bool, suite: str) -> str:
    # array-api-extra also has an "array_api_strictest" backend: not the reference.
    expression = namespace if namespace == "plaidarray" else f"{namespace} and not strictest"
    return f"({expression}) and float64" if fast and suite == "sklearn" else expression


def _sklearn_modules(fast: bool) -> list[str]:
    if fast:
        return list(SKLEARN_FAST_MODULES)
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        sys.exit("clients/run.py: scikit-learn is not installed (pip install '.[clients]')")
    package = Path(spec.origin).parent
    modules = []
    for path in sorted(package.rglob("tests/test_*.py")):
        if any(marker in path.read_text(encoding="utf-8") for marker in SKLEARN_MARKERS):
            relative = path.relative_to(package.parent).with_suffix("")
            modules.append(".".join(relative.parts))
    return modules


def _extra_tests(workdir: Path) -> Path:
    """The tests/ directory of the installed array-api-extra's sdist, downloaded if absent."""
    version = importlib.metadata.version("array-api-extra")
    source = workdir / f"array_api_extra-{version}"
    if not (source / "tests").is_dir():
        archive = workdir / f"array_api_extra-{version}.tar.gz"
        if not archive.exists():
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary",
                            "array-api-extra", f"array-api-extra=={version}", "-d", str(workdir)],
                           check=True)
        with tarfile.open(archive) as tar:
            tar.extractall(workdir, filter="data")
    return source


def _command(suite: str, namespace: str, args: argparse.Namespace, report: Path) -> tuple[list[str], Path]:
    """The pytest command line and its working directory."""
    common = ["-q", "-p", "no:cacheprovider", "-p", "cache_report", "--tb=short", "-k", _keyword(namespace, args.fast, suite),
              f"--junitxml={report}"]
    if args.timeout and importlib.util.find_spec("pytest_timeout"):
        common.append(f"--timeout={args.timeout}")
    if suite == "sklearn":
        return ([sys.executable, "-m", "pytest", "-p", "sklearn_plugin", *common, *args.pytest_args,
                 "--pyargs", *_sklearn_modules(args.fast)], args.workdir)
    if suite == "scipy":
        return ([sys.executable, "-m", "pytest", *common, *args.pytest_args, str(HERE / "scipy_functions.py")],
                args.workdir)
    if suite == "scipy-suite":
        # Test ids relative to site-packages name the SciPy module (scipy.stats.tests....).
        site = Path(importlib.util.find_spec("scipy").origin).parents[1]  # type: ignore[arg-type,union-attr]
        targets = SCIPY_FAST if args.fast else tuple(f"scipy.{m}" for m in SCIPY_MODULES)
        return ([sys.executable, "-m", "pytest", "-p", "scipy_plugin", *common, "-m", "array_api_backends",
                 f"--rootdir={site}", *args.pytest_args, "--pyargs", *targets], args.workdir)
    source = _extra_tests(args.workdir)
    return ([sys.executable, "-m", "pytest", "-p", "extra_plugin", *common, *args.pytest_args,
             "tests/main"], source)


def _environment(namespace: str, cache_dir: str, cache_report: Path) -> dict[str, str]:
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE), env.get("PYTHONPATH")]))
    if namespace == "plaidarray":
        env["PLAIDARRAY_CACHE_DIR"] = cache_dir
        env["PLAIDARRAY_CLIENTS_CACHE_REPORT"] = str(cache_report)
    return env


def _compile_figures(cache_reports: dict[str, Path]) -> None:
    """plaidarray's compiles and disk loads per run; a warm run is flagged when the
    sources that key the cache changed since the run before it."""
    figures = {run: json.loads(path.read_text()) for run, path in cache_reports.items() if path.exists()}
    if not figures:
        return
    print(f"\n{'plaidarray run':<26}{'compiles':>10}{'disk loads':>12}{'kernels compiled':>18}{'kernels loaded':>16}")
    sources = None
    for run, f in figures.items():
        note = "  NOT WARM: plaidarray's sources changed since the first run" \
            if sources is not None and f["sources"] != sources else ""
        sources = sources or f["sources"]
        print(f"{run:<26}{f['compiles']:>10}{f['disk_hits']:>12}{f['kernel_compiles']:>18}{f['kernel_disk_hits']:>16}{note}")


def _counts(report: Path, seconds: float) -> Counts:
    suites = ET.parse(report).getroot().iter("testsuite")
    total = collections.Counter()
    for suite in suites:
        for key in ("tests", "failures", "errors", "skipped"):
            total[key] += int(suite.get(key, 0))
    passed = total["tests"] - total["failures"] - total["errors"] - total["skipped"]
    return Counts(passed, total["failures"], total["errors"], total["skipped"], seconds)


def _failure_messages(report: Path) -> collections.Counter[str]:
    """First line of each failure or error message, addresses and numbers blurred."""
    messages: collections.Counter[str] = collections.Counter()
    for case in ET.parse(report).getroot().iter("testcase"):
        for outcome in (*case.findall("failure"), *case.findall("error")):
            line = (outcome.get("message") or "").strip().splitlines()[0:1] or ["(no message)"]
            messages[re.sub(r"0x[0-9a-f]+|\d+(\.\d+)?", "#", line[0])[:200]] += 1
    return messages


@dataclass
class Case:
    module: str
    outcome: str  # passed, failed (or error), skipped
    seconds: float
    message: str


def _cases(report: Path) -> dict[str, Case]:
    """Each test of a scipy-suite report by its id with the namespace blanked (``xp``),
    so that the two namespaces' reports pair up."""
    cases = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        parts = (case.get("classname") or "").split(".")
        module = parts[1] if len(parts) > 2 and parts[0] == "scipy" else "(collection)"
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = "skipped" if tag == "skipped" else "failed"
                message = ((found.get("message") or "").strip().splitlines() or [""])[0][:300]
                break
        name = re.sub(r"\b(plaidarray|array_api_strict)\b", "xp", case.get("name") or "")
        cases[f"{case.get('classname')}::{name}"] = Case(module, outcome, float(case.get("time") or 0), message)
    return cases


def _scipy_figures(reports: dict[str, Path], workdir: Path) -> None:
    """Per module: passed, failed, skipped and test time of each run (``plaidarray, warm
    disk`` too); then the tests that pass on array_api_strict and fail on a plaidarray
    run, written to a file with the runs they fail in."""
    cases = {run: _cases(report) for run, report in reports.items()}
    modules = sorted({c.module for by_id in cases.values() for c in by_id.values()})
    print(f"\n{'module':<16}" + "".join(f"{run[:32]:>34}" for run in cases))
    print(f"{'':<16}" + f"{'passed':>10}{'failed':>8}{'skipped':>8}{'time':>8}" * len(cases))
    for module in modules:
        row = f"{module:<16}"
        for by_id in cases.values():
            mine = [c for c in by_id.values() if c.module == module]
            count = collections.Counter(c.outcome for c in mine)
            row += f"{count['passed']:>10}{count['failed']:>8}{count['skipped']:>8}{sum(c.seconds for c in mine):>7.0f}s"
        print(row)
    strict = cases.get("array_api_strict")
    plaid = {run: by_id for run, by_id in cases.items() if run.startswith("plaidarray")}
    if strict is None or not plaid:
        return
    differences: dict[str, list[tuple[str, Case]]] = {}
    for test, case in sorted(strict.items()):
        failing = [(run, by_id[test]) for run, by_id in plaid.items()
                   if case.outcome == "passed" and test in by_id and by_id[test].outcome == "failed"]
        if failing:
            differences[test] = failing
    out = workdir / "scipy-suite-differences.txt"
    out.write_text("".join(f"{test}\n" + "".join(f"    [{run}] {case.message}\n" for run, case in failing)
                           for test, failing in differences.items()), encoding="utf-8")
    by_module = collections.Counter(failing[0][1].module for failing in differences.values())
    print(f"\n{len(differences)} tests pass on array_api_strict and fail on a plaidarray run "
          f"({by_module.most_common()}); listed in {out}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("suite", choices=("sklearn", "extra", "scipy", "scipy-suite"))
    parser.add_argument("--fast", action="store_true", help="a representative subset, float64 only")
    parser.add_argument("--namespace", choices=(*NAMESPACES, "both"), default="both")
    parser.add_argument("--timeout", type=int, default=600, help="per-test limit (pytest-timeout), 0: none")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "plaidarray-clients",
                        help="downloads and reports (default: %(default)s)")
    parser.add_argument("--causes", type=int, default=15, help="failure messages shown per run")
    parser.add_argument("--warm", action="store_true",
                        help="run plaidarray a second time on the disk cache the first run filled")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest")
    args = parser.parse_args()
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)

    results: dict[str, tuple[Counts, collections.Counter[str]]] = {}
    reports: dict[str, Path] = {}
    cache_reports: dict[str, Path] = {}
    for namespace in NAMESPACES if args.namespace == "both" else (args.namespace,):
        with tempfile.TemporaryDirectory(prefix="plaidarray-cache-") as cache_dir:
            runs = ("", ", warm disk") if args.warm and namespace == "plaidarray" else ("",)
            for label in runs:  # a warm run finds the compiled code the first one stored
                report = args.workdir / f"{args.suite}-{namespace}{'-warm' if label else ''}.xml"
                cache_report = report.with_suffix(".cache.json")
                for stale in (report, cache_report):
                    stale.unlink(missing_ok=True)
                command, cwd = _command(args.suite, namespace, args, report)
                print(f"== {args.suite} on {namespace}{label}: {' '.join(command[:12])} ...", flush=True)
                start = time.perf_counter()
                # pytest's status is not ours: failures are the measurement.
                subprocess.run(command, cwd=cwd, env=_environment(namespace, cache_dir, cache_report), check=False)
                seconds = time.perf_counter() - start
                if not report.exists():
                    print(f"clients/run.py: pytest wrote no report for {namespace}{label}", file=sys.stderr)
                    return 1
                results[namespace + label] = (_counts(report, seconds), _failure_messages(report))
                reports[namespace + label] = report
                cache_reports[namespace + label] = cache_report

    print(f"\n{args.suite}{' --fast' if args.fast else ''}")
    print(f"{'namespace':<26}{'passed':>8}{'failed':>8}{'errors':>8}{'skipped':>9}{'wall':>10}")
    for namespace, (counts, _) in results.items():
        print(f"{namespace:<26}{counts.passed:>8}{counts.failed:>8}{counts.errors:>8}"
              f"{counts.skipped:>9}{counts.seconds:>9.0f}s")
    _compile_figures(cache_reports)
    if args.suite == "scipy-suite":
        _scipy_figures(reports, args.workdir)
    for namespace, (_, messages) in results.items():
        if messages and args.causes:
            print(f"\nmost common failures on {namespace} (JUnit reports in {args.workdir})")
            for message, count in messages.most_common(args.causes):
                print(f"{count:>6}  {message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
