"""Absolute position embeddings added at the input (BERT, RoBERTa, ELECTRA, ALBERT, DistilBERT).

Position enters once, mixed into every token's vector, so no split of the logits is exact
(docs/modes.md, "Input-added absolute PE"). Every definition here has one shape: a
*position stream* u_t^l — what layer l's attention would receive at absolute position t
with content marginalised — and

    delta^l_ij = q(u_i)·k(u_j)·scale
    gamma^l_ij = q(x_i − u_i + ū)·k(x_j − u_j + ū)·scale        (ū = mean of u_t over t)
    residual   = logits − gamma − delta

By linearity gamma needs only the projected q, k minus W(u_t − ū), so the shared attention
function never sees hidden states. The definitions differ in how u is estimated:

* ``tisa-mean-word`` (default): layer 1 from TISA's extraction (every word embedding
  replaced by the vocabulary mean; content-free with no corpus), deeper layers from the
  ``positional-stream`` corpus means;
* ``positional-stream``: every layer from the mean attention input per position over a
  reference corpus;
* ``mean-word-stream``: every layer from the model run on the mean-word sequence — fully
  content-free and needs no corpus, but deeper layers see an input no real text resembles.

Tables cover the reference length (default: the model's positions); a longer batch is an
error rather than a silent extrapolation. ALBERT shares one attention module across depth,
so tables are indexed by the depth of the current call, not by module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.decompose.core import SPLITTER_ATTR, Split, matmul_scores
from posharness.models.decompose.fused import Fused
from posharness.models.decompose.mode_split import Definition, Reference
from posharness.models.decompose.stream import LayerStream

if TYPE_CHECKING:
    import torch
    from torch import nn

DEPTH_ATTR = "posharness_depth"
QUERY_NAMES = ("query", "q_lin")
KEY_NAMES = ("key", "k_lin")

TISA_MEAN_WORD = Definition.estimate(
    "tisa-mean-word",
    "layer 1: mean word embedding + positions (TISA); layers 2+: positional-stream",
)
POSITIONAL_STREAM = Definition.estimate(
    "positional-stream", "every layer: mean attention input per absolute position over a corpus"
)
MEAN_WORD_STREAM = Definition.estimate(
    "mean-word-stream",
    "every layer: the model run on the mean word embedding at every position",
    needs_reference=False,
)


def _projection(module: nn.Module, names: tuple[str, ...]) -> Any:
    for name in names:
        linear = getattr(module, name, None)
        if linear is not None:
            return linear
    raise AttributeError(f"{type(module).__name__} has none of {names}")


def _heads(module: nn.Module) -> int:
    for name in ("num_attention_heads", "n_heads"):
        value = getattr(module, name, None)
        if isinstance(value, int):
            return value
    return int(module.config.num_attention_heads)


class StreamSplitter:
    """Splits logits with the stream of the current call's depth (shared by all modules)."""

    def __init__(self, streams: list[LayerStream]) -> None:
        self.streams = streams  # one per depth, filled by prepare()

    def both(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Any:
        return matmul_scores(query, key, scaling)

    def _stream(self, module: Any) -> LayerStream:
        if not self.streams:
            raise RuntimeError("positional tables are missing: call prepare() before the modes")
        return self.streams[getattr(module, DEPTH_ATTR, 0)]

    def split(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Split:
        stream = self._stream(module)
        gamma_q, gamma_k = stream.content(query, key)
        logits = matmul_scores(query, key, scaling)
        gamma = matmul_scores(gamma_q, gamma_k, scaling)
        delta = stream.delta(query.shape[-2], key.shape[-2], query, scaling)
        return Split(gamma=gamma, delta=delta, residual=logits - gamma - delta)

    def fused(
        self, module: Any, mode: Mode, query: Any, key: Any, scaling: float, kwargs: dict
    ) -> Fused:
        """gamma and delta are both products of queries and keys, so neither needs a
        mask: contextual uses q(x − u + ū)·k(x − u + ū), positional q(u_i)·k(u_j)."""
        if mode is Mode.BOTH:
            return Fused(query, key)
        stream = self._stream(module)
        if mode is Mode.CONTEXTUAL:
            return Fused(*stream.content(query, key))
        return Fused(*stream.positional_qk(query.shape[-2], key.shape[-2], query))


class AbsoluteSplit:
    name = "learned absolute (input-added)"
    version = 1  # bump when its numbers change (tests/unit/core/test_split_versions.py)
    option = "absolute"
    definitions = (TISA_MEAN_WORD, POSITIONAL_STREAM, MEAN_WORD_STREAM)
    uses_attention_interface = True

    def __init__(self) -> None:
        self.streams: list[LayerStream] = []
        self.order: list[nn.Module] = []  # the module serving each depth

    # -- where attention lives ----------------------------------------------------------
    def attention_modules(self, model: nn.Module) -> list[nn.Module]:
        """Unique self-attention modules (those holding query and key projections)."""
        found = []
        for module in model.modules():
            has_query = any(isinstance(getattr(module, n, None), _linear()) for n in QUERY_NAMES)
            has_key = any(isinstance(getattr(module, n, None), _linear()) for n in KEY_NAMES)
            if has_query and has_key:
                found.append(module)
        return found

    def query_inputs(self, model: nn.Module) -> list[nn.Module]:
        return [_projection(m, QUERY_NAMES) for m in self.attention_modules(model)]

    def install(self, model: nn.Module) -> None:
        """Splitters on every attention module, and depth counters for shared modules."""
        modules = self.attention_modules(model)
        counter = [0]

        def reset(*_: Any) -> None:
            counter[0] = 0

        def count(module: nn.Module, *_: Any) -> None:
            setattr(module, DEPTH_ATTR, counter[0])
            counter[0] += 1

        model.register_forward_pre_hook(reset)
        splitter = StreamSplitter(self.streams)
        for module in modules:
            setattr(module, SPLITTER_ATTR, splitter)
            module.register_forward_pre_hook(count)

    # -- statistics ---------------------------------------------------------------------
    def prepare(
        self, model: nn.Module, definition: Definition, reference: Reference | None
    ) -> None:

        if definition.needs_reference and reference is None:
            raise ValueError(f"definition {definition.name} needs a reference corpus")
        length = reference.length if reference is not None else _positions(model)
        stream: list[torch.Tensor]
        if definition is POSITIONAL_STREAM:
            stream = list(reference.inputs)  # type: ignore[union-attr]
        else:
            mean_word = self.mean_word_stream(model, length)
            if definition is MEAN_WORD_STREAM:
                stream = mean_word
            else:
                stream = [mean_word[0], *reference.inputs[1:]]  # type: ignore[union-attr]
        self._build_tables(model, stream)

    def mean_word_stream(self, model: nn.Module, length: int) -> list[torch.Tensor]:
        """Each layer's attention input when every token is the mean word embedding."""
        import torch

        from posharness.models.decompose.reference import mean_attention_inputs

        embedding = model.get_input_embeddings().weight
        mean = embedding.detach().float().mean(dim=0).to(embedding.dtype)
        sequence = mean.expand(1, length, -1)

        def forward(module: nn.Module, _: torch.Tensor) -> None:
            module(inputs_embeds=sequence, attention_mask=torch.ones(1, length, dtype=torch.long))

        dummy = torch.zeros(1, length, dtype=torch.long)
        return mean_attention_inputs(model, self.query_inputs(model), dummy, 1, forward)

    def _build_tables(self, model: nn.Module, stream: list[torch.Tensor]) -> None:
        per_depth = self.order = call_order(model, self.attention_modules(model))
        if len(per_depth) != len(stream):
            raise ValueError(f"{len(stream)} stream entries for {len(per_depth)} attention calls")
        self.streams[:] = [
            LayerStream.build(
                _projection(module, QUERY_NAMES), _projection(module, KEY_NAMES), _heads(module), u
            )
            for module, u in zip(per_depth, stream, strict=True)
        ]

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        import torch

        if not self.streams:
            raise RuntimeError("positional tables are missing: call prepare() first")
        self.streams[0].check(length, "positional scores")
        scores = []
        with torch.no_grad():
            for stream, module in zip(self.streams, self.order, strict=True):
                scaling = getattr(module, "scaling", None) or stream.q_pos.shape[-1] ** -0.5
                scores.append(stream.delta(length, length, stream.q_pos, scaling)[0])
        return torch.stack(scores).cpu()


def _linear() -> type:
    from torch import nn

    return nn.Linear


def call_order(model: nn.Module, modules: list[nn.Module]) -> list[nn.Module]:
    """The attention module serving each depth, read off one two-token forward.

    One module per layer for most models; ALBERT reuses its groups' modules across depth
    (and runs several per layer when ``inner_group_num`` > 1), which a table cannot guess.
    """
    import torch

    order: list[nn.Module] = []
    handles = [m.register_forward_pre_hook(lambda m, *_: order.append(m)) for m in modules]
    device = next(model.parameters()).device
    ids = torch.zeros(1, 2, dtype=torch.long, device=device)
    try:
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=torch.ones_like(ids))
    finally:
        for handle in handles:
            handle.remove()
    return order


def _positions(model: nn.Module) -> int:
    config = model.config
    positions = int(getattr(config, "max_position_embeddings", 512))
    if getattr(config, "model_type", "") in {"roberta", "xlm-roberta", "camembert"}:
        positions -= int(config.pad_token_id) + 1
    return positions
