"""From per-run predictions to what a result records: metrics with bootstrap intervals,
per-example rows for paired comparison, the run log, and which checkpoints to keep.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from posharness.contracts.examples import Example
from posharness.contracts.results import portable_path
from posharness.contracts.task import Metric
from posharness.tasks.finetune.derived import derived_metric, example_weights
from posharness.tasks.finetune.store import drop_weights

if TYPE_CHECKING:
    from posharness.tasks.finetune.engine import EncodedSplit
    from posharness.tasks.finetune.profiles import Profile
    from posharness.tasks.finetune.protocols import Aggregate, PlannedRun, Protocol
    from posharness.tasks.finetune.runs import RunContext, RunResult
    from posharness.tasks.finetune.types import LoadedSplit

SplitOf = Callable[[str], "EncodedSplit"]


def confidence_metrics(
    profile: Profile,
    summary: Aggregate,
    results: Sequence[RunResult],
    split_of: SplitOf,
    resamples: int,
    seed: int,
) -> dict[str, Metric]:
    """The protocol's score per metric, with a bootstrap interval over evaluation examples.

    The interval resamples examples and recomputes the *aggregate* (mean or median over
    the runs the protocol used), so it reflects test-set size, not seed variance; the
    spread across seeds and rates is in ``details.per_rate``.
    """
    from posharness.stats.classification import bootstrap_interval

    metrics: dict[str, Metric] = {}
    for prefix, split in profile.report.items():
        gold = split_of(split).labels
        for name in profile.metrics:
            key = f"{prefix}{name}"
            value = summary.values[key]
            if resamples <= 0:
                metrics[key] = Metric(value, n=len(gold))
                continue
            runs = [results[i].predictions[split] for i in summary.used]
            interval = bootstrap_interval(
                name, gold, runs, aggregate=summary.combine, resamples=resamples, seed=seed
            )
            metrics[key] = Metric(value, interval.stderr, interval.low, interval.high, len(gold))
    for name in profile.derived:
        metrics[name] = derived_metric(profile, name, summary, results, split_of, resamples, seed)
    for key, value in summary.values.items():
        metrics.setdefault(key, Metric(value))
    return metrics


def per_example_rows(profile: Profile, run: RunResult, split_of: SplitOf) -> list[Example]:
    """Gold, prediction and each example's share of the metric, for ``posharness compare``.

    Shares are named like the result's metrics (``matched_accuracy`` on MNLI's matched
    rows, ``dev_accuracy`` on SNLI's dev rows), so a paired test finds them by name; a
    derived mean (MNLI's ``mean_accuracy``) is on the rows of all its parts, weighted so
    that their mean is its value (``derived.example_weights``).
    """
    from posharness.stats.classification import per_example

    weights = example_weights(profile, split_of)
    rows: list[Example] = []
    for prefix, split in profile.report.items():
        encoded = split_of(split)
        predicted = run.predictions[split]
        shares = per_example(profile.metrics, encoded.labels, predicted)
        derived = {name: w for (name, p), w in weights.items() if p == prefix}
        for i, example_id in enumerate(encoded.ids):
            values = {f"{prefix}{name}": value for name, value in shares[i].items()}
            values.update({d: shares[i][m] * w for d, (m, w) in derived.items()})
            rows.append(
                Example(
                    id=f"{split}:{example_id}",
                    split=split,
                    prefix=prefix,
                    label=encoded.labels[i].item(),
                    prediction=predicted[i].item(),
                    **values,
                )
            )
    return rows


def prune_weights(
    rc: RunContext, results: Sequence[RunResult], representative: int, policy: str
) -> None:
    """``selected`` keeps only the representative run's weights; ``all`` keeps every run's."""
    if policy != "selected":
        return
    for index, result in enumerate(results):
        if index != representative:
            for key in result.keys:
                drop_weights(rc.cache, key)


def run_details(
    protocol: Protocol,
    runs: Sequence[PlannedRun],
    results: Sequence[RunResult],
    scores: Sequence[Mapping[str, float]],
    summary: Aggregate,
    loaded: Mapping[str, LoadedSplit],
) -> dict[str, Any]:
    return {
        "protocol": {
            "name": protocol.name,
            "description": protocol.description,
            "aggregate": protocol.aggregate,
        },
        "aggregate": {
            "combine": summary.combine,
            "runs_used": [runs[i].label for i in summary.used],
            "representative_run": runs[summary.representative].label,
        },
        "per_rate": summary.per_rate,
        # the runs the score combines, each with its scores: compare tests over them
        # (posharness.boards.run_values), never over the representative run's examples
        "run_values": {
            "combine": summary.combine,
            "runs": [{"label": runs[i].label, "values": dict(scores[i])} for i in summary.used],
        },
        "runs": [
            {
                "learning_rate": run.learning_rate,
                "seed": run.seed,
                "scores": dict(score),
                "from_cache": result.trained == 0,
                "train_examples_per_second": (
                    round(result.train_examples / result.train_seconds, 2)
                    if result.train_seconds
                    else None
                ),
                **result.log,
            }
            for run, result, score in zip(runs, results, scores, strict=True)
        ],
        "data": {
            name: {
                "source": portable_path(split.source),  # never a folder of this machine
                "content_hash": split.content_hash,
                "examples": len(split.examples),
                "dropped": dict(split.dropped),
            }
            for name, split in loaded.items()
        },
    }
