"""The BERT parts around the attention: embeddings and post-LN transformer blocks.

Unchanged from BERT (Devlin et al. 2019) except that the embeddings add positions only when
the scheme has input positions and the mode keeps them (contextual mode removes them: an
exact counterfactual, not an approximation), and can hand the layer-normed position rows to
the attention for the positional mode's pp-term.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers.activations import ACT2FN

from posharness.models.zoo.encoder.attention import (
    PESelfAttention,
    PESequenceAttention,
    PositionContext,
)
from posharness.models.zoo.encoder.config import PEConfig
from posharness.models.zoo.encoder.schemes import build_input_positions, kind
from posharness.pe import registry


class PEEmbeddings(nn.Module):
    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        size = config.hidden_size
        self.word_embeddings = nn.Embedding(
            config.vocab_size, size, padding_idx=config.pad_token_id
        )
        self.position_embeddings = build_input_positions(config)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, size)
        self.LayerNorm = nn.LayerNorm(size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.size = size

    def position_table(self, positions: torch.Tensor) -> torch.Tensor | None:
        """The raw input position vectors [B or 1, n, D], or None without input positions."""
        if self.position_embeddings is None:
            return None
        return self.position_embeddings(positions).to(self.word_embeddings.weight.dtype)

    def position_states(self, positions: torch.Tensor) -> torch.Tensor | None:
        """LayerNorm(p) with no word or segment: the p of TUPE Eq. 7's position-position term."""
        table = self.position_table(positions)
        return None if table is None else self.LayerNorm(table)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor,
        positions: torch.Tensor,
        with_positions: bool,
    ) -> torch.Tensor:
        x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        table = self.position_table(positions) if with_positions else None
        if table is not None:
            x = x + table
        return self.dropout(self.LayerNorm(x))


class PELayer(nn.Module):
    """A post-LN BERT block whose self-attention is one of ours."""

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        size = config.hidden_size
        sequence = kind(config) == registry.POSITIONAL_ATTENTION
        self.attention = PESequenceAttention(config) if sequence else PESelfAttention(config)
        self.attention_output = nn.Linear(size, size)
        self.attention_norm = nn.LayerNorm(size, eps=config.layer_norm_eps)
        self.intermediate = nn.Linear(size, config.intermediate_size)
        self.activation = ACT2FN[config.hidden_act]
        self.output = nn.Linear(config.intermediate_size, size)
        self.output_norm = nn.LayerNorm(size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)

    def forward(
        self, hidden: torch.Tensor, ctx: PositionContext
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attended, weights = self.attention(hidden, ctx)
        hidden = self.attention_norm(hidden + self.dropout(self.attention_output(attended)))
        inner = self.activation(self.intermediate(hidden))
        return self.output_norm(hidden + self.dropout(self.output(inner))), weights


class PEPooler(nn.Module):
    """tanh(W h_[CLS] + b), BERT's pooler."""

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))
