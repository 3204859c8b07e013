"""The built-in positional schemes, each declared on the public API (``posharness.pe``).

One module per family of schemes; nothing here is private to the zoo, so each file is a
template a researcher can copy (docs/new_pe.md). The registry finds them through the
``posharness.pe`` entry points in pyproject.toml, so a scheme's module is imported only
when a model uses it. Each carries ``version=1``: the cell ids of every committed board
were made by this code, and a test fails
when a scheme's source changes without a version bump.
"""
