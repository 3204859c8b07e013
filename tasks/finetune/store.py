"""Fine-tuning runs in the content-addressed cache: one record per run, checkpoints apart.

A run's key hashes the model fingerprint, the mode (with its definition), the content
hashes of the splits it read, the task, every training setting and the engine version,
so a changed file, rate or seed is a different run. The record (per-epoch scores,
predictions, timings) is small and always kept: it is what lets a killed protocol of 20
runs resume at run 14 and a rerun aggregate without training. The best epoch's weights
are a separate entry, written before the record, and may be pruned once a cell knows
which run stands for it; a run asked for again whose weights were pruned is retrained.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from posharness.storage.cache import FeatureCache
from posharness.storage.hashing import hash_obj
from posharness.tasks.finetune.engine import RunOutcome, TrainingSettings

RUN_KIND = "finetune-run"
CHECKPOINT_KIND = "finetune-checkpoint"
ENGINE_VERSION = "1"


def run_key(
    cache: FeatureCache,
    fingerprint: str,
    mode: str,
    task: str,
    data: Mapping[str, Any],
    settings: TrainingSettings,
    extra: Mapping[str, Any] | None = None,
) -> str:
    return cache.key(
        fingerprint,
        mode,
        hash_obj(dict(data)),
        RUN_KIND,
        extra={
            "task": task,
            "settings": asdict(settings),
            "engine": ENGINE_VERSION,
            **(extra or {}),
        },
    )


@dataclass
class RunRecord:
    epochs: list[dict[str, float]]
    best_epoch: int
    predictions: dict[str, np.ndarray]
    train_seconds: float
    train_examples: int
    cached: bool  # True when read back rather than trained in this process

    @property
    def examples_per_second(self) -> float:
        return self.train_examples / self.train_seconds if self.train_seconds else 0.0


def load_record(cache: FeatureCache, key: str) -> RunRecord | None:
    meta = cache.load_meta(key, RUN_KIND)
    tensors = cache.load(key, RUN_KIND) if meta is not None else None
    if meta is None or tensors is None:
        return None
    return RunRecord(
        epochs=meta["epochs"],
        best_epoch=int(meta["best_epoch"]),
        predictions={name: t.numpy() for name, t in tensors.items()},
        train_seconds=float(meta["train_seconds"]),
        train_examples=int(meta["train_examples"]),
        cached=True,
    )


def save_run(cache: FeatureCache, key: str, outcome: RunOutcome, keep_weights: bool) -> RunRecord:
    import torch

    if keep_weights:
        cache.save(key, CHECKPOINT_KIND, outcome.state, {"run": key})
    meta = {
        "epochs": outcome.epochs,
        "best_epoch": outcome.best_epoch,
        "train_seconds": outcome.train_seconds,
        "train_examples": outcome.train_examples,
    }
    tensors = {
        name: torch.from_numpy(np.ascontiguousarray(p)) for name, p in outcome.predictions.items()
    }
    cache.save(key, RUN_KIND, tensors, meta)
    return RunRecord(
        outcome.epochs,
        outcome.best_epoch,
        outcome.predictions,
        outcome.train_seconds,
        outcome.train_examples,
        cached=False,
    )


def load_weights(cache: FeatureCache, key: str) -> dict[str, Any] | None:
    return cache.load(key, CHECKPOINT_KIND)


def drop_weights(cache: FeatureCache, key: str) -> None:
    cache.remove(key, CHECKPOINT_KIND)
