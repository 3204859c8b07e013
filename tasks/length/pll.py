"""Pseudo-log-likelihood (Salazar et al. 2020, "Masked Language Model Scoring", Eq. 2):
PLL(W) = Σ_t log P(w_t | W without t), each token masked in turn, one forward pass per
token — so it is an option for short lengths only (``length_mlm.pll=MAX``).

Reported per length as the mean over blocks of the per-token PLL in nats (higher is
better) and its pseudo-perplexity exp(−PLL/N) (Salazar et al. §2.3, PPPL; they pool
tokens over a corpus, we average per block and then over blocks, as for the accuracy).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from posharness.tasks.length.mlm_head import MaskedLM


def token_log_likelihoods(
    head: MaskedLM,
    framed: np.ndarray,
    content: np.ndarray,
    device: str,
    tokens_per_batch: int,
    advance: Callable[[int], None] = lambda n: None,
) -> np.ndarray:
    """``framed`` [blocks, L] model inputs with their special tokens; ``content`` [L] bool,
    where the scored tokens sit. Returns [blocks, content tokens] log P(w_t | rest)."""
    import torch

    positions = np.flatnonzero(content)
    length = framed.shape[1]
    rows = max(1, tokens_per_batch // length)
    out = np.zeros((framed.shape[0], len(positions)), dtype=np.float64)
    with torch.no_grad():
        for b, block in enumerate(framed):
            original = torch.as_tensor(block, dtype=torch.int64)
            for start in range(0, len(positions), rows):
                chunk = positions[start : start + rows]
                batch = original.repeat(len(chunk), 1)
                where = torch.as_tensor(chunk)
                batch[torch.arange(len(chunk)), where] = head.mask_token_id
                batch = batch.to(device)
                logits: Any = head.logits(batch, torch.ones_like(batch)).float()
                picked = logits[
                    torch.arange(len(chunk), device=logits.device), where.to(logits.device)
                ]
                log_probs = torch.log_softmax(picked, dim=-1)
                gold = original[where].to(logits.device)
                out[b, start : start + len(chunk)] = (
                    log_probs.gather(1, gold[:, None])[:, 0].double().cpu().numpy()
                )
            advance(1)
    return out
