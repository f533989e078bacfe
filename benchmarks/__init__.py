"""plaidarray's benchmarks: ``python -m benchmarks`` (see ``__main__.py``) and
``benchmarks/persistent_cache.py``."""
