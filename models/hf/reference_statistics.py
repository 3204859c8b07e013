"""The pass over a reference corpus behind the corpus-based split definitions.

Definitions such as ``positional-stream`` and ``tisa-mean-word`` subtract the mean
attention input per layer and position (Chen et al. 2023, Eq. 3's expectation over
contexts); this module packs the corpus into model-length sequences, runs the model once
in mode ``both`` and caches the means per checkpoint fingerprint and corpus hash, so each
checkpoint pays for the pass once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from posharness.contracts.adapter import Mode
from posharness.models.hf.loaded_encoder import LoadedEncoder

if TYPE_CHECKING:
    from posharness.models.decompose.controller import ReferenceLayout
    from posharness.models.decompose.mode_split import ModeSplit, Reference

REFERENCE_KIND = "reference-attention-inputs"  # the cache kind of the means
REFERENCE_BATCH = 8  # packed sequences per forward


def mean_inputs_over_corpus(
    adapter: LoadedEncoder,
    family: ModeSplit,
    layout: ReferenceLayout,
    progress: Callable[[str, int], Callable[[int], None]] | None,
) -> Reference:
    """Mean attention inputs per layer and position over ``layout``'s packed corpus, on
    the model's device; ``progress`` shows the pass (``ShowsProgress``)."""
    import torch

    from posharness.models.decompose.mode_split import Reference
    from posharness.models.decompose.reference import mean_attention_inputs, pack_sequences
    from posharness.storage.cache import FeatureCache

    model, tokenizer = adapter.model, adapter.tokenizer

    def compute() -> dict[str, Any]:
        frame = len(adapter.wrap_token_ids([]))
        sequences = pack_sequences(
            layout.corpus,
            lambda lines: tokenizer(lines, add_special_tokens=False)["input_ids"],
            lambda ids: adapter.wrap_token_ids(ids).input_ids,
            frame,
            layout.length,
            layout.sequences,
        )
        label = f"reference statistics over {layout.corpus.path.name}"
        advance = progress(label, len(sequences)) if progress else None
        inputs = mean_attention_inputs(
            model,
            family.query_inputs(model),
            torch.tensor(sequences),
            REFERENCE_BATCH,
            advance=advance,
        )
        return {f"layer{i:03d}": t for i, t in enumerate(inputs)}

    cache = FeatureCache(adapter.cache_dir)
    key = cache.key(
        adapter.fingerprint(),
        str(Mode.BOTH),
        layout.corpus.content_hash,
        REFERENCE_KIND,
        extra={"sequences": layout.sequences, "length": layout.length},
    )
    tensors = cache.get_or_compute(key, REFERENCE_KIND, compute, meta={"corpus": layout.label})
    device = next(model.parameters()).device
    inputs = [tensors[name].to(device) for name in sorted(tensors)]
    return Reference(inputs, layout.label, layout.corpus.content_hash)
