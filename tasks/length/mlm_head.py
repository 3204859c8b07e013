"""How ``length_mlm`` gets a masked-LM head for a model, and its training length.

The head comes from the adapter's ``HasMaskedLM`` ability (``for_masked_lm(mode)``, the
pattern of ``FineTunable``'s ``for_classification``; ``posharness.contracts.adapter``):
the zoo adapter loads its checkpoint's ``PEForMaskedLM`` in any of its modes, the Hugging
Face adapter a ``*ForMaskedLM`` checkpoint's head in mode ``both``. A checkpoint that
holds the encoder alone (sentence-transformers' MiniLM) is refused in one line, with the
tasks the model can run instead, never scored with a random head.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from posharness.base.errors import OptionError
from posharness.contracts.adapter import HasMaskedLM, MaskedLM, Mode

__all__ = ["HasMaskedLM", "MaskedLM", "masked_lm_of", "training_length"]

CARD = "pretraining.json"  # posharness pretrain's facts (models/pretrain/card.py)
OTHER_TASKS = "passkey, length_geometry and the geometry tasks"


@runtime_checkable
class FromCheckpoint(Protocol):
    """An adapter loaded from a checkpoint folder (where a pretraining card may lie)."""

    folder: Path
    spec: str


def masked_lm_of(model: Any, mode: Mode) -> MaskedLM:
    """The model's masked-LM head in ``mode``; one line naming what it can run otherwise."""
    if not isinstance(model, HasMaskedLM):
        raise OptionError(f"length_mlm: {_spec(model)} has no masked-LM head; {_instead()}")
    try:
        return model.for_masked_lm(mode)
    except OptionError as exc:
        raise OptionError(f"length_mlm: {exc}; {_instead()}") from None


def _instead() -> str:
    return f"it can run {OTHER_TASKS}"


def training_length(model: Any, given: str) -> tuple[int, str]:
    """The model's training length and where it was read: ``--task-arg
    length_mlm.train_length=N``, else its checkpoint card (``long_block_size`` when the
    recipe had a long phase, else ``block_size``); one line asking for it otherwise."""
    ask = (
        "pass --task-arg length_mlm.train_length=N (the block size it was pretrained at), "
        "or --task-arg length_mlm.lengths=... in tokens"
    )
    if str(given).strip():
        text = str(given).strip()
        if not text.isdigit() or int(text) < 1:
            raise OptionError(
                f"--task-arg length_mlm.train_length={given}: give a positive whole number"
            )
        return int(text), "given"
    card = Path(model.folder) / CARD if isinstance(model, FromCheckpoint) else None
    if card is None or not card.is_file():
        raise OptionError(f"length_mlm: cannot read {_spec(model)}'s training length: {ask}")
    try:
        settings = json.loads(card.read_text(encoding="utf-8"))["recipe"]["settings"]
        value = settings.get("long_block_size") or settings["block_size"]
        length = int(value)
    except (ValueError, KeyError, TypeError):
        raise OptionError(f"length_mlm: {card} does not give a block size: {ask}") from None
    if length < 1:
        raise OptionError(f"length_mlm: {card} gives block size {length}: {ask}")
    return length, str(card)


def _spec(model: Any) -> str:
    return str(getattr(model, "spec", model))
