"""One configuration module: every PLAIDARRAY_* setting is read and checked there, bad
values are errors naming the variable, and the user guide's table is generated from it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from plaidarray import config
from jit_helpers import REPO

ROOT = REPO

#: A value each kind of setting refuses.
BAD = {"PLAIDARRAY_API_VERSION": "2020.01", "PLAIDARRAY_EXPLAIN_COMPILES": "yes", "PLAIDARRAY_OPT_LEVEL": "4",
       "PLAIDARRAY_NUM_THREADS": "0", "PLAIDARRAY_TIER_UP_MS": "soon"}
COUNTS = ["PLAIDARRAY_MAX_PENDING", "PLAIDARRAY_CACHE_SIZE", "PLAIDARRAY_CACHE_MAX_BYTES",
          "PLAIDARRAY_INPROCESS_COMPILES", "PLAIDARRAY_CODEGEN_MAX_BYTES", "PLAIDARRAY_POOL_BYTES"]


@pytest.mark.parametrize("name", [*BAD, *COUNTS])
def test_a_bad_value_is_an_error_naming_the_variable(monkeypatch, name):
    monkeypatch.setenv(name, BAD.get(name, "-1"))
    with pytest.raises(ValueError, match=rf"^{name} must be .+, got '{re.escape(BAD.get(name, '-1'))}'$"):
        config.get(name)


@pytest.mark.parametrize("name", COUNTS)
def test_counts_parse_and_unset_gives_the_default(monkeypatch, name):
    monkeypatch.setenv(name, " 7 ")
    assert config.get(name) == 7
    monkeypatch.setenv(name, "")
    default = config.SETTINGS[name].default
    assert config.get(name) == (default() if callable(default) else default)


def test_a_setting_read_at_each_use_follows_every_change_of_the_environment(monkeypatch, tmp_path):
    """Read again and again (its values kept by their text), a setting is what the
    environment says now: set, changed, emptied, unset, set through ``os.environ`` or
    ``monkeypatch``, a path's ``~`` expanded, the cache directory's default following
    ``XDG_CACHE_HOME``."""
    import os

    name = "PLAIDARRAY_DUMP"
    monkeypatch.delenv(name, raising=False)
    assert [config.get(name) for _ in range(3)] == [None] * 3
    monkeypatch.setenv(name, str(tmp_path / "a"))
    assert config.get(name) == tmp_path / "a"
    os.environ[name] = str(tmp_path / "b")
    assert config.get(name) == tmp_path / "b" and config.get(name) == tmp_path / "b"
    monkeypatch.setenv(name, "~/dumps")
    assert config.get(name) == Path("~/dumps").expanduser()
    monkeypatch.setenv(name, "  ")
    assert config.get(name) is None
    del os.environ[name]
    assert config.get(name) is None
    monkeypatch.delenv("PLAIDARRAY_CACHE_DIR", raising=False)
    for where in ("x", "y"):
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / where))
        assert config.get("PLAIDARRAY_CACHE_DIR") == tmp_path / where / "plaidarray"


@pytest.mark.parametrize("text, refused", [("2.5", False), ("0", False), ("-1", True), ("nan", True), ("inf", True)])
def test_milliseconds_take_fractions_and_refuse_what_is_no_duration(monkeypatch, text, refused):
    monkeypatch.setenv("PLAIDARRAY_TIER_UP_MS", text)
    if refused:
        with pytest.raises(ValueError, match="^PLAIDARRAY_TIER_UP_MS must be a non-negative number of milliseconds"):
            config.get("PLAIDARRAY_TIER_UP_MS")
    else:
        assert config.get("PLAIDARRAY_TIER_UP_MS") == float(text)


def test_threads_follow_omp_num_threads_and_refuse_a_bad_one(monkeypatch):
    monkeypatch.delenv("PLAIDARRAY_NUM_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert config.get("PLAIDARRAY_NUM_THREADS") == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "x")
    with pytest.raises(ValueError, match="^OMP_NUM_THREADS must be a positive integer"):
        config.get("PLAIDARRAY_NUM_THREADS")


def test_the_user_guide_table_is_the_generated_one():
    assert config.markdown_table() in (ROOT / "docs" / "user-guide.md").read_text()


def test_no_other_module_reads_a_plaidarray_variable():
    """Reads go through config.get (the CLI sets PLAIDARRAY_DUMP for a child; the code
    generator process reads the cap its parent set, importing nothing of plaidarray)."""
    readers = {}
    for path in sorted((ROOT / "plaidarray").rglob("*.py")):
        text = path.read_text()
        found = re.findall(r"(?:environ(?:\.get)?[\[(]|getenv\()\s*[\"'](PLAIDARRAY_\w+)", text)
        if found and path.name != "config.py":
            readers[str(path.relative_to(ROOT))] = found
    assert readers == {}


def test_every_setting_is_documented_once_in_the_table():
    table = config.markdown_table()
    assert [line.split("`")[1] for line in table.splitlines()[2:]] == list(config.SETTINGS)
