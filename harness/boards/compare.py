"""Compare two leaderboards: per task metric, both values, the delta and a paired test.

Two models scored on the same items give paired data; an unpaired test on it wastes
power and can mislead (lm-eval #3831). And a test must be of the statistic the table
prints: each metric declares how it is made from the examples (``metric_types``), and
the test follows the declaration — exact McNemar for a mean of 0/1 outcomes, sign-flip
permutation for a mean of continuous values, a paired bootstrap of the aggregate itself
for F1, Matthews, correlations and averaged-map geometry (``paired_tests``). Before any
test, the per-example outputs must reproduce the value the board prints, on the same
examples on both sides; where they cannot (a mean over seeds, a representative run of
several, other examples, nothing kept) the comparison says so instead of testing a
neighbouring statistic. The tests of one comparison are Holm-adjusted together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from posharness.boards.cell_outputs import (
    REPLICATES_KEY,
    CellOutputs,
    Outputs,
    outputs_of_bundle_entry,
    outputs_of_result,
    row_outputs,
    row_outputs_from_files,
)
from posharness.boards.leaderboard import Leaderboard, Row, Score, load
from posharness.contracts.cell_key import PairKey
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MetricType, metric_type
from posharness.stats.paired_resampling import paired_replicates
from posharness.stats.paired_tests import (
    RESAMPLES,
    PairedTest,
    adjust,
    bootstrap_of_aggregate,
    mcnemar,
    permutation_test,
)
from posharness.stats.precision import (
    EQUAL,
    NO_VARIABILITY,
    PRECISION,
    constant,
    exact_verdict,
    scale_of,
    within_precision,
)
from posharness.storage.hashing import hash_obj

__all__ = [  # the outputs' names stay importable from here (cell_outputs holds them)
    "REPLICATES_KEY",
    "CellOutputs",
    "MetricComparison",
    "Outputs",
    "RowComparison",
    "RowFilter",
    "adjust_comparisons",
    "compare_files",
    "compare_metrics",
    "family_keys",
    "family_size",
    "model_name",
    "outputs_of_bundle_entry",
    "outputs_of_result",
    "pair_rows",
    "paired_test",
    "row_outputs",
    "row_outputs_from_files",
]

# How far per-example outputs may be from the board's value and still be the same
# statistic: float summation order, and values the board rounded through JSON.
REPRODUCE_TOLERANCE = 1e-6


@dataclass
class MetricComparison:
    key: str  # task/metric
    a: float | None
    b: float | None
    test: PairedTest | None
    note: str  # why there is no test, or what the test was run on
    kind: MetricType | None = None  # the metric's declared type
    # no test because none is meaningful: the tolerance verdict of a Δ below numerical
    # precision or of two values with no sampling variability (``stats.precision``)
    exact: str | None = None
    # the cells' flags (run/flags.py), "A: …"/"B: …": a flagged test is never a finding
    # on its own, so every output that prints the row prints them
    flags: tuple[str, ...] = ()

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass
class RowComparison:
    a: Row
    b: Row
    metrics: list[MetricComparison]
    missing: list[str]  # result files a paired test would need that are not at hand
    # ... of which the board has an examples bundle that lacks them: their cells kept no
    # per-example outputs (dep_heads keeps none) or joined the board after the bundle
    not_bundled: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RowFilter:
    """Which rows to compare: a model (its spec or its registered name), modes, tasks."""

    models: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()

    def keeps(self, row: Row) -> bool:
        named = not self.models or bool({row.model, model_name(row.model)} & set(self.models))
        return named and (not self.modes or row.mode in self.modes)


def model_name(spec: str) -> str:
    """The registered name a spec loads (``tupe-r`` of ``tupe-r@runs/x``); a Hugging Face
    spec is kept whole, since ``hf`` alone names no model."""
    return spec if spec.startswith("hf:") else spec.partition("@")[0]


def pair_rows(
    left: Leaderboard, right: Leaderboard, keep: RowFilter = RowFilter()
) -> list[tuple[Row, Row]]:
    """One pair per (model, mode, limits) both boards hold — never a cross product.

    Rows pair when their keys' pairing keys agree (``RowKey.pairing``: mode, limits,
    split definition and reference corpus) and their models match: by spec; failing that
    by registered name (``tupe-r`` before training against ``tupe-r@checkpoint`` after);
    failing that, when each board holds one model, those two. A forced attention path or
    the device kind may differ, since eager against SDPA or GPU against CPU are
    comparisons worth making.
    """
    a_rows = [r for r in left.rows if keep.keeps(r)]
    b_rows = [r for r in right.rows if keep.keeps(r)]
    matchers: list[Callable[[Row], str]] = [lambda r: r.model, lambda r: model_name(r.model)]
    if _one_model_each(a_rows, b_rows):
        matchers.append(lambda r: "the one model")
    for identify in matchers:
        b_index: dict[tuple[str, PairKey], Row] = {}
        for b in b_rows:
            b_index.setdefault((identify(b), b.key.pairing), b)
        pairs = [
            (a, b_index[key]) for a in a_rows if (key := (identify(a), a.key.pairing)) in b_index
        ]
        if pairs:
            return pairs
    return []


def _one_model_each(a_rows: list[Row], b_rows: list[Row]) -> bool:
    return len({r.fingerprint for r in a_rows}) == 1 and len({r.fingerprint for r in b_rows}) == 1


def family_keys(left: Leaderboard, a: Row, b: Row, all_metrics: bool, tasks=()) -> list[str]:
    """The metrics of one row pair that are printed, and so tested: the Holm family.

    One definition for ``compare`` and the report's comparison page: the headline metrics
    (every metric with ``all_metrics``) both rows hold, in the board's column order. A
    test is computed only for a metric that is printed, and every test printed is in
    the family, so the adjusted p of a row never depends on what is hidden.
    """
    return [
        c.key
        for c in left.columns
        if (c.headline or all_metrics)
        and c.key in a.scores
        and c.key in b.scores
        and (not tasks or c.task in tasks)
    ]


def compare_files(
    path_a: Path, path_b: Path, keep: RowFilter = RowFilter(), all_metrics: bool = True
) -> list[RowComparison]:
    """Every paired row of two boards, its printed metrics (``family_keys``) tested and
    Holm-adjusted together."""
    left, right = load(path_a), load(path_b)
    out = []
    for a, b in pair_rows(left, right, keep):
        keys = family_keys(left, a, b, all_metrics, keep.tasks)
        missing: list[str] = []
        not_bundled: list[str] = []
        outputs_a = row_outputs_from_files(a, path_a, missing, not_bundled)
        outputs_b = row_outputs_from_files(b, path_b, missing, not_bundled)
        metrics = compare_metrics(keys, a, b, outputs_a, outputs_b)
        out.append(RowComparison(a, b, metrics, missing, not_bundled))
    adjust_comparisons([m for row in out for m in row.metrics])
    return out


def compare_metrics(
    keys: list[str], a: Row, b: Row, outputs_a: Outputs, outputs_b: Outputs
) -> list[MetricComparison]:
    metrics = []
    for key in keys:
        task, metric = key.split("/", 1)
        kind = metric_type(task, metric)
        test, note = paired_test(
            outputs_a.get(task),
            outputs_b.get(task),
            metric,
            kind,
            a.scores[key],
            b.scores[key],
            row_seed(a, b, key),
        )
        exact = note.split(";", 1)[0] if test is None and note.startswith(_EXACT) else None
        flags = tuple(
            f"{side}: {flag}"
            for side, row in (("A", a), ("B", b))
            for flag in row.flags.get(task, ())
        )
        metrics.append(
            MetricComparison(
                key, a.scores[key].mean, b.scores[key].mean, test, note, kind, exact, flags
            )
        )
    return metrics


def adjust_comparisons(metrics: list[MetricComparison]) -> int:
    """Holm across every test one comparison prints (compare, a report's comparison page,
    a study table): resamples scaled to the family, then adjusted. Returns its size."""
    tests = [m.test for m in metrics if m.test is not None]
    adjust(tests)
    return len(tests)


def family_size(metrics: list[MetricComparison]) -> int:
    """How many tests one comparison's Holm family holds."""
    return sum(m.test is not None for m in metrics)


