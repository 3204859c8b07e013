"""T5 encoder: a bucketed relative bias added inside the softmax (Raffel et al. 2020).

gamma = q·k (T5 uses no 1/sqrt(d)), delta = b_h[bucket(j - i)]. Layer 0 computes the bias
and every later layer reuses it, so the split is exact and delta is content-free.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import SPLITTER_ATTR, Split, matmul_scores
from posharness.models.decompose.fused import Fused, without_gamma
from posharness.models.decompose.mode_split import Definition, Reference

if TYPE_CHECKING:
    import torch
    from torch import nn

BUCKET_BIAS = Definition(
    name="bucket-bias",
    description="gamma = q·k, delta = the shared bucketed bias b_h[bucket(j-i)]",
    exact=True,
    content_free_delta=True,
)


class BucketBiasSplitter:
    def both(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Any:
        scores = matmul_scores(query, key, scaling)
        bias = kwargs.get("position_bias")
        return scores if bias is None else scores + bias

    def split(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Split:
        import torch

        gamma = matmul_scores(query, key, scaling)
        bias = kwargs.get("position_bias")
        if bias is None:
            bias = torch.zeros_like(gamma[:1])
        return Split(gamma=gamma, delta=bias.expand(1, *gamma.shape[1:]))

    def fused(
        self, module: Any, mode: Mode, query: Any, key: Any, scaling: float, kwargs: dict
    ) -> Fused:
        """The bias goes into the mask; positional mode zeroes q·k with zero queries."""
        bias = kwargs.get("position_bias")
        if mode is Mode.CONTEXTUAL:
            return Fused(query, key)
        if mode is Mode.POSITIONAL:
            return without_gamma(query, key, bias)
        return Fused(query, key, bias)


class T5Split:
    name = "T5 bucketed relative bias"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    option = "t5"
    definitions = (BUCKET_BIAS,)
    uses_attention_interface = True

    def _stack(self, model: nn.Module) -> Any:
        return model.encoder if hasattr(model, "encoder") else model

    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        return [block.layer[0].SelfAttention for block in self._stack(model).block]

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        return [module.q for module in self.attention_modules(model)]

    def install(self, model: nn.Module) -> None:
        for module in self.attention_modules(model):
            setattr(module, SPLITTER_ATTR, BucketBiasSplitter())

    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:
        pass  # the bias is a parameter: nothing to estimate

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        import torch

        modules = self.attention_modules(model)
        with torch.no_grad():
            bias = modules[0].compute_bias(length, length)[0].float()  # [H, n, n]
        return bias.unsqueeze(0).expand(len(modules), *bias.shape).clone()
