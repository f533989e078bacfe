"""The digest of plaidarray's sources, which every persistent cache key holds, and the
stamp that lets a process take it without reading them.

A key names the compiler that made an entry by a digest of all its ``.py`` files (names
and contents), so a changed compiler misses old entries even before its version number
changes. Every process whose code is all cached waits for the digest once: 2-4 ms of
reading and hashing 160 files, a third of a script's first read when everything else
is loaded from the kernels built at installation.

So the installation (``prebuild.py``) also writes a stamp beside its kernels: each
source file's size and modification time, and their digest. A process whose sources
stat the same takes the stamp's digest, as Python takes a ``.pyc`` whose source's size
and modification time it records: 0.7-1 ms of ``stat`` calls, made in C without the GIL
(``_stats.c``) on a thread that the package's import starts
(``object_cache.check_stamps_in_background``), so a first read seldom waits for them. A file modified less
than ``RACY_SECONDS`` before the stamp was written may change again within the
resolution of its file system's timestamps without changing them: then the stamp is
not used (git's "racy" index entries). Any difference, a file removed, an unreadable
stamp: the sources are read and hashed as without a stamp; where they hash to the stamp's
digest, the stamp is written anew with their stats of now (git refreshes its index so),
if this process's user owns it. A wheel's installer gives every file the time it
installs it, so the stamp written at the build never matched an installation's sources:
each process read them all. Now the first process after an installation does, and
writes the stamp the later ones take. A file added is no
difference: plaidarray imports no module it does not name (nothing lists its
directories), so a new file changes no code until a stamped file imports it, and walking
the directories to find one took as long as the ``stat`` calls.

The installation stamps its toolchain too: llvmlite's version, which keys carry, with
a digest of the file that defines it. A process whose llvmlite (found where an import
would find it, not imported) has a version file of that digest takes the stamped
version: importing llvmlite to read it was 0.35-0.45 ms of every process's first read.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from ... import config

#: The stamp's file name in the kernels' directory.
STAMP = "sources.json"
#: Files modified this close before the stamp was written make it unusable.
RACY_SECONDS = 2.0


def _files(root: Path, excluded: str) -> list[str]:
    """The ``.py`` files under ``root``, sorted, leaving out bytecode directories and the
    directory ``excluded`` (the built kernels: thousands of entries, no sources)."""
    files: list[str] = []
    directories = [str(root)]
    while directories:
        with os.scandir(directories.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in ("__pycache__", excluded):
                        directories.append(entry.path)
                elif entry.name.endswith(".py"):
                    files.append(entry.path)
    return sorted(files)


def sources_digest(root: Path, excluded: str) -> str:
    """A digest of the ``.py`` files under ``root`` (names and contents): all of them,
    not only the packages that lower HLO (a list of those went stale once: codegen/ was
    split out of backend/ and left out). Read with ``os`` calls rather than file objects
    and hashed by SHA-256, which x86-64 and AArch64 compute in hardware (half BLAKE2's
    time here)."""
    digest = hashlib.sha256()
    start = len(str(root)) + 1
    for path in _files(root, excluded):
        digest.update(path[start:].replace(os.sep, "/").encode())
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            wanted = os.fstat(fd).st_size + 1  # one read to the end of the file
            while part := os.read(fd, wanted):
                digest.update(part)
                if len(part) < wanted:
                    break
        finally:
            os.close(fd)
    return digest.hexdigest()[:32]


def source_stats(root: Path, excluded: str) -> list[list]:
    """Each source file's path under ``root`` ('/'-separated), size and modification
    time in nanoseconds, in ``sources_digest``'s order."""
    start = len(str(root)) + 1
    stats = []
    for path in _files(root, excluded):
        st = os.stat(path)
        stats.append([path[start:].replace(os.sep, "/"), st.st_size, st.st_mtime_ns])
    return stats


def write_stamp(directory: Path, root: Path, excluded: str, expected: str | None = None) -> bool:
    """Write the stamp of the sources under ``root`` into ``directory`` (the kernels just
    built from them); False, and no stamp, if a source changed while it was made, or they
    do not hash to ``expected`` (if given)."""
    return _stamped_now(directory, root, excluded, expected)[1]


def restamped_digest(root: Path, excluded: str, stamp: str | None) -> str:
    """The digest of the sources under ``root``, read and hashed; the stamp at ``stamp``
    (a trusted file, or None) written anew with the sources' stats of now if it holds that
    digest, this process's user owns its directory, and no source changed meanwhile."""
    if stamp is None:
        return sources_digest(root, excluded)
    directory = Path(stamp).parent
    try:
        ours = directory.stat().st_uid == os.geteuid()
    except OSError:
        ours = False
    if not ours:
        return sources_digest(root, excluded)
    return _stamped_now(directory, root, excluded, _read_stamp(stamp)[0])[0]


