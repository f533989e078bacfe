"""The installation's catalogue of op kernels: an op signature's shape-generic kernel,
found without making its HLO.

The baseline tier finds an op's kernel by its signature (``trace/baseline.py``): it ties
the signature's sizes into a pattern of run-time sizes, makes the op's shape-generic HLO,
describes and hashes it into the cache's key and reads that entry. For a kernel the
installation built, that was ~0.13 ms of an op's first use in a process, and a new script
makes ~20 first uses. So the installation's build records, for each signature it met, the
entry it found and the pattern (``record``), and after the build the records, with their
entries' metadata, become one file (``write``): a hash table that a process maps once and
reads one record of per signature (``find``: the signature written and hashed, a slot
read, the record's checksum checked and ``marshal``-loaded).

A signature's key is the hash of its values written out with their types (``_written``:
each value by its type and bits, whatever objects a signature shares; 1, 1.0 and True
apart, as 0.0 and -0.0, whose kernels may differ): two signatures share a key only if they
are equal. A signature holding a value of another
type is not found; nor is one the build never met, which the baseline tier then finds as
before. Where it is built, ``_catalogue.c`` writes and hashes the key, finds its slot,
checks the record and loads it in one call (the same bytes, the same hash), where four
steps of small Python objects were ~31-33 us of each first use among a script's other work
(~18 in C). The catalogue is read only where the installation is trusted
(``object_cache.installed_file``) and its header names this environment (plaidarray's
sources and version, llvmlite's, the target: an ``object_cache.entry_key``), and a record
only if its checksum, keyed by its signature's key, holds.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import mmap
import os
import struct
import threading
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ... import config
from ..llvm import object_cache

#: The catalogue among the installation's kernels.
CATALOGUE = "op-kernels.catalogue"
#: Where the installation's build keeps its records (``prebuild.py`` sets it); None elsewhere.
RECORDS_KEPT_IN: Path | None = None
#: The directory of records within an installation being built, removed once written.
RECORDS = "catalogue-records"
_MAGIC = b"PLAIDCAT"
_FORMAT = 2
#: magic, format, number of slots (a power of two), the environment's key (40 hex digits)
_HEADER = struct.Struct("<8sII40s")
#: a signature's key, its record's offset and length, the record's checksum keyed by the key
_SLOT = struct.Struct("<16sII16s")
_EMPTY = bytes(16)


#: ``_catalogue.c``, or None (``_written`` and ``_Catalogue.record`` run instead).
_C = config.c_module("plaidarray.backend.llvm_cpu._catalogue")


class Listed(NamedTuple):
    """A catalogued op kernel: its executable's entry key and metadata, its number of
    parameters, and the pattern of its run-time sizes (``dynamic.Pattern``'s
    ``symbol_of``, ``n_symbols`` and ``units``). A named tuple, as ``ListedKernel``."""

    key: str
    meta: dict[str, Any]
    n_params: int
    symbol_of: tuple[int | None, ...]
    n_symbols: int
    units: frozenset[int]


#: The NumPy dtypes written by their ``str`` (``_catalogue.c``'s ``STANDARD``); any other by its ``repr``.
STANDARD = "?bhilqBHILQefdgFDG"
#: The most tuples deep a written signature goes.
_DEPTH = 32


def _written(value: Any, out: bytearray, depth: int = 0) -> bool:
    """Writes ``value`` into ``out`` with its type (the form ``_catalogue.c`` describes);
    False where a value has no written form (another type, past ``_DEPTH`` tuples)."""
    kind = type(value)
    if kind is tuple:
        if depth >= _DEPTH:
            return False
        out += b"("
        if not all(_written(item, out, depth + 1) for item in value):
            return False
        out += b")"
    elif value is None or value is True or value is False:
        out += b"N" if value is None else b"T" if value else b"F"
    elif kind is int:
        if -(1 << 63) <= value < 1 << 63:
            out += b"i" + value.to_bytes(8, "little", signed=True)
        else:
            try:
                digits = str(value)
            except ValueError:  # past the digits Python writes out
                return False
            out += b"I" + digits.encode() + b";"
    elif kind is float:
        out += b"f" + struct.pack("<d", value)
    elif kind is complex:
        out += b"c" + struct.pack("<dd", value.real, value.imag)
    elif kind is str or kind is bytes or isinstance(value, np.dtype):
        if kind is str or kind is bytes:
            tag = b"s" if kind is str else b"b"
            text = value
        else:
            standard = len(value.char) == 1 and value.char in STANDARD
            tag, text = (b"d", value.str) if standard else (b"D", repr(value))
        try:
            data = text if type(text) is bytes else text.encode()
        except UnicodeEncodeError:  # a lone surrogate
            return False
        if len(data) > 0x7FFFFFFF:
            return False
        out += tag + len(data).to_bytes(4, "little") + data
    else:
        return False
    return True


def signature_key(signature: Hashable) -> bytes | None:
    """The key of an op signature (see the module), or None if a value has no written form."""
    if _C is not None:
        return _C.key(signature)
    out = bytearray()
    return hashlib.blake2b(out, digest_size=16).digest() if _written(signature, out) else None


def environment(target: str) -> str:
    """The key a catalogue's header holds: the environment its kernels were built in, for ``target``."""
    return object_cache.entry_key("op-catalogue", target)


