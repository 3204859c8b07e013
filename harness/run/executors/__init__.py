"""Where a planned grid's pending cells run: in this process one after another
(``serial``, the default) or as tasks of an existing engine (``ray``). The plan, the cell
identities and the result files are the same whichever runs them; both call the same
per-cell code (``run/cell.py``)."""
