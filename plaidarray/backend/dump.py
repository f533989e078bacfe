"""``PLAIDARRAY_DUMP=<dir>``: write every compiled module's stages to ``<dir>``.

Files are ``<module>.<stage>.<ext>``: ``hlo.txt`` (after the HLO passes), ``linalg.mlir``
(xDSL's printer), ``ll`` (optimised LLVM IR) and ``s`` (assembly).
"""

from __future__ import annotations

from pathlib import Path

from .. import config


def dump_dir() -> Path | None:
    return config.get("PLAIDARRAY_DUMP")


def dump(module_name: str, stage: str, text: str | None) -> None:
    """Write one stage's text if dumping is on (``text`` may be None when it is off)."""
    directory = dump_dir()
    if directory is None or text is None:
        return
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{module_name}.{stage}").write_text(text)
