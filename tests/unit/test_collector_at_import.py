"""The package's import leaves the collector only what is made after it
(``PLAIDARRAY_FREEZE_AT_IMPORT``): the modules' objects are walked by no later collection."""

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
