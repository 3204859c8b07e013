"""A Hugging Face encoder with a task head, in one attention mode, ready to fine-tune.

Each family's own ``*ForSequenceClassification`` head is used where transformers has one
for an encoder (BERT's pooler, RoBERTa's <s> head, XLNet's last-token summary), so a
fine-tuned ``both`` model is exactly what the family's users would train. T5 has only an
encoder-decoder classifier, so its encoder gets a mean-pooled linear head instead.

The mode is installed on the classifier itself through a fresh ``Decomposition``: the
same attention code the analysis tasks use, so a model fine-tuned in ``positional`` mode
is Chen et al.'s BERT-p. Where the split rests on statistics of the pretrained model
(input-added absolute PEs: the position stream), those statistics are taken once from
the pretrained weights and stay fixed while the rest of the network trains.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from posharness.base.errors import ModelLoadError
from posharness.contracts.adapter import Mode
from posharness.models.hf.loaded_encoder import LoadedEncoder

MEAN_POOLED = {"t5": "T5EncoderModel", "mt5": "MT5EncoderModel"}  # no encoder-only head


class SequenceClassifier(nn.Module):
    """``forward(input_ids, attention_mask, token_type_ids) -> logits [B, num_labels]``.

    One calling convention for every family, so the training loop never branches on
    which model it trains.
    """

    def __init__(self, model: nn.Module, accepts_token_types: bool) -> None:
        super().__init__()
        self.model = model
        self.accepts_token_types = accepts_token_types

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
    ) -> torch.Tensor:
        kwargs: dict[str, Any] = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None and self.accepts_token_types:
            kwargs["token_type_ids"] = token_type_ids
        out = self.model(**kwargs)
        return out if isinstance(out, torch.Tensor) else out.logits


class MeanPooledHead(nn.Module):
    """Encoder → mean over real tokens → dropout → linear, for families with no head."""

    def __init__(self, encoder: nn.Module, hidden: int, num_labels: int, dropout: float) -> None:
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask)[0]
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
        return self.classifier(self.dropout(pooled))


def build_classifier(adapter: LoadedEncoder, num_labels: int, mode: Mode) -> SequenceClassifier:
    """A freshly loaded, trainable copy of the adapter's checkpoint with a new head.

    Loaded in float32 whatever the adapter's inference dtype: training keeps float32
    master weights and uses autocast for bf16 on CUDA.
    """
    import transformers
    from transformers import AutoModelForSequenceClassification
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    adapter.check_mode(mode)
    model_type = str(adapter.config_dict.get("model_type", "unknown"))
    try:
        if model_type in MEAN_POOLED:
            encoder = getattr(transformers, MEAN_POOLED[model_type]).from_pretrained(
                adapter.folder, attn_implementation="eager", dtype=torch.float32
            )
            hidden = int(adapter.config_dict.get("d_model", 512))
            rate = float(adapter.config_dict.get("dropout_rate", 0.1))
            model: nn.Module = MeanPooledHead(encoder, hidden, num_labels, rate)
        else:
            model = AutoModelForSequenceClassification.from_pretrained(
                adapter.folder,
                num_labels=num_labels,
                attn_implementation="eager",
                dtype=torch.float32,
            )
    except (OSError, ValueError, KeyError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelLoadError(
            f"cannot build a {num_labels}-label classifier from {adapter.folder} ({first_line}): "
            "check that the checkpoint is a complete encoder"
        ) from exc
    decomposition = adapter.fresh_decomposition()
    if decomposition is not None:
        # The bare encoder inside the head is the same class the adapter analyses, so
        # every family's install/prepare code applies to it unchanged.
        target = model.encoder if isinstance(model, MeanPooledHead) else model.base_model
        decomposition.install(target)
        if mode is not Mode.BOTH:
            decomposition.prepare(target, adapter.reference_statistics)
        decomposition.set_mode(target, mode)
    accepts_types = int(adapter.config_dict.get("type_vocab_size", 0) or 0) > 0
    return SequenceClassifier(model, accepts_types and model_type not in MEAN_POOLED)
