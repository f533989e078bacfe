"""The namespace's capabilities, as ``__array_namespace_info__().capabilities()`` reports."""

CAPABILITIES = {
    # Boolean-mask indexing (x[mask]) sizes its result from the mask's data.
    "boolean indexing": True,
    # nonzero, unique_*, repeat with array repeats: results sized from data at run time.
    "data-dependent shapes": True,
    "max dimensions": None,
}