def _stamped_now(directory: Path, root: Path, excluded: str, expected: str | None) -> tuple[str, bool]:
    """The digest of the sources under ``root``, and whether it was stamped into
    ``directory`` (replacing a stamp atomically, mode 0644): if they stat the same before
    and after and hash to ``expected`` (None: whatever they hash to)."""
    before = source_stats(root, excluded)
    digest = sources_digest(root, excluded)
    written = time.time_ns()
    if source_stats(root, excluded) != before or expected not in (None, digest):
        return digest, False
    text = json.dumps({"digest": digest, "written_ns": written, "files": before}).encode()
    temporary = directory / f".{STAMP}.{os.getpid()}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        try:
            os.fchmod(fd, 0o644)
            os.write(fd, text)
        finally:
            os.close(fd)
        os.replace(temporary, directory / STAMP)
    except OSError:
        return digest, False
    finally:  # gone once replaced; an error or an interrupt (Ctrl-C) before leaves none either
        temporary.unlink(missing_ok=True)
    return digest, True


def _read_stamp(stamp: str) -> tuple[str | None, int, list]:
    """A stamp's digest (None if it cannot be read), time written and files."""
    try:
        with open(stamp, "rb") as f:
            found = json.loads(f.read())
        digest, written, files = found["digest"], int(found["written_ns"]), found["files"]
    except (OSError, ValueError, KeyError, TypeError):
        return None, 0, []
    if not isinstance(digest, str) or not isinstance(files, list):
        return None, 0, []
    return digest, written, files


def stamped_digest(root: Path, excluded: str, stamp: str | None) -> str | None:
    """The digest the stamp at ``stamp`` (a trusted file, or None) holds if the sources
    under ``root`` stat as it says and none was modified racily close before it; else
    None (the caller reads the sources)."""
    if stamp is None:
        return None
    digest, written, files = _read_stamp(stamp)
    if digest is None:
        return None
    racy = written - int(RACY_SECONDS * 1e9)
    base = os.path.join(str(root), "")
    try:
        found = stats([base + path for path, _, _ in files])
        if found is None:
            return None
        for (_, size, mtime), (size_now, mtime_now) in zip(files, found):
            if mtime_now != mtime or size_now != size or mtime >= racy:
                return None
    except (ValueError, TypeError):
        return None
    return digest


def stats_in_python(paths: list[str]) -> list[tuple[int, int]] | None:
    """The size and modification time (ns) of each file, or None if one cannot be
    stat'ed: ``_stats.stats``'s definition, and what runs where it is not built."""
    try:
        return [(st.st_size, st.st_mtime_ns) for st in map(os.stat, paths)]
    except OSError:
        return None


def _stats_in_c() -> Callable[[list[str]], list[tuple[int, int]] | None] | None:
    """``_stats.stats`` (``_stats.c``: the calls without the GIL) when it is built and
    ``PLAIDARRAY_PURE_PYTHON`` does not switch it off, else None."""
    module = config.c_module("plaidarray.backend.llvm._stats")
    return module.stats if module is not None else None


#: The stats of files in C, or None (``stats_in_python`` runs instead).
STATS_IN_C = _stats_in_c()
stats: Callable[[list[str]], list[tuple[int, int]] | None] = STATS_IN_C or stats_in_python


#: The toolchain's stamp's file name in the kernels' directory.
TOOLCHAIN_STAMP = "toolchain.json"
#: The packages whose versions the toolchain's stamp records.
TOOLCHAIN = ("llvmlite",)


def _version_file(name: str) -> str | None:
    """The file that defines the version of the package ``name`` that an import would
    load (its ``_version.py``, as versioneer writes it), found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "_version.py")


def _file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def write_toolchain_stamp(directory: Path) -> None:
    """Write the toolchain's stamp into ``directory``: each package's version as its
    import gives it, and a digest of its version file (not its path: an installation
    builds its kernels in pip's build environment, whose llvmlite is another copy)."""
    found = {}
    for name in TOOLCHAIN:
        module = importlib.import_module(name)
        path = _version_file(name)
        if path is not None and os.path.isfile(path):
            found[name] = [module.__version__, _file_digest(path)]
    (directory / TOOLCHAIN_STAMP).write_text(json.dumps(found))


def stamped_version(name: str, stamp: str | None) -> str | None:
    """The version of the package ``name`` that the toolchain's stamp at ``stamp`` (a
    trusted file, or None) records, if the package an import would load has a version
    file of the stamped digest (the file defines the version); else None (the caller
    imports it)."""
    if stamp is None:
        return None
    try:
        with open(stamp, "rb") as f:
            version, digest = json.loads(f.read())[name]
        path = _version_file(name)
        if not isinstance(version, str) or path is None:
            return None
        return version if _file_digest(path) == digest else None
    except (OSError, ValueError, KeyError, TypeError, ImportError):
        return None
