"""The project's w, s reading of Chen et al.'s (2023) attenuated encoding, Eq. 8.

Only w and s are parameters and the softmax of Eq. 8 is recomputed every forward, so delta
stays a probability row in [0, 1]: added to the logits it moves attention by at most about
0.1 in logit space. Chen et al.'s BERT-A* learns the whole pre-computed table instead
(``attenuation_table.py``); these schemes keep the zoo's waves 2-3 models, named
``bert-a-star-ws*``, and docs/fidelity.md says how the two differ.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import initialization as init

from posharness.models.zoo.encoder.attenuation import attenuation_logits
from posharness.pe import LogitTerm, PositionalAttention, register_pe

LEARNABLE = ("head", "layer", "fixed")
_OPTIONS = {"attenuation_w": None, "attenuation_s": 1.0, "attenuation_learnable": "head"}


class _Attenuation(nn.Module):
    """delta_ij = softmax_j(a_ij) of Eq. 8, for one layer.

    ``attenuation_learnable``: ``head`` (w, s per head), ``layer`` (one w, s shared by the
    layer's heads) or ``fixed`` (the config's w, s, no parameters). The
    softmax runs over the real keys of each sequence (padding excluded), so padding never
    changes a sequence's delta; without a mask it runs over all n positions. ``None`` w is
    BERT's locality 0.17 (the configuration fills it in).
    """

    def __init__(
        self,
        config,
        attenuation_w: float | None = None,
        attenuation_s: float = 1.0,
        attenuation_learnable: str = "head",
    ) -> None:
        super().__init__()
        self.learnable = attenuation_learnable
        self.init_w = float(attenuation_w)
        self.init_s = float(attenuation_s)
        count = {"head": config.num_attention_heads, "layer": 1}.get(self.learnable)
        if count is not None:
            self.w = nn.Parameter(torch.full((count,), self.init_w))
            self.s = nn.Parameter(torch.full((count,), self.init_s))

    @classmethod
    def check_config(cls, config) -> str | None:
        if config.attenuation_learnable not in LEARNABLE:
            return (
                f"unknown attenuation_learnable {config.attenuation_learnable!r}: pick one of "
                f"{', '.join(LEARNABLE)}"
            )
        return None

    def init_weights(self, std: float) -> None:
        if self.learnable != "fixed":
            init.constant_(self.w, self.init_w)
            init.constant_(self.s, self.init_s)

    def values(self) -> tuple[torch.Tensor | float, torch.Tensor | float]:
        if self.learnable == "fixed":
            return self.init_w, self.init_s
        return self.w.view(-1, 1, 1), self.s.view(-1, 1, 1)

    def logits(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        """a_ij of Eq. 8, padding keys at float32's minimum: [B, H or 1, n, n]."""
        w, s = self.values()
        logits = attenuation_logits(positions.unsqueeze(1), w, s)
        if key_mask is not None:
            logits = logits.masked_fill(~key_mask, torch.finfo(logits.dtype).min)
        return logits

    def forward(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        return torch.softmax(self.logits(positions, key_mask), dim=-1)


@register_pe("attenuated", defaults=_OPTIONS, version=1, variant=False, claims=("content-free",))
class AttenuationScore(_Attenuation, LogitTerm):
    """softmax_j(a_ij) added to the logits of each layer (the project's w, s variant)."""

    term = "attenuation"
    title = "attenuated w, s (project variant)"
    per_layer = True
    uses_key_mask = True


@register_pe(
    "sequence",
    defaults=_OPTIONS,
    version=1,
    variant=False,
    claims=("content-free", "translation-invariant"),
)
class SequenceAttenuation(_Attenuation, PositionalAttention):
    """PA(X) with the attenuated weights, then content attention: CA(PA(X)) (draft §5)."""

    title = "attenuated w, s, sequence CA(PA(X)) (project variant)"