def row_seed(a: Row, b: Row, key: str) -> int:
    """The resampling seed of one test, derived from its row pair and metric: Monte Carlo
    errors are independent across the rows of a table, and a row's draws are the same
    every time it is compared."""
    identity = [a.model, a.mode, a.key.limit, b.model, b.mode, key]
    return int(hash_obj({"paired-test": [str(part) for part in identity]})[:8], 16)


# -- the test of one metric --------------------------------------------------------------


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
    ``seed`` draws its resamples (``row_seed``: one per row and metric)."""
    if kind.aggregate == "cell":
        return None, "one value per cell, nothing per example to resample: no paired test"
    seeds = max(score_a.n_seeds, score_b.n_seeds)
    if seeds > 1:
        return None, (
            f"the board's value is a mean over {seeds} seeds and per-example outputs are "
            "one seed's: no paired test of that mean"
        )
    if a is None or b is None:
        return None, "no per-example outputs on both sides: no paired test possible"
    if kind.aggregate == "mean":
        return _test_mean(a.examples, b.examples, metric, kind, score_a.mean, score_b.mean, seed)
    return _test_aggregate(a, b, metric, score_a.mean, score_b.mean, seed)


_EXACT = "exact: "


def _no_test_needed(
    x: np.ndarray, y: np.ndarray, delta: float, scale: float | None = None
) -> str | None:
    """Why Δ needs no test (``stats.precision``): it is below numerical precision, or
    neither side varies from example (or replicate) to example; None when it does."""
    scale = scale_of(x, y) if scale is None else max(scale, scale_of(x, y))
    if constant(x, scale) and constant(y, scale):
        return (
            f"{exact_verdict(delta, scale)}; {NO_VARIABILITY}: every example gives the same "
            "value on each side, so Δ is exact: no p, interval or d_z"
        )
    if within_precision(delta, scale):
        return (
            f"{_EXACT}{EQUAL}; |Δ| <= {PRECISION:g} × the values' scale {scale:.3g}: "
            "a rounding difference, never tested"
        )
    return None


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
    # order (checked above), so the interval moves by that rounding, never more.
    shift = (reported_b - reported_a) - test.delta
    test.delta += shift
    if test.ci_low is not None and test.ci_high is not None:
        test.ci_low, test.ci_high = test.ci_low + shift, test.ci_high + shift
    return test, f"paired over {len(shared)} examples ({kind.label})"


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
        return test, f"paired bootstrap of the aggregate over {on}"
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

    if within_precision(reported_b - reported_a, scale_of(reported_a, reported_b)):
        return None, (
            f"{_EXACT}{EQUAL}; |Δ| <= {PRECISION:g} × the values' scale: a rounding "
            "difference, never tested"
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
    return test, f"paired bootstrap of {metric} recomputed from {on}"


def _blocks(total: int, size: int) -> list[int]:
    """``total`` draws in blocks of at most ``size`` (bounded memory)."""
    return [min(size, total - start) for start in range(0, total, size)]
