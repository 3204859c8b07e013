"""Rotary position embeddings: what ModernBERT (``modernbert.py``, rotate-half) and RoFormer
(``roformer.py``, interleaved) share.

RoPE rotates query and key by their absolute positions, so position lives inside the
product q·k and no additive split exists (docs/modes.md, "RoPE"). The modes:

* ``contextual``: gamma = q·k *without* rotation — exactly the model run with every
  position id 0 (rotation by angle 0 is the identity), so it is exact as a counterfactual;
* ``positional``, definition ``mean-qk``: delta_ij = (R_i q̄)·(R_j k̄)·scale = q̄ᵀ R_(j−i) k̄·scale,
  with q̄, k̄ the layer's mean pre-rotation query and key per head. They come from the
  reference corpus by linearity: the mean attention input over positions and sequences,
  pushed through the query/key projection. delta depends on j − i only (Toeplitz) and on
  no token of the input (content-free).

The recorded :class:`Split` in every mode is gamma = unrotated q·k, delta = the mean-qk
table and residual = logits − gamma − delta (what RoPE's content × position coupling adds
beyond the two terms); the residual is large by nature, which is why ``exact`` is False.

Each model's own rotation code and frequencies are used: ModernBERT's ``rotary_emb`` with
one theta per layer type (global layers 160k, local sliding-window layers 10k) and its
``apply_rotary_pos_emb``; RoFormer's ``embed_positions`` and
``apply_rotary_position_embeddings``. ModernBERT's sliding-window mask is built by the
model before any layer runs and added after the scores are chosen, so local layers stay
local in every mode. So that softmax(positional_scores) stays the positional-mode
attention at any length, :meth:`ModernBertSplit.positional_scores` folds that window in
(float32's minimum outside it); ``rotary_scores`` gives the unmasked table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from posharness.base.errors import OptionError
from posharness.models.decompose.core import (
    Split,
    matmul_scores,
)
from posharness.models.decompose.mode_split import Definition, Reference

if TYPE_CHECKING:
    import torch
    from torch import nn

MEAN_QK = Definition.estimate(
    "mean-qk", "gamma = q·k unrotated; delta = mean-q · R(j-i) · mean-k (reference corpus)"
)

MEANS_ATTR = "posharness_mean_qk"  # MeanQueryKey on each attention module, set by prepare

# (query [..., T, d], key [..., T, d]) -> both rotated by the positions of the current call
Rotate = Callable[["torch.Tensor", "torch.Tensor"], tuple["torch.Tensor", "torch.Tensor"]]


@dataclass(frozen=True)
class MeanQueryKey:
    """One layer's mean pre-rotation query and key per head, [H, d], float32."""

    query: torch.Tensor
    key: torch.Tensor


def mean_input(reference: Reference, layer: int) -> torch.Tensor:
    """The layer's attention input averaged over positions (and the corpus), [D]."""
    return reference.inputs[layer].float().mean(dim=0)


def rotated_means(
    means: MeanQueryKey, rotate: Rotate, length: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(R_i q̄, R_j k̄) for positions 0..n−1, [B', H, n, d]: delta's two factors."""
    heads, size = means.query.shape
    query = means.query[None, :, None, :].expand(1, heads, length, size)
    key = means.key[None, :, None, :].expand(1, heads, length, size)
    return rotate(query, key)


def mean_qk_delta(
    means: MeanQueryKey, rotate: Rotate, length: int, score: Callable[..., torch.Tensor]
) -> torch.Tensor:
    """delta = score(R_i q̄, R_j k̄): [B', H, n, n] for the positions ``rotate`` encodes.

    ``score`` is the model's own q·k scaling so delta lives on the logits' scale.
    """
    return score(*rotated_means(means, rotate, length))


def rope_symmetry_parts(
    query: torch.Tensor,
    key: torch.Tensor,
    frequencies: torch.Tensor,
    pairs: str,
    length: int,
    scale: float,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """delta(k) per frequency pair split into a symmetric and an antisymmetric part.

    For pair (a, b) rotated by phi = theta·k (k = j − i),
    q̄ᵀ R(phi) k̄ = (q_a k_a + q_b k_b) cos phi + (q_b k_a − q_a k_b) sin phi: the cos part is
    even in k, the sin part odd (docs/modes.md, "RoPE": a free symmetry diagnostic).
    ``query``, ``key``: [H, d]; ``frequencies``: [d/2] angles per unit offset; ``pairs``:
    ``"half"`` (HF rotate-half, dims m and m + d/2) or ``"interleaved"`` (2m, 2m + 1).
    Returns (offsets [2n−1] from −(n−1) to n−1, cos part [H, d/2, 2n−1],
    sin part [H, d/2, 2n−1]); cos part + sin part, summed over pairs, is delta(k).
    """
    import torch

    half = query.shape[-1] // 2
    index = torch.arange(half, device=query.device)
    if pairs == "half":
        first, second = index, index + half
    elif pairs == "interleaved":
        first, second = 2 * index, 2 * index + 1
    else:
        raise ValueError(f"pairs must be 'half' or 'interleaved', not {pairs!r}")
    q_a, q_b = query[:, first].float(), query[:, second].float()
    k_a, k_b = key[:, first].float(), key[:, second].float()
    offsets = torch.arange(-(length - 1), length, device=query.device)
    phi = frequencies.float()[:, None] * offsets.float()[None, :]  # [d/2, 2n-1]
    even = (q_a * k_a + q_b * k_b)[..., None] * phi.cos() * scale
    odd = (q_b * k_a - q_a * k_b)[..., None] * phi.sin() * scale
    return offsets, even, odd


def require_means(module: nn.Module) -> MeanQueryKey:
    means = getattr(module, MEANS_ATTR, None)
    if means is None:
        raise RuntimeError("mean query/key are missing: call prepare() before the positional mode")
    return means


def require_reference(reference: Reference | None) -> Reference:
    if reference is None:
        raise OptionError(
            "RoPE mean-qk needs reference statistics: pass --model-arg reference_corpus=FILE"
        )
    return reference


def split_of(gamma: Any, delta: Any, logits: Any) -> Split:
    return Split(gamma=gamma, delta=delta, residual=logits - gamma - delta)


def scaled(scaling: float) -> Callable[..., torch.Tensor]:
    return lambda query, key: matmul_scores(query, key, scaling)


def on_device_of(means: MeanQueryKey, like: torch.Tensor) -> MeanQueryKey:
    return MeanQueryKey(means.query.to(like.device), means.key.to(like.device))


def as_float(bias: Any) -> Any:
    return None if bias is None else bias.detach().float()


class RotarySplit:
    """What the two rotary families share: the mean-qk definition, and preparing each
    layer's mean query and key from the reference corpus."""

    option = "rope"
    definitions = (MEAN_QK,)

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        raise NotImplementedError

    def project_means(self, module: nn.Module, mean: torch.Tensor) -> MeanQueryKey:
        """The layer's mean attention input through its own query and key projections."""
        raise NotImplementedError

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        """Each layer's mean pre-rotation q̄, k̄ from the reference corpus, by linearity."""
        import torch

        reference = require_reference(reference)
        for layer, module in enumerate(self.attention_modules(model)):
            with torch.no_grad():
                means = self.project_means(module, mean_input(reference, layer))
            setattr(module, MEANS_ATTR, means)
