"""Sequence-length phases: BERT's 128 tokens for most steps, then 512 for the rest.

Devlin et al. (2019, §A.2) pretrain 90 % of the steps on sequences of 128 and the last
10 % on 512, "to learn the positional embeddings" cheaply: attention is quadratic in
length. A run has one phase (``--block-size``) or two (``--long-block-size`` for the
last ``--long-fraction`` of the steps). Each phase reads the corpus prepared at its own
block size (``prepared.py``, shared with every other run at that size) in its own seeded
order, counted from the phase's first step, so a step's batch depends on the settings
and the step alone, as in a single-phase run.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from posharness.models.pretrain.corpus import BlockOrder


@dataclass(frozen=True)
class Phase:
    first_step: int  # 1-based, inclusive
    last_step: int
    block_size: int

    @property
    def steps(self) -> int:
        return self.last_step - self.first_step + 1


def phases(
    steps: int, block_size: int, long_block_size: int | None, long_fraction: float
) -> list[Phase]:
    """The phases of a run of ``steps`` optimizer steps."""
    long_steps = round(long_fraction * steps) if long_block_size else 0
    if long_steps == 0:
        return [Phase(1, steps, block_size)]
    if long_steps == steps:
        return [Phase(1, steps, long_block_size)]  # type: ignore[arg-type]
    switch = steps - long_steps
    return [Phase(1, switch, block_size), Phase(switch + 1, steps, long_block_size)]  # type: ignore[arg-type]


def tokens_seen(plan: list[Phase], step: int, batch_size: int) -> int:
    """Tokens fed to the model up to and including ``step``."""
    return sum(
        max(0, min(step, p.last_step) - p.first_step + 1) * batch_size * p.block_size for p in plan
    )


class PhasedBlocks:
    """The rows of each step's global batch, from the prepared corpus of its phase."""

    def __init__(self, plan: list[Phase], blocks: dict[int, Any], seed: int) -> None:
        self.plan = plan
        self.blocks = blocks  # block size → rows (prepared.PreparedRows)
        self.orders = {p.block_size: BlockOrder(len(blocks[p.block_size]), seed) for p in plan}

    def batch(self, step: int, batch_size: int) -> np.ndarray:
        phase = next(p for p in self.plan if p.first_step <= step <= p.last_step)
        order = self.orders[phase.block_size]
        return self.blocks[phase.block_size][order.batch(step - phase.first_step, batch_size)]


def training_blocks(
    corpus: Path, tokenizer: Any, block_size: int, root: Path | None, corpus_sha256: str
) -> Any:
    """The packed corpus at ``block_size``, prepared once under ``root`` (shared by every
    scheme and seed that uses this corpus, tokenizer and block size; ``prepared.py``)."""
    from posharness.models.pretrain.prepared import prepare_corpus

    if root is None:
        from posharness.models.zoo.checkpoints import runs_root

        root = runs_root() / "corpora"
    prepared = prepare_corpus(corpus, tokenizer, block_size, root, corpus_sha256=corpus_sha256)
    return prepared.blocks()
