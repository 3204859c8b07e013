"""The paired test of one metric between two cells, or why there is none.

The test follows the metric's declaration (``metric_types``): exact McNemar for a mean of
0/1 outcomes, sign-flip permutation for a mean of continuous values, a paired bootstrap of
the aggregate itself for F1, Matthews, correlations and averaged-map geometry — and only
when the per-example outputs reproduce the value the board prints, on the same examples on
both sides; a difference between sides equal example by example (or replicate by
replicate) within numerical precision, or between sides that do not vary, is stated
exactly and never tested (``stats.precision``) — decided on those values, never on the
printed Δ. ``compare.py`` pairs the rows and adjusts the family; this module tests one
metric of one pair.

A board's ``--seeds`` are task seeds: each draws the task's sample (the probe words, a
fine-tuning run's data order) for one and the same model, so a test over them is a test
within one model a side, named so, never one between pretraining seeds (a PE-level test
over pretraining seeds is ``stats.pe_level``).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from typing import Any

import numpy as np

from posharness.boards.cell_outputs import CellOutputs
from posharness.boards.leaderboard import Score
from posharness.boards.run_values import RunValues
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MetricType
from posharness.stats.paired_resampling import paired_replicates
from posharness.stats.paired_tests import (
    RESAMPLES,
    PairedTest,
    bootstrap_of_aggregate,
    mcnemar,
    permutation_test,
)
from posharness.stats.pe_level import WITHIN_ONE_MODEL
from posharness.stats.precision import EQUAL, EXACT_PREFIX, scale_of, why_exact
from posharness.stats.seed_tests import run_level_test
from posharness.stats.value_ranges import Bounds, value_range

# What a board's --seeds vary: the task's sample for one model, not the model (issue 47,
# part 5); said wherever a test over them is printed.
TASK_SEEDS = "task seeds (each draws the task's sample for one and the same model a side)"
# A test over one model's examples says so: it is no test between PEs (DESIGN.md §12)
ONE_MODEL_A_SIDE = f"{WITHIN_ONE_MODEL} a side"

# How far per-example outputs may be from the board's value and still be the same
# statistic: float summation order, and values the board rounded through JSON.
REPRODUCE_TOLERANCE = 1e-6


def paired_test(
    a: CellOutputs | None,
    b: CellOutputs | None,
    metric: str,
    kind: MetricType,
    score_a: Score,
    score_b: Score,
    seed: int = 0,
) -> tuple[PairedTest | None, str]:
    """The paired test of ``metric``'s Δ as the board prints it, or why there is none;
    ``seed`` draws its resamples (``row_seed``: one per row and metric).

    A value that combines seeds or a protocol's runs is tested over them
    (``stats.seed_tests``), never over one run's examples as if that run were the cell."""
    scores = (score_a, score_b)
    bounds = value_range(metric, kind)
    if max(score.n_seeds for score in scores) > 1:
        return _test_over_task_seeds(scores, bounds)
    runs = (a.runs if a is not None else None, b.runs if b is not None else None)
    if any(r is not None for r in runs):
        return _test_over_protocol_runs(runs, scores, metric, bounds)
    if kind.aggregate == "cell":
        return None, "one value per cell, nothing per example to resample: no paired test"
    if a is None or b is None:
        return None, "no per-example outputs on both sides: no paired test possible"
    if kind.aggregate == "mean":
        return _test_mean(a.examples, b.examples, metric, kind, score_a.mean, score_b.mean, seed)
    return _test_aggregate(a, b, metric, score_a.mean, score_b.mean, seed)


def _test_over_task_seeds(
    scores: tuple[Score, Score], bounds: Bounds | None
) -> tuple[PairedTest | None, str]:
    """The test over task seeds of a board's mean over ``--seeds`` (A's and B's
    ``scores``); a side of one seed is that seed's value. ``bounds``, the range of one
    value, keeps the interval inside the range of a difference."""
    older = [s.n_seeds for s in scores if s.n_seeds > 1 and not s.per_seed]
    if older:
        return None, (
            f"the board's value is a mean over {older[0]} task seeds and the board "
            "records no per-seed values (written before they were): rebuild it from its "
            "results for a test over the task seeds"
        )
    if min(s.n_seeds for s in scores) == 1:
        per_seed = [s.per_seed or {"one seed": s.mean} for s in scores]
    else:
        per_seed = [s.per_seed or {} for s in scores]
    delta = scores[1].mean - scores[0].mean
    return run_level_test(per_seed[0], per_seed[1], delta, TASK_SEEDS, bounds=bounds)


