"""BERT-A, BERT-A* and BERT-A*-s as Chen et al. (2023) train them: a positional weight table.

Chen et al. pre-compute the attenuated weights of Eq. 8, delta = softmax_j(a_ij) over the
model's n positions, and add them to the scaled contextual logits (App. A.2, Listing 1:
``scores = q @ k / sqrt(d); scores = scores + pe``); "these weights can be either frozen or
learnable during pre-training" (ICLR draft, App. B.5). Learnable, the table itself is the
parameter — 512 x 512 per head and layer, 37.7M at base size (BERT-A*; their App. A.2 sum),
or one table per layer shared by its heads, 3.1M (BERT-A*-s) — and training moves every
entry directly, with no softmax keeping it a probability row. The table is initialised
with w and s fitted so that its rows, read as attention rows, have BERT's locality 0.17 and
symmetry 1 at length n (§3.3.2: "we adjust the parameters w and s ... to obtain a weight
vector delta that shares the locality and symmetry of the pre-trained BERT").

The project's earlier reading — only w and s learnable, the softmax recomputed every
forward — stays available as ``bert-a-star-ws`` (``posharness.models.zoo.schemes.attenuated``);
docs/fidelity.md says how the two differ.

A sequence shorter than n reads the table's top-left block at its position ids (Listing 1
adds the pre-computed weights as they are; padding is masked afterwards, as there).
"""

from __future__ import annotations

import functools

import torch
from torch import nn
from transformers import initialization as init

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder.attenuation import attenuation_matrix, fit_attenuation
from posharness.pe import LogitTerm, PositionalAttention, register_pe

SHARING = ("head", "layer", "fixed")
BERT_LOCALITY = 0.17  # Chen et al. §3.3.2: the pre-trained BERT's locality and symmetry
BERT_SYMMETRY = 1.0
_OPTIONS = {
    "attenuation_learnable": "head",
    "table_locality": BERT_LOCALITY,
    "table_symmetry": BERT_SYMMETRY,
}


@functools.lru_cache(maxsize=16)
def initial_table(length: int, locality: float, symmetry: float) -> torch.Tensor:
    """softmax_j(a_ij) of Eq. 8 at ``length`` with w, s fitted to the target geometry, [n, n]
    in float32 (fitted and computed in float64). Cached: every layer starts from it."""
    w, s = fit_attenuation(locality, symmetry, length)
    return torch.from_numpy(attenuation_matrix(length, w, s)).to(torch.float32)


def gather_table(table: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """The entries [B or 1, H or 1, n, n] of ``table`` [H or 1, N, N] at ``positions``
    [B or 1, n]: rows at the query positions, columns at the key positions."""
    if positions.shape[0] == 1:
        index = positions[0]
        return table.index_select(-2, index).index_select(-1, index).unsqueeze(0)
    return table[:, positions.unsqueeze(-1), positions.unsqueeze(-2)].transpose(0, 1)


class _AttenuationTable(nn.Module):
    """One layer's table: [H, n, n] (``head``), [1, n, n] (``layer``), or frozen (``fixed``,
    a buffer rebuilt from the options, so no optimiser and no checkpoint holds it)."""

    def __init__(
        self,
        config,
        attenuation_learnable: str = "head",
        table_locality: float = BERT_LOCALITY,
        table_symmetry: float = BERT_SYMMETRY,
    ) -> None:
        super().__init__()
        self.sharing = attenuation_learnable
        self.length = config.max_position_embeddings
        self.target = (float(table_locality), float(table_symmetry))
        rows = config.num_attention_heads if self.sharing == "head" else 1
        start = initial_table(self.length, *self.target).expand(rows, -1, -1).clone()
        if self.sharing == "fixed":
            self.register_buffer("table", start, persistent=False)
        else:
            self.table = nn.Parameter(start)

    @classmethod
    def check_config(cls, config) -> str | None:
        options = config.pe_options or {}
        if config.attenuation_learnable not in SHARING:
            return (
                f"unknown attenuation_learnable {config.attenuation_learnable!r} for a "
                f"positional weight table: pick one of {', '.join(SHARING)}"
            )
        locality = options.get("table_locality", BERT_LOCALITY)
        symmetry = options.get("table_symmetry", BERT_SYMMETRY)
        try:
            initial_table(config.max_position_embeddings, float(locality), float(symmetry))
        except OptionError as exc:
            return f"table_locality={locality}, table_symmetry={symmetry}: {exc}"
        return None

    def init_weights(self, std: float) -> None:
        # The frozen buffer too: a model loaded with from_pretrained is built on the meta
        # device, and a non-persistent buffer comes back only through this hook.
        start = initial_table(self.length, *self.target)
        init.copy_(self.table, start.expand_as(self.table))

    def entries(self, positions: torch.Tensor) -> torch.Tensor:
        """The table at ``positions`` [B or 1, n]: [B or 1, H or 1, n, n]."""
        if positions.shape[-1] > self.length:
            raise OptionError(
                f"a sequence of {positions.shape[-1]} tokens asks the positional weight table "
                f"for more positions than it has ({self.length}): truncate the input to "
                f"{self.length} tokens or build the model with max_position_embeddings >= "
                f"{positions.shape[-1]}"
            )
        return gather_table(self.table, positions.to(self.table.device))


@register_pe(
    "attenuated-table", defaults=_OPTIONS, version=1, variant=False, claims=("content-free",)
)
class AttenuationTable(_AttenuationTable, LogitTerm):
    """The table added to the scaled logits of each layer (BERT-A*, Chen et al. Listing 1)."""

    term = "attenuated-table"
    title = "attenuated weight table (BERT-A*)"
    reference = "absolute"
    bounded = True
    per_layer = True

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.entries(positions)


@register_pe(
    "sequence-table", defaults=_OPTIONS, version=1, variant=False, claims=("content-free",)
)
class SequenceAttenuationTable(_AttenuationTable, PositionalAttention):
    """The table as the positional attention itself, then content attention: CA(PA(X))
    (ICLR draft §5, Eq. 10; Listing 2: ``scores = pe`` with padding keys set to 0, no
    softmax). Its rows are weights, not logits, so PA is a plain weighted sum."""

    title = "attenuated weight table, sequence CA(PA(X))"
    reference = "absolute"
    bounded = True
    weights_are_logits = False

    def forward(self, positions: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        weights = self.entries(positions)
        if key_mask is not None:
            weights = weights.masked_fill(~key_mask, 0.0)
        return weights
