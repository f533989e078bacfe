"""Types of ``_stats.c``; ``sources.stats_in_python`` is its Python definition."""

from collections.abc import Sequence

def stats(paths: Sequence[str], /) -> list[tuple[int, int]] | None: ...
