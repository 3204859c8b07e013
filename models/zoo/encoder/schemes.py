"""Positional terms delta that are added to the attention logits.

Two kinds, by where they live:

* shared by all layers, computed once per forward (``build_shared``): the T5 bias, ALiBi,
  TUPE (tupe.py) — each a module mapping positions [B or 1, n] to delta [B or 1, H, n, n];
* one per layer (``build_layer_score``): TISA, the attenuated encoding and Shaw's relative
  keys (which needs the layer's queries, so it is content-dependent).

All deltas are already-scaled logits: the attention adds them to gamma as they are.
"""

from __future__ import annotations

import torch
from torch import nn

from posharness.models.zoo.encoder.attenuation import attenuation_logits
from posharness.models.zoo.encoder.config import TUPE, PEConfig
from posharness.models.zoo.encoder.relative import alibi_slopes, relative_offsets, t5_buckets


class T5RelativeBias(nn.Module):
    """b_h[bucket(j - i)] (Raffel et al. 2020): one learned scalar per bucket and head.

    With ``cls_buckets`` (TUPE-R, as in the TUPE release) [CLS] gets buckets of its own: its
    row (including [CLS]->[CLS]) takes the never-used bucket ``buckets // 2`` and its column
    (from every other token) an extra bucket ``buckets``; the sequence's first token is [CLS].
    """

    def __init__(self, config: PEConfig, cls_buckets: bool = False) -> None:
        super().__init__()
        self.num_buckets = config.relative_buckets
        self.max_distance = config.relative_max_distance
        self.cls_buckets = cls_buckets
        self.bias = nn.Embedding(self.num_buckets + int(cls_buckets), config.num_attention_heads)

    def buckets(self, positions: torch.Tensor) -> torch.Tensor:
        buckets = t5_buckets(relative_offsets(positions), self.num_buckets, self.max_distance)
        if self.cls_buckets:
            n = positions.shape[-1]
            rows = torch.arange(n, device=positions.device)
            first_row = (rows == 0).unsqueeze(-1)  # [n, 1]
            first_col = (rows == 0).unsqueeze(0)  # [1, n]
            buckets = torch.where(first_col, self.num_buckets, buckets)
            buckets = torch.where(first_row, self.num_buckets // 2, buckets)
        return buckets

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.bias(self.buckets(positions)).permute(0, 3, 1, 2)


class AlibiBias(nn.Module):
    """-m_h |i - j| (Press et al. 2022): fixed slopes, no parameters."""

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self.heads = config.num_attention_heads

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        slopes = alibi_slopes(self.heads).to(positions.device)
        distance = relative_offsets(positions).abs().unsqueeze(1).float()  # [B, 1, n, n]
        return -slopes.view(1, -1, 1, 1) * distance


class TisaScore(nn.Module):
    """F[i, j] = f_h(j - i), f(k) = sum_s a_s exp(-|b_s| (k - c_s)^2) (Wennberg & Henter Eq. 5).

    The paper's convention k = j - i (their released code uses i - j - 1; we follow the
    paper). f is evaluated once per distinct offset and gathered, so every entry with the
    same j - i is the same number. 3 S H parameters per layer. Initialisation for training
    from scratch (the paper regresses onto a pretrained model instead): a ~ N(0, std),
    |b| = 0.5, centres c spread evenly over -(S-1)/2 .. (S-1)/2.
    """

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        shape = (config.num_attention_heads, config.tisa_kernels)
        self.amplitude = nn.Parameter(torch.zeros(shape))
        self.sharpness = nn.Parameter(torch.zeros(shape))
        self.centre = nn.Parameter(torch.zeros(shape))

    def profile(self, offsets: torch.Tensor) -> torch.Tensor:
        """f_h(k) for offsets [K] -> [H, K]."""
        k = offsets.to(self.amplitude.dtype).view(1, 1, -1)
        a, b, c = (t.unsqueeze(-1) for t in (self.amplitude, self.sharpness, self.centre))
        return (a * torch.exp(-b.abs() * (k - c) ** 2)).sum(dim=1)

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        offsets = relative_offsets(positions)
        reach = int(offsets.abs().max()) if offsets.numel() else 0
        grid = torch.arange(-reach, reach + 1, device=positions.device)
        table = self.profile(grid)  # [H, 2 reach + 1]
        return table[:, offsets + reach].permute(1, 0, 2, 3)


class AttenuationScore(nn.Module):
    """delta_ij = softmax_j(a_ij) of Chen et al. Eq. 8, for one layer.

    ``attenuation_learnable``: ``head`` (w, s per head: BERT-A*), ``layer`` (one w, s shared
    by the layer's heads: BERT-A*-s) or ``fixed`` (the config's w, s, no parameters). The
    softmax runs over the real keys of each sequence (padding excluded), so padding never
    changes a sequence's delta; without a mask it runs over all n positions.
    """

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self.learnable = config.attenuation_learnable
        self.init_w = float(config.attenuation_w)
        self.init_s = float(config.attenuation_s)
        count = {"head": config.num_attention_heads, "layer": 1}.get(self.learnable)
        if count is not None:
            self.w = nn.Parameter(torch.full((count,), self.init_w))
            self.s = nn.Parameter(torch.full((count,), self.init_s))

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


class ShawRelativeKeys(nn.Module):
    """delta_ij = q_i · a_clip(j - i) / sqrt(d) (Shaw et al. 2018, relative keys only).

    One table of 2k + 1 key embeddings of head size per layer, shared by the heads as in the
    paper; offsets beyond k are clipped. The scores against all 2k + 1 embeddings are taken
    once and gathered, instead of materialising an n x n x d tensor.
    """

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self.clip = config.shaw_max_distance
        self.keys = nn.Embedding(2 * self.clip + 1, config.head_size)

    def forward(self, query: torch.Tensor, positions: torch.Tensor, scale: float) -> torch.Tensor:
        index = relative_offsets(positions).clamp(-self.clip, self.clip) + self.clip  # [B, n, n]
        scores = torch.matmul(query, self.keys.weight.t()) * scale  # [B, H, n, 2k + 1]
        batch, heads, n, _ = scores.shape
        index = index.unsqueeze(1).expand(batch, heads, n, n)
        return torch.gather(scores, -1, index)


def build_shared(config: PEConfig) -> nn.Module | None:
    """The model-level delta module of ``config`` (None when the scheme has none)."""
    if config.scheme == "t5":
        return T5RelativeBias(config)
    if config.scheme == "alibi":
        return AlibiBias(config)
    if config.scheme in TUPE:
        from posharness.models.zoo.encoder.tupe import TupeScore

        return TupeScore(config)
    return None


def build_layer_score(config: PEConfig) -> nn.Module | None:
    """The per-layer delta module of ``config`` (None when the scheme has none)."""
    if config.scheme == "tisa":
        return TisaScore(config)
    if config.scheme in ("attenuated", "sequence"):
        return AttenuationScore(config)
    if config.scheme == "shaw":
        return ShawRelativeKeys(config)
    return None
