"""A Hugging Face checkpoint folder: its identity (hashes of weights, config, tokenizer,
dtype and attention code) and loading it as an encoder with its tokenizer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from posharness.base.errors import ModelLoadError
from posharness.storage.hashing import hash_file, hash_files, hash_obj

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".h5", ".msgpack")
TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
    "vocab.json",
    "merges.txt",
    "spiece.model",
    "sentencepiece.bpe.model",
)
ENCODER_ONLY_CLASSES = {"t5": "T5EncoderModel", "mt5": "MT5EncoderModel"}  # AutoModel: enc-dec


def checkpoint_fingerprint(
    folder: Path,
    hub_commit: str | None,
    dtype: str,
    attn_implementation: str,
    split: str | None = None,
) -> str:
    """What every cache key and result carries: two loads that could differ never share it.

    ``split``: the mode split's code identity above its version 1
    (``decompose.versions.split_identity``); None adds nothing, so fingerprints written
    before splits had versions stay valid (issue 29, part 4)."""
    files = [p for p in folder.iterdir() if p.is_file()]
    weights = [p for p in files if p.name.endswith(WEIGHT_SUFFIXES)]
    tokenizer = [p for p in files if p.name in TOKENIZER_FILES]
    if hub_commit is not None:
        weights_id = {"hub_commit": hub_commit}  # a commit pins every file
    else:
        weights_id = {"weights": hash_files(weights, folder)}
    identity = {
        "adapter": "hf/1",
        **weights_id,
        "config": hash_file(folder / "config.json"),
        "tokenizer": hash_files(tokenizer, folder),
        "dtype": dtype,
        "attn_implementation": attn_implementation,
    }
    if split is not None:
        identity["split_code"] = split
    return hash_obj(identity)[:16]


def load_encoder(
    folder: Path, model_type: str, dtype: str, attn_implementation: str
) -> tuple[Any, Any]:
    """(model in eval mode, tokenizer); a folder that does not load is one line."""
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    model_class = getattr(transformers, ENCODER_ONLY_CLASSES.get(model_type, ""), AutoModel)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = model_class.from_pretrained(
            folder, attn_implementation=attn_implementation, dtype=getattr(torch, dtype)
        )
    except (OSError, ValueError, KeyError) as exc:
        first_line = str(exc).splitlines()[0] if str(exc) else ""
        raise ModelLoadError(
            f"could not load a Hugging Face encoder from {folder} "
            f"({type(exc).__name__}: {first_line}): check that it holds config.json, "
            "weights and tokenizer files"
        ) from exc
    model.eval()
    return model, tokenizer
