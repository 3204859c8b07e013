"""What a word-swap probe reports: both accuracies, their paired difference, and the flips.

Original and changed pairs are the same items, so the difference is tested on the pairs
(exact McNemar on the discordant ones) and its interval is a paired bootstrap: each
replicate resamples items and takes both accuracies from the same resample.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from posharness.contracts.examples import Example
from posharness.contracts.task import Metric, TaskResult

LABELS = ("entailment", "neutral", "contradiction")  # the SNLI task's class order


def probe_result(
    probe: str,
    records: Sequence[dict[str, Any]],
    original: np.ndarray,
    changed: np.ndarray,
    resamples: int,
    seed: int,
) -> TaskResult:
    """Metrics, per-example rows and details of one probe from its two prediction vectors."""
    from posharness.stats.paired_tests import mcnemar

    gold_original = np.array([LABELS.index(r["original"]["label"]) for r in records])
    gold_changed = np.array([LABELS.index(r["label"]) for r in records])
    right_before = (original == gold_original).astype(np.float64)
    right_after = (changed == gold_changed).astype(np.float64)
    n = len(records)
    intervals = _paired_intervals(right_before, right_after, resamples, seed)
    test = mcnemar(right_before, right_after)
    metrics = {
        "original_accuracy": _metric(right_before.mean(), intervals.get("original"), n),
        "shuffled_accuracy": _metric(right_after.mean(), intervals.get("shuffled"), n),
        "delta": _metric(right_after.mean() - right_before.mean(), intervals.get("delta"), n),
        "mcnemar_p": Metric(test.p_value, n=n),
        "flipped_to_wrong": Metric(float(np.sum((right_before == 1) & (right_after == 0))), n=n),
        "flipped_to_right": Metric(float(np.sum((right_before == 0) & (right_after == 1))), n=n),
        "prediction_changed": Metric(float(np.mean(original != changed)), n=n),
    }
    entailment = LABELS.index("entailment")
    if probe == "shuffle_sr":
        metrics["still_entailment"] = Metric(float(np.mean(changed == entailment)), n=n)
    rows = [
        Example(
            id=str(record["id"]),
            label=record["label"],
            original_label=record["original"]["label"],
            original_prediction=LABELS[int(before)],
            prediction=LABELS[int(after)],
            original_accuracy=float(ok_before),
            shuffled_accuracy=float(ok_after),
            delta=float(ok_after - ok_before),
            **({"still_entailment": float(after == entailment)} if probe == "shuffle_sr" else {}),
        )
        for record, before, after, ok_before, ok_after in zip(
            records, original, changed, right_before, right_after, strict=True
        )
    ]
    details = {
        "confusion_after": _confusion(gold_changed, changed),
        "confusion_before": _confusion(gold_original, original),
        "changed_side": _count(r.get("change", {}).get("side", "premise") for r in records),
        "by_phrase_label": _by_label(records, right_before, right_after),
        "paired_test": {"test": test.name, "n": test.n, "p_value": test.p_value},
    }
    settings = {"bootstrap": resamples, "metrics_scale": "fractions (0..1); delta = after - before"}
    return TaskResult(metrics, "", details, rows, [], settings)


def _paired_intervals(
    before: np.ndarray, after: np.ndarray, resamples: int, seed: int
) -> dict[str, tuple[float, float]]:
    """95 % percentile intervals of both accuracies and their difference, one resample each."""
    if resamples < 2 or len(before) < 2:
        return {}
    rng = np.random.default_rng(seed)
    chunks = []
    for start in range(0, resamples, 200):
        indices = rng.integers(0, len(before), size=(min(200, resamples - start), len(before)))
        chunks.append(np.stack([before[indices].mean(1), after[indices].mean(1)], axis=1))
    replicates = np.concatenate(chunks)
    columns = {
        "original": replicates[:, 0],
        "shuffled": replicates[:, 1],
        "delta": replicates[:, 1] - replicates[:, 0],
    }
    return {
        key: (float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975)))
        for key, v in columns.items()
    }


def _metric(value: float, interval: tuple[float, float] | None, n: int) -> Metric:
    low, high = interval if interval else (None, None)
    return Metric(float(value), ci_low=low, ci_high=high, n=n)


def _confusion(gold: np.ndarray, predicted: np.ndarray) -> dict[str, dict[str, int]]:
    return {
        truth: {
            guess: int(np.sum((gold == i) & (predicted == j))) for j, guess in enumerate(LABELS)
        }
        for i, truth in enumerate(LABELS)
    }


def _count(values: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for value in values:
        counts[str(value)] = counts.get(str(value), 0) + 1
    return counts


def _by_label(
    records: Sequence[dict[str, Any]], before: np.ndarray, after: np.ndarray
) -> dict[str, dict[str, float]]:
    """Accuracy before and after per shuffled phrase label (NP, VP, …), where there is one."""
    groups: dict[str, list[int]] = {}
    for i, record in enumerate(records):
        label = record.get("change", {}).get("label")
        if label:
            groups.setdefault(str(label), []).append(i)
    return {
        label: {
            "n": len(index),
            "original_accuracy": float(before[index].mean()),
            "shuffled_accuracy": float(after[index].mean()),
        }
        for label, index in sorted(groups.items())
    }
