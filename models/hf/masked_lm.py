"""A checkpoint's masked-LM head, loaded for scoring (the ``HasMaskedLM`` ability).

``AutoModelForMaskedLM`` loads whatever head the checkpoint has; where it has none (an
``AutoModel`` encoder such as sentence-transformers' MiniLM) transformers would fill one
with random weights and warn. A random head scores nothing, so its absence is an error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from posharness.base.errors import OptionError
from posharness.contracts.adapter import MaskedLM, Mode


def load_masked_lm(folder: Path, spec: str) -> Any:
    """The checkpoint's ``*ForMaskedLM`` model in float32, eval mode, on the CPU."""
    import torch
    from transformers import AutoModelForMaskedLM
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the missing-head warning becomes our error
    try:
        model, info = AutoModelForMaskedLM.from_pretrained(
            folder, dtype=torch.float32, output_loading_info=True
        )
    except (OSError, ValueError, KeyError) as exc:
        raise OptionError(no_head(spec, f"{type(exc).__name__} loading it")) from None
    finally:
        hf_logging.set_verbosity(verbosity)
    if info.get("missing_keys"):
        raise OptionError(no_head(spec, "its checkpoint holds the encoder alone"))
    return model.eval()


def scorer(model: Any, tokenizer: Any, spec: str) -> MaskedLM:
    if tokenizer.mask_token_id is None:
        raise OptionError(f"{spec}: its tokenizer has no mask token, so nothing can be masked")

    def logits(input_ids: Any, attention_mask: Any) -> Any:
        return model(input_ids=input_ids, attention_mask=attention_mask).logits

    return MaskedLM(logits, int(tokenizer.mask_token_id), int(model.config.vocab_size))


def no_head(spec: str, why: str) -> str:
    return (
        f"{spec} has no masked-LM head ({why}): a zoo checkpoint from posharness pretrain or "
        "a Hugging Face *ForMaskedLM checkpoint has one"
    )


def hf_masked_lm(adapter: Any, mode: Mode) -> MaskedLM:
    """A Hugging Face checkpoint's head, in mode ``both`` only: the other modes patch the
    encoder's attention, which a separately loaded head model does not share."""
    if mode is not Mode.BOTH:
        raise OptionError(
            f"{adapter.spec}: its masked-LM head runs in mode both only (got {mode}): "
            "use --mode both"
        )
    model = load_masked_lm(adapter.folder, adapter.spec).to(adapter.device)
    return scorer(model, adapter.tokenizer, adapter.spec)


HEAD_ARCHITECTURES = ("ForMaskedLM", "ForPreTraining")


def head_missing(config: dict[str, Any], spec: str) -> str | None:
    """From ``config.json`` alone: the architectures it was saved as name no masked-LM
    head (sentence-transformers' MiniLM is a ``BertModel``); None when one does, or when
    the configuration names none (loading then decides)."""
    architectures = [str(a) for a in config.get("architectures") or ()]
    if not architectures or any(a.endswith(HEAD_ARCHITECTURES) for a in architectures):
        return None
    return no_head(spec, f"it was saved as {', '.join(architectures)}")
