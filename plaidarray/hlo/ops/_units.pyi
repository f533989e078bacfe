"""Types of ``_units.c``. Its Python definition: ``fft._unit_parts``."""

from typing import Any

def unit_parts(turns: Any, n: Any, quarter_turn: bytes, re: Any, im: Any, /) -> bool: ...
