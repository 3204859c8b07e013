"""Files on disk: atomic writes and reads, content hashes, the encoder-output cache and its
administration. Single-process code: which process writes is decided above it."""
