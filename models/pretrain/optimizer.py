"""The optimizer and learning-rate schedule a pretraining recipe names.

AdamW with decoupled weight decay, none on biases and LayerNorm weights (Devlin et al.
2019; Loshchilov & Hutter 2019), β₂ and ε from the recipe (BERT: 0.999 and 1e-6;
Cramming: 0.98 and 1e-12). The rate is either BERT's linear warm-up then linear decay
to zero, or Cramming's one-cycle triangle (``recipes.py``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")


def build_optimizer(model: nn.Module, settings: Any) -> torch.optim.Optimizer:
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (no_decay if name.endswith(NO_DECAY) else decay).append(parameter)
    groups = [
        {"params": decay, "weight_decay": settings.weight_decay},
        {"params": no_decay, "weight_decay": 0.0},
    ]
    adam = {
        "lr": settings.learning_rate,
        "eps": settings.adam_epsilon,
        "betas": (0.9, settings.adam_beta2),
    }
    try:  # one kernel over all parameters (CPU and CUDA); the loop is the fallback
        return torch.optim.AdamW(groups, **adam, fused=True)
    except (RuntimeError, ValueError):
        return torch.optim.AdamW(groups, **adam)


def build_schedule(optimizer: torch.optim.Optimizer, settings: Any) -> Any:
    if settings.schedule == "one-cycle":
        return one_cycle_schedule(optimizer, settings.steps)
    from transformers import get_linear_schedule_with_warmup

    return get_linear_schedule_with_warmup(optimizer, settings.warmup, settings.steps)


def one_cycle_schedule(optimizer: Any, steps: int) -> Any:
    """Cramming's triangular one-cycle rate (Geiping & Goldstein 2022, §4.3): from a
    quarter of the peak, up linearly to the peak at 75 % of the steps, then linearly down
    to zero at the last step. The paper runs it on elapsed time within the budget; here
    on steps, so a resumed or re-launched run follows the same curve."""
    from torch.optim.lr_scheduler import LambdaLR

    start, falling = 0.25, 0.25

    def factor(step: int) -> float:
        progress = step / steps
        rising = start + progress * (1 - start) / (1 - falling)
        return max(0.0, min(rising, (1 - progress) / falling))

    return LambdaLR(optimizer, factor)
