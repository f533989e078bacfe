"""Pytrees (JAX's convention): tuples, lists, named tuples, dicts and None nesting leaves.

``flatten`` gives the leaves in a fixed order plus a hashable structure; equal
structures mean "the same nesting with the same keys", so the structure can be part of
a cache key. Dict keys are sorted, as in JAX, so key order does not matter.

A structure is flat: the tree's nodes in depth-first order, each a row (``LEAF_ROW``,
None, ``(kind, length)`` of a sequence, ``(dict, keys)`` of a dict). A nested tuple
would mirror the tree's depth, and hashing or comparing one recurses in C (a tree
100,000 levels deep crashed the interpreter); the walks here use stacks for the same
reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

#: The row of a leaf.
LEAF_ROW = "*"
#: The structure of a single leaf.
LEAF = (LEAF_ROW,)

T = TypeVar("T")


def flatten(tree: Any) -> tuple[list[Any], tuple]:
    """The leaves of ``tree`` (depth first) and its hashable structure."""
    leaves: list[Any] = []
    rows: list[Any] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        if node is None:
            rows.append(None)
        elif type(node) in (tuple, list) or (isinstance(node, tuple) and hasattr(node, "_fields")):
            rows.append((type(node), len(node)))
            stack.extend(reversed(node))
        elif type(node) is dict:
            keys = tuple(sorted(node))
            rows.append((dict, keys))
            stack.extend(node[k] for k in reversed(keys))
        else:
            rows.append(LEAF_ROW)
            leaves.append(node)
    return leaves, tuple(rows)


def paths(tree: Any) -> list[tuple]:
    """Where each leaf of ``tree`` lies (the indices and keys from the root to it), in
    :func:`flatten`'s order."""
    found: list[Any] = []
    stack: list[tuple[Any, Any]] = [(tree, None)]  # each node with its path as (key, its parent's path)
    while stack:
        node, link = stack.pop()
        if node is None:
            continue
        if type(node) in (tuple, list) or (isinstance(node, tuple) and hasattr(node, "_fields")):
            stack.extend((child, (i, link)) for i, child in reversed(list(enumerate(node))))
        elif type(node) is dict:
            stack.extend((node[k], (k, link)) for k in reversed(sorted(node)))
        else:
            found.append(link)
    return [_unlinked(link) for link in found]


def _unlinked(link: Any) -> tuple:
    """A path kept as (key, parent's path) links, as a tuple from the root (linked, a path
    costs a pair per level where copying it at each level cost its depth)."""
    keys = []
    while link is not None:
        keys.append(link[0])
        link = link[1]
    return tuple(reversed(keys))


def _fold(structure: tuple, leaf: Callable[[Any], T], node: Callable[[Any, list[T]], T]) -> T:
    """``structure`` evaluated from its leaves up: ``leaf(row)`` of each leaf or None,
    ``node(row, children)`` of each container once its children are done."""
    open_nodes: list[tuple[Any, int, list[T]]] = []  # row, number of children, those done
    for row in structure:
        if row is None or row == LEAF_ROW:
            value = leaf(row)
        else:
            kind, info = row
            width = len(info) if kind is dict else info
            if width:
                open_nodes.append((row, width, []))
                continue
            value = node(row, [])
        while open_nodes:
            parent, width, done = open_nodes[-1]
            done.append(value)
            if len(done) < width:
                break
            open_nodes.pop()
            value = node(parent, done)
        else:
            return value
    raise ValueError("pytree: a structure ends inside a container")


def unflatten(structure: tuple, leaves: list[Any]) -> Any:
    """The inverse of :func:`flatten`: ``structure`` rebuilt around ``leaves``."""
    it: Iterator[Any] = iter(leaves)

    def leaf(row: Any) -> Any:
        if row is None:
            return None
        value = next(it, it)
        if value is it:
            raise ValueError("unflatten: fewer leaves than the structure holds")
        return value

    def node(row: Any, children: list[Any]) -> Any:
        kind, info = row
        if kind is dict:
            return dict(zip(info, children))
        return kind(*children) if hasattr(kind, "_fields") else kind(children)

    tree = _fold(structure, leaf, node)
    if next(it, it) is not it:
        raise ValueError("unflatten: more leaves than the structure holds")
    return tree


def describe(structure: tuple) -> str:
    """A readable form of a structure for error messages: ``(*, [*, *], {'a': *})``."""

    def node(row: Any, children: list[Any]) -> tuple:
        # The text as pieces around the children's pieces, joined once at the end: joining
        # at each level would copy the inner text once per level around it.
        kind, info = row
        if kind is dict:
            pieces: list[Any] = ["{"]
            for i, (key, child) in enumerate(zip(info, children)):
                pieces += [", " * bool(i) + f"{key!r}: ", child]
            return (*pieces, "}")
        inner = [piece for i, child in enumerate(children) for piece in (", " * bool(i), child)]
        if kind is list:
            return ("[", *inner, "]")
        if kind is tuple:
            return ("(", *inner, ",)" if len(children) == 1 else ")")
        return (f"{kind.__name__}(", *inner, ")")

    text, stack = [], [_fold(structure, str, node)]
    while stack:
        piece = stack.pop()
        if isinstance(piece, str):
            text.append(piece)
        else:
            stack.extend(reversed(piece))
    return "".join(text)
