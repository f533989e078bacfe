"""Tracing: lazy arrays record HLO ops; materialisation compiles and runs them."""

import sys
import types


class _Package(types.ModuleType):
    """This package as ``plaidarray.trace``, an attribute of the namespace where NumPy has
    its ``trace`` function: called as NumPy's is, it says what to use, where it said
    "'module' object is not callable"."""

    def __call__(self, *args: object, **kwargs: object) -> None:
        raise TypeError("plaidarray.trace is plaidarray's tracing package, not a function: the Array API's trace "
                        "is plaidarray.linalg.trace, the sum of the diagonal over the last two axes (NumPy's "
                        "trace sums over the first two)")


sys.modules[__name__].__class__ = _Package
