"""HLO-to-HLO passes, each a small named function ``Computation -> Computation``."""

from .pipeline import HLO_PASSES, run_hlo_passes

__all__ = ["HLO_PASSES", "run_hlo_passes"]
