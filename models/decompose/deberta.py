"""DeBERTa v1–v3: disentangled attention (He et al. 2021, Eq. 2 and 4).

The logit of query i and key j is c2c + c2p + p2c, all under one scale 1/sqrt(d·s) with
s = 1 + the number of position terms the checkpoint uses:

    A_ij = Q_i·K_j  +  Q_i·K^r_δ(i,j)  +  K_j·Q^r_δ(j,i)

gamma is c2c. delta is the model's own ``disentangled_attention_bias`` (v2/v3) or
``disentangled_att_bias`` (v1), called unchanged so bucketing, clamping and shared keys
stay the model's. There is no p2p term. Both position terms read token content (the query
in c2p, the key in p2c), so the exact delta is not content-free; ``mean-qk`` replaces the
query and key inside them by the layer's corpus-mean query and key, which makes delta a
function of i - j alone and leaves the difference as a stated residual.

DeBERTa computes its own attention, so each ``DisentangledSelfAttention`` gets its
forward replaced (per instance). The replacement keeps the model's masking: the mask is
the outer product of the padding mask, filled with the dtype's minimum before the
softmax. Real tokens therefore give padding exactly zero weight in every mode, while a
padded query row, being fully masked, spreads uniformly over all positions (padding
included) as the unmodified model does; its output never reaches a real token.

v1 (``model_type`` "deberta") differs in layout (fused ``in_proj`` with a separate query
bias, [B, H, T, d] tensors, the scale folded into the query) and may mix heads before and
after the softmax ("talking heads"); the logit mixing is linear without bias, so it is
applied to gamma and delta separately and the split stays exact.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import Split, choose_scores, module_mode, runs_fused
from posharness.models.decompose.fused import Fused, fused_attend, without_gamma
from posharness.models.decompose.mode_split import (
    Definition,
    Reference,
    base_model,
    install_once,
)

if TYPE_CHECKING:
    import torch
    from torch import nn

DEFINITION_ATTR = "posharness_deberta_definition"
MEAN_QK_ATTR = "posharness_mean_qk"  # (mean query, mean key), unscaled, in the module's layout
TALKING_HEADS = (
    "DeBERTa v1 talking heads mix the heads' logits before the softmax and their weights "
    "after it, which one fused attention call per head cannot express"
)

EXACT = "c2p+p2c"
MEAN_QK = "mean-qk"
EXACT_DEFINITION = Definition(
    name=EXACT,
    description="gamma = c2c Q_i·K_j, delta = c2p + p2c (the model's relative terms)",
    exact=True,
    content_free_delta=False,
)
MEAN_QK_DEFINITION = Definition.estimate(
    MEAN_QK,
    "gamma = c2c, delta = c2p with the mean query + p2c with the mean key "
    "(corpus means); the rest of c2p + p2c is the residual",
)


def _is_v1(module: nn.Module) -> bool:
    return hasattr(module, "in_proj")


def _scale_factor(module: nn.Module) -> int:
    kinds = module.pos_att_type
    if _is_v1(module):
        return 1 + len(kinds)
    return 1 + ("c2p" in kinds) + ("p2c" in kinds)


def _scale(module: nn.Module, like: torch.Tensor) -> torch.Tensor:
    """sqrt(d·s) as the model computes it (v1 and v2 share the helper's definition)."""
    from transformers.models.deberta_v2.modeling_deberta_v2 import scaled_size_sqrt

    return scaled_size_sqrt(like, _scale_factor(module)).to(like.dtype)


def _mix_logits(module: nn.Module) -> Callable[[torch.Tensor], torch.Tensor]:
    """v1 talking heads mix logits across heads; identity everywhere else."""
    proj = getattr(module, "head_logits_proj", None)
    if proj is None:
        return lambda scores: scores
    return lambda scores: proj(scores.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


def _talking_heads(module: nn.Module) -> bool:
    """Heads mixed before or after the softmax: no fused path (:data:`TALKING_HEADS`)."""
    return any(
        getattr(module, name, None) is not None
        for name in ("head_logits_proj", "head_weights_proj")
    )


# ---- per-version projections and position terms ------------------------------------------


def _project_v2(module: Any, hidden: torch.Tensor, query_states: torch.Tensor | None):
    """q, k, v as v2 lays them out for ``disentangled_attention_bias``: [B*H, T, d]."""
    heads = module.num_attention_heads
    source = hidden if query_states is None else query_states
    query = module.transpose_for_scores(module.query_proj(source), heads)
    key = module.transpose_for_scores(module.key_proj(hidden), heads)
    value = module.transpose_for_scores(module.value_proj(hidden), heads)
    return query, key, value


def _project_v1(module: Any, hidden: torch.Tensor, query_states: torch.Tensor | None):
    """q (already divided by the scale, as v1 does), k, v: [B, H, T, d]."""
    if query_states is not None:
        raise NotImplementedError(
            "DeBERTa v1 query_states (z_steps) is not supported by the decomposed forward"
        )
    query, key, value = module.transpose_for_scores(module.in_proj(hidden)).chunk(3, dim=-1)
    query = query + module.transpose_for_scores(module.q_bias[None, None, :])
    value = value + module.transpose_for_scores(module.v_bias[None, None, :])
    return query / _scale(module, query), key, value


def _position_terms(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    relative_pos: torch.Tensor | None,
    rel_embeddings: torch.Tensor | None,
) -> torch.Tensor | None:
    """c2p + p2c from the model's own method, in the layout it is given (None: no terms)."""
    if not module.relative_attention:
        return None
    factor = _scale_factor(module)
    if _is_v1(module):
        if rel_embeddings is None or relative_pos is None:
            return None  # v1 skips the bias in this case
        terms = module.disentangled_att_bias(query, key, relative_pos, rel_embeddings, factor)
    else:
        terms = module.disentangled_attention_bias(query, key, relative_pos, rel_embeddings, factor)
    return terms if not isinstance(terms, int) else None  # no c2p/p2c configured


def _query_weight(module: Any) -> torch.Tensor:
    return module.in_proj.weight if _is_v1(module) else module.query_proj.weight


def _to_heads(module: Any, scores: torch.Tensor) -> torch.Tensor:
    """[B*H, n, m] (v2) or [B, H, n, m] (v1) -> [B, H, n, m]."""
    return scores.view(-1, module.num_attention_heads, scores.size(-2), scores.size(-1))


def _mean_position_terms(
    module: Any, length: int, relative_pos: Any, rel_embeddings: Any
) -> torch.Tensor:
    """c2p with the mean query, p2c with the mean key: content-free, [1, H, n, n]."""
    import torch

    means = getattr(module, MEAN_QK_ATTR, None)
    if means is None:
        raise RuntimeError(
            "DeBERTa mean-qk needs prepare() with a reference before the split is used"
        )
    weight = _query_weight(module)  # the model may have moved or been cast since prepare
    mean_query, mean_key = (m.to(device=weight.device, dtype=weight.dtype) for m in means)
    query = mean_query.expand(*mean_query.shape[:-2], length, -1)
    key = mean_key.expand(*mean_key.shape[:-2], length, -1)
    if _is_v1(module):
        query = query / _scale(module, query)
    terms = _position_terms(module, query, key, relative_pos, rel_embeddings)
    if terms is None:
        heads = module.num_attention_heads
        return torch.zeros(1, heads, length, length, dtype=query.dtype, device=query.device)
    return _to_heads(module, terms)


# ---- the replacement forward --------------------------------------------------------------


def _decomposed_forward(
    self: Any,
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor,
    output_attentions: bool = False,
    query_states: torch.Tensor | None = None,
    relative_pos: torch.Tensor | None = None,
    rel_embeddings: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """DisentangledSelfAttention.forward with the logits chosen by the module's mode."""
    import torch

    v1 = _is_v1(self)
    project = _project_v1 if v1 else _project_v2
    query, key, value = project(self, hidden_states, query_states)
    if self.relative_attention and rel_embeddings is not None:
        rel_embeddings = self.pos_dropout(rel_embeddings)
    if runs_fused(self, output_attentions) and not _talking_heads(self):
        context = _fused_context(
            self, query, key, value, attention_mask, relative_pos, rel_embeddings
        )
        return context.view(*context.shape[:-2], -1), None
    if v1:
        c2c = torch.matmul(query, key.transpose(-1, -2))
    else:
        c2c = torch.bmm(query, key.transpose(-1, -2) / _scale(self, query))
    c2c = _to_heads(self, c2c)
    terms = _position_terms(self, query, key, relative_pos, rel_embeddings)
    exact_delta = torch.zeros_like(c2c[:1]) if terms is None else _to_heads(self, terms)
    mix = _mix_logits(self)

    def both() -> torch.Tensor:
        return mix(c2c if terms is None else c2c + exact_delta)

    def split() -> Split:
        if getattr(self, DEFINITION_ATTR, EXACT) == EXACT:
            return Split(gamma=mix(c2c), delta=mix(exact_delta))
        mean = mix(_mean_position_terms(self, c2c.size(-1), relative_pos, rel_embeddings))
        return Split(gamma=mix(c2c), delta=mean, residual=mix(exact_delta) - mean)

    scores = choose_scores(self, both, split)
    scores = scores.expand_as(c2c).masked_fill(~attention_mask.bool(), torch.finfo(query.dtype).min)
    probs = self.dropout(torch.nn.functional.softmax(scores, dim=-1))
    weights_proj = getattr(self, "head_weights_proj", None)
    if weights_proj is not None:
        probs = weights_proj(probs.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
    value = _to_heads(self, value)
    context = torch.matmul(probs, value).permute(0, 2, 1, 3).contiguous()
    context = context.view(*context.shape[:-2], -1)
    return context, (probs if output_attentions else None)


def _fused_context(
    self: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor,
    relative_pos: torch.Tensor | None,
    rel_embeddings: torch.Tensor | None,
) -> torch.Tensor:
    """The mode through SDPA: c2c is q·k in the kernel, c2p + p2c (exact or mean-qk)
    the additive bias, positional mode zero q and k. [B, n, H, d].

    The model's mask is the padding outer product it fills with the dtype's minimum;
    as an additive mask it gives the same weights (a fully masked padding row is
    uniform in both).
    """
    mode = module_mode(self)
    # v1 has already divided the query by the scale
    scaling = 1.0 if _is_v1(self) else (query.size(-1) * _scale_factor(self)) ** -0.5
    bias = None
    if mode is Mode.POSITIONAL and getattr(self, DEFINITION_ATTR, EXACT) != EXACT:
        bias = _mean_position_terms(self, query.size(-2), relative_pos, rel_embeddings)
    elif mode is not Mode.CONTEXTUAL:  # in the model's own layout, before the reshape
        terms = _position_terms(self, query, key, relative_pos, rel_embeddings)
        bias = None if terms is None else _to_heads(self, terms)
    query, key, value = (_to_heads(self, t) for t in (query, key, value))
    fused = without_gamma(query, key, bias) if mode is Mode.POSITIONAL else Fused(query, key, bias)
    return fused_attend(self, fused, value, attention_mask.bool(), scaling, self.dropout.p)


# ---- the family ---------------------------------------------------------------------------


def _mean_query_key(module: Any, mean_input: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Projections of the mean attention input (means pass through linear maps)."""
    x = mean_input[None, None, :]
    if _is_v1(module):
        query, key, _ = module.transpose_for_scores(module.in_proj(x)).chunk(3, dim=-1)
        query = query + module.transpose_for_scores(module.q_bias[None, None, :])
        return query, key  # [1, H, 1, d]
    heads = module.num_attention_heads
    query = module.transpose_for_scores(module.query_proj(x), heads)
    key = module.transpose_for_scores(module.key_proj(x), heads)
    return query, key  # [H, 1, d]


class DebertaSplit:
    name = "DeBERTa disentangled relative attention"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    option = "deberta"
    definitions = (EXACT_DEFINITION, MEAN_QK_DEFINITION)
    uses_attention_interface = False

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [layer.attention.self for layer in base_model(model).encoder.layer]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        """v2/v3: ``query_proj``; v1: the fused ``in_proj`` (same input)."""
        return [
            module.in_proj if _is_v1(module) else module.query_proj
            for module in self.attention_modules(model)
        ]

    def eager_reason(self, config: Mapping[str, Any]) -> str | None:
        """A v1 checkpoint with ``talking_head`` set cannot fuse (:data:`TALKING_HEADS`)."""
        return TALKING_HEADS if config.get("talking_head") else None

    def install(self, model: nn.Module) -> None:
        def install(module: nn.Module) -> None:
            module.forward = types.MethodType(_decomposed_forward, module)
            setattr(module, DEFINITION_ATTR, EXACT)
            setattr(module, MEAN_QK_ATTR, None)

        install_once(self.attention_modules(model), install)

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        """Select the definition; with a reference, also store each layer's mean q and k.

        The mean is over positions as well as sequences, so mean-qk's delta depends on
        i - j only. The means are kept under ``c2p+p2c`` too, so that definition can
        still report the content-free positional scores.
        """
        import torch

        if definition.needs_reference and reference is None:
            raise ValueError(f"DeBERTa {definition.name} needs a reference (mean inputs)")
        modules = self.attention_modules(model)
        for layer, module in enumerate(modules):
            setattr(module, DEFINITION_ATTR, definition.name)
            means = None
            if reference is not None:
                weight = _query_weight(module)
                mean_input = reference.inputs[layer].mean(dim=0)
                mean_input = mean_input.to(device=weight.device, dtype=weight.dtype)
                with torch.no_grad():
                    means = _mean_query_key(module, mean_input)
            setattr(module, MEAN_QK_ATTR, means)

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor | None:
        """The mean-qk delta per layer [L, H, n, n]; None when no reference was prepared.

        Under ``mean-qk`` this is exactly what positional mode puts in the softmax. Under
        ``c2p+p2c`` the positional mode uses the exact, content-dependent delta, so no
        content-free table equals it; the mean-qk table is returned as its content-free
        summary when ``prepare`` was given a reference, else None.
        """
        import torch

        modules = self.attention_modules(model)
        if any(getattr(m, MEAN_QK_ATTR, None) is None for m in modules):
            return None
        encoder = base_model(model).encoder
        weight = next(model.parameters())
        probe = torch.zeros(1, length, 1, device=weight.device)
        relative_pos = encoder.get_rel_pos(probe)
        with torch.no_grad():
            rel_embeddings = encoder.get_rel_embedding()
            layers = [
                _mix_logits(m)(_mean_position_terms(m, length, relative_pos, rel_embeddings))[0]
                for m in modules
            ]
        return torch.stack(layers).float().cpu()
