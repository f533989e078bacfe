"""CPU features as LLVM names them and as Linux reports them (``/proc/cpuinfo``), so that
code generated for some features is refused, not run into SIGILL, on a machine without
one of them, and checked without LLVM.

Most of LLVM's x86 feature names are Linux's flags with ``_`` for ``.``; :data:`LINUX_NAMES`
lists the others. An exported library is generated only with features that this check
can see (:func:`verifiable`): any other is switched off, since nothing could tell
whether a machine loading the library has it.
"""

from __future__ import annotations

import platform

#: LLVM's name -> Linux's flag, where they differ beyond ``.`` for ``_`` (x86: the
#: ``flags`` line; AArch64: ``Features``).
LINUX_NAMES = {
    "64bit": "lm", "sse3": "pni", "bmi": "bmi1", "lzcnt": "abm", "pclmul": "pclmulqdq", "prfchw": "3dnowprefetch",
    "rdrnd": "rdrand", "sahf": "lahf_lm", "sha": "sha_ni", "crc32": "sse4_2", "shstk": "user_shstk",
    "x87": "fpu", "avxvnni": "avx_vnni", "avxifma": "avx_ifma", "avxvnniint8": "avx_vnni_int8",
    "avxneconvert": "avx_ne_convert", "avx512vnni": "avx512_vnni", "avx512bf16": "avx512_bf16",
    "avx512bitalg": "avx512_bitalg", "avx512vbmi2": "avx512_vbmi2", "avx512vp2intersect": "avx512_vp2intersect",
    "avx512vpopcntdq": "avx512_vpopcntdq", "avx512fp16": "avx512_fp16",
    "neon": "asimd", "fp-armv8": "fp", "crypto": "aes", "rcpc": "lrcpc", "dotprod": "asimddp",
    "fullfp16": "fphp", "rdm": "asimdrdm", "lse": "atomics", "ssbs": "ssbs",
}


def linux_name(feature: str) -> str:
    """Linux's name of the LLVM feature ``feature`` (without its ``+``)."""
    return LINUX_NAMES.get(feature, feature.replace(".", "_").replace("-", "_"))


def machine_features() -> set[str] | None:
    """This machine's CPU features as Linux names them; None where /proc/cpuinfo does not
    say (not Linux)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return None
    found: set[str] = set()
    for line in text.split("\n\n", 1)[0].splitlines():
        name, _, value = line.partition(":")
        if name.strip() in ("flags", "Features"):
            found.update(value.split())
        elif name.strip() == "isa":  # RISC-V: rv64imafdc_zicsr...: the single-letter extensions
            base = value.strip().split("_", 1)[0]
            found.update(base[4:] if base.startswith("rv") else ())
    return found


def enabled(features: str) -> list[str]:
    """The features a feature string (``+a,-b,+c``) switches on, without their ``+``."""
    return [f[1:] for f in features.split(",") if f.startswith("+")]


def verifiable(features: str, machine: set[str]) -> str:
    """``features`` with every feature ``machine`` (Linux's names) does not list
    switched off: what a library that a loader can check is generated with."""
    kept = [f"+{f}" if linux_name(f) in machine else f"-{f}" for f in enabled(features)]
    return ",".join(kept + [f for f in features.split(",") if f.startswith("-")])


def missing(required: list[str], architecture: str) -> list[str]:
    """Which of the LLVM features ``required`` by code for ``architecture`` this machine
    lacks (all of them, named as a whole, on a machine of another architecture)."""
    if platform.machine() != architecture:
        return [f"an {architecture} processor (this machine has {platform.machine()})"]
    machine = machine_features()
    if machine is None:
        return []
    return [f for f in required if linux_name(f) not in machine]
