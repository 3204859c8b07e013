"""The seed papers as study tables: their tables' columns and published rows (data in
``published/``), and the studies ``posharness reproduce`` writes."""
