"""A shape-generic executable loaded from a cache entry takes what its runs at any size read
(its layout, static splitting, sizes program and plan) from the entry's encoded sizes in C
(``_entry.entry_runs``, ``ShapeGenericExecutable._from_entry``): the same words as those made
from its decoded polynomials in Python, for every op kernel the installation lists, and
runs that compute what NumPy does."""

from __future__ import annotations

import os

import numpy as np
import pytest

import plaidarray as xp
from plaidarray.backend import registry
from plaidarray.backend.llvm_cpu import cache_entry, op_catalogue, tiering
from plaidarray.backend.llvm_cpu import executable as cpu_executable

pytestmark = pytest.mark.skipif(cpu_executable._ENTRY is None or os.environ.get("PLAIDARRAY_PURE_PYTHON") == "1",
                                reason="the words are made by the C module _entry, not loaded here")


def _records(monkeypatch: pytest.MonkeyPatch) -> list[op_catalogue.Listed]:
    """Every record of the installation's catalogue (read here, where the suite switches
    the installed kernels off), its slots walked."""
    monkeypatch.setenv("PLAIDARRAY_INSTALLED_KERNELS", "1")
    target = registry.get("llvm-cpu").compiler.target
    catalogue = op_catalogue.opened(target)
    if catalogue is None:
        pytest.skip("no installed catalogue for this environment (its kernels are not built)")
    found = []
    for slot in range(catalogue._n_slots):
        at = op_catalogue._HEADER.size + slot * op_catalogue._SLOT.size
        digest = op_catalogue._SLOT.unpack_from(catalogue._memory, at)[0]
        if digest != op_catalogue._EMPTY:
            listed = op_catalogue._listed(catalogue.record(digest))
            assert listed is not None
            found.append(listed)
    return found


def _loaded(record: op_catalogue.Listed) -> cpu_executable.ShapeGenericExecutable:
    compiler = registry.get("llvm-cpu").compiler
    made = cache_entry.from_entry(b"", record.meta, record.n_params, None, compiler.target, compiler.opt_level)
    assert isinstance(made, cpu_executable.ShapeGenericExecutable)
    return made


def test_every_listed_kernel_takes_the_words_python_makes(monkeypatch):
    """For each catalogued op kernel (its steps' ranges static or sized, buffers static or
    sized, derived sizes, limits, imported routines), the words made in C from its entry
    are those its decoded template makes in Python."""
    records = _records(monkeypatch)
    imports = 0
    for record in records:
        python, c = _loaded(record), _loaded(record)
        assert c.stored is not None
        n = record.n_symbols
        c._from_entry(n)
        assert c.stored is None and "_layout" in vars(c), record.key
        n_table = n + len(python.derived)
        assert c._layout == python._layout, record.key
        assert c._static_splitting == python._static_splitting, record.key
        assert c._program == (n, python._sizes_program(n)), record.key
        assert c._words == (tiering.generation, n_table, python.plan_words(n_table)), record.key
        imports += any(step.imports for step in python.steps)
    assert len(records) > 1000 and imports > 50


def test_an_entry_not_of_the_form_is_left_to_python(monkeypatch):
    """Sizes that are not ``symbolic.encode``'s form, or a static buffer past int64, make
    nothing in C (the template makes its words in Python), and nothing is raised."""
    record = next(r for r in _records(monkeypatch) if r.n_symbols and r.meta["output_shapes"])
    steps, outputs, temps = record.meta["steps"], record.meta["output_shapes"], record.meta["temp_shapes"]
    template = _loaded(record)
    arguments = [[s.kernel.address for s in template.steps], [[] for _ in template.steps], record.n_symbols, 1 << 20]
    itemsizes = [8] * (len(outputs) + len(temps))
    entry_runs = cpu_executable._ENTRY.entry_runs
    assert entry_runs(steps, outputs, temps, record.meta["derived"], record.meta["limits"], itemsizes,
                      *arguments) is not None
    malformed = [[[[2, 1, 0]], "<f8"]] + outputs[1:]  # two terms announced, one given
    assert entry_runs(steps, malformed, temps, [], [], itemsizes, *arguments) is None
    huge = [[[[1, 1 << 40, 0], [1, 1 << 40, 0]], "<f8"]] + outputs[1:]
    assert entry_runs(steps, huge, temps, [], [], itemsizes, *arguments) is None
    past_int64 = [[[[1, 1 << 70, 0]], "<f8"]] + outputs[1:]
    assert entry_runs(steps, past_int64, temps, [], [], itemsizes, *arguments) is None
    assert entry_runs(steps[:0], outputs, temps, [], [], itemsizes, *arguments) is None  # a step short
    with pytest.raises(TypeError):
        entry_runs(steps, outputs)


def test_first_uses_run_on_words_made_in_c(monkeypatch):
    """A fresh op's first use (op by op, its kernel installed) binds its template with the
    words made in C and computes what NumPy does, at its size and at another."""
    from plaidarray.backend.cache import EXECUTABLES
    from plaidarray.trace import hot

    _records(monkeypatch)
    monkeypatch.setattr(hot, "FUSE_AFTER_SECONDS", 1e9)
    EXECUTABLES.clear()
    made: list[bool] = []  # per template loaded, whether C made its sizes program (else it is made later)
    from_entry = cpu_executable.ShapeGenericExecutable._from_entry

    def kept(self, n_values):
        from_entry(self, n_values)
        made.append(self._program is not None and self.stored is None)

    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((7, 5)), rng.standard_normal((9, 5))
    cpu_executable.ShapeGenericExecutable._from_entry = kept
    try:
        got = [np.asarray(xp.cumulative_sum(xp.asarray(m), axis=1) * 2.0 - xp.asarray(m)) for m in (a, b)]
    finally:
        cpu_executable.ShapeGenericExecutable._from_entry = from_entry
    for m, g in zip((a, b), got):
        np.testing.assert_allclose(g, np.cumsum(m, axis=1) * 2.0 - m, rtol=1e-14)
    assert made and all(made)
