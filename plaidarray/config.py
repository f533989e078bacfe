"""Every ``PLAIDARRAY_*`` setting, read and validated in one place.

Each setting is a row of ``SETTINGS``: its variable, how its text is parsed (a bad value
is a ValueError naming the variable and what it accepts, never a silent default), its
default, when it is read, and what it does. ``get`` reads one now; the modules that use a
setting call it (at import for the few that fix a process-wide structure, else at each
use, so a test or a program may change them). The user guide's table of settings is
generated from these rows (``markdown_table``; a test keeps the two equal).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any


def _count(text: str) -> int:
    """A non-negative integer."""
    value = int(text) if text.lstrip("+").isdigit() else -1
    if value < 0:
        raise ValueError("a non-negative integer")
    return value


def _milliseconds(text: str) -> float:
    """A non-negative number of milliseconds."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0.0 or value == float("inf"):
        raise ValueError("a non-negative number of milliseconds")
    return value


def _positive(text: str) -> int:
    value = int(text) if text.lstrip("+").isdigit() else 0
    if value == 0:
        raise ValueError("a positive integer")
    return value


def _choice(*options: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in options:
            raise ValueError(f"one of {', '.join(options)}")
        return text
    return parse


def _name(text: str) -> str:
    return text


def _path(text: str) -> Path:
    """A path; ``~`` and ``~user`` are expanded, and one that cannot be (no such user, no
    home directory) is refused."""
    try:
        return Path(text).expanduser()
    except RuntimeError as error:  # Path.expanduser: "Could not determine home directory"
        raise ValueError(f"a path whose ~ can be expanded ({error})") from None


def _half_the_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError):
        return 0


def _default_threads() -> int:
    """``OMP_NUM_THREADS``, which hosts running several tasks at once set for the libraries
    in each (a Dask worker sets 1), else the cores this process may run on."""
    text = os.environ.get("OMP_NUM_THREADS", "").strip()
    if text:
        try:
            return _positive(text)
        except ValueError as accepted:
            raise ValueError(f"OMP_NUM_THREADS must be {accepted}, got {text!r}") from None
    return available_cores()


