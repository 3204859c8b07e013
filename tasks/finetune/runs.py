"""One protocol run of one task: a plain fine-tune, or SentEval's k-fold cross-validation.

Each fine-tune (each fold, for cross-validated tasks) is looked up in the cache before it
is trained, so an interrupted protocol resumes at the run it stopped in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from posharness.stats.classification import score
from posharness.storage.cache import FeatureCache
from posharness.tasks.finetune.engine import EncodedSplit, TrainingSettings, fine_tune
from posharness.tasks.finetune.store import (
    load_record,
    run_key,
    save_run,
)

CV_SPLIT_SEED = 0  # folds are fixed across runs, so rates and seeds see the same folds
CARVED_DEV_FRACTION = 0.1


@dataclass
class RunResult:
    """A run's predictions on every reported split, and what it took to get them."""

    predictions: dict[str, np.ndarray]
    log: dict[str, Any]  # best epoch(s) and per-epoch scores, for the result's details
    keys: list[str]  # cache keys of the fine-tunes it is made of
    train_seconds: float = 0.0
    train_examples: int = 0
    trained: int = 0  # fine-tunes trained in this process (the rest came from the cache)
    extra_scores: dict[str, float] = field(default_factory=dict)  # e.g. CV dev scores
    state: dict[str, Any] | None = None  # best weights, only when asked for (reuse)


@dataclass(frozen=True)
class RunContext:
    """What every fine-tune of one cell shares."""

    cache: FeatureCache
    fingerprint: str
    mode: str  # mode identity: mode, definition and reference corpus
    task: str
    data: Mapping[str, Any]  # content hashes of the splits, plus limit
    build: Callable[[], Any]  # a fresh classifier in the cell's mode
    metrics: tuple[str, ...]
    selection_metric: str
    regression: bool
    pad_token_id: int
    device: str
    bf16: bool
    eval_batch_size: int
    keep_weights: bool
    progress: Callable[[str, int], Callable[[int], None]]

    def scorer(self, gold: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
        return score(self.metrics, gold, predicted)


def subset(split: EncodedSplit, indices: Sequence[int], name: str | None = None) -> EncodedSplit:
    return EncodedSplit(
        name or split.name,
        [split.items[i] for i in indices],
        split.labels[list(indices)],
        [split.ids[i] for i in indices],
    )


def carve_dev(train: EncodedSplit) -> tuple[EncodedSplit, EncodedSplit]:
    """Hold out a fixed 10 % of train as dev (TREC ships train and test only).

    The same examples in every run and mode, so rates and seeds are chosen on one set.
    """
    order = np.random.default_rng(CV_SPLIT_SEED).permutation(len(train))
    size = max(1, int(round(CARVED_DEV_FRACTION * len(train))))
    dev, rest = sorted(order[:size].tolist()), sorted(order[size:].tolist())
    return subset(train, rest, "train"), subset(train, dev, "dev")


def _fine_tune_cached(
    rc: RunContext,
    settings: TrainingSettings,
    train: EncodedSplit,
    select: EncodedSplit,
    others: Sequence[EncodedSplit],
    extra: Mapping[str, Any],
    label: str,
    retrain: bool = False,
) -> tuple[str, Any, Any]:
    """(key, record, the trained outcome or None when the record came from the cache)."""
    key = run_key(rc.cache, rc.fingerprint, rc.mode, rc.task, rc.data, settings, extra)
    record = None if retrain else load_record(rc.cache, key)
    if record is not None:
        return key, record, None
    # Counts examples over every epoch: a log that is no terminal gets lines with the
    # rate and the time left (the reporter's progress, posharness.base.progress_lines).
    advance = rc.progress(f"fine-tuning {rc.task} {label}, examples", len(train) * settings.epochs)
    outcome = fine_tune(
        rc.build,
        train,
        select,
        others,
        settings,
        regression=rc.regression,
        scorer=rc.scorer,
        selection_metric=rc.selection_metric,
        pad_token_id=rc.pad_token_id,
        device=rc.device,
        bf16=rc.bf16,
        eval_batch_size=rc.eval_batch_size,
        progress=advance,
    )
    return key, save_run(rc.cache, key, outcome, rc.keep_weights), outcome


def plain_run(
    rc: RunContext,
    settings: TrainingSettings,
    splits: Mapping[str, EncodedSplit],
    select: str,
    report: Sequence[str],
    label: str,
    retrain: bool = False,
) -> RunResult:
    """One fine-tune; ``retrain`` ignores a cached record and returns the weights too."""
    others = [splits[name] for name in dict.fromkeys(report) if name != select]
    key, record, outcome = _fine_tune_cached(
        rc, settings, splits["train"], splits[select], others, {}, label, retrain
    )
    return RunResult(
        predictions=record.predictions,
        log={"best_epoch": record.best_epoch, "epochs": record.epochs},
        keys=[key],
        train_seconds=record.train_seconds,
        train_examples=record.train_examples,
        trained=int(outcome is not None),
        state=outcome.state if retrain and outcome is not None else None,
    )


def cross_validated_run(
    rc: RunContext, settings: TrainingSettings, everything: EncodedSplit, folds: int, label: str
) -> RunResult:
    """SentEval's k-fold protocol for fine-tuning: fold k is test, fold k+1 picks the epoch.

    Every example is predicted once, by the model that never saw it; the score is that
    of the pooled out-of-fold predictions. Folds are stratified and fixed across runs.
    """
    from sklearn.model_selection import KFold, StratifiedKFold

    splitter = (
        KFold(folds, shuffle=True, random_state=CV_SPLIT_SEED)
        if rc.regression
        else StratifiedKFold(folds, shuffle=True, random_state=CV_SPLIT_SEED)
    )
    parts = [test for _, test in splitter.split(np.zeros(len(everything)), everything.labels)]
    out_of_fold = np.zeros(len(everything), dtype=everything.labels.dtype)
    result = RunResult(predictions={}, log={"folds": []}, keys=[])
    dev_scores: list[dict[str, float]] = []
    for k, test in enumerate(parts):
        dev = parts[(k + 1) % folds]
        held = set(test.tolist()) | set(dev.tolist())
        train = [i for i in range(len(everything)) if i not in held]
        key, record, outcome = _fine_tune_cached(
            rc,
            settings,
            subset(everything, train, "train"),
            subset(everything, dev.tolist(), "dev"),
            [subset(everything, test.tolist(), "test")],
            {"fold": k, "folds": folds},
            f"{label} fold {k + 1}/{folds}",
        )
        out_of_fold[test] = record.predictions["test"]
        best = record.epochs[record.best_epoch - 1]
        dev_scores.append({m: float(best[m]) for m in rc.metrics})
        result.keys.append(key)
        result.log["folds"].append({"best_epoch": record.best_epoch, "epochs": record.epochs})
        result.train_seconds += record.train_seconds
        result.train_examples += record.train_examples
        result.trained += int(outcome is not None)
    result.predictions[everything.name] = out_of_fold
    result.extra_scores = {
        f"dev_{m}": float(np.mean([s[m] for s in dev_scores])) for m in rc.metrics
    }
    return result
