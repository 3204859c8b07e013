"""Identical-word probing (Wang et al. 2021, as used by Chen et al. 2023 §3.1).

A sequence that repeats one word makes the content-content term of attention the same
for every pair of positions, so what varies across the attention map is position. N
random whole words, each repeated to length L (special tokens included), give one
attention map per word, layer and head; their average is the model's positional weight
matrix. The aggregate is streamed (never every map at once) and cached by model
fingerprint, mode and the probe's inputs, so every task that reads it shares one pass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from posharness.base.errors import OptionError
from posharness.contracts.adapter import ATTENTIONS, ModelAdapter, TokenizedText, mode_identity
from posharness.contracts.task import TaskContext
from posharness.contracts.task_options import TaskOption
from posharness.storage.hashing import hash_obj

CACHE_KIND = "identical-word-attention"
# Both geometry tasks take these; the same words, length and --seed share one probe pass.
PROBE_OPTIONS = (
    TaskOption("words", 100, "Probe words, drawn from the model's vocabulary."),
    TaskOption("length", 128, "Tokens per probe sequence, special tokens included."),
)
FIGURES = TaskOption("figures", True, "Write the PNG heatmaps.")


@dataclass(frozen=True)
class IdenticalWordProbe:
    words: tuple[str, ...]
    token_ids: tuple[int, ...]
    inputs: tuple[TokenizedText, ...]
    length: int
    seed: int
    special_positions: tuple[int, ...]  # where the model's special tokens sit

    @property
    def input_hash(self) -> str:
        return hash_obj([list(item.input_ids) for item in self.inputs])


def build_probe(model: ModelAdapter, words: int, length: int, seed: int) -> IdenticalWordProbe:
    """Draw ``words`` distinct whole words with a seeded generator and repeat each."""
    vocabulary = model.probe_vocabulary()
    if words < 1:
        raise OptionError(f"identical-word probe: words={words}; use at least 1")
    if words > len(vocabulary):
        raise OptionError(
            f"identical-word probe: words={words} but the vocabulary has only "
            f"{len(vocabulary)} whole words; pass a smaller words option"
        )
    frame = model.wrap_token_ids([])
    content = length - len(frame)
    if content < 3:
        raise OptionError(
            f"identical-word probe: length={length} is too short; use at least {len(frame) + 3}"
        )
    if length > model.max_length:
        raise OptionError(
            f"identical-word probe: length={length} exceeds the model's {model.max_length} "
            "positions; pass a smaller length option"
        )
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(vocabulary), size=words, replace=False)
    chosen = [vocabulary[int(i)] for i in picks]
    inputs = tuple(model.wrap_token_ids([token_id] * content) for _, token_id in chosen)
    specials = tuple(i for i, s in enumerate(inputs[0].special_tokens_mask) if s)
    return IdenticalWordProbe(
        words=tuple(w for w, _ in chosen),
        token_ids=tuple(t for _, t in chosen),
        inputs=inputs,
        length=length,
        seed=seed,
        special_positions=specials,
    )


@dataclass
class ProbeAttention:
    """Attention of the probe, averaged over the probe's words.

    ``per_layer_head`` is [layers, heads, L, L]; ``per_word`` is [words, L, L], each
    word's map averaged over layers and heads (kept for per-example outputs and
    bootstrap intervals over words).
    """

    per_layer_head: np.ndarray
    per_word: np.ndarray

    @property
    def average(self) -> np.ndarray:
        return self.per_layer_head.mean(axis=(0, 1))

    @property
    def per_layer(self) -> np.ndarray:
        return self.per_layer_head.mean(axis=1)


def probe_attention(
    model: ModelAdapter, ctx: TaskContext, probe: IdenticalWordProbe
) -> ProbeAttention:
    key = ctx.cache.key(
        model.fingerprint(), mode_identity(model, ctx.mode), probe.input_hash, CACHE_KIND
    )

    def compute() -> dict:
        import torch

        layers, heads, n = model.num_layers, model.num_heads, probe.length
        total = torch.zeros((layers, heads, n, n), dtype=torch.float64)
        per_word = torch.zeros((len(probe.inputs), n, n), dtype=torch.float64)
        encoder = ctx.encoder(frozenset({ATTENTIONS}))
        advance = ctx.progress("identical-word probe", len(probe.inputs))
        for indices, output in encoder.batches(probe.inputs, on_progress=advance):
            assert output.attentions is not None
            word_sum = None
            for layer, attention in enumerate(output.attentions):
                attention = attention.detach().to("cpu", torch.float64)
                total[layer] += attention.sum(dim=0)
                head_mean = attention.mean(dim=1)
                word_sum = head_mean if word_sum is None else word_sum + head_mean
            per_word[torch.tensor(indices)] = word_sum / len(output.attentions)
        return {"per_layer_head": total / len(probe.inputs), "per_word": per_word}

    tensors = ctx.cache.get_or_compute(
        key, CACHE_KIND, compute, meta={"words": list(probe.words), "length": probe.length}
    )
    return ProbeAttention(
        per_layer_head=tensors["per_layer_head"].double().numpy(),
        per_word=tensors["per_word"].double().numpy(),
    )


def probe_from_options(model: ModelAdapter, ctx: TaskContext) -> IdenticalWordProbe:
    words = int(ctx.options["words"])
    if ctx.limit is not None:
        words = min(words, ctx.limit)
    return build_probe(model, words, int(ctx.options["length"]), ctx.seed)
