"""One mechanism that turns any supported attention module into a three-mode one.

Every family reduces to the same question inside attention: which logits go into the
softmax? ``both`` keeps the model's own logits, ``contextual`` keeps gamma, ``positional``
keeps delta (docs/modes.md). The mode lives on each attention module
(``module.posharness_mode``) so it can be switched on a loaded model without reloading
and, if a study wants, set per layer.

Families that route attention through transformers' ``AttentionInterface`` get
:func:`decomposed_attention`, registered under :data:`ATTENTION_NAME` together with the
eager mask builder (without the mask registration transformers would hand the function
``None`` for padded batches). Families that bypass the interface (DeBERTa, XLNet,
RoFormer, MPNet) patch their own forward and call :func:`choose_scores` and
:func:`attend` from here, so the mode logic exists once.

When no attention weights are requested, each family expresses its mode as one
:class:`Fused` call instead (:func:`fused_attend`, torch's
``scaled_dot_product_attention``): same logits, no materialised weights (paths.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from posharness.contracts.adapter import Mode
from posharness.models.decompose.fused import Fused, fused_attend
from posharness.models.decompose.paths import EAGER, SDPA

if TYPE_CHECKING:
    import torch
    from torch import nn

ATTENTION_NAME = "posharness"
MODE_ATTR = "posharness_mode"
SPLITTER_ATTR = "posharness_splitter"
RECORD_ATTR = "posharness_record"
PATH_ATTR = "posharness_attention_path"  # SDPA or EAGER for calls that want no weights


@dataclass
class Split:
    """Already-scaled logit terms of one attention call: logits = gamma + delta + residual.

    Shapes broadcast to [B, H, n, m]; ``delta`` is often [1, H, n, m] (content-free).
    ``residual`` is None where the split is exact.
    """

    gamma: torch.Tensor
    delta: torch.Tensor
    residual: torch.Tensor | None = None


class Splitter(Protocol):
    """What a family attaches to each attention module that uses the shared function."""

    def both(
        self, module: nn.Module, query: Any, key: Any, scaling: float, kwargs: dict[str, Any]
    ) -> torch.Tensor:
        """The unmodified model's logits (before the mask)."""

    def split(
        self, module: nn.Module, query: Any, key: Any, scaling: float, kwargs: dict[str, Any]
    ) -> Split: ...

    def fused(
        self,
        module: nn.Module,
        mode: Mode,
        query: Any,
        key: Any,
        scaling: float,
        kwargs: dict[str, Any],
    ) -> Fused:
        """``mode``'s logits as SDPA inputs (the same numbers ``both``/``split`` give)."""


def module_mode(module: nn.Module) -> Mode:
    return getattr(module, MODE_ATTR, Mode.BOTH)


def choose_scores(
    module: nn.Module, both: Callable[[], torch.Tensor], split: Callable[[], Split]
) -> torch.Tensor:
    """The logits this module's mode asks for; computes the split only when needed.

    When a recorder list is attached (tests, residual diagnostics), the split and the
    model's own logits are appended to it whatever the mode.
    """
    mode = module_mode(module)
    record = getattr(module, RECORD_ATTR, None)
    if record is not None:
        record.append((both(), split()))
    if mode is Mode.BOTH:
        return both()
    parts = split()
    return parts.gamma if mode is Mode.CONTEXTUAL else parts.delta


def attend(
    module: nn.Module,
    scores: torch.Tensor,
    attention_mask: torch.Tensor | None,
    value: torch.Tensor,
    dropout: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mask, softmax, dropout and the weighted sum, as transformers' eager path does."""
    import torch

    if scores.shape[0] != value.shape[0]:  # a content-free delta is [1, H, n, m]
        scores = scores.expand(value.shape[0], *scores.shape[1:])
    if attention_mask is not None:
        if attention_mask.dtype == torch.bool:
            attention_mask = torch.where(attention_mask, 0.0, torch.finfo(scores.dtype).min).to(
                scores.dtype
            )
        scores = scores + attention_mask[..., : scores.shape[-1]]
    weights = torch.nn.functional.softmax(scores, dim=-1)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    output = torch.matmul(weights, value).transpose(1, 2).contiguous()
    return output, weights


def runs_fused(module: nn.Module, output_attentions: Any) -> bool:
    """SDPA for this call: the module is set to it, no weights are asked for and no
    recorder (tests, residual diagnostics) needs the logits."""
    return (
        getattr(module, PATH_ATTR, EAGER) == SDPA
        and not output_attentions
        and getattr(module, RECORD_ATTR, None) is None
    )


def decomposed_attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The attention function transformers calls for every module of an installed model."""
    import torch

    if scaling is None:
        scaling = query.size(-1) ** -0.5
    splitter: Splitter | None = getattr(module, SPLITTER_ATTR, None)
    if splitter is None:  # e.g. a decoder's cross-attention: plain eager attention
        scores = torch.matmul(query, key.transpose(2, 3)) * scaling
        bias = kwargs.get("position_bias")
        if bias is not None:
            scores = scores + bias
        return attend(module, scores, attention_mask, value, dropout)
    if runs_fused(module, kwargs.get("output_attentions")):
        fused = splitter.fused(module, module_mode(module), query, key, scaling, kwargs)
        return fused_attend(module, fused, value, attention_mask, scaling, dropout), None
    scores = choose_scores(
        module,
        lambda: splitter.both(module, query, key, scaling, kwargs),
        lambda: splitter.split(module, query, key, scaling, kwargs),
    )
    return attend(module, scores, attention_mask, value, dropout)


_registered = False


def register_attention_function() -> None:
    """Make ``attn_implementation="posharness"`` known to transformers (idempotent)."""
    global _registered
    if _registered:
        return
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(ATTENTION_NAME, decomposed_attention)
    AttentionMaskInterface.register(ATTENTION_NAME, eager_mask)
    _registered = True


def set_modes(modules: list[nn.Module], mode: Mode) -> None:
    for module in modules:
        setattr(module, MODE_ATTR, Mode(mode))


def set_paths(modules: list[nn.Module], path: str) -> None:
    """SDPA or EAGER for the modules' weight-free calls (a request for weights is eager)."""
    for module in modules:
        setattr(module, PATH_ATTR, path)


def matmul_scores(query: torch.Tensor, key: torch.Tensor, scaling: float) -> torch.Tensor:
    import torch

    return torch.matmul(query, key.transpose(-1, -2)) * scaling