def record(signature: Hashable, key: str, pattern: tuple[Sequence[int | None], int, frozenset[int]],
           n_params: int, target: str) -> None:
    """At the installation's build (``RECORDS_KEPT_IN``): note that the op kernel of
    ``signature`` is the executable entry ``key`` of ``n_params`` parameters, with the
    pattern (``symbol_of``, ``n_symbols``, ``units``), for ``write``."""
    directory = RECORDS_KEPT_IN
    found = signature_key(signature)
    if directory is None or found is None:
        return
    symbol_of, n_symbols, units = pattern
    directory.mkdir(exist_ok=True)
    line = json.dumps([found.hex(), key, list(symbol_of), n_symbols, sorted(units), n_params, environment(target)])
    with open(directory / f"records-{os.getpid()}.jsonl", "a") as out:
        out.write(line + "\n")


def write(directory: Path) -> int:
    """After the installation's build, once its executables' entries hold their kernels'
    metadata (``cache_entry.resolve``): the catalogue of the records the build kept, each
    with its entry's metadata (an entry that is gone, holds a payload, or that two records
    of one signature disagree on is left out). Returns the records written (0: no
    catalogue, where the build's processes recorded in different environments)."""
    kept = directory / RECORDS
    records: dict[str, tuple] = {}
    disagreed: set[str] = set()
    environments: set[str] = set()
    for path in sorted(kept.glob("records-*.jsonl")) if kept.is_dir() else ():
        for line in path.read_text().splitlines():
            try:
                digest, key, symbol_of, n_symbols, units, n_params, built_in = json.loads(line)
            except ValueError:  # a line a killed build process left half written
                continue
            environments.add(built_in)
            row = (key, tuple(symbol_of), n_symbols, tuple(units), n_params)
            if records.setdefault(digest, row) != row:
                disagreed.add(digest)
    import shutil  # the build's alone: not a process's import

    shutil.rmtree(kept, ignore_errors=True)
    (directory / CATALOGUE).unlink(missing_ok=True)
    if len(environments) != 1:
        return 0
    entries = {key: (code, meta) for key, code, meta in object_cache.installed_entries(directory)}
    rows = []
    for digest, (key, symbol_of, n_symbols, units, n_params) in sorted(records.items()):
        code, meta = entries.get(key, (b"", None))
        if digest not in disagreed and meta is not None and not code:
            rows.append((bytes.fromhex(digest), marshal.dumps((key, meta, n_params, symbol_of, n_symbols, units))))
    n_slots = 8
    while n_slots < 2 * len(rows):
        n_slots *= 2
    table = bytearray(n_slots * _SLOT.size)
    body = bytearray()
    start = _HEADER.size + len(table)
    for digest, data in rows:
        slot = _first_slot(digest, n_slots)
        while table[slot * _SLOT.size:slot * _SLOT.size + 16] != _EMPTY:
            slot = (slot + 1) % n_slots
        _SLOT.pack_into(table, slot * _SLOT.size, digest, start + len(body), len(data), _checksum(digest, data))
        body += data
    temporary = directory / (CATALOGUE + ".tmp")
    temporary.write_bytes(_HEADER.pack(_MAGIC, _FORMAT, n_slots, next(iter(environments)).encode()) + table + body)
    os.replace(temporary, directory / CATALOGUE)
    return len(rows)