def _test_over_protocol_runs(
    runs: tuple[RunValues | None, RunValues | None],
    scores: tuple[Score, Score],
    metric: str,
    bounds: Bounds | None,
) -> tuple[PairedTest | None, str]:
    """The test over a protocol's runs (a fine-tuned cell's rates and seeds), A's and B's
    ``runs`` (at least one recorded); a side without them is its one value."""
    values = [
        r.of(metric) if r is not None else {"one run": s.mean}
        for r, s in zip(runs, scores, strict=True)
    ]
    if not all(values):
        return None, (
            f"the value combines several runs, and their per-run '{metric}' is not "
            "recorded: no test over the runs (and never one over a single run's examples)"
        )
    combine = {r.combine for r in runs if r is not None}
    how = combine.pop() if len(combine) == 1 else "mean or median"
    delta = scores[1].mean - scores[0].mean
    return run_level_test(values[0], values[1], delta, "runs of the protocol", how, bounds)


def _no_test_needed(
    x: np.ndarray, y: np.ndarray, delta: float, scale: float | None = None
) -> str | None:
    """Why Δ needs no test (``stats.precision.why_exact``), on the paired values ``x`` and
    ``y`` the test would use (examples, or replicates drawn alike); ``scale``, where given,
    is a floor on the values' scale (the aggregates' own); None when Δ is to be tested."""
    scale = scale_of(x, y) if scale is None else max(scale, scale_of(x, y))
    return why_exact(x, y, delta, scale, units="paired values", every="every example")


def _reproduces(value: float, reported: float) -> bool:
    return math.isclose(value, reported, rel_tol=REPRODUCE_TOLERANCE, abs_tol=REPRODUCE_TOLERANCE)


def _different_examples(a: Collection[str], b: Collection[str]) -> str:
    """Why two cells' outputs give no paired test: they are of other examples."""
    shared = len(set(a) & set(b))
    return (
        f"the cells scored different examples (A {len(a)}, B {len(b)}, {shared} shared): "
        "the printed Δ is not a paired difference"
    )


def _test_mean(
    a: dict[str, Example],
    b: dict[str, Example],
    metric: str,
    kind: MetricType,
    reported_a: float,
    reported_b: float,
    seed: int = 0,
) -> tuple[PairedTest | None, str]:
    ids_a = {k for k, example in a.items() if example.has(metric)}
    ids_b = {k for k, example in b.items() if example.has(metric)}
    if not ids_a and not ids_b:
        if not kind.declared:
            return None, (
                f"'{metric}' declares no aggregation and its examples carry no values: "
                "no paired test (never a guessed one)"
            )
        return None, f"the examples carry no per-example '{metric}': no paired test possible"
    if ids_a != ids_b:
        return None, _different_examples(ids_a, ids_b)
    shared = sorted(ids_a)
    if len(shared) < 2:
        return None, "one shared example: too few for a paired test"
    x = np.array([float(a[k].value(metric)) for k in shared])
    y = np.array([float(b[k].value(metric)) for k in shared])
    if not (_reproduces(float(x.mean()), reported_a) and _reproduces(float(y.mean()), reported_b)):
        return None, (
            f"the mean of the per-example '{metric}' ({x.mean():.6g}, {y.mean():.6g}) is not "
            f"the board's value ({reported_a:.6g}, {reported_b:.6g}): they are of another "
            "run, so no paired test of the printed Δ"
        )
    if kind.outcome != "binary":
        untestable = _no_test_needed(x, y, reported_b - reported_a)
        if untestable is not None:
            return None, untestable
    test = mcnemar(x, y, seed) if kind.outcome == "binary" else permutation_test(x, y, seed)
    # The printed Δ is the boards' difference; the examples reproduce it up to summation
    # order (checked above). The interval is the examples' — its ends are resampled means
    # of differences, so inside the range a difference can take — and is never moved:
    # where the printed Δ falls outside it by that rounding, it is widened to hold Δ (a
    # shift gave a lower end of −9e-7 when every difference was >= 0).
    test.delta = reported_b - reported_a
    if test.ci_low is not None and test.ci_high is not None:
        test.ci_low, test.ci_high = min(test.ci_low, test.delta), max(test.ci_high, test.delta)
    return test, f"paired over {len(shared)} examples ({kind.label}); {ONE_MODEL_A_SIDE}"


