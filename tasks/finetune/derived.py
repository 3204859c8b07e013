"""Metrics a fine-tune cell derives from its reported ones (``Profile.derived``).

MNLI's ``mean_accuracy`` is the mean of its matched and mismatched dev accuracies: the
number Chen et al. 2023 print for MNLI ("Note that we report the average score for the
two test sets of MNLI", App. A.4; GLUE's test labels are private, so the two sets are the
dev sets here as for every GLUE task). It is computed per run, then combined over runs
like every metric (``protocols.aggregate``). This module gives it what the reported
metrics have: ``n`` (the examples of both sets), a bootstrap interval (each set resampled
on its own, the two accuracies averaged on every replicate), and per-example values whose
mean is the metric itself, so ``compare`` tests it paired like any mean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from posharness.contracts.task import Metric

if TYPE_CHECKING:
    from posharness.tasks.finetune.engine import EncodedSplit
    from posharness.tasks.finetune.profiles import Profile
    from posharness.tasks.finetune.protocols import Aggregate
    from posharness.tasks.finetune.runs import RunResult

# Index elements drawn per chunk of replicates (as stats.classification.bootstrap_interval).
_CHUNK_ELEMENTS = 1 << 21
CONFIDENCE = 0.95


def derived_metric(
    profile: Profile,
    name: str,
    summary: Aggregate,
    results: Sequence[RunResult],
    split_of: Callable[[str], EncodedSplit],
    resamples: int,
    seed: int,
) -> Metric:
    """``name``'s value as the protocol aggregated it, with ``n`` = the examples of all
    its parts' splits and, when ``resamples`` > 0, a percentile-bootstrap interval."""
    from posharness.stats.classification import replicate_scores

    parts = profile.parts(name)
    sizes = [len(split_of(split).labels) for _, split, _ in parts]
    value = summary.values[name]
    if resamples <= 0 or min(sizes) < 2:
        return Metric(value, n=sum(sizes))
    rng = np.random.default_rng(seed)
    per_part = []
    for (_, split, metric), n in zip(parts, sizes, strict=True):
        runs = [results[i].predictions[split] for i in summary.used]
        replicate = replicate_scores(metric, split_of(split).labels, runs)
        chunk = max(1, _CHUNK_ELEMENTS // n)
        drawn = [
            replicate(rng.integers(0, n, size=(min(chunk, resamples - start), n)))
            for start in range(0, resamples, chunk)
        ]
        per_part.append(np.concatenate(drawn))  # (resamples, runs)
    per_run = np.mean(per_part, axis=0)  # the derived metric of each run, per replicate
    combine = np.median if summary.combine == "median" else np.mean
    values = combine(per_run, axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return Metric(value, float(values.std(ddof=1)), float(low), float(high), sum(sizes))


def example_weights(profile: Profile, split_of: Callable[[str], EncodedSplit]) -> dict:
    """{(derived name, prefix): (metric, weight)}: an example of that split contributes
    ``weight`` x its 0/1 ``metric``, so the mean over every part's examples is the mean of
    the parts' accuracies (weight N / (K n_split) for K parts of N examples in all).
    Only mean metrics (accuracy) have such shares; another part gives no weights."""
    weights: dict[tuple[str, str], tuple[str, float]] = {}
    for name in profile.derived:
        parts = profile.parts(name)
        if any(metric != "accuracy" for _, _, metric in parts):
            continue
        sizes = {split: len(split_of(split).labels) for _, split, _ in parts}
        total = sum(sizes.values())
        for prefix, split, metric in parts:
            weights[name, prefix] = (metric, total / (len(parts) * sizes[split]))
    return weights
