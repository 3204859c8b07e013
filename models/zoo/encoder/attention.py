"""Self-attention that keeps the contextual term gamma and the positional term delta apart.

Unified attention (Chen et al. 2023 Eq. 4; docs/modes.md): logits = gamma + delta, with
gamma = q·k scaled (1/sqrt(d); TUPE 1/sqrt(2d)) and delta the scheme's already-scaled
positional term. Modes: ``both`` softmax(gamma + delta), ``contextual`` softmax(gamma),
``positional`` softmax(delta); masking comes after. Values are untouched in every mode.

Per scheme, what delta is in each mode (``mode_support`` in modes.py names them):

* attention-level schemes (t5, alibi, tupe, tisa, attenuated, shaw): their term, all modes;
* input-added positions (``absolute``): gamma carries them through the input in ``both``;
  ``contextual`` drops them at the input (modeling.py); ``positional`` uses the layer's
  position-position term (p W_Q)(p W_K)^T scaled, p the layer-normed position rows (TUPE
  Eq. 7's fourth term, W with their biases), added to any attention-level delta;
* rope: gamma is the unrotated q·k; in ``both`` delta = rotated logits - gamma (recorded
  only; the forward uses the rotated logits); in ``positional`` delta = b_Q R_(j-i) b_K
  scaled, b the biases of W_Q, W_K: the content-free part of q and k, so delta depends on
  nothing in the batch;
* a combination (``posharness.pe.Combination``): its transform as rope's, and its logit
  terms added to the transformed logits in ``both`` and to the transformed biases' in
  ``positional``; a content logit term reads the untransformed query q = x W_Q + b_Q.

Without weights to return or record (``PositionContext.fused``), every mode runs through
``scaled_dot_product_attention`` (same sum, fused kernel): ``both`` with delta as an
additive mask (rope: rotated q, k), ``contextual`` with q, k alone, ``positional`` with
zero queries and keys and delta in the mask, or with the two factors of a product-form
delta as query and key (the pp-term's p W_Q and p W_K, rope's rotated biases). The
sequence scheme's PA is itself a softmax attention over X: SDPA with zero queries, the
attenuation logits as mask and X's heads as values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from posharness.models.zoo.encoder.config import PEConfig
from posharness.models.zoo.encoder.schemes import build_layer_score, content_scale_factor
from posharness.pe import ContentLogitTerm, LogitTerm

MODES = ("both", "contextual", "positional")
PATHS = ("auto", "eager", "sdpa")  # attention code choices (modeling.set_attention_path)


@dataclass
class PositionContext:
    """What every layer of one forward shares (built once by ``PEModel``)."""

    positions: torch.Tensor  # [B or 1, n] position ids
    key_mask: torch.Tensor | None  # [B, 1, 1, n] bool, True on real tokens
    mode: str
    shared_delta: torch.Tensor | None  # model-level delta (t5, alibi, tupe), [B or 1, H, n, n]
    position_states: torch.Tensor | None  # layer-normed input positions for the pp-term
    want_weights: bool
    record: list[LayerTerms] | None = None
    fused: bool = False  # SDPA: no weights to return or record, and the model allows it
    qk_transform: nn.Module | None = None  # the model's query/key transform (rope)

    @property
    def term_form(self) -> str:
        """Which form of a logit term this forward adds (``LogitTerm``'s three methods)."""
        if self.mode == "positional":
            return "positional"
        return "fused_bias" if self.fused else "delta"


@dataclass(frozen=True)
class LayerTerms:
    """One layer's terms as the forward used them; shapes broadcast to [B, H, n, n].

    ``logits`` are pre-mask: ``gamma + delta`` (both), ``gamma`` (contextual), ``delta``
    (positional); None for the sequence scheme's positional mode, where delta is used as
    the attention itself. ``probabilities`` are the post-softmax weights that met the values.
    """

    gamma: torch.Tensor
    delta: torch.Tensor
    logits: torch.Tensor | None
    probabilities: torch.Tensor


def masked_softmax(
    logits: torch.Tensor, key_mask: torch.Tensor | None, dtype: torch.dtype
) -> torch.Tensor:
    """Softmax over real keys in float32, returned in ``dtype`` (the values' dtype)."""
    if key_mask is not None:
        logits = logits.masked_fill(~key_mask, torch.finfo(logits.dtype).min)
    return torch.softmax(logits, dim=-1, dtype=torch.float32).to(dtype)


class _HeadsMixin:
    heads: int
    head_size: int

    def _projections(self, config: PEConfig) -> None:
        """Heads, head size and the query/key/value projections every attention shares."""
        self.heads = config.num_attention_heads
        self.head_size = config.head_size
        size = config.hidden_size
        self.query = nn.Linear(size, size)
        self.key = nn.Linear(size, size)
        self.value = nn.Linear(size, size)
        self.dropout = config.attention_probs_dropout_prob

    def split(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(*x.shape[:-1], self.heads, self.head_size).transpose(-3, -2)

    @staticmethod
    def merge(x: torch.Tensor) -> torch.Tensor:
        return x.transpose(-3, -2).flatten(-2)


def _fused(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bias: torch.Tensor | None,
    key_mask: torch.Tensor | None,
    scale: float,
    dropout: float,
) -> torch.Tensor:
    """SDPA with delta as an additive mask; padding gets the dtype's minimum, not -inf, so a
    sequence made only of padding averages its values (as the eager path does) instead of
    turning into NaN."""
    mask = None if bias is None else bias.to(q.dtype)
    if key_mask is not None:
        floor = torch.finfo(q.dtype).min
        mask = (
            torch.zeros(key_mask.shape, dtype=q.dtype, device=q.device).masked_fill(
                ~key_mask, floor
            )
            if mask is None
            else mask.masked_fill(~key_mask, floor)
        )
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout, scale=scale)


def _batch(x: torch.Tensor, batch: int) -> torch.Tensor:
    """A content-free [1, H, n, d] factor widened to the batch (a view, no copy)."""
    return x if x.shape[0] == batch else x.expand(batch, *x.shape[1:])


def _plus(term: torch.Tensor, other: torch.Tensor | None) -> torch.Tensor:
    """``term`` plus a combination's other logit terms (None: the scheme has none)."""
    return term if other is None else term + other


def _full(probabilities: torch.Tensor, batch: int, heads: int) -> torch.Tensor:
    """Content-free weights broadcast over batch (and heads, for a shared delta)."""
    return probabilities.expand(batch, heads, *probabilities.shape[2:])


class PESelfAttention(_HeadsMixin, nn.Module):
    """Multi-head self-attention for every scheme except ``sequence``."""

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self._projections(config)
        self.scale = 1.0 / math.sqrt(content_scale_factor(config) * self.head_size)
        self.input_positions = config.absolute != "none"
        self.layer_score = build_layer_score(config)

    def attention_delta(self, q: torch.Tensor, ctx: PositionContext) -> torch.Tensor | None:
        """The logit term of this forward: model-level plus this layer's term."""
        parts = [] if ctx.shared_delta is None else [ctx.shared_delta]
        score = self.layer_score
        if isinstance(score, LogitTerm):
            parts.append(getattr(score, ctx.term_form)(ctx.positions, ctx.key_mask))
        elif isinstance(score, ContentLogitTerm):
            parts.append(score(q, ctx.positions, self.scale))
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else sum(parts[1:], parts[0])

    def pp_term(self, states: torch.Tensor) -> torch.Tensor:
        """(p W_Q)(p W_K)^T scaled for layer-normed position rows p [B or 1, n, D]."""
        q, k = self.pp_factors(states)
        return torch.matmul(q, k.transpose(-1, -2)) * self.scale

    def pp_factors(self, states: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """p W_Q and p W_K per head, [B or 1, H, n, d]: the pp-term's two factors."""
        return self.split(self.query(states)), self.split(self.key(states))

    def rope_bias_factors(self, ctx: PositionContext) -> tuple[torch.Tensor, torch.Tensor]:
        """T_i(b_Q) and T_j(b_K), [B or 1, H, n, d]: the transformed query/key biases."""
        positions = ctx.positions
        n = positions.shape[-1]
        shape = (positions.shape[0], self.heads, n, self.head_size)
        qb = self.query.bias.view(1, self.heads, 1, self.head_size).expand(shape)
        kb = self.key.bias.view(1, self.heads, 1, self.head_size).expand(shape)
        transform = ctx.qk_transform.transform
        return transform(qb, positions, "query"), transform(kb, positions, "key")

    def rope_bias_delta(self, ctx: PositionContext) -> torch.Tensor:
        """b_Q R_(j-i) b_K scaled: rotary logits of the query/key biases alone."""
        qb, kb = self.rope_bias_factors(ctx)
        return torch.matmul(qb, kb.transpose(-1, -2)) * self.scale

    def positional_delta(self, q: torch.Tensor | None, ctx: PositionContext) -> torch.Tensor | None:
        """The delta of mode ``positional`` (``q`` is needed by Shaw only)."""
        if ctx.qk_transform is not None:  # with a combination's other terms, if any
            return _plus(self.rope_bias_delta(ctx), self.attention_delta(q, ctx))
        delta = self.attention_delta(q, ctx)
        if self.input_positions and ctx.position_states is not None:
            pp = self.pp_term(ctx.position_states)
            delta = pp if delta is None else delta + pp
        return delta

    @staticmethod
    def _rotated(
        q: torch.Tensor, k: torch.Tensor, ctx: PositionContext
    ) -> tuple[torch.Tensor, torch.Tensor]:
        transform = ctx.qk_transform.transform
        return transform(q, ctx.positions, "query"), transform(k, ctx.positions, "key")

    def fused_inputs(
        self, q: torch.Tensor, k: torch.Tensor, ctx: PositionContext
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """(query, key, additive bias) whose SDPA is the mode's attention (module doc)."""
        if ctx.mode == "contextual":
            return q, k, None
        if ctx.mode == "both":
            if ctx.qk_transform is not None:
                return (*self._rotated(q, k, ctx), self.attention_delta(q, ctx))
            return q, k, self.attention_delta(q, ctx)
        batch = q.shape[0]
        if ctx.qk_transform is not None:
            qb, kb = self.rope_bias_factors(ctx)
            return _batch(qb, batch), _batch(kb, batch), self.attention_delta(q, ctx)
        bias = self.attention_delta(q, ctx)
        if self.input_positions and ctx.position_states is not None:
            qp, kp = self.pp_factors(ctx.position_states)
            return _batch(qp, batch), _batch(kp, batch), bias
        return q.new_zeros(q.shape), k.new_zeros(k.shape), bias  # q·k = 0: gamma dropped

    def forward(
        self, hidden: torch.Tensor, ctx: PositionContext
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        q, k, v = (self.split(layer(hidden)) for layer in (self.query, self.key, self.value))
        dropout = self.dropout if self.training else 0.0
        recording = ctx.record is not None
        if ctx.fused:
            query, key, bias = self.fused_inputs(q, k, ctx)
            out = _fused(query, key, v, bias, ctx.key_mask, self.scale, dropout)
            return self.merge(out), None

        gamma = None
        if ctx.mode != "positional" or recording:
            gamma = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        if ctx.mode == "positional":
            delta = self.positional_delta(q, ctx)
            logits = delta
        elif ctx.qk_transform is not None and (ctx.mode == "both" or recording):
            qr, kr = self._rotated(q, k, ctx)
            rotated = torch.matmul(qr, kr.transpose(-1, -2)) * self.scale
            rotated = _plus(rotated, self.attention_delta(q, ctx))  # a combination's terms
            delta = rotated - gamma if recording else None
            logits = gamma + delta if recording and ctx.mode == "both" else rotated
        else:
            delta = self.attention_delta(q, ctx)
            logits = gamma + delta if ctx.mode == "both" and delta is not None else gamma
        if ctx.mode == "contextual":
            logits = gamma
        probabilities = masked_softmax(logits, ctx.key_mask, v.dtype)
        probabilities = _full(probabilities, hidden.shape[0], self.heads)
        weights = F.dropout(probabilities, p=dropout, training=self.training)
        out = torch.matmul(weights, v)
        if recording:
            if delta is None:
                delta = torch.zeros_like(gamma[:1, :1, :1, :1])
            ctx.record.append(LayerTerms(gamma, delta, logits, probabilities))
        return self.merge(out), probabilities


class PESequenceAttention(_HeadsMixin, nn.Module):
    """The sequence combination CA(PA(X)) (Chen et al. draft §5, Listings 2-3).

    PA uses delta (the scheme's weights: a softmax over real keys, or Chen et al.'s table
    itself) as the attention over X, split into heads with no projection (Listing 2); CA is
    ordinary content attention on PA's output. Modes are component ablations, not a logit split:
    ``contextual`` bypasses PA (CA(X)), ``positional`` puts the identity in place of CA
    (PA(X)). Recorded terms: gamma = CA's logits, delta = PA's weights.
    """

    def __init__(self, config: PEConfig) -> None:
        super().__init__()
        self._projections(config)
        self.scale = 1.0 / math.sqrt(self.head_size)
        self.layer_score = build_layer_score(config)

    def positional_attention(self, hidden: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return self.merge(torch.matmul(weights, self.split(hidden)))

    def fused_positional_attention(
        self, hidden: torch.Tensor, ctx: PositionContext
    ) -> torch.Tensor:
        """PA(X) through SDPA: zero queries and keys, PA's logits as the mask; weights that
        are no softmax (a learnable table) are applied as they are."""
        if not self.layer_score.weights_are_logits:
            weights = self.layer_score(ctx.positions, ctx.key_mask).to(hidden.dtype)
            return self.positional_attention(hidden, weights)
        values = self.split(hidden)
        logits = self.layer_score.logits(ctx.positions, ctx.key_mask)
        zeros = values.new_zeros(values.shape)
        return self.merge(_fused(zeros, zeros, values, logits, ctx.key_mask, 1.0, 0.0))

    def forward(
        self, hidden: torch.Tensor, ctx: PositionContext
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        if ctx.fused:
            return self._fused_forward(hidden, ctx), None
        recording = ctx.record is not None
        batch = hidden.shape[0]
        delta = None
        if ctx.mode != "contextual" or recording:
            weights = self.layer_score(ctx.positions, ctx.key_mask).to(hidden.dtype)
            delta = _full(weights, batch, self.heads)
        source = hidden if ctx.mode == "contextual" else self.positional_attention(hidden, delta)
        if ctx.mode == "positional":
            if recording:
                q, k = self.split(self.query(hidden)), self.split(self.key(hidden))
                gamma = torch.matmul(q, k.transpose(-1, -2)) * self.scale
                ctx.record.append(LayerTerms(gamma, delta, None, delta))
            return source, delta
        q, k, v = (self.split(layer(source)) for layer in (self.query, self.key, self.value))
        dropout = self.dropout if self.training else 0.0
        gamma = torch.matmul(q, k.transpose(-1, -2)) * self.scale
        probabilities = _full(masked_softmax(gamma, ctx.key_mask, v.dtype), batch, self.heads)
        out = torch.matmul(F.dropout(probabilities, p=dropout, training=self.training), v)
        if recording:
            ctx.record.append(LayerTerms(gamma, delta, gamma, probabilities))
        return self.merge(out), probabilities

    def _fused_forward(self, hidden: torch.Tensor, ctx: PositionContext) -> torch.Tensor:
        """CA(PA(X)) with both attentions fused; the modes bypass PA or CA as in eager."""
        if ctx.mode == "contextual":
            source = hidden
        else:
            source = self.fused_positional_attention(hidden, ctx)
            if ctx.mode == "positional":
                return source
        q, k, v = (self.split(layer(source)) for layer in (self.query, self.key, self.value))
        dropout = self.dropout if self.training else 0.0
        return self.merge(_fused(q, k, v, None, ctx.key_mask, self.scale, dropout))
