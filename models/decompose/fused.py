"""Attention in one mode through torch's fused ``scaled_dot_product_attention``.

softmax(gamma + delta + mask) with gamma = q·k·scale is SDPA with ``attn_mask`` = delta +
mask, so every family states its mode as (query, key, additive bias) — the modified
queries/keys for gamma, the positional term in the bias, zero queries where the mode
drops gamma — and this one function runs it. No softmax attention is written by hand on
this path; the eager path (core.py ``attend``) stays for calls that return weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from torch import nn


@dataclass
class Fused:
    """One mode as a single SDPA call: softmax(query·keyᵀ·scale + bias + mask)·value.

    ``query``/``key`` are the (possibly modified) projections whose product is the mode's
    gamma — zero for ``positional``, which drops gamma — and ``bias`` the already-scaled
    additive terms (positional bias, relative terms), broadcastable to [B, H, n, m];
    None when there are none. A content-free table may come with batch size 1.
    """

    query: torch.Tensor
    key: torch.Tensor
    bias: torch.Tensor | None = None


def without_gamma(query: torch.Tensor, key: torch.Tensor, bias: Any) -> Fused:
    """Positional mode in SDPA terms: zero queries and keys make q·k exactly 0, so the
    softmax sees delta (+ mask) alone, and, as in eager, no gradient reaches W_Q, W_K."""
    return Fused(query.new_zeros(query.shape), key.new_zeros(key.shape), bias)


def additive_mask(mask: torch.Tensor | None, dtype: Any) -> torch.Tensor | None:
    """A boolean keep-mask as 0 / the dtype's minimum; a float mask as it is.

    The minimum rather than -inf, as transformers' eager masks use: a row with no real
    key spreads evenly instead of turning into NaN, in both paths alike.
    """
    import torch

    if mask is None:
        return None
    if mask.dtype == torch.bool:
        return torch.where(mask, 0.0, torch.finfo(dtype).min).to(dtype)
    return mask.to(dtype)


def fused_attend(
    module: nn.Module,
    fused: Fused,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float,
) -> torch.Tensor:
    """torch's ``scaled_dot_product_attention`` for one mode; returns [B, n, H, d] as
    :func:`attend` does. ``attention_mask`` is additive (float) or a boolean keep-mask."""
    import torch

    batch = value.shape[0]
    query, key = fused.query.to(value.dtype), fused.key.to(value.dtype)
    if query.shape[0] != batch:  # a content-free table: [1, H, n, d]
        query = query.expand(batch, *query.shape[1:])
    if key.shape[0] != batch:
        key = key.expand(batch, *key.shape[1:])
    mask = additive_mask(attention_mask, value.dtype)
    if mask is not None:
        mask = mask[..., : key.shape[-2]]
    if fused.bias is not None:
        bias = fused.bias.to(value.dtype)
        mask = bias if mask is None else bias + mask
    output = torch.nn.functional.scaled_dot_product_attention(
        query,
        key,
        value,
        attn_mask=mask,
        dropout_p=dropout if module.training else 0.0,
        scale=scaling,
    )
    return output.transpose(1, 2).contiguous()
