"""``cached_property`` without a lock: a value computed at an object's first read of it
and kept in the object's ``__dict__``. Python 3.12 dropped the lock that
``functools.cached_property`` takes on every first read (an ``RLock`` per property, held
across the computation, ~1 us a first read, ~3 us in a cold process: an op kernel loaded
on first use reads several). Two threads reading one object at once may each compute
the value; every property here computes the same value from the same object, so either
is kept."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Callable

if sys.version_info >= (3, 12) or TYPE_CHECKING:
    from functools import cached_property
else:
    class cached_property:  # noqa: N801  # the name functools gives it
        """``functools.cached_property`` of Python 3.12."""

        def __init__(self, function: Callable[[Any], Any]) -> None:
            self.function = function
            self.name: str | None = None
            self.__doc__ = function.__doc__
            self.__module__ = function.__module__

        def __set_name__(self, owner: type, name: str) -> None:
            self.name = name

        def __get__(self, instance: Any, owner: type | None = None) -> Any:
            if instance is None:
                return self
            value = instance.__dict__[self.name] = self.function(instance)
            return value

__all__ = ["cached_property"]
