"""Checkpoints of a pretraining run: written whole or not at all, and found again to resume.

``out_dir/checkpoint-<step>/`` holds what ``from_pretrained`` loads (``save_pretrained``:
config and safetensors weights, plus the tokenizer) and what resuming needs besides: the
optimizer and scheduler states, the random-number generators (dropout draws from them)
and ``trainer_state.json`` (step, training seconds, the run's identity). Each is written
under a temporary name and renamed, so a kill never leaves a half checkpoint behind.
``out_dir/final/`` is the last model and tokenizer alone.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from posharness.base.errors import DataError, OptionError
from posharness.models.pretrain.card import write_card

STATE_NAME = "trainer_state.json"
STATE_FORMAT = "posharness-pretrain-state/1"
FINAL_NAME = "final"
_CHECKPOINT = re.compile(r"checkpoint-(\d+)")
SAME_RUN_FIX = "use a new --out or the same settings"
# Config fields that vary with the library, the path or a save, not with the model.
VOLATILE_CONFIG_KEYS = (
    "transformers_version",
    "_name_or_path",
    "architectures",
    "dtype",
    "torch_dtype",
)


@dataclass(frozen=True)
class SavedCheckpoint:
    step: int
    path: Path
    state: dict[str, Any]  # trainer_state.json


def latest_checkpoint(out_dir: Path) -> SavedCheckpoint | None:
    """The checkpoint with the highest step in ``out_dir``, or None for a new run."""
    found = _checkpoints(Path(out_dir))
    if not found:
        return None
    step, path = found[-1]
    try:
        state = json.loads((path / STATE_NAME).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise DataError(
            f"{path / STATE_NAME}: unreadable ({exc}): delete {path} to resume from the one before"
        ) from exc
    if state.get("format") != STATE_FORMAT:
        raise DataError(f"{path}: not a posharness pretraining checkpoint: use a new --out")
    return SavedCheckpoint(step, path, state)


def save_checkpoint(
    out_dir: Path,
    step: int,
    model: nn.Module,
    tokenizer: Any,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    state: dict[str, Any],
    keep: int | None = None,
    card: dict[str, Any] | None = None,
) -> Path:
    """Write ``checkpoint-<step>`` atomically, then drop all but the newest ``keep``.
    ``card``: the facts of its model card (``card.py``), written inside the folder."""
    out_dir = Path(out_dir)
    for stale in out_dir.glob(".checkpoint-*.tmp"):  # left by a killed run
        shutil.rmtree(stale, ignore_errors=True)
    tmp = out_dir / f".checkpoint-{step}.tmp"
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    torch.save(optimizer.state_dict(), tmp / "optimizer.pt")
    torch.save(scheduler.state_dict(), tmp / "scheduler.pt")
    torch.save(_rng_state(), tmp / "rng_state.pth")
    document = {"format": STATE_FORMAT, **state, "step": step}
    (tmp / STATE_NAME).write_text(json.dumps(document, indent=1) + "\n")
    if card is not None:
        write_card(tmp, card)
    target = _install(tmp, out_dir / f"checkpoint-{step}")
    if keep is not None:
        for _, old in _checkpoints(out_dir)[:-keep]:
            shutil.rmtree(old, ignore_errors=True)
    return target


def publish_final(
    out_dir: Path,
    model: nn.Module,
    tokenizer: Any,
    card: dict[str, Any] | None = None,
    curve: Path | None = None,
) -> Path:
    """``out_dir/final``: the trained model and tokenizer, for ``from_pretrained``, with
    its card (``card.py``) and loss curve."""
    tmp = Path(out_dir) / f".{FINAL_NAME}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    tokenizer.save_pretrained(str(tmp))
    if card is not None:
        write_card(tmp, card, curve)
    return _install(tmp, Path(out_dir) / FINAL_NAME)


def load_training_state(
    path: Path, model: nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any, device: str
) -> None:
    """Put a checkpoint's weights, optimizer, scheduler and RNG states back in place."""
    from safetensors.torch import load_file

    weights: dict[str, torch.Tensor] = {}
    for file in sorted(path.glob("*.safetensors")):
        weights.update(load_file(str(file), device="cpu"))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    live = model.state_dict()
    loaded = {live[k].data_ptr() for k in weights if k in live}
    # save_pretrained leaves out tied copies (the MLM decoder is the word embedding).
    untied = [k for k in missing if live[k].data_ptr() not in loaded]
    if untied or unexpected:
        raise DataError(
            f"{path}: weights do not fit the model (missing {untied[:3]}, unexpected "
            f"{list(unexpected)[:3]}): use a new --out or the same --model and --size"
        )
    optimizer.load_state_dict(
        torch.load(path / "optimizer.pt", map_location=device, weights_only=True)
    )
    scheduler.load_state_dict(torch.load(path / "scheduler.pt", weights_only=True))
    _set_rng_state(torch.load(path / "rng_state.pth", weights_only=True))


