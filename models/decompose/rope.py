"""Rotary position embeddings: ModernBERT (rotate-half) and RoFormer (interleaved).

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
attention at any length, :meth:`ModernBertFamily.positional_scores` folds that window in
(float32's minimum outside it); ``rotary_scores`` gives the unmasked table.
"""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from posharness.adapter import Mode
from posharness.errors import OptionError, UnsupportedModeError
from posharness.models.decompose.core import (
    ATTENTION_NAME,
    SPLITTER_ATTR,
    Split,
    attend,
    choose_scores,
    matmul_scores,
    module_mode,
)
from posharness.models.decompose.family import Definition, Reference

if TYPE_CHECKING:
    import torch
    from torch import nn

MEAN_QK = Definition(
    name="mean-qk",
    description="gamma = q·k unrotated; delta = mean-q · R(j-i) · mean-k (reference corpus)",
    exact=False,
    content_free_delta=True,
    needs_reference=True,
)

MEANS_ATTR = "posharness_mean_qk"  # MeanQueryKey on each attention module, set by prepare
ROTATION_ATTR = "posharness_rotation"  # ModernBERT: the (cos, sin) this call would have used
INSTALLED_ATTR = "posharness_rope_installed"

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


def mean_qk_delta(
    means: MeanQueryKey, rotate: Rotate, length: int, score: Callable[..., torch.Tensor]
) -> torch.Tensor:
    """delta = score(R_i q̄, R_j k̄): [B', H, n, n] for the positions ``rotate`` encodes.

    ``score`` is the model's own q·k scaling so delta lives on the logits' scale.
    """
    heads, size = means.query.shape
    query = means.query[None, :, None, :].expand(1, heads, length, size)
    key = means.key[None, :, None, :].expand(1, heads, length, size)
    rotated_query, rotated_key = rotate(query, key)
    return score(rotated_query, rotated_key)


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


def _require_means(module: nn.Module) -> MeanQueryKey:
    means = getattr(module, MEANS_ATTR, None)
    if means is None:
        raise RuntimeError("mean query/key are missing: call prepare() before the positional mode")
    return means


def _require_reference(reference: Reference | None) -> Reference:
    if reference is None:
        raise OptionError(
            "RoPE mean-qk needs reference statistics: pass --model-arg reference_corpus=FILE"
        )
    return reference


def _split(gamma: Any, delta: Any, logits: Any) -> Split:
    return Split(gamma=gamma, delta=delta, residual=logits - gamma - delta)


# -- ModernBERT -------------------------------------------------------------------------


def _modernbert_rotate(cos: torch.Tensor, sin: torch.Tensor) -> Rotate:
    from transformers.models.modernbert.modeling_modernbert import apply_rotary_pos_emb

    return lambda query, key: apply_rotary_pos_emb(query, key, cos, sin, unsqueeze_dim=1)


def _take_rotation(module: nn.Module, args: tuple, kwargs: dict) -> tuple[tuple, dict] | None:
    """Forward pre-hook: keep the call's (cos, sin) and let the module apply the identity.

    The splitter rotates for ``both`` (same function, same tensors, so the logits are the
    model's own) and so sees the pre-rotation q and k in every mode. Only active while the
    decomposed attention function is in charge; any other implementation gets the model's
    own rotation untouched.

    Per module rather than position ids 0 on the base model: same contextual logits, but
    modes may differ per layer, user-given position ids still count in the other modes,
    and the mask (built from no position ids) is untouched by construction. Identity =
    position 0 needs the default rope type (attention scaling 1), as every ModernBERT has.
    """
    import torch

    if module.config._attn_implementation != ATTENTION_NAME:
        return None
    positional = "position_embeddings" not in kwargs  # forward(hidden, position_embeddings)
    cos, sin = args[1] if positional else kwargs["position_embeddings"]
    setattr(module, ROTATION_ATTR, (cos, sin))
    identity = (torch.ones_like(cos), torch.zeros_like(sin))
    if positional:
        return (args[0], identity, *args[2:]), kwargs
    return args, {**kwargs, "position_embeddings": identity}


