"""From a configuration to the modules of its registered scheme: where each one lives.

The registry (``posharness.pe``) says what a scheme is; this module builds it and puts it
where its kind acts, under the attribute names checkpoints have always used:

* input positions: ``embeddings.position_embeddings`` (the ``absolute`` choice, or the
  scheme itself when it is an input embedding);
* a logit term, untied product or query/key transform shared by the layers:
  ``shared_positions`` (computed once per forward);
* one per layer (``per_layer``, Shaw's query-reading term, a positional attention):
  ``layer.N.attention.layer_score``;
* a combination of kinds: each part where its kind acts (its logit term in
  ``shared_positions``, its transform in ``shared_transform``, its per-layer term in
  ``layer_score``; ``posharness.pe.combination``).

A scheme's options are read from the configuration: a built-in's from the ``PEConfig``
fields of the same names, a plugin's from ``pe_options`` (with its declared defaults).
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch import nn

from posharness.models.zoo.encoder.config import PEConfig, absolute_class, scheme_class
from posharness.pe import LogitTerm, combination, registry

# Kinds whose module sits once on the model rather than in each layer.
_MODEL_LEVEL = (registry.LOGIT_TERM, registry.UNTIED_PRODUCT, registry.QUERY_KEY_TRANSFORM)


class FunctionTerm(LogitTerm):
    """A scheme declared as a function ``f(positions, config, **options) -> delta``: a
    parameter-free logit term shared by the layers."""

    def __init__(self, function: Any, config: PEConfig, options: dict[str, Any]) -> None:
        super().__init__()
        self.function, self.config, self.options = function, config, options

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        return self.function(positions, self.config, **self.options)


def kind(config: PEConfig) -> str:
    return registry.declaration(scheme_class(config.scheme)).kind


def scheme_options(config: PEConfig, scheme: Any | None = None) -> dict[str, Any]:
    """The option values ``config`` gives its scheme (declared defaults filled in)."""
    scheme = scheme if scheme is not None else scheme_class(config.scheme)
    extra = config.pe_options or {}
    fields = vars(PEConfig)["__annotations__"]
    return {
        key: getattr(config, key) if key in fields else extra.get(key, default)
        for key, default in registry.declaration(scheme).defaults.items()
    }


def build_scheme(config: PEConfig, scheme: Any | None = None) -> nn.Module:
    """The module of ``config``'s scheme (or of ``scheme``, one part of a combination)."""
    scheme = scheme if scheme is not None else scheme_class(config.scheme)
    options = scheme_options(config, scheme)
    if inspect.isfunction(scheme):
        return FunctionTerm(scheme, config, options)
    return scheme(config, **options)


def _part(config: PEConfig, where: str) -> nn.Module | None:
    """The part of a combination that acts at ``where`` (``posharness.pe.combination``)."""
    for part in scheme_class(config.scheme).parts:
        if combination.place(part) == where:
            return build_scheme(config, part)
    return None


def _combined(config: PEConfig) -> bool:
    return kind(config) == registry.COMBINATION


def reads_queries(config: PEConfig) -> bool:
    """Whether a term of ``config``'s scheme reads the queries (a content logit term)."""
    parts = combination.parts_of(scheme_class(config.scheme))
    return any(registry.declaration(p).kind == registry.CONTENT_LOGIT_TERM for p in parts)


def build_input_positions(config: PEConfig) -> nn.Module | None:
    """The input-embedding module of ``config``, or None without input positions."""
    if config.absolute == "none":
        return None
    if kind(config) == registry.INPUT_EMBEDDING:
        return build_scheme(config)
    return absolute_class(config.absolute)(config)


def build_shared(config: PEConfig) -> nn.Module | None:
    """The model-level module of ``config`` (None when the scheme acts per layer or not at all);
    of a combination, its logit term shared by the layers."""
    if _combined(config):
        return _part(config, "shared")
    scheme = scheme_class(config.scheme)
    if kind(config) in _MODEL_LEVEL and not getattr(scheme, "per_layer", False):
        return build_scheme(config)
    return None


def build_shared_transform(config: PEConfig) -> nn.Module | None:
    """A combination's query/key transform, shared by the layers (beside its logit term in
    ``shared_positions``); None for every other scheme, whose transform is ``shared``."""
    return _part(config, "transform") if _combined(config) else None


def build_layer_score(config: PEConfig) -> nn.Module | None:
    """The per-layer module of ``config`` (None when the scheme has none)."""
    if _combined(config):
        return _part(config, "layer")
    scheme = scheme_class(config.scheme)
    per_layer = getattr(scheme, "per_layer", False)
    if per_layer and kind(config) not in (registry.INPUT_EMBEDDING, registry.POSITION_FREE):
        return build_scheme(config)
    return None


def content_logits(config: PEConfig) -> bool:
    """False when the scheme's logits carry no content term in any forward (Chen et al.'s
    BERT-only-p, draft Table 7): mode ``both`` is then the positional mode."""
    return bool(getattr(scheme_class(config.scheme), "content_logits", True))


def content_scale_factor(config: PEConfig) -> int:
    """d multiplier of gamma's 1/sqrt(d): 2 with TUPE's untied product (Ke et al. Eq. 7)."""
    return int(getattr(scheme_class(config.scheme), "content_scale_factor", 1))
