"""Pytrees (JAX's convention): tuples, lists, named tuples, dicts and None nesting leaves.

``flatten`` gives the leaves in a fixed order plus a hashable structure; equal
structures mean "the same nesting with the same keys", so the structure can be part of
a cache key. Dict keys are sorted, as in JAX, so key order does not matter.
"""

from __future__ import annotations

from typing import Any

#: The structure of a single leaf.
LEAF = "*"


def flatten(tree: Any) -> tuple[list[Any], Any]:
    """The leaves of ``tree`` (depth first) and its hashable structure."""
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree: Any, leaves: list[Any]) -> Any:
    if tree is None:
        return None
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return (type(tree), tuple(_flatten(x, leaves) for x in tree))
    if type(tree) in (tuple, list):
        return (type(tree), tuple(_flatten(x, leaves) for x in tree))
    if type(tree) is dict:
        keys = sorted(tree)
        return (dict, tuple(keys), tuple(_flatten(tree[k], leaves) for k in keys))
    leaves.append(tree)
    return LEAF


def unflatten(structure: Any, leaves: list[Any]) -> Any:
    """The inverse of :func:`flatten`: ``structure`` rebuilt around ``leaves``."""
    it = iter(leaves)
    tree = _unflatten(structure, it)
    if next(it, it) is not it:
        raise ValueError("unflatten: more leaves than the structure holds")
    return tree


def _unflatten(structure: Any, it) -> Any:
    if structure is None:
        return None
    if structure == LEAF:
        return next(it)
    if structure[0] is dict:
        _, keys, children = structure
        return {k: _unflatten(c, it) for k, c in zip(keys, children)}
    kind, children = structure
    items = [_unflatten(c, it) for c in children]
    return kind(*items) if hasattr(kind, "_fields") else kind(items)


def describe(structure: Any) -> str:
    """A readable form of a structure for error messages: ``(*, [*, *], {'a': *})``."""
    if structure is None or structure == LEAF:
        return str(structure)
    if structure[0] is dict:
        _, keys, children = structure
        return "{" + ", ".join(f"{k!r}: {describe(c)}" for k, c in zip(keys, children)) + "}"
    kind, children = structure
    inner = ", ".join(describe(c) for c in children)
    if kind is list:
        return f"[{inner}]"
    if kind is tuple:
        return f"({inner},)" if len(children) == 1 else f"({inner})"
    return f"{kind.__name__}({inner})"
