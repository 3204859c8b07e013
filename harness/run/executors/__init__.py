"""Where a planned grid's pending cells run: in this process one after another (the
runner's own loop), or as tasks of an existing engine (``ray``). The plan, the
cell identities and the result files are the same whichever runs them."""
