"""BERT's masking of a batch (Devlin et al. 2019, §3.1: 15 % of tokens, 80/10/10), drawn
from a seed per global step so that a step's masks never depend on how the run was split
into sessions or processes (``parallel.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


def masked_lm_masker(tokenizer: Any, probability: float) -> Any:
    """BERT's masking: ``probability`` of the non-special tokens, 80/10/10."""
    from transformers import DataCollatorForLanguageModeling

    return DataCollatorForLanguageModeling(
        tokenizer, mlm_probability=probability, mask_replace_prob=0.8, random_replace_prob=0.1
    )


def mask_tokens(
    ids: torch.Tensor, masker: Any, specials: torch.Tensor, seed: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(inputs, labels) for one batch; the draw depends on ``seed`` alone, not on history."""
    masker.generator = masker.get_generator(seed)
    return masker.torch_mask_tokens(ids.clone(), torch.isin(ids, specials))


def step_seed(seed: int, step: int) -> int:
    """The masking seed of one step (stream 0; the block order draws from stream 1)."""
    return int(np.random.SeedSequence([seed, 0, step]).generate_state(1)[0])
