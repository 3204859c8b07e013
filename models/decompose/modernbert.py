"""ModernBERT's rotary attention in the three modes (rotate-half; global and
sliding-window layers with their own theta). The definition is in ``rope.py``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import (
    ATTENTION_NAME,
    SPLITTER_ATTR,
    Split,
    matmul_scores,
)
from posharness.models.decompose.fused import Fused
from posharness.models.decompose.mode_split import Definition, base_model, install_once
from posharness.models.decompose.rope import (
    MeanQueryKey,
    RotarySplit,
    Rotate,
    mean_qk_delta,
    on_device_of,
    require_means,
    rope_symmetry_parts,
    rotated_means,
    scaled,
    split_of,
)

if TYPE_CHECKING:
    import torch
    from torch import nn

ROTATION_ATTR = "posharness_rotation"  # the (cos, sin) this call would have used


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
        means = require_means(module)
        gamma = matmul_scores(query, key, scaling)
        delta = mean_qk_delta(
            on_device_of(means, query), self._rotate(module), query.shape[-2], scaled(scaling)
        ).to(gamma.dtype)
        return split_of(gamma, delta, self.both(module, query, key, scaling, kwargs))

    def fused(
        self, module: Any, mode: Mode, query: Any, key: Any, scaling: float, kwargs: dict
    ) -> Fused:
        """Rotated q, k (both); unrotated (contextual); the rotated mean q̄, k̄ (positional).
        The sliding window stays in the mask the model built."""
        if mode is Mode.CONTEXTUAL:
            return Fused(query, key)
        if mode is Mode.BOTH:
            return Fused(*self._rotate(module)(query, key))
        means = on_device_of(require_means(module), query)
        return Fused(*rotated_means(means, self._rotate(module), query.shape[-2]))


class ModernBertSplit(RotarySplit):
    name = "rotary (ModernBERT: rotate-half, global and sliding-window layers)"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    uses_attention_interface = True

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [layer.attn for layer in base_model(model).layers]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        return [module.Wqkv for module in self.attention_modules(model)]

    def install(self, model: nn.Module) -> None:
        def install(module: nn.Module) -> None:
            setattr(module, SPLITTER_ATTR, ModernBertSplitter())
            module.register_forward_pre_hook(_take_rotation, with_kwargs=True)

        install_once(self.attention_modules(model), install)

    def project_means(self, module: nn.Module, mean: torch.Tensor) -> MeanQueryKey:
        weight = module.Wqkv.weight.detach().float()
        projected = mean.to(weight.device) @ weight.T
        if module.Wqkv.bias is not None:
            projected = projected + module.Wqkv.bias.detach().float()
        query, key, _ = projected.view(3, -1, module.head_dim).unbind(0)  # as Wqkv's view
        return MeanQueryKey(query.clone(), key.clone())

    def rotation(self, model: nn.Module, layer: int, length: int) -> tuple[Any, Any]:
        """(cos, sin) [1, n, d] of positions 0..n−1 from the model's rotary module, float32."""
        import torch

        base = base_model(model)
        layer_type = base.config.layer_types[layer]
        device = next(base.parameters()).device
        positions = torch.arange(length, device=device)[None]
        probe = torch.zeros(0, device=device, dtype=torch.float32)  # carries device and dtype
        return base.rotary_emb(probe, positions, layer_type)

    def window(self, model: nn.Module, layer: int) -> int | None:
        """Half-width of a local layer's window (|i − j| ≤ it is visible); None if global."""
        base = base_model(model)
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
                means = on_device_of(require_means(module), cos)
                scaling = module.head_dim**-0.5
                delta = mean_qk_delta(means, _modernbert_rotate(cos, sin), length, scaled(scaling))
                tables.append(delta[0].float().cpu())
        return torch.stack(tables)

    def symmetry_parts(self, model: nn.Module, length: int) -> list[tuple[Any, Any, Any]]:
        """Per layer :func:`rope_symmetry_parts` with that layer type's frequencies."""
        base = base_model(model)
        parts = []
        for layer, module in enumerate(self.attention_modules(model)):
            layer_type = base.config.layer_types[layer]
            frequencies = getattr(base.rotary_emb, f"{layer_type}_inv_freq")
            means = on_device_of(require_means(module), frequencies)
            parts.append(
                rope_symmetry_parts(
                    means.query, means.key, frequencies, "half", length, module.head_dim**-0.5
                )
            )
        return parts
