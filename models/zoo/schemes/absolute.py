"""Absolute positions added to the word embeddings (Devlin et al. 2019; Vaswani et al. 2017)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from transformers import initialization as init

from posharness.pe import InputEmbedding, register_pe, sinusoidal_table


@register_pe("ape", version=1, variant=False)
class LearnedAbsolute(InputEmbedding):
    """A learned table of ``max_position_embeddings`` vectors (BERT-A)."""

    title = "learned absolute"
    absolute_name = "learned"
    bounded = True

    def __init__(self, config) -> None:
        super().__init__(config)
        self.weight = nn.Parameter(torch.empty(self.max_positions, self.size))
        nn.init.normal_(self.weight)  # as nn.Embedding does, so seeded builds stay identical

    def init_weights(self, std: float) -> None:
        init.normal_(self.weight, mean=0.0, std=std)  # what BERT does to nn.Embedding

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return F.embedding(positions, self.weight)


@register_pe("sinusoidal", version=1, variant=False)
class SinusoidalAbsolute(InputEmbedding):
    """Fixed sinusoids, computed from the positions (no table to outgrow)."""

    title = "sinusoidal absolute"
    absolute_name = "sinusoidal"

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return sinusoidal_table(positions, self.size)
