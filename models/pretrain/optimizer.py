"""The optimizer and learning-rate schedule a pretraining recipe names.

AdamW with decoupled weight decay (Loshchilov & Hutter 2019), β₂ and ε from the recipe
(BERT: 0.999 and 1e-6; Cramming: 0.98 and 1e-12). The rate is either BERT's linear
warm-up then linear decay to zero, or Cramming's one-cycle triangle (``recipes.py``).

Which parameters are not decayed (``decay_exempt``). BERT's optimizer exempts biases and
LayerNorm weights (Devlin et al. 2019, the released code's ``exclude_from_weight_decay``):
decay pulls a parameter towards zero, which for a shift or a gain is a prior no one means.
The same holds for what a positional encoding learns on the scale of the logits — a
bias table, a slope, a window — where zero is itself a claim (no positional preference),
and which the earlier rule, matching name suffixes, decayed (issue 39: T5's and TUPE-R's
bias tables, TISA's kernels, the attenuation tables and BERT-A*'s ``w`` and ``s``). The
rule is by the scheme's kind (``posharness.pe.kinds``), so it covers a plugin's PE as it
covers the zoo's, with nothing to declare:

* every bias and normalisation weight, as BERT (by name);
* every parameter of a positional-encoding module with at most one dimension (a scalar,
  or one value per head or layer: learnable slopes, ``w`` and ``s``, a learnable scale);
* every parameter of a positional-encoding module whose output is logits or attention
  weights — a logit term, a positional attention — or a query/key transform (its
  frequencies and scales): tables whose entries are themselves positional biases;
* but not the vectors of an input embedding, a content logit term or TUPE's untied
  product (position embeddings, relative key vectors, TUPE's p and U): these live in the
  hidden or head space and are decayed as BERT decays its position embeddings.

A parameter counts for the innermost positional-encoding module that holds it, so
TUPE-R's relative bias (a T5 bias inside the untied product) is a bias table while
TUPE's position vectors are not. ``no_decay="names"`` keeps the earlier rule, which a run
started before issue 39 resumes with.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

NO_DECAY = ("bias", "LayerNorm.weight", "layer_norm.weight", "norm.weight")
NO_DECAY_RULES = ("positional", "names")  # PretrainSettings.no_decay


def decay_exempt(model: nn.Module, rule: str = "positional") -> set[str]:
    """Names of the trainable parameters AdamW must not decay (the module docstring)."""
    names = {
        name
        for name, parameter in model.named_parameters()
        if parameter.requires_grad and name.endswith(NO_DECAY)
    }
    if rule == "names":
        return names
    for name, parameter, owner in _positional_parameters(model):
        if parameter.requires_grad and (parameter.ndim <= 1 or owner.kind in _BIAS_KINDS):
            names.add(name)
    return names


def _positional_parameters(model: nn.Module) -> list[tuple[str, nn.Parameter, Any]]:
    """(name, parameter, innermost positional-encoding module holding it)."""
    from posharness.pe.kinds import PositionalEncoding

    owners: dict[str, Any] = {}
    for prefix, module in model.named_modules():
        if isinstance(module, PositionalEncoding):  # outer modules come first: inner win
            for name, _ in module.named_parameters(prefix=prefix):
                owners[name] = module
    parameters = dict(model.named_parameters())
    return [(name, parameters[name], owner) for name, owner in owners.items() if name in parameters]


def _bias_kinds() -> frozenset[str]:
    from posharness.pe import registry

    return frozenset(
        {registry.LOGIT_TERM, registry.POSITIONAL_ATTENTION, registry.QUERY_KEY_TRANSFORM}
    )


_BIAS_KINDS = _bias_kinds()


def build_optimizer(model: nn.Module, settings: Any) -> torch.optim.Optimizer:
    exempt = decay_exempt(model, getattr(settings, "no_decay", "positional"))
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            (no_decay if name in exempt else decay).append(parameter)
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
    """Cramming's triangular one-cycle rate (Geiping & Goldstein 2023, §4.3): from a
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