def vocabulary_identity(tokenizer: Any) -> str:
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    specials = sorted(set(tokenizer.all_special_ids))
    return hashlib.sha256(json.dumps([vocab, specials]).encode()).hexdigest()


def model_config(model: nn.Module) -> dict[str, Any]:
    """The model's config as JSON, without the fields that change with library or path."""
    config = getattr(model, "config", None)
    if config is None:
        return {"class": type(model).__name__}
    document = json.loads(config.to_json_string(use_diff=False))
    for volatile in (
        "transformers_version",
        "_name_or_path",
        "architectures",
        "dtype",
        "torch_dtype",
    ):
        document.pop(volatile, None)
    return {"class": type(model).__name__, **document}


def check_same_run(out_dir: Path, saved: dict[str, Any], wanted: dict[str, Any]) -> None:
    """Refuse to resume a run under other settings, corpus, tokenizer or model, naming
    every difference in one line."""
    differing = _recipe_differences(saved["recipe"], wanted["recipe"])
    named = {"corpus": "corpus_name", "model": "scheme"}  # shown when they differ
    for part in ("corpus", "tokenizer", "model"):
        if saved.get(f"{part}_sha256") != wanted[f"{part}_sha256"]:
            label = named.get(part)
            there, here = saved.get(label), wanted.get(label)
            if label and there is not None and there != here:
                word = "scheme" if part == "model" else part
                differing.append(f"{word} ({there} there, {here} here)")
            else:
                differing.append(part if part != "model" else "model configuration")
    _refuse(out_dir, differing)


def check_same_recipe(out_dir: Path, saved: dict[str, Any], wanted: dict[str, Any]) -> None:
    """The recipe part of :func:`check_same_run`, before anything is built or measured."""
    _refuse(out_dir, _recipe_differences(saved, wanted))


def _recipe_differences(saved: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    differing = [k for k in wanted if k != "preset" and saved.get(k) != wanted[k]]
    if saved.get("preset") != wanted.get("preset"):
        there, here = (r.get("preset") or "custom" for r in (saved, wanted))
        differing.insert(0, f"recipe ({there} there, {here} here)")
    return differing


def _refuse(out_dir: Path, differing: list[str]) -> None:
    if differing:
        raise OptionError(
            f"{out_dir} holds checkpoints of a run with another {', '.join(differing)}: "
            f"{SAME_RUN_FIX}"
        )


def _checkpoints(out_dir: Path) -> list[tuple[int, Path]]:
    if not out_dir.is_dir():
        return []
    found = [
        (int(match.group(1)), path)
        for path in out_dir.iterdir()
        if (match := _CHECKPOINT.fullmatch(path.name)) and (path / STATE_NAME).is_file()
    ]
    return sorted(found)


def _install(tmp: Path, target: Path) -> Path:
    """Rename a finished folder into place; an older folder of that name is moved aside first."""
    if target.exists():
        aside = target.with_name(f".{target.name}.old")
        shutil.rmtree(aside, ignore_errors=True)
        target.rename(aside)
        tmp.rename(target)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        tmp.rename(target)
    return target


def _rng_state() -> dict[str, Any]:
    kind, keys, position, has_gauss, cached = np.random.get_state()
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": [kind, keys.tolist(), position, has_gauss, cached],
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def _set_rng_state(state: dict[str, Any]) -> None:
    random.setstate(state["python"])
    kind, keys, position, has_gauss, cached = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), position, has_gauss, cached))
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
