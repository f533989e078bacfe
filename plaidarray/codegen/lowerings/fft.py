"""The target-neutral lowering of ``fft``: the expansion into ``dot_general``s, twiddle
multiplies and transposes that ``hlo/ops/fft.py`` builds (``expand``, an HLO-to-HLO
function that imports neither xDSL nor a backend). llvm-cpu rewrites most ``fft`` ops
with its own row kernel first (``backend/llvm_cpu/fft.py``)."""

from __future__ import annotations

from ...hlo.ops.fft import expand
from ..lowering import Expansion, register_lowering

register_lowering("fft", Expansion(expand))