def find(signature: Hashable, target: str) -> Listed | None:
    """The catalogued op kernel of ``signature`` for ``target``, or None (no catalogue, or
    not in it)."""
    catalogue = opened(target)
    return catalogue.find(signature) if catalogue is not None else None


def _first_slot(digest: bytes, n_slots: int) -> int:
    return int.from_bytes(digest[:8], "little") % n_slots


def _checksum(digest: bytes, data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=16, key=digest).digest()


class _Catalogue:
    """A catalogue file, mapped."""

    def __init__(self, memory: mmap.mmap, n_slots: int) -> None:
        self._memory = memory
        self._n_slots = n_slots

    def find(self, signature: Hashable) -> Listed | None:
        if _C is not None:
            return _listed(_C.find(self._memory, self._n_slots, _HEADER.size, signature))
        digest = signature_key(signature)
        return _listed(self.record(digest)) if digest is not None else None

    def record(self, digest: bytes) -> Any:
        """The record of the key ``digest``, loaded; None where it has none, or its record
        is out of the file, fails its checksum or does not load."""
        memory, n_slots = self._memory, self._n_slots
        slot = _first_slot(digest, n_slots)
        for _ in range(n_slots):
            found, offset, length, checksum = _SLOT.unpack_from(memory, _HEADER.size + slot * _SLOT.size)
            if found == digest:
                data = memory[offset:offset + length]
                if len(data) != length or _checksum(digest, data) != checksum:
                    return None
                try:
                    return marshal.loads(data)
                except (ValueError, EOFError, TypeError):
                    return None
            if found == _EMPTY:
                return None
            slot = (slot + 1) % n_slots
        return None


def _listed(record: Any) -> Listed | None:
    """A record's ``Listed``, or None where it is not one."""
    if type(record) is not tuple or len(record) != 6:
        return None
    key, meta, n_params, symbol_of, n_symbols, units = record
    if not (type(key) is str and type(meta) is dict and type(n_params) is int and type(n_symbols) is int
            and type(symbol_of) is tuple and type(units) is tuple):
        return None
    return Listed(key, meta, n_params, symbol_of, n_symbols, frozenset(units))


_lock = threading.Lock()
#: Catalogues by (installed directory, target), once opened; None where there is none of this environment.
_opened: dict[tuple[str, str], _Catalogue | None] = {}


def opened(target: str) -> _Catalogue | None:
    """The installation's catalogue for ``target``, mapped at its first use (the file
    and its directory checked then, ``object_cache.installed_file``, not at each lookup;
    the backend's import starts it, ``preload.py``): once opened, it is found again by
    the installation's path, where finding the directory (its owner and mode checked by a
    ``stat``) was ~4 us of each op kernel's first use. Switched off
    (``PLAIDARRAY_INSTALLED_KERNELS=0``), it is not read, as at each use."""
    if config.get("PLAIDARRAY_INSTALLED_KERNELS") != "1":
        return None
    found = _opened.get((str(object_cache.INSTALLED), target))
    if found is not None:
        return found
    directory = object_cache.installed_directory()
    if directory is None:
        return None
    where = (str(directory), target)
    if where not in _opened:
        with _lock:
            if where not in _opened:
                path = object_cache.installed_file(CATALOGUE)
                _opened[where] = _open(path, target) if path is not None else None
    return _opened[where]


def _open(path: str, target: str) -> _Catalogue | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        memory = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # empty, or not mappable
        return None
    finally:
        os.close(fd)
    if len(memory) < _HEADER.size:
        return None
    magic, version, n_slots, built_in = _HEADER.unpack_from(memory)
    if magic != _MAGIC or version != _FORMAT or built_in != environment(target).encode() or n_slots < 1 or \
            len(memory) < _HEADER.size + n_slots * _SLOT.size:
        return None
    return _Catalogue(memory, n_slots)
