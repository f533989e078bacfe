"""Tests of the compiler and of its cache see every graph compiled fused at its first read."""

import pytest


@pytest.fixture(autouse=True)
def compiled_at_first_read(fused):
    """The ``fused`` fixture for every test here (the baseline tier would run graphs op by op)."""
