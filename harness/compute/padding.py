"""One batch of tokenized inputs as padded tensors, and telling an out-of-memory error.

Both the single-process batching (``batching.py``) and the data-parallel rounds
(``data_parallel.py``) pad a batch and halve it on out-of-memory the same way; they live
here, below both, so neither module needs the other's internals.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from posharness.contracts.adapter import EncoderBatch, TokenizedText


def pad_batch(
    items: Sequence[TokenizedText], pad_token_id: int, pad_to: int | None = None
) -> EncoderBatch:
    """Right-pad to the longest item (or to ``pad_to``) and build the masks."""
    width = max(len(item) for item in items)
    if pad_to is not None:
        width = max(width, pad_to)
    size = len(items)
    input_ids = torch.full((size, width), pad_token_id, dtype=torch.long)
    attention = torch.zeros((size, width), dtype=torch.long)
    special = torch.zeros((size, width), dtype=torch.bool)
    with_types = all(item.token_type_ids is not None for item in items)
    types = torch.zeros((size, width), dtype=torch.long) if with_types else None
    for row, item in enumerate(items):
        n = len(item)
        input_ids[row, :n] = torch.tensor(item.input_ids, dtype=torch.long)
        attention[row, :n] = 1
        special[row, :n] = torch.tensor(item.special_tokens_mask, dtype=torch.bool)
        if types is not None:
            types[row, :n] = torch.tensor(item.token_type_ids, dtype=torch.long)
    return EncoderBatch(input_ids, attention, special, [item.word_ids for item in items], types)


def is_out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()
