"""Running an encoder over many inputs: length-sorted batching with out-of-memory backoff
and the split of a cell's batches across processes."""
