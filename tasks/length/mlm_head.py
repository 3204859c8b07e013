"""How ``length_mlm`` gets a masked-LM head for a model, and its training length.

The adapter contract has no masked-LM ability yet, so it is declared here as an optional
protocol, :class:`HasMaskedLM` (``for_masked_lm(mode)``, the pattern of ``FineTunable``'s
``for_classification``); moving it to ``posharness.contracts.adapter`` and implementing it
in the Hugging Face and zoo adapters is requested in /work/coord/requests-h10.md. Until
then, a model that does not provide it but is loaded from a checkpoint folder
(:class:`FromCheckpoint`: the Hugging Face and zoo adapters) gets the head from that folder
through ``AutoModelForMaskedLM`` — zoo checkpoints are ``PEForMaskedLM`` once
``posharness`` is imported. A folder whose weights hold no head (``AutoModel`` encoders
such as sentence-transformers' MiniLM) would load a random one: that is refused, with the
tasks the model can run instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from posharness.base.errors import OptionError
from posharness.contracts.adapter import Mode

CARD = "pretraining.json"  # posharness pretrain's facts (models/pretrain/card.py)
OTHER_TASKS = "passkey, length_geometry and the geometry tasks"


@dataclass(frozen=True)
class MaskedLM:
    """``logits(input_ids, attention_mask) -> [B, T, vocab]`` in the mode asked for, and
    the ids the masking needs."""

    logits: Callable[[Any, Any], Any]
    mask_token_id: int
    vocab_size: int


@runtime_checkable
class HasMaskedLM(Protocol):
    """The model has a masked-LM head (``length_mlm``)."""

    def for_masked_lm(self, mode: Mode) -> MaskedLM:
        """The encoder with its pretrained head, attention fixed to ``mode``, in eval mode."""


@runtime_checkable
class FromCheckpoint(Protocol):
    """An adapter loaded from a Hugging Face checkpoint folder."""

    folder: Path
    spec: str


@runtime_checkable
class SwitchesAttentionMode(Protocol):
    """A zoo encoder: it switches its own attention between modes (zoo ``modes.py``)."""

    def set_attention_mode(self, mode: str) -> None: ...


def masked_lm_of(model: Any, mode: Mode, device: str = "cpu") -> MaskedLM:
    """The model's own head where it offers one, else its checkpoint folder's (on ``device``)."""
    if isinstance(model, HasMaskedLM):
        return model.for_masked_lm(mode)
    if isinstance(model, FromCheckpoint):
        return _from_folder(model, mode, device)
    raise OptionError(no_head_message(model))


def no_head_message(model: Any) -> str:
    return (
        f"length_mlm: {getattr(model, 'spec', model)} has no masked-LM head (a zoo "
        f"checkpoint from posharness pretrain or a Hugging Face *ForMaskedLM one has); it "
        f"can run {OTHER_TASKS}"
    )


def _from_folder(model: FromCheckpoint, mode: Mode, device: str) -> MaskedLM:
    import torch
    from transformers import AutoModelForMaskedLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    import posharness  # noqa: F401  (the zoo registers PEForMaskedLM with the Auto classes)

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the missing-head warning is turned into our error
    try:
        head, info = AutoModelForMaskedLM.from_pretrained(
            model.folder, dtype=torch.float32, output_loading_info=True
        )
    except (OSError, ValueError, KeyError) as exc:
        raise OptionError(f"{no_head_message(model)} ({type(exc).__name__})") from None
    finally:
        hf_logging.set_verbosity(verbosity)
    if info.get("missing_keys"):
        raise OptionError(no_head_message(model))
    base = head.base_model
    if mode is not Mode.BOTH:
        if not isinstance(base, SwitchesAttentionMode):
            raise OptionError(
                f"length_mlm: {model.spec} runs its masked-LM head in mode both only here "
                f"(mode {mode} needs the adapter's for_masked_lm)"
            )
        base.set_attention_mode(str(mode))
    head.to(device).eval()
    tokenizer = AutoTokenizer.from_pretrained(model.folder)
    if tokenizer.mask_token_id is None:
        raise OptionError(f"length_mlm: {model.spec}'s tokenizer has no mask token")

    def logits(input_ids: Any, attention_mask: Any) -> Any:
        return head(input_ids=input_ids, attention_mask=attention_mask).logits

    return MaskedLM(logits, int(tokenizer.mask_token_id), int(head.config.vocab_size))


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
