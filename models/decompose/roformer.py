"""RoFormer's rotary attention in the three modes (interleaved pairs, its own forward
replaced per instance). The definition is in ``rope.py``."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from posharness.base.errors import UnsupportedModeError
from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import (
    Split,
    attend,
    choose_scores,
    module_mode,
    runs_fused,
)
from posharness.models.decompose.fused import Fused, fused_attend
from posharness.models.decompose.mode_split import Definition, base_model, install_once
from posharness.models.decompose.rope import (
    MeanQueryKey,
    RotarySplit,
    Rotate,
    as_float,
    mean_qk_delta,
    on_device_of,
    require_means,
    rope_symmetry_parts,
    rotated_means,
    split_of,
)

if TYPE_CHECKING:
    import torch
    from torch import nn


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
    if runs_fused(self, output_attentions):
        fused = _fused(self, query, key, rotated_query, rotated_key, rotate)
        scaling = 1.0 / math.sqrt(self.attention_head_size)
        output = fused_attend(self, fused, value, attention_mask, scaling, self.dropout.p)
        return output.view(*output.shape[:-2], self.all_head_size), None
    score = _roformer_scores(self)

    def split() -> Split:
        gamma = score(query, key)
        means = on_device_of(require_means(self), query)
        delta = mean_qk_delta(means, rotate, query.shape[-2], score).to(gamma.dtype)
        return split_of(gamma, delta, score(rotated_query, rotated_key))

    scores = choose_scores(self, lambda: score(rotated_query, rotated_key), split)
    output, weights = attend(self, scores, attention_mask, value, self.dropout.p)
    output = output.view(*output.shape[:-2], self.all_head_size)
    return output, weights


def _fused(
    module: Any, query: Any, key: Any, rotated_query: Any, rotated_key: Any, rotate: Rotate
) -> Fused:
    """The mode's SDPA inputs: rotated, unrotated, or the rotated mean q̄, k̄."""
    mode = module_mode(module)
    if mode is Mode.BOTH:
        return Fused(rotated_query, rotated_key)
    if mode is Mode.CONTEXTUAL:
        return Fused(query, key)
    means = on_device_of(require_means(module), query)
    return Fused(*rotated_means(means, rotate, query.shape[-2]))


class RoFormerSplit(RotarySplit):
    name = "rotary (RoFormer: interleaved pairs)"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    uses_attention_interface = False

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [layer.attention.self for layer in base_model(model).encoder.layer]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        return [module.query for module in self.attention_modules(model)]

    def install(self, model: nn.Module) -> None:
        def install(module: nn.Module) -> None:
            module.forward = types.MethodType(_roformer_forward, module)

        install_once(self.attention_modules(model), install)

    def project_means(self, module: nn.Module, mean: torch.Tensor) -> MeanQueryKey:
        import torch

        heads, size = module.num_attention_heads, module.attention_head_size
        mean = mean.to(module.query.weight.device)
        query = torch.nn.functional.linear(
            mean, module.query.weight.float(), as_float(module.query.bias)
        )
        key = torch.nn.functional.linear(mean, module.key.weight.float(), as_float(module.key.bias))
        return MeanQueryKey(query.view(heads, size).clone(), key.view(heads, size).clone())

    def sinusoidal_pos(self, model: nn.Module, length: int) -> torch.Tensor:
        """[1, 1, n, d] for positions 0..n−1, as RoFormerEncoder builds it."""
        import torch

        with torch.no_grad():
            table = base_model(model).encoder.embed_positions((1, length), 0)
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
                means = on_device_of(require_means(module), sinusoidal_pos)
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
            means = on_device_of(require_means(module), frequencies)
            scale = 1.0 / math.sqrt(module.attention_head_size)
            parts.append(
                rope_symmetry_parts(
                    means.query, means.key, frequencies, "interleaved", length, scale
                )
            )
        return parts
