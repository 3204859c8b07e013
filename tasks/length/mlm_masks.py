"""Held-out blocks and BERT's seeded masking for ``length_mlm``.

Blocks are windows of one token stream (the corpus tokenized once, paragraph after
paragraph); where a window starts and which of its tokens are masked come from a generator
seeded by (seed, length, block), so two models with the same tokenizer see the same blocks
with the same masks, and a model sees the same blocks whatever other lengths it is asked.

Masking is BERT's recipe (Devlin et al. 2019, §3.1 and appendix A.1): 15 % of the content
tokens (never the special tokens) are chosen, exactly ``round(0.15·n)`` of them and at
least one, so every block scores the same number of predictions; of those, 80 % become
the mask token, 10 % a random vocabulary id, 10 % stay as they are. The loss and accuracy
are taken on every chosen token, as in pretraining.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MASKING_VERSION = 1  # bump when the same seed would give other blocks or masks
MASK_SHARE = 0.15
IGNORE = -100  # label of a token that is not scored (transformers' convention)


@dataclass(frozen=True)
class MaskedBlocks:
    """``inputs`` and ``labels`` [blocks, content]: content token ids with the masking
    applied, and the original id where a token was chosen (``IGNORE`` elsewhere)."""

    inputs: np.ndarray
    labels: np.ndarray
    starts: np.ndarray  # where each block starts in the token stream


def draw_starts(
    stream_length: int, content: int, blocks: int, seed: int, length: int
) -> np.ndarray:
    """Seeded start offsets of ``blocks`` windows of ``content`` tokens (with replacement
    only when the stream has fewer distinct windows than blocks)."""
    windows = stream_length - content + 1
    rng = np.random.default_rng([seed, length, MASKING_VERSION, 0])
    return np.sort(rng.choice(windows, size=blocks, replace=blocks > windows))


def mask_block(
    ids: Sequence[int], mask_token_id: int, vocab_size: int, seed: int, length: int, block: int
) -> tuple[np.ndarray, np.ndarray]:
    """BERT's 80/10/10 masking of one block's content ids, seeded by (seed, length, block)."""
    ids = np.asarray(ids, dtype=np.int64)
    rng = np.random.default_rng([seed, length, MASKING_VERSION, 1, block])
    chosen = rng.choice(len(ids), size=max(1, round(MASK_SHARE * len(ids))), replace=False)
    fate = rng.uniform(size=len(chosen))
    replacement = rng.integers(0, vocab_size, size=len(chosen))
    inputs, labels = ids.copy(), np.full_like(ids, IGNORE)
    labels[chosen] = ids[chosen]
    inputs[chosen[fate < 0.8]] = mask_token_id
    swap = (fate >= 0.8) & (fate < 0.9)
    inputs[chosen[swap]] = replacement[swap]
    return inputs, labels


def masked_blocks(
    stream: Sequence[int],
    content: int,
    blocks: int,
    mask_token_id: int,
    vocab_size: int,
    seed: int,
    length: int,
) -> MaskedBlocks | None:
    """``blocks`` masked windows of ``content`` tokens; None when the stream is shorter."""
    stream = np.asarray(stream, dtype=np.int64)
    if content < 1 or len(stream) < content:
        return None
    starts = draw_starts(len(stream), content, blocks, seed, length)
    rows = [
        mask_block(stream[s : s + content], mask_token_id, vocab_size, seed, length, b)
        for b, s in enumerate(starts)
    ]
    return MaskedBlocks(
        inputs=np.stack([r[0] for r in rows]),
        labels=np.stack([r[1] for r in rows]),
        starts=starts,
    )
