"""docs/coverage.md is what ``tools/coverage.py`` makes of plaidarray now: a name added or
lost, a signature changed, or a note edited by hand in the page alone fails here."""

from __future__ import annotations

import importlib.util

from jit_helpers import REPO


def test_the_coverage_page_is_the_generators_output():
    spec = importlib.util.spec_from_file_location("coverage_tool", REPO / "tools" / "coverage.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert (REPO / "docs" / "coverage.md").read_text() == tool.render(), "run python tools/coverage.py"
