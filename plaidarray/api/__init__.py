"""The Array API namespace, one module per chapter of the standard."""

from . import (creation, data_types, elementwise, indexing, inspection, linear_algebra, manipulation, searching,
               set_functions, sorting, statistical, utility)

CHAPTERS = (creation, data_types, elementwise, indexing, inspection, linear_algebra, manipulation, searching,
            set_functions, sorting, statistical, utility)
