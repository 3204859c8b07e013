"""Absolute position embeddings added at the input (BERT, RoBERTa, ELECTRA, ALBERT, DistilBERT).

Position enters once, mixed into every token's vector, so no split of the logits is exact
(DECOMPOSITION.md, "Input-added absolute PE"). Every definition here has one shape: a
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

from posharness.errors import OptionError
from posharness.models.decompose.core import SPLITTER_ATTR, Split, matmul_scores
from posharness.models.decompose.family import Definition, Reference

if TYPE_CHECKING:
    import torch
    from torch import nn

DEPTH_ATTR = "posharness_depth"
QUERY_NAMES = ("query", "q_lin")
KEY_NAMES = ("key", "k_lin")

TISA_MEAN_WORD = Definition(
    name="tisa-mean-word",
    description="layer 1: mean word embedding + positions (TISA); layers 2+: positional-stream",
    exact=False,
    content_free_delta=True,
    needs_reference=True,
)
POSITIONAL_STREAM = Definition(
    name="positional-stream",
    description="every layer: mean attention input per absolute position over a corpus",
    exact=False,
    content_free_delta=True,
    needs_reference=True,
)
MEAN_WORD_STREAM = Definition(
    name="mean-word-stream",
    description="every layer: the model run on the mean word embedding at every position",
    exact=False,
    content_free_delta=True,
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


class StreamTables:
    """Per depth: positional q/k and the shifts that remove u_t − ū from q and k, [H, T, d]."""

    def __init__(self) -> None:
        self.pos_q: list[torch.Tensor] = []
        self.pos_k: list[torch.Tensor] = []
        self.shift_q: list[torch.Tensor] = []
        self.shift_k: list[torch.Tensor] = []

    @property
    def length(self) -> int:
        return int(self.pos_q[0].shape[1]) if self.pos_q else 0


class StreamSplitter:
    def __init__(self, tables: StreamTables) -> None:
        self.tables = tables

    def both(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Any:
        return matmul_scores(query, key, scaling)

    def split(self, module: Any, query: Any, key: Any, scaling: float, kwargs: dict) -> Split:
        depth = getattr(module, DEPTH_ATTR, 0)
        tables = self.tables
        if not tables.pos_q:
            raise RuntimeError("positional tables are missing: call prepare() before the modes")
        n, m = query.shape[-2], key.shape[-2]
        if max(n, m) > tables.length:
            raise OptionError(
                f"a batch of {max(n, m)} tokens exceeds the {tables.length} positions the "
                "positional statistics cover: pass --model-arg reference_length="
                f"{max(n, m)} (or more)"
            )
        dtype = query.dtype
        pos_q = tables.pos_q[depth][:, :n].to(dtype)
        pos_k = tables.pos_k[depth][:, :m].to(dtype)
        gamma_q = query - tables.shift_q[depth][:, :n].to(dtype)
        gamma_k = key - tables.shift_k[depth][:, :m].to(dtype)
        logits = matmul_scores(query, key, scaling)
        gamma = matmul_scores(gamma_q, gamma_k, scaling)
        delta = matmul_scores(pos_q, pos_k, scaling).unsqueeze(0)
        return Split(gamma=gamma, delta=delta, residual=logits - gamma - delta)


class AbsoluteFamily:
    name = "learned absolute (input-added)"
    option = "absolute"
    definitions = (TISA_MEAN_WORD, POSITIONAL_STREAM, MEAN_WORD_STREAM)
    uses_attention_interface = True

    def __init__(self) -> None:
        self.tables = StreamTables()
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
        splitter = StreamSplitter(self.tables)
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
        import torch

        per_depth = self.order = call_order(model, self.attention_modules(model))
        if len(per_depth) != len(stream):
            raise ValueError(f"{len(stream)} stream entries for {len(per_depth)} attention calls")
        tables = self.tables
        tables.pos_q.clear()
        tables.pos_k.clear()
        tables.shift_q.clear()
        tables.shift_k.clear()
        with torch.no_grad():
            for module, u in zip(per_depth, stream, strict=True):
                query, key = _projection(module, QUERY_NAMES), _projection(module, KEY_NAMES)
                u = u.to(query.weight.device, query.weight.dtype)
                centred = u - u.mean(dim=0, keepdim=True)
                heads = _heads(module)
                tables.pos_q.append(_split_heads(query(u), heads))
                tables.pos_k.append(_split_heads(key(u), heads))
                tables.shift_q.append(_split_heads(centred @ query.weight.T, heads))
                tables.shift_k.append(_split_heads(centred @ key.weight.T, heads))

    def positional_scores(
        self, model: nn.Module, length: int, definition: Definition
    ) -> torch.Tensor:
        import torch

        tables = self.tables
        if not tables.pos_q:
            raise RuntimeError("positional tables are missing: call prepare() first")
        if length > tables.length:
            raise OptionError(
                f"positional scores for {length} positions exceed the {tables.length} the "
                f"statistics cover: pass --model-arg reference_length={length} (or more)"
            )
        modules = self.order
        scores = []
        with torch.no_grad():
            for depth, module in enumerate(modules):
                scaling = getattr(module, "scaling", None) or tables.pos_q[depth].shape[-1] ** -0.5
                q = tables.pos_q[depth][:, :length].float()
                k = tables.pos_k[depth][:, :length].float()
                scores.append(matmul_scores(q, k, scaling))
        return torch.stack(scores).cpu()


def _linear() -> type:
    from torch import nn

    return nn.Linear


def _split_heads(projected: torch.Tensor, heads: int) -> torch.Tensor:
    length, width = projected.shape
    return projected.view(length, heads, width // heads).transpose(0, 1).contiguous()


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
