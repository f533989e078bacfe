"""The package's import leaves the collector only what is made after it
(``PLAIDARRAY_FREEZE_AT_IMPORT``): the modules' objects are walked by no later collection;
and raises its youngest generation's threshold (``PLAIDARRAY_GC_THRESHOLD``), which holds
as long as plaidarray itself makes no cyclic garbage."""

from __future__ import annotations

from jit_helpers import run_child

#: What the collector walks after a child's import: the frozen objects, and those it still tracks.
TRACKED_AFTER_IMPORT = """
import gc, json
import plaidarray
print(json.dumps({"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}))
"""


def test_the_objects_of_the_import_are_left_out_of_collections(tmp_path):
    found = run_child(TRACKED_AFTER_IMPORT, tmp_path)
    assert found["frozen"] > 20_000  # NumPy's and plaidarray's modules, at the least
    assert found["tracked"] < found["frozen"] // 10


def test_the_freeze_can_be_turned_off(tmp_path):
    found = run_child(TRACKED_AFTER_IMPORT, tmp_path, PLAIDARRAY_FREEZE_AT_IMPORT="0")
    assert found["frozen"] == 0 and found["tracked"] > 20_000


def test_cycles_made_after_the_import_are_still_collected():
    import gc
    import weakref

    import plaidarray  # noqa: F401  (frozen its own objects already)

    class Cyclic:
        pass

    a, b = Cyclic(), Cyclic()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect()
    assert gone() is None


#: The collector's thresholds after a child's import, with what the child set before it.
THRESHOLD_AFTER_IMPORT = """
import gc, json, os
if os.environ.get("SET_BEFORE"):
    gc.set_threshold(int(os.environ["SET_BEFORE"]), 10, 10)
import plaidarray
print(json.dumps({"threshold": gc.get_threshold()[0], "older": list(gc.get_threshold()[1:])}))
"""


def test_the_import_raises_the_youngest_generation_threshold(tmp_path):
    found = run_child(THRESHOLD_AFTER_IMPORT, tmp_path)
    assert found["threshold"] == 10_000 and found["older"] == [10, 10]


def test_the_threshold_is_never_lowered_and_can_be_left_alone(tmp_path):
    assert run_child(THRESHOLD_AFTER_IMPORT, tmp_path, SET_BEFORE="50000")["threshold"] == 50_000
    assert run_child(THRESHOLD_AFTER_IMPORT, tmp_path, SET_BEFORE="700", PLAIDARRAY_GC_THRESHOLD="0")["threshold"] == 700
    assert run_child(THRESHOLD_AFTER_IMPORT, tmp_path, PLAIDARRAY_GC_THRESHOLD="2500")["threshold"] == 2500


#: NumPy-style steps of every kind a script's first run plans and runs (new structures,
#: op kernels' first uses, shape-generic plans at new sizes, element and window stores,
#: growing arrays, linear algebra, FFTs), then how many unreachable objects a collection
#: finds: the threshold's premise is that plaidarray itself makes no cyclic garbage, so no
#: buffer waits for a collection to be freed.
CYCLES_OF_A_SCRIPT = """
import gc, json
import numpy as np
import plaidarray as xp
rng = np.random.default_rng(0)

def steps():
    x = xp.asarray(rng.standard_normal(300))
    m = xp.asarray(rng.standard_normal((6, 6)))
    total, grown = 0.0, xp.zeros(0)
    for n in (40, 57, 90, 130):
        w = x[:n]
        total += float(xp.mean(w * w) - xp.max(w) + xp.sum(xp.abs(w)))
        grown = xp.concat([grown, w[:3]])
    counts = xp.zeros(5, dtype=xp.int64)
    for i in range(20):
        counts[i % 5] += 1
    y = xp.linalg.solve(m @ m.T + 6.0 * xp.eye(6), xp.ones(6))
    spectrum = xp.fft.rfft(x[:64])
    v = xp.asarray(np.arange(12.0))
    v[2:5] = v[2:5] * 2.0
    total += float(xp.sum(y)) + float(xp.sum(xp.abs(spectrum))) + float(xp.sum(v))
    return total + float(xp.sum(grown)) + int(xp.sum(counts)), np.asarray(xp.sort(x[:50]))

steps()
gc.collect()
gc.disable()
for _ in range(3):
    steps()
print(json.dumps({"unreachable": gc.collect()}))
"""


def test_a_script_makes_no_cyclic_garbage(tmp_path):
    assert run_child(CYCLES_OF_A_SCRIPT, tmp_path)["unreachable"] == 0
