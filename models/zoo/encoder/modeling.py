"""``PEModel``: the encoder, its attention modes, and the content-free positional scores.

The attention mode is runtime state (not saved): ``set_attention_mode`` on any model of the
family sets it for the encoder inside. ``attention_terms`` runs one forward in the current
mode and returns each layer's (gamma, delta), the terms that forward actually summed.
So is the attention path (``set_attention_path``): ``auto`` runs every mode through
SDPA when no weights are returned or recorded, ``eager`` never does, ``sdpa`` refuses a
request for weights (attention.py; docs/attention_paths.md).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn
from transformers import PreTrainedModel
from transformers import initialization as init
from transformers.modeling_outputs import BaseModelOutputWithPooling

from posharness.base.errors import OptionError, UnsupportedModeError
from posharness.models.zoo.encoder.attention import (
    MODES,
    PATHS,
    LayerTerms,
    PESelfAttention,
    PositionContext,
)
from posharness.models.zoo.encoder.config import PEConfig, scheme_class
from posharness.models.zoo.encoder.layers import PEEmbeddings, PELayer, PEPooler
from posharness.models.zoo.encoder.schemes import (
    build_shared,
    build_shared_transform,
    content_logits,
    kind,
    reads_queries,
)
from posharness.pe import LogitTerm, PositionalEncoding, QueryKeyTransform, registry


def _check_weights_allowed(choice: str) -> None:
    if choice == "sdpa":
        raise OptionError(
            "attention path sdpa cannot return attention weights: use auto (eager only "
            "where weights are needed)"
        )


class PEPreTrainedModel(PreTrainedModel):
    config_class = PEConfig
    base_model_prefix = "pe"
    main_input_name = "input_ids"
    # The attention picks its own kernel (attention.py, ``set_attention_path``): fused SDPA
    # when no weights are returned, eager otherwise, whatever ``attn_implementation`` a
    # loader asks for.
    _supports_sdpa = True

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """BERT's initialisation, plus each scheme's own (``PositionalEncoding.init_weights``)."""
        super()._init_weights(module)
        if isinstance(module, PositionalEncoding):
            module.init_weights(self.config.initializer_range)
        elif getattr(module, "is_mlm_head", False):
            init.zeros_(module.bias)

    def _encoder(self) -> PEModel:
        return self if isinstance(self, PEModel) else getattr(self, self.base_model_prefix)

    def set_attention_mode(self, mode: str) -> None:
        """``both`` | ``contextual`` | ``positional`` (modes.py says what each means here)."""
        self._encoder().set_attention_mode(mode)

    @property
    def attention_mode(self) -> str:
        return self._encoder().attention_mode

    def set_attention_path(self, choice: str) -> None:
        """``auto`` | ``eager`` | ``sdpa``: which attention code runs (module docstring)."""
        self._encoder().set_attention_path(choice)

    def attention_path(self, mode: str, want_weights: bool) -> str:
        """``sdpa`` or ``eager``: what a forward in ``mode`` runs (every mode can fuse)."""
        choice = self._encoder()._attention_path
        if want_weights:
            _check_weights_allowed(choice)
        return "eager" if choice == "eager" or want_weights else "sdpa"

    @property
    def max_length(self) -> int | None:
        """Longest input the positions allow, special tokens included; None: unbounded."""
        return self.config.max_position_embeddings if self.config.bounded else None


class PEModel(PEPreTrainedModel):
    """BERT-style encoder with a pluggable positional scheme (``config.scheme``)."""

    def __init__(self, config: PEConfig, add_pooling_layer: bool = True) -> None:
        super().__init__(config)
        self.embeddings = PEEmbeddings(config)
        self.shared_positions = build_shared(config)
        self.shared_transform = build_shared_transform(config)  # a combination's; else None
        self.layer = nn.ModuleList(PELayer(config) for _ in range(config.num_hidden_layers))
        self.pooler = PEPooler(config) if add_pooling_layer else None
        self._attention_mode = "both"
        self._attention_path = "auto"
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.embeddings.word_embeddings

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.embeddings.word_embeddings = value

    def set_attention_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise OptionError(f"unknown attention mode {mode!r}: pick one of {', '.join(MODES)}")
        if mode == "contextual" and not content_logits(self.config):
            raise OptionError(
                f"{self.config.name or self.config.scheme} computes its logits from positions "
                "alone, so its content term was never trained and mode contextual does not "
                "exist: use mode both (= positional)"
            )
        if mode == "positional" and kind(self.config) == registry.POSITION_FREE:
            raise UnsupportedModeError(
                f"scheme {self.config.scheme} has no positional term, so mode positional does "
                "not exist: use mode both or contextual"
            )
        self._attention_mode = mode

    @property
    def attention_mode(self) -> str:
        return self._attention_mode

    def set_attention_path(self, choice: str) -> None:
        if choice not in PATHS:
            raise OptionError(f"unknown attention path {choice!r}: pick one of {', '.join(PATHS)}")
        self._attention_path = choice

    def _positions(
        self, input_ids: torch.Tensor, position_ids: torch.Tensor | None
    ) -> torch.Tensor:
        n = input_ids.shape[1]
        limit = self.config.max_position_embeddings
        if self.config.bounded and n > limit:
            unbounded = [
                s for s in registry.scheme_names() if not getattr(scheme_class(s), "bounded", False)
            ]
            raise OptionError(
                f"sequence of {n} tokens exceeds the {limit} positions of scheme "
                f"{self.config.name or self.config.scheme}: truncate inputs to {limit} tokens "
                f"or pick an unbounded scheme ({', '.join(unbounded)} without learned absolute)"
            )
        if position_ids is None:
            return torch.arange(n, device=input_ids.device).unsqueeze(0)
        if self.config.bounded and int(position_ids.max()) >= limit:
            raise OptionError(
                f"position id {int(position_ids.max())} exceeds the {limit} positions of scheme "
                f"{self.config.name or self.config.scheme}: pass position ids below {limit}"
            )
        return position_ids.view(-1, n)

    def _context(
        self,
        positions: torch.Tensor,
        attention_mask: torch.Tensor | None,
        want_weights: bool,
        record: list[LayerTerms] | None,
    ) -> PositionContext:
        mode = self._attention_mode
        if mode == "both" and not content_logits(self.config):
            mode = "positional"  # BERT-only-p: its logits are the positional term alone
        key_mask = None if attention_mask is None else attention_mask[:, None, None, :].bool()
        states = self.embeddings.position_states(positions) if mode == "positional" else None
        fused = record is None and not want_weights and self._attention_path != "eager"
        shared_module = self.shared_positions
        transform = shared_module if isinstance(shared_module, QueryKeyTransform) else None
        if self.shared_transform is not None:
            transform = self.shared_transform
        ctx = PositionContext(
            positions, key_mask, mode, None, states, want_weights, record, fused, transform
        )
        if isinstance(shared_module, LogitTerm) and (mode != "contextual" or record is not None):
            ctx.shared_delta = getattr(shared_module, ctx.term_form)(positions, None)
        return ctx

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        return_dict: bool = True,
        _record: list[LayerTerms] | None = None,
        **kwargs: object,
    ) -> BaseModelOutputWithPooling | tuple:
        positions = self._positions(input_ids, position_ids)
        if output_attentions:
            _check_weights_allowed(self._attention_path)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        ctx = self._context(positions, attention_mask, bool(output_attentions), _record)
        with_positions = self._attention_mode != "contextual"
        hidden = self.embeddings(input_ids, token_type_ids, positions, with_positions)
        states: list[torch.Tensor] = [hidden]
        attentions: list[torch.Tensor] = []
        for layer in self.layer:
            hidden, weights = layer(hidden, ctx)
            states.append(hidden)
            if output_attentions:
                attentions.append(weights)
        pooled = self.pooler(hidden) if self.pooler is not None else None
        out = BaseModelOutputWithPooling(
            last_hidden_state=hidden,
            pooler_output=pooled,
            hidden_states=tuple(states) if output_hidden_states else None,
            attentions=tuple(attentions) if output_attentions else None,
        )
        return out if return_dict else out.to_tuple()

    def attention_record(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> list[LayerTerms]:
        """Each layer's gamma, delta, pre-mask logits and probabilities in the current mode."""
        record: list[LayerTerms] = []
        self.forward(input_ids, attention_mask, token_type_ids, _record=record)
        return record

    def attention_terms(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
    ) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per layer (gamma, delta): already-scaled logit terms before the mask.

        In mode ``both`` the layer's logits are exactly gamma + delta (a zero delta for
        schemes with input positions only); ``contextual`` uses gamma, ``positional`` delta,
        where delta is the positional mode's definition (modes.py).
        """
        record = self.attention_record(input_ids, attention_mask, token_type_ids)
        return [(terms.gamma, terms.delta) for terms in record]

    @torch.no_grad()
    def positional_scores(self, length: int) -> torch.Tensor | None:
        """The content-free delta [L, H, n, n] that mode ``positional`` uses for n tokens.

        Exact where delta is a parameter (t5, alibi, tupe, tisa, attenuated: for the last,
        softmax_j(a_ij), what is added to the logits; for ``sequence`` PA's weights). For
        input-added positions it is the position-position term (p W_Q)(p W_K)^T/sqrt(d) of
        each layer from the layer-normed position table (TUPE Eq. 7's fourth term), added to
        any attention-level delta; for rope b_Q R_(j-i) b_K/sqrt(d) from the biases. None for
        nope and shaw (q·a_(j-i) needs the queries).
        """
        if kind(self.config) == registry.POSITION_FREE or reads_queries(self.config):
            return None
        device = self.embeddings.word_embeddings.weight.device
        dummy = torch.zeros(1, length, dtype=torch.long, device=device)
        positions = self._positions(dummy, None)
        previous, self._attention_mode = self._attention_mode, "positional"
        try:
            ctx = self._context(positions, None, True, None)
            deltas = [self._layer_positional(layer, ctx) for layer in self.layer]
        finally:
            self._attention_mode = previous
        return torch.cat(deltas).float()

    @staticmethod
    def _layer_positional(layer: PELayer, ctx: PositionContext) -> torch.Tensor:
        attention = layer.attention
        if isinstance(attention, PESelfAttention):
            delta = attention.positional_delta(None, ctx)
        else:
            delta = attention.layer_score(ctx.positions, None)
        n = ctx.positions.shape[-1]
        return delta.expand(1, attention.heads, n, n)

    @contextmanager
    def attention_mode_set(self, mode: str) -> Iterator[None]:
        """Run a block in ``mode`` and restore the previous mode afterwards."""
        previous = self._attention_mode
        self.set_attention_mode(mode)
        try:
            yield
        finally:
            self._attention_mode = previous