def _test_aggregate(
    a: CellOutputs, b: CellOutputs, metric: str, reported_a: float, reported_b: float, seed: int
) -> tuple[PairedTest | None, str]:
    delta = reported_b - reported_a
    drawn = paired_replicates(a.replicates, b.replicates, metric)
    if not isinstance(drawn, str):
        left, right = drawn
        untestable = _no_test_needed(left, right, delta, scale_of(reported_a, reported_b))
        if untestable is not None:
            return None, untestable
        n = int((a.replicates or {}).get("n", 0)) or len(a.examples)
        on = f"{len(left)} common resamples of the examples"
        test = bootstrap_of_aggregate(delta, right - left, n, on)
        return test, f"paired bootstrap of the aggregate over {on}; {ONE_MODEL_A_SIDE}"
    from_predictions = _bootstrap_predictions(
        a.examples, b.examples, metric, reported_a, reported_b, seed
    )
    if from_predictions is not None:
        return from_predictions
    if not a.replicates and not b.replicates:
        drawn = "the cells kept neither replicates of it nor predictions to recompute it"
    return None, f"'{metric}' is computed from all examples at once; {drawn}: no paired test"


def _bootstrap_predictions(
    a: dict[str, dict[str, Any]],
    b: dict[str, dict[str, Any]],
    metric: str,
    reported_a: float,
    reported_b: float,
    seed: int = 0,
) -> tuple[PairedTest | None, str] | None:
    """F1, Matthews, Pearson, Spearman recomputed from gold and predictions on each joint
    resample; None when the rows carry no predictions for ``metric``."""
    from posharness.stats.classification import METRIC_NAMES, replicate_scores

    def rows_for(side: dict[str, Example]) -> dict[str, Example]:
        scored = {}
        for key, example in side.items():
            if not (example.has("label") and example.has("prediction")):
                continue
            prefix = example.prefix or ""
            if metric.startswith(prefix) and metric[len(prefix) :] in METRIC_NAMES:
                scored[key] = example
        return scored

    left, right = rows_for(a), rows_for(b)
    if not left or not right:
        return None
    if left.keys() != right.keys():
        return None, _different_examples(left.keys(), right.keys())
    shared = sorted(left)
    if any(left[k].label != right[k].label for k in shared):
        return None, "the two sides hold different gold labels for the same examples"
    if len(shared) < 2:
        return None, "one shared example: too few for a paired test"
    base = metric[len(left[shared[0]].prefix or "") :]
    gold = np.array([left[k].label for k in shared])
    runs = [np.array([side[k].prediction for k in shared]) for side in (left, right)]
    replicate = replicate_scores(base, gold, runs)
    full = replicate(np.arange(len(shared))[None, :])[0]
    if not (_reproduces(float(full[0]), reported_a) and _reproduces(float(full[1]), reported_b)):
        return None, (
            f"'{metric}' recomputed from the kept predictions ({full[0]:.6g}, {full[1]:.6g}) "
            f"is not the board's ({reported_a:.6g}, {reported_b:.6g}): the predictions are "
            "one run's of several, so no paired test of the printed Δ"
        )

    if np.array_equal(runs[0], runs[1]):  # decided on the predictions, never on Δ
        return None, (
            f"{EXACT_PREFIX}{EQUAL}; both sides predicted the same for every one of the "
            f"{len(shared)} examples: Δ is a rounding difference, never tested"
        )

    def redraw(count: int) -> np.ndarray:
        rng = np.random.default_rng([seed, count])
        return np.concatenate(
            [
                np.diff(replicate(rng.integers(0, len(shared), size=(size, len(shared)))), axis=1)[
                    :, 0
                ]
                for size in _blocks(count, 200)
            ]
        )

    deltas = redraw(RESAMPLES)
    on = f"{len(shared)} examples' gold labels and predictions"
    test = bootstrap_of_aggregate(reported_b - reported_a, deltas, len(shared), on, redraw)
    return test, f"paired bootstrap of {metric} recomputed from {on}; {ONE_MODEL_A_SIDE}"


def _blocks(total: int, size: int) -> list[int]:
    """``total`` draws in blocks of at most ``size`` (bounded memory)."""
    return [min(size, total - start) for start in range(0, total, size)]
