"""Facts about a Hugging Face checkpoint's learned position table, read from its config
and module: where it is, whether it was learned, and where its real positions start."""

from __future__ import annotations

from typing import Any

# Families that number positions from padding_idx + 1.
OFFSET_FAMILIES = {"roberta", "xlm-roberta", "camembert"}


def position_module(model: Any) -> Any:
    """The input position table (an ``nn.Embedding``), or None where there is none."""
    import torch

    embeddings = getattr(model, "embeddings", None)
    table = getattr(embeddings, "position_embeddings", None)
    return table if isinstance(table, torch.nn.Embedding) else None


def learned_positions(config: dict[str, Any]) -> bool:
    """DistilBERT can freeze sinusoidal values into its position table."""
    return not bool(config.get("sinusoidal_pos_embds", False))


def position_offset(config: dict[str, Any]) -> int:
    """Rows of the table before position 0 (RoBERTa-style: padding_idx + 1)."""
    if config.get("model_type", "") in OFFSET_FAMILIES:
        return int(config.get("pad_token_id", 1)) + 1
    return 0


def position_embeddings(model: Any, config: dict[str, Any]) -> Any:
    """The table's rows for positions 0, 1, … as float32 on the CPU, or None."""
    module = position_module(model)
    if module is None:
        return None
    return module.weight.detach()[position_offset(config) :].float().cpu()
