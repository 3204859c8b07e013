"""Outcomes that look like findings but are not: flagged on the result, in the run's
output and in every leaderboard table.

An untrained classifier that always answers one class gives a word-swap Δ of +100 with
McNemar p = 1e-15; a score on eight examples has an interval wider than any effect; a
Toeplitz R² no better than its shuffled control says nothing about translation
invariance. Each check here is generic — it reads only what every result has (metrics,
per-example rows) — so a new task is covered without code of its own; a task may add
flags of its own through ``TaskResult.flags``.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from posharness.results import Metric

MIN_EXAMPLES = 30  # below this, a mean's 95 % interval is wider than most effects
CONSTANT_SHARE = 0.98  # a classifier that gives one class this often is degenerate
MIN_FOR_CONSTANT = 10  # fewer predictions than this cannot show it
PREDICTION_KEYS = ("prediction", "original_prediction")
CONTROL_SUFFIX = "_shuffled"


def degenerate_flags(
    main_metric: str,
    metrics: Mapping[str, Metric],
    examples: Iterable[Mapping[str, Any]] | None,
) -> list[str]:
    """One line per reason to distrust this cell's numbers; empty when there is none."""
    flags = []
    main = metrics.get(main_metric)
    if main is not None and main.n is not None and main.n < MIN_EXAMPLES:
        flags.append(
            f"{main_metric} is computed on {main.n} examples (fewer than {MIN_EXAMPLES}): "
            "its interval is wide; for a number to report, evaluate more examples (a larger "
            "split, or no --limit)"
        )
    for name, metric in metrics.items():
        control = metrics.get(f"{name}{CONTROL_SUFFIX}")
        if control is not None and control.value >= metric.value:
            flags.append(
                f"{name} = {metric.value:.4g} is no higher than its shuffled control "
                f"({control.value:.4g}): no structure beyond chance"
            )
    if examples is not None:
        flags.extend(_constant_predictions(examples))
    return flags


def _constant_predictions(examples: Iterable[Mapping[str, Any]]) -> list[str]:
    """A classifier that answers (nearly) one class on a split or a probe side."""
    counts: dict[tuple[str, str], Counter[Any]] = defaultdict(Counter)
    for row in examples:
        for key in PREDICTION_KEYS:
            if key in row:
                counts[(str(row.get("split", "")), key)][row[key]] += 1
    flags = []
    for (split, key), counter in sorted(counts.items()):
        total = sum(counter.values())
        value, top = counter.most_common(1)[0]
        if total >= MIN_FOR_CONSTANT and top / total >= CONSTANT_SHARE:
            where = f" on {split}" if split else ""
            flags.append(
                f"degenerate classifier: {key} is {value!r} for {100 * top / total:.0f} % of "
                f"{total} examples{where}; its deltas and tests mean nothing — train longer "
                "or on more data"
            )
    return flags


def flag_section(results: Iterable[Any]) -> list[str]:
    """Markdown lines for a summary across cells: every flag of every cell, or nothing."""
    lines = [f"- **{r.task.name} · {r.mode.name}**: {flag}" for r in results for flag in r.flags]
    return ["", "## Flags (do not read these numbers as findings)", "", *lines] if lines else []


def limit_lines(results: Iterable[Any]) -> list[str]:
    """Markdown lines that say a summary's cells were computed on limited data, or none."""
    limits = sorted(
        {(r.limit, r.train_limit) for r in results if r.limit or r.train_limit},
        key=lambda pair: (pair[0] or 0, pair[1] or 0),
    )
    parts = [
        " and ".join(
            text
            for text in (
                f"at most {limit} evaluation examples (--limit)" if limit else "",
                f"at most {train} training examples (--train-limit)" if train else "",
            )
            if text
        )
        for limit, train in limits
    ]
    return (
        [f"**Limited run:** computed on {'; '.join(parts)}: not a number to report.", ""]
        if parts
        else []
    )