def available_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/plaidarray``, else ``~/.cache/plaidarray``; for a user without a
    home directory (a container's arbitrary uid), ``plaidarray-<uid>`` in the temporary
    directory, which the persistent cache uses only if that user owns it."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base) / "plaidarray"
    try:
        return Path.home() / ".cache" / "plaidarray"
    except RuntimeError:
        import tempfile

        return Path(tempfile.gettempdir()) / f"plaidarray-{os.geteuid()}"


#: The revisions of the Array API standard plaidarray can follow (``api_version.py``).
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


@dataclass(frozen=True)
class Setting:
    """One variable: ``parse`` turns its text into a value or raises ValueError saying
    what it accepts; ``default`` is the value (or a function giving it) when unset or
    empty; ``read`` says when it takes effect; ``doc`` what it does."""

    name: str
    parse: Callable[[str], Any]
    default: Any
    read: str
    doc: str
    shown_default: str = ""

    def value(self) -> Any:
        data = getattr(os.environ, "_data", None)
        raw = data.get(_ENCODED[self.name]) if _BYTES_ENVIRONMENT and type(data) is dict else os.environ.get(self.name)
        parsed = _PARSED.get((self.name, raw), _UNPARSED)
        if parsed is not _UNPARSED:
            return parsed
        text = (os.fsdecode(raw) if type(raw) is bytes else raw or "").strip()
        if not text:
            if callable(self.default):
                return self.default()
            parsed = self.default
        else:
            parsed = self._parsed(text)
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.clear()
        _PARSED[self.name, raw] = parsed
        return parsed

    def _parsed(self, text: str) -> Any:
        try:
            value = self.parse(text)
        except ValueError as accepted:
            raise ValueError(f"{self.name} must be {accepted}, got {text!r}") from None
        return value


#: Settings' values by (name, text): some are read at every read of a value, and parsing
#: their text again each time cost microseconds. A default computed when asked is not kept
#: (it may depend on the machine or the environment at the time, as the cache directory's
#: does).
_PARSED: dict[tuple[str, str | bytes | None], Any] = {}
_PARSED_MAX = 256
_UNPARSED = object()


_ROWS = (
    Setting("PLAIDARRAY_BACKEND", _name, None, "at import",
            "the backend arrays compute on (default: the registered backend of highest priority, llvm-cpu); "
            "`plaidarray.set_backend` changes it", "llvm-cpu"),
    Setting("PLAIDARRAY_API_VERSION", _choice(*API_VERSIONS), API_VERSIONS[-1],
            "at import", "the revision of the Array API standard followed; `plaidarray.set_array_api_version` "
            "changes it"),
    Setting("PLAIDARRAY_CPU_DEVICES", _positive, 1, "at import",
            "the host's CPU devices: `cpu`, then `cpu:1`, `cpu:2`... (the same memory and code; arrays on two of "
            "them do not mix, `to_device` copies: device semantics tested on one machine)"),
    Setting("PLAIDARRAY_SIMULATED_GPUS", _count, 0, "at first use",
            "simulated NVIDIA GPUs in place of the real ones: `cuda`, `cuda:1`... run the GPU tier's PTX on the host, "
            "lanes in lockstep (docs/gpu.md); for tests without a GPU"),
    Setting("PLAIDARRAY_DEVICE", _name, "cpu", "at first use",
            "the default device (`cpu`, or `cpu:1` with `PLAIDARRAY_CPU_DEVICES=2`...); "
            "`plaidarray.set_default_device` changes it"),
    Setting("PLAIDARRAY_MAX_PENDING", _count, 32, "at import",
            "the depth of pending ops past which a recorded op runs at once (0: no bound)"),
    Setting("PLAIDARRAY_AUTOMATIC_DYNAMIC", _choice("0", "1"), "1", "at each compile",
            "1 compiles a graph that comes back with other sizes once more with its sizes as run-time values, "
            "for every later size (a small graph from its first compile); 0 compiles each size for itself"),
    Setting("PLAIDARRAY_PURE_PYTHON", _choice("0", "1"), "0", "at import",
            "1 records nodes, walks pending graphs, calls executables and checks the sources' stamp in Python "
            "even where the C modules (`trace/_graph.c`, `backend/llvm_cpu/_entry.c`, `backend/llvm/_stats.c`) "
            "are built"),
    Setting("PLAIDARRAY_FREEZE_AT_IMPORT", _choice("0", "1"), "1", "at import",
            "1 has the cyclic garbage collector ignore every object that exists when plaidarray's import ends "
            "(`gc.freeze`: the modules of NumPy, llvmlite and plaidarray, which its collections walked "
            "again and again); cyclic garbage made before the import is then never freed; 0 does not"),
    Setting("PLAIDARRAY_GC_THRESHOLD", _count, 10_000, "at import",
            "the cyclic garbage collector's youngest-generation threshold (`gc.set_threshold`), raised at import "
            "to at least this: planning and recording a script's graphs makes thousands of short-lived "
            "containers and no cyclic garbage, and a collection each 700 of them (CPython's default) walked "
            "them again and again; 0 leaves the threshold as it is", "`10000`"),
    Setting("PLAIDARRAY_EXPLAIN_COMPILES", _choice("0", "1"), "0", "at import",
            "1 logs every compile with its reason to standard error"),
    Setting("PLAIDARRAY_DUMP", _path, None, "at each compile",
            "a directory where every compiled module's stages and timings are written", "off"),
    Setting("PLAIDARRAY_CACHE_SIZE", _count, 2048, "at import",
            "executables kept in memory (least recently used evicted first, by CLOCK; 0 keeps none)"),
    Setting("PLAIDARRAY_CACHE_DIR", _path, _default_cache_dir, "at each use",
            "the persistent compile cache's directory (used only if it is yours alone: see docs/reliability.md)",
            "`$XDG_CACHE_HOME/plaidarray`, else `~/.cache/plaidarray`"),
    Setting("PLAIDARRAY_CACHE_MAX_BYTES", _count, 2 << 30, "at each use",
            "the persistent cache's size cap (least recently used entries go; 0 turns it off)", "2 GiB"),
    Setting("PLAIDARRAY_INSTALLED_KERNELS", _choice("0", "1"), "1", "at each use",
            "1 reads the op kernels built at installation (`plaidarray/_kernels`, before the persistent cache); "
            "0 does not"),
    Setting("PLAIDARRAY_OPT_LEVEL", _choice("0", "1", "2", "3"), "3", "when llvm-cpu is first used",
            "LLVM's optimisation level"),
    Setting("PLAIDARRAY_TIER_UP_MS", _milliseconds, 10.0, "at import",
            "milliseconds an executable's runs may spend in first-tier code before its full code is generated "
            "(0: full code at once)", "`10`"),
    Setting("PLAIDARRAY_FUSE_AFTER_MS", _milliseconds, 200.0, "at import",
            "milliseconds a graph structure may run op by op on per-op kernels (the baseline tier) before it is "
            "compiled fused, in the background (0: every graph compiled fused at its first read)", "`200`"),
    Setting("PLAIDARRAY_INPROCESS_COMPILES", _count, 64, "at each compile",
            "compiles LLVM optimises in this process before moving to a code generator process"),
    Setting("PLAIDARRAY_CODEGEN_MAX_BYTES", _count, _half_the_memory, "when a code generator process starts",
            "the address space a code generator process may use (0: no cap)", "half the machine's memory"),
    Setting("PLAIDARRAY_POOL_BYTES", _count, 512 << 20, "at each use",
            "free memory the buffer pool keeps for reuse", "512 MiB"),
    Setting("PLAIDARRAY_NUM_THREADS", _positive, _default_threads, "at each run",
            "threads a kernel runs on (default: `OMP_NUM_THREADS`, else the cores this process may use)",
            "`OMP_NUM_THREADS`, else the cores"),
)

SETTINGS: dict[str, Setting] = {row.name: row for row in _ROWS}

#: Whether the environment is read from the table ``os.environ`` keeps (its ``_data``:
#: bytes by bytes on POSIX, the same table its mapping reads and writes), by each
#: variable's name encoded once: a setting read at each use (three at each op kernel's
#: first use) went through the mapping's encoding and decoding, ~7-20 us a read in a new
#: process. Elsewhere, or where it keeps another table, through the mapping.
_BYTES_ENVIRONMENT = os.name == "posix"
_ENCODED: dict[str, bytes] = {name: os.fsencode(name) for name in SETTINGS}


def get(name: str) -> Any:
    """The value of setting ``name`` now (ValueError naming it if its text is bad)."""
    return SETTINGS[name].value()


def c_module(name: str) -> ModuleType | None:
    """The C module ``name`` of plaidarray's (``pyproject.toml``'s ``ext-modules``), imported,
    where it is built and ``PLAIDARRAY_PURE_PYTHON`` does not switch it off; else None, and
    its Python definition runs instead."""
    if get("PLAIDARRAY_PURE_PYTHON") == "1":
        return None
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def markdown_table() -> str:
    """The user guide's table of settings."""
    rows = ["| variable | default | read | what it does |", "|---|---|---|---|"]
    for s in _ROWS:
        default = s.shown_default or f"`{s.default}`"
        rows.append(f"| `{s.name}` | {default} | {s.read} | {s.doc} |")
    return "\n".join(rows) + "\n"
