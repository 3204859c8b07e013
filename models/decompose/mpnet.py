"""MPNet: learned absolute embeddings at the input *and* a bucketed relative bias inside.

MPNet (Song et al. 2020) adds RoBERTa-style learned position embeddings to the word
embeddings (position ids start at padding_idx + 1) and, like T5, adds a bucketed relative
bias b_h[bucket(j - i)] to every layer's logits; the encoder computes the bias once and
hands it to each layer as ``position_bias``. The bias is an exact, content-free delta. The
absolute part is mixed into the hidden states, so only a stated approximation separates
it (docs/modes.md, "positional-stream"); the two definitions below differ in whether
they try.

``MPNetSelfAttention`` computes its own scores and never calls ``AttentionInterface``, so
each instance gets a replacement ``forward`` that routes the logits through
:func:`~posharness.models.decompose.core.choose_scores`.
"""

from __future__ import annotations

import math
import types
from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import (
    Split,
    attend,
    choose_scores,
    module_mode,
    runs_fused,
)
from posharness.models.decompose.fused import Fused, fused_attend, without_gamma
from posharness.models.decompose.mode_split import (
    Definition,
    Reference,
    base_model,
    install_once,
)
from posharness.models.decompose.stream import LayerStream

if TYPE_CHECKING:
    import torch
    from torch import nn

RELATIVE_BIAS = "relative-bias"
POSITIONAL_STREAM = "relative-bias+positional-stream"
STREAM_ATTR = "posharness_mpnet_stream"  # a LayerStream on each module, or None

RELATIVE_BIAS_DEFINITION = Definition(
    name=RELATIVE_BIAS,
    description=(
        "gamma = q·k/sqrt(d) (still holding the input-added absolute PE), "
        "delta = the shared bucketed relative bias b_h[bucket(j-i)]"
    ),
    exact=True,
    content_free_delta=True,
)
POSITIONAL_STREAM_DEFINITION = Definition.estimate(
    POSITIONAL_STREAM,
    "delta = q(u_i)·k(u_j)/sqrt(d) + relative bias, u_t = mean layer input at "
    "position t; gamma = q·k of x - u_t + mean(u); residual = the rest",
)


def _logits(module: Any, q: Any, k: Any, position_bias: Any) -> torch.Tensor:
    """The model's own logits, in its own order of operations (so ``both`` is bit-close)."""
    import torch

    scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(module.attention_head_size)
    return scores if position_bias is None else scores + position_bias


def _split(module: Any, q: Any, k: Any, position_bias: Any) -> Split:
    import torch

    scale = math.sqrt(module.attention_head_size)
    bias = torch.zeros_like(q[:1, :, :, :1]) if position_bias is None else position_bias[:1]
    stream: LayerStream | None = getattr(module, STREAM_ATTR, None)
    if stream is None:
        gamma = torch.matmul(q, k.transpose(-1, -2)) / scale
        return Split(gamma=gamma, delta=bias.expand(1, q.shape[1], q.shape[2], k.shape[2]))
    q_content, k_content = stream.content(q, k)
    gamma = torch.matmul(q_content, k_content.transpose(-1, -2)) / scale
    delta = stream.delta(q.shape[2], k.shape[2], q, 1.0 / scale) + bias
    residual = _logits(module, q, k, position_bias) - gamma - delta
    return Split(gamma=gamma, delta=delta, residual=residual)


def _fused(module: Any, q: Any, k: Any, position_bias: Any) -> Fused:
    """The mode's SDPA inputs; the bucketed bias always travels in the mask."""
    mode = module_mode(module)
    if mode is Mode.BOTH:
        return Fused(q, k, position_bias)
    stream: LayerStream | None = getattr(module, STREAM_ATTR, None)
    if mode is Mode.CONTEXTUAL:
        return Fused(q, k) if stream is None else Fused(*stream.content(q, k))
    bias = None if position_bias is None else position_bias[:1]
    if stream is None:
        return without_gamma(q, k, bias)
    return Fused(*stream.positional_qk(q.shape[2], k.shape[2], q), bias)


def _three_mode_forward(
    self: Any,
    hidden_states: torch.Tensor,
    attention_mask: torch.Tensor | None = None,
    position_bias: torch.Tensor | None = None,
    output_attentions: bool = False,
    **kwargs: Any,
) -> tuple[torch.Tensor, ...]:
    """``MPNetSelfAttention.forward`` with the logits chosen by the module's mode."""
    shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
    q = self.q(hidden_states).view(shape).transpose(1, 2)
    k = self.k(hidden_states).view(shape).transpose(1, 2)
    v = self.v(hidden_states).view(shape).transpose(1, 2)
    if runs_fused(self, output_attentions):
        scaling = 1.0 / math.sqrt(self.attention_head_size)
        fused = _fused(self, q, k, position_bias)
        context = fused_attend(self, fused, v, attention_mask, scaling, self.dropout.p)
        return (self.o(context.reshape(*context.shape[:2], self.all_head_size)),)
    scores = choose_scores(
        self,
        lambda: _logits(self, q, k, position_bias),
        lambda: _split(self, q, k, position_bias),
    )
    # A content-free delta is [1, H, n, n]: widen it so returned weights keep the batch size.
    scores = scores.expand(q.shape[0], *scores.shape[1:])
    context, weights = attend(self, scores, attention_mask, v, self.dropout.p)
    output = self.o(context.reshape(*context.shape[:2], self.all_head_size))
    return (output, weights) if output_attentions else (output,)


class MPNetSplit:
    """gamma/delta for MPNet; the bias is always delta, the absolute PE optionally too."""

    name = "MPNet (learned absolute input + bucketed relative bias)"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    option = "mpnet"
    definitions = (RELATIVE_BIAS_DEFINITION, POSITIONAL_STREAM_DEFINITION)
    uses_attention_interface = False

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        layers: Any = base_model(model).encoder.layer
        return [layer.attention.attn for layer in layers]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        modules: list[Any] = self.attention_modules(model)
        return [module.q for module in modules]

    def install(self, model: nn.Module) -> None:
        def install(module: nn.Module) -> None:
            module.forward = types.MethodType(_three_mode_forward, module)
            setattr(module, STREAM_ATTR, None)

        install_once(self.attention_modules(model), install)

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        modules = self.attention_modules(model)
        if definition.name != POSITIONAL_STREAM:
            for module in modules:
                setattr(module, STREAM_ATTR, None)
            return
        if reference is None:
            raise ValueError(f"{POSITIONAL_STREAM} needs a Reference (mean attention inputs)")
        for module, mean_inputs in zip(modules, reference.inputs, strict=True):
            stream = LayerStream.build(module.q, module.k, module.num_attention_heads, mean_inputs)
            setattr(module, STREAM_ATTR, stream)

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        import torch

        modules = self.attention_modules(model)
        device = next(model.parameters()).device
        with torch.no_grad():
            # The model's own bias for an unpadded sequence; only x's batch and length count.
            probe = torch.zeros(1, length, 1, device=device)
            bias = base_model(model).encoder.compute_position_bias(probe)[0].float()  # [H, n, n]
            if definition.name != POSITIONAL_STREAM:
                return bias.unsqueeze(0).expand(len(modules), *bias.shape).cpu().clone()
            layers = []
            for module in modules:
                stream = getattr(module, STREAM_ATTR, None)
                if stream is None:
                    raise ValueError(f"call prepare with {POSITIONAL_STREAM} first")
                scaling = 1.0 / math.sqrt(module.attention_head_size)
                layers.append(stream.delta(length, length, bias, scaling)[0] + bias)
        return torch.stack(layers).cpu()
