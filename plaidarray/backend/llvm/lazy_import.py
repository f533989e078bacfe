"""The code generator's import, made at a process's first compile (both LLVM backends).

A process that finds every kernel built never imports xDSL and the lowering modules
(0.4-0.6 s), so each compiler imports its ``stages`` module at its first compile. A
Ctrl-C that lands during that import may land inside a class body's ``__set_name__``
(xDSL's dataclasses), and Python 3.11 raises a ``RuntimeError`` ("Error calling
__set_name__") caused by the ``KeyboardInterrupt``, which ``except KeyboardInterrupt:``
does not catch: the interrupt is raised as itself. (Python 3.12 raises it unwrapped.) The
import is left as Python leaves an interrupted one: a later compile imports again.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def imported(load: Callable[[], Any]) -> Any:
    """``load()`` (an import), an interrupt during it raised as a ``KeyboardInterrupt``."""
    try:
        return load()
    except RuntimeError as error:
        if isinstance(error.__cause__, KeyboardInterrupt):
            raise error.__cause__ from None
        raise
