"""``plaidarray.cached_property``: computed at an object's first read, kept in its
``__dict__``, without the lock Python 3.11's ``functools.cached_property`` takes; the
package's one way to cache a property."""

from __future__ import annotations

import ast

from jit_helpers import REPO

from plaidarray.cached_property import cached_property


class _Counted:
    def __init__(self, base: int) -> None:
        self.base = base
        self.calls = 0

    @cached_property
    def doubled(self) -> int:
        """Twice the base."""
        self.calls += 1
        return 2 * self.base


def test_a_value_is_computed_once_per_object_and_kept_in_its_dict():
    a, b = _Counted(3), _Counted(5)
    assert (a.doubled, a.doubled, b.doubled) == (6, 6, 10)
    assert (a.calls, b.calls) == (1, 1)
    assert a.__dict__["doubled"] == 6
    del a.doubled  # forgotten: computed again at the next read
    assert a.doubled == 6 and a.calls == 2


def test_the_class_sees_the_property_with_its_doc():
    assert isinstance(_Counted.__dict__["doubled"], cached_property)
    assert _Counted.doubled.__doc__ == "Twice the base."


def test_the_package_caches_properties_one_way():
    """No module of the package uses ``functools.cached_property`` but the one that
    chooses it (Python 3.12 and later)."""
    users = []
    for path in sorted((REPO / "plaidarray").rglob("*.py")):
        if path.name == "cached_property.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "cached_property" and \
                    isinstance(node.value, ast.Name) and node.value.id == "functools":
                users.append(str(path.relative_to(REPO)))
    assert users == []