class ModernBertSplitter:
    """q and k arrive unrotated (see :func:`_take_rotation`); the call's rotation is stashed."""

    def _rotate(self, module: Any) -> Rotate:
        cos, sin = getattr(module, ROTATION_ATTR)
        return _modernbert_rotate(cos, sin)

    def both(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Any:
        rotated_query, rotated_key = self._rotate(module)(query, key)
        return matmul_scores(rotated_query, rotated_key, scaling)

    def split(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Split:
        means = _require_means(module)
        gamma = matmul_scores(query, key, scaling)
        delta = mean_qk_delta(
            _on(means, query), self._rotate(module), query.shape[-2], _scaled(scaling)
        ).to(gamma.dtype)
        return _split(gamma, delta, self.both(module, query, key, scaling, kwargs))


def _scaled(scaling: float) -> Callable[..., torch.Tensor]:
    return lambda query, key: matmul_scores(query, key, scaling)


def _on(means: MeanQueryKey, like: torch.Tensor) -> MeanQueryKey:
    return MeanQueryKey(means.query.to(like.device), means.key.to(like.device))


class ModernBertFamily:
    name = "rotary (ModernBERT: rotate-half, global and sliding-window layers)"
    option = "rope"
    definitions = (MEAN_QK,)
    uses_attention_interface = True

    def _base(self, model: nn.Module) -> Any:
        return getattr(model, "base_model", model)

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [layer.attn for layer in self._base(model).layers]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        return [module.Wqkv for module in self.attention_modules(model)]

    def install(self, model: nn.Module) -> None:
        for module in self.attention_modules(model):
            if getattr(module, INSTALLED_ATTR, False):
                continue
            setattr(module, SPLITTER_ATTR, ModernBertSplitter())
            module.register_forward_pre_hook(_take_rotation, with_kwargs=True)
            setattr(module, INSTALLED_ATTR, True)

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        import torch

        reference = _require_reference(reference)
        for layer, module in enumerate(self.attention_modules(model)):
            mean = mean_input(reference, layer)
            weight = module.Wqkv.weight.detach().float()
            bias = module.Wqkv.bias
            with torch.no_grad():
                projected = mean.to(weight.device) @ weight.T
                if bias is not None:
                    projected = projected + bias.detach().float()
            query, key, _ = projected.view(3, -1, module.head_dim).unbind(0)  # as Wqkv's view
            setattr(module, MEANS_ATTR, MeanQueryKey(query.clone(), key.clone()))

    def rotation(self, model: nn.Module, layer: int, length: int) -> tuple[Any, Any]:
        """(cos, sin) [1, n, d] of positions 0..n−1 from the model's rotary module, float32."""
        import torch

        base = self._base(model)
        layer_type = base.config.layer_types[layer]
        device = next(base.parameters()).device
        positions = torch.arange(length, device=device)[None]
        probe = torch.zeros(0, device=device, dtype=torch.float32)  # carries device and dtype
        return base.rotary_emb(probe, positions, layer_type)

    def window(self, model: nn.Module, layer: int) -> int | None:
        """Half-width of a local layer's window (|i − j| ≤ it is visible); None if global."""
        base = self._base(model)
        if base.config.layer_types[layer] != "sliding_attention":
            return None
        return int(base.config.sliding_window)

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        """The mean-qk table with each local layer's window folded in.

        Outside the window the entry is float32's minimum, as the model's eager mask adds,
        so softmax(scores) is the positional-mode attention at every length; the unmasked
        table is :meth:`rotary_scores`.
        """
        import torch

        scores = self.rotary_scores(model, length)
        offsets = torch.arange(length)[None, :] - torch.arange(length)[:, None]
        for layer in range(scores.shape[0]):
            window = self.window(model, layer)
            if window is not None:
                outside = (offsets.abs() > window).expand_as(scores[layer])
                scores[layer][outside] = torch.finfo(torch.float32).min
        return scores

    def rotary_scores(self, model: nn.Module, length: int) -> torch.Tensor:
        """delta = q̄ᵀ R(j−i) k̄ · scale per layer and head, [L, H, n, n], no window."""
        import torch

        tables = []
        with torch.no_grad():
            for layer, module in enumerate(self.attention_modules(model)):
                cos, sin = self.rotation(model, layer, length)
                means = _on(_require_means(module), cos)
                scaling = module.head_dim**-0.5
                delta = mean_qk_delta(means, _modernbert_rotate(cos, sin), length, _scaled(scaling))
                tables.append(delta[0].float().cpu())
        return torch.stack(tables)

    def symmetry_parts(self, model: nn.Module, length: int) -> list[tuple[Any, Any, Any]]:
        """Per layer :func:`rope_symmetry_parts` with that layer type's frequencies."""
        base = self._base(model)
        parts = []
        for layer, module in enumerate(self.attention_modules(model)):
            layer_type = base.config.layer_types[layer]
            frequencies = getattr(base.rotary_emb, f"{layer_type}_inv_freq")
            means = _on(_require_means(module), frequencies)
            parts.append(
                rope_symmetry_parts(
                    means.query, means.key, frequencies, "half", length, module.head_dim**-0.5
                )
            )
        return parts


# -- RoFormer ---------------------------------------------------------------------------


def _roformer_rotate(module: nn.Module, sinusoidal_pos: Any) -> Rotate:
    if sinusoidal_pos is None:
        return lambda query, key: (query, key)
    return lambda query, key: module.apply_rotary_position_embeddings(sinusoidal_pos, query, key)


def _roformer_scores(module: nn.Module) -> Callable[..., torch.Tensor]:
    """RoFormer's own scaling: q·k divided by sqrt(d), in that order (bitwise as trained)."""
    import torch

    root = math.sqrt(module.attention_head_size)
    return lambda query, key: torch.matmul(query, key.transpose(-1, -2)) / root


def _roformer_forward(
    self: Any,
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    sinusoidal_pos: torch.Tensor | None = None,
    encoder_hidden_states: torch.Tensor | None = None,
    past_key_values: Any = None,
    output_attentions: bool = False,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """RoFormerSelfAttention.forward for encoder self-attention, with the three modes.

    Values keep their rotation (``rotary_value``) in every mode: only the weights change.
    """
    if encoder_hidden_states is not None or past_key_values is not None:
        if module_mode(self) is not Mode.BOTH:
            raise UnsupportedModeError(
                "RoFormer attention modes cover encoder self-attention only (no cross-"
                "attention, no cache): use mode both for decoding"
            )
        return type(self).forward(
            self,
            hidden_states,
            attention_mask=attention_mask,
            sinusoidal_pos=sinusoidal_pos,
            encoder_hidden_states=encoder_hidden_states,
            past_key_values=past_key_values,
            output_attentions=output_attentions,
            **kwargs,
        )
    shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
    query = self.query(hidden_states).view(shape).transpose(1, 2)
    key = self.key(hidden_states).view(shape).transpose(1, 2)
    value = self.value(hidden_states).view(shape).transpose(1, 2)
    rotate = _roformer_rotate(self, sinusoidal_pos)
    if self.rotary_value and sinusoidal_pos is not None:
        rotated_query, rotated_key, value = self.apply_rotary_position_embeddings(
            sinusoidal_pos, query, key, value
        )
    else:
        rotated_query, rotated_key = rotate(query, key)
    score = _roformer_scores(self)

    def split() -> Split:
        gamma = score(query, key)
        means = _on(_require_means(self), query)
        delta = mean_qk_delta(means, rotate, query.shape[-2], score).to(gamma.dtype)
        return _split(gamma, delta, score(rotated_query, rotated_key))

    scores = choose_scores(self, lambda: score(rotated_query, rotated_key), split)
    output, weights = attend(self, scores, attention_mask, value, self.dropout.p)
    output = output.view(*output.shape[:-2], self.all_head_size)
    return output, weights


class RoFormerFamily:
    name = "rotary (RoFormer: interleaved pairs)"
    option = "rope"
    definitions = (MEAN_QK,)
    uses_attention_interface = False

    def _base(self, model: nn.Module) -> Any:
        return getattr(model, "base_model", model)

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [layer.attention.self for layer in self._base(model).encoder.layer]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        return [module.query for module in self.attention_modules(model)]

    def install(self, model: nn.Module) -> None:
        for module in self.attention_modules(model):
            if getattr(module, INSTALLED_ATTR, False):
                continue
            module.forward = types.MethodType(_roformer_forward, module)
            setattr(module, INSTALLED_ATTR, True)

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        import torch

        reference = _require_reference(reference)
        for layer, module in enumerate(self.attention_modules(model)):
            mean = mean_input(reference, layer)
            heads, size = module.num_attention_heads, module.attention_head_size
            with torch.no_grad():
                mean = mean.to(module.query.weight.device)
                query = torch.nn.functional.linear(
                    mean, module.query.weight.float(), _float(module.query.bias)
                )
                key = torch.nn.functional.linear(
                    mean, module.key.weight.float(), _float(module.key.bias)
                )
            means = MeanQueryKey(query.view(heads, size).clone(), key.view(heads, size).clone())
            setattr(module, MEANS_ATTR, means)

    def sinusoidal_pos(self, model: nn.Module, length: int) -> torch.Tensor:
        """[1, 1, n, d] for positions 0..n−1, as RoFormerEncoder builds it."""
        import torch

        with torch.no_grad():
            table = self._base(model).encoder.embed_positions((1, length), 0)
        return table[None, None, :, :].float()

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        return self.rotary_scores(model, length)

    def rotary_scores(self, model: nn.Module, length: int) -> torch.Tensor:
        """delta = q̄ᵀ R(j−i) k̄ / sqrt(d) per layer and head, [L, H, n, n]."""
        import torch

        sinusoidal_pos = self.sinusoidal_pos(model, length)
        tables = []
        with torch.no_grad():
            for module in self.attention_modules(model):
                means = _on(_require_means(module), sinusoidal_pos)
                rotate = _roformer_rotate(module, sinusoidal_pos)
                delta = mean_qk_delta(means, rotate, length, _roformer_scores(module))
                tables.append(delta[0].float().cpu())
        return torch.stack(tables)

    def symmetry_parts(self, model: nn.Module, length: int) -> list[tuple[Any, Any, Any]]:
        """Per layer :func:`rope_symmetry_parts`; frequencies read off position 1's angles."""
        import torch

        sin, cos = self.sinusoidal_pos(model, 2)[0, 0, 1].chunk(2)
        frequencies = torch.atan2(sin, cos)  # every RoFormer angle per unit step is below pi
        parts = []
        for module in self.attention_modules(model):
            means = _on(_require_means(module), frequencies)
            scale = 1.0 / math.sqrt(module.attention_head_size)
            parts.append(
                rope_symmetry_parts(
                    means.query, means.key, frequencies, "interleaved", length, scale
                )
            )
        return parts


def _float(bias: Any) -> Any:
    return None if bias is None else bias.detach().float()
