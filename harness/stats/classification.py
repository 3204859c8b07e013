"""Official fine-tuning metrics and percentile-bootstrap intervals over eval examples.

GLUE and SentEval report accuracy, binary F1 (MRPC, QQP), Matthews correlation (CoLA) and
Pearson / Spearman correlation (STS-B, SICK-R); :func:`score` computes them with the
reference implementations (scikit-learn, scipy) so numbers match published tables.
Papers report a summary over several fine-tuning runs (TUPE: median of 5 seeds; Chen et
al. 2023: mean over learning rates), so :func:`bootstrap_interval` resamples eval
*examples* once per replicate and scores every run on the same resample before
aggregating: the interval then reflects how much the reported summary depends on which
examples happened to be in the dev set.

The replicate metrics are vectorised: every classification metric is a formula on
per-replicate category counts (correct / confusion cells), Pearson on per-replicate
centred moments, and Spearman re-ranks each replicate exactly from per-replicate tie-group
counts (no approximation). Replicates are processed in chunks so memory stays bounded.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from posharness.base.errors import DataError, OptionError

METRIC_NAMES = ("accuracy", "f1", "matthews", "pearson", "spearman")
CLASSIFICATION_METRICS = ("accuracy", "f1", "matthews")
AGGREGATES = ("mean", "median")
# Index elements drawn per chunk of replicates: ~8 MB of int32 indices plus a few float64
# arrays of the same shape, so 400k examples x 1000 replicates stays well under 1 GB.
_CHUNK_ELEMENTS = 1 << 21


@dataclass(frozen=True)
class Interval:
    """A percentile-bootstrap confidence interval of a metric aggregated over runs."""

    low: float
    high: float
    stderr: float  # sample standard deviation (ddof=1) of the bootstrap replicates
    n: int  # examples resampled


def _check_metric(metric: str) -> None:
    if metric not in METRIC_NAMES:
        close = difflib.get_close_matches(str(metric), METRIC_NAMES, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise OptionError(
            f"unknown metric {metric!r}: {hint}choose one of {', '.join(METRIC_NAMES)}"
        )


def _as_vector(values: npt.ArrayLike, what: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1:
        raise DataError(
            f"{what}: expected a 1-D array, got shape {array.shape}: pass one value per example"
        )
    return array


def _class_ids(values: np.ndarray, what: str) -> np.ndarray:
    """Integer class ids; integral floats (1.0) pass, as labels often arrive as floats."""
    if values.dtype == bool or np.issubdtype(values.dtype, np.integer):
        return values.astype(np.int64)
    if np.issubdtype(values.dtype, np.floating):
        bad = ~np.isfinite(values) | (values != np.round(values))
        if not bad.any():
            return values.astype(np.int64)
        i = int(np.argmax(bad))
        raise DataError(
            f"{what}, example {i}: {values[i]} is not a class id: "
            "pass integer class ids (argmax of the logits) for accuracy, f1 and matthews"
        )
    raise DataError(
        f"{what}: values of type {values.dtype} are not class ids: pass integer class ids"
    )


def _real_values(values: np.ndarray, what: str) -> np.ndarray:
    if values.dtype == bool or not np.issubdtype(values.dtype, np.number):
        raise DataError(f"{what}: values of type {values.dtype} are not numbers: pass float scores")
    floats = values.astype(np.float64)
    bad = ~np.isfinite(floats)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(
            f"{what}, example {i}: {values[i]} is not finite: drop or fix the prediction"
        )
    return floats


def _checked_pair(
    metric: str, gold: np.ndarray, predicted: np.ndarray, what: str
) -> tuple[np.ndarray, np.ndarray]:
    """Validate one (gold, predicted) pair for ``metric`` and return them in working dtype."""
    if len(predicted) != len(gold):
        raise DataError(
            f"{what}: {len(predicted)} predictions for {len(gold)} gold labels: "
            "predict every eval example, in order"
        )
    if metric in CLASSIFICATION_METRICS:
        gold, predicted = _class_ids(gold, "gold"), _class_ids(predicted, what)
        if metric == "f1":
            labels = np.union1d(gold, predicted)
            if not np.isin(labels, (0, 1)).all():
                raise DataError(
                    f"{what}: f1 is binary with positive class 1 but labels are "
                    f"{labels.tolist()}: map the labels to 0/1 or use accuracy or matthews"
                )
        return gold, predicted
    return _real_values(gold, "gold"), _real_values(predicted, what)


def _score_one(metric: str, gold: np.ndarray, predicted: np.ndarray) -> float:
    from scipy.stats import pearsonr, spearmanr
    from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

    if metric == "accuracy":
        return float(accuracy_score(gold, predicted))
    if metric == "f1":
        # zero_division=0: no positives anywhere is a failed run, scored 0 without a warning.
        return float(f1_score(gold, predicted, pos_label=1, average="binary", zero_division=0.0))
    if metric == "matthews":
        return float(matthews_corrcoef(gold, predicted))  # sklearn already gives 0 when constant
    # A constant side (a collapsed regressor, or a single example) has no variance, so the
    # correlation is 0/0. Scoring it 0.0 ("no linear / monotone relation found") keeps a
    # degenerate run in means and medians, where NaN would silently poison the summary.
    if gold.min() == gold.max() or predicted.min() == predicted.max():
        return 0.0
    correlate = pearsonr if metric == "pearson" else spearmanr
    return float(correlate(gold, predicted)[0])


def score(metrics: Sequence[str], gold: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Official metric values of one run, as fractions (0..1; correlations -1..1).

    ``gold`` and ``predicted`` hold integer class ids for accuracy, f1 (binary, positive
    class 1) and matthews, and floats for pearson and spearman. A constant side makes a
    correlation undefined; it is scored 0.0 (see :func:`_score_one`), as sklearn does for
    Matthews.
    """
    for metric in metrics:
        _check_metric(metric)
    gold = _as_vector(gold, "gold")
    predicted = _as_vector(predicted, "predictions")
    if len(gold) == 0:
        raise DataError("no examples to score: the eval split is empty, check the data files")
    return {m: _score_one(m, *_checked_pair(m, gold, predicted, "predictions")) for m in metrics}


def per_example(
    metric_names: Sequence[str], gold: npt.ArrayLike, predicted: npt.ArrayLike
) -> list[dict[str, float]]:
    """What each example contributes, for paired tests between two models on one eval set.

    Classification tasks (any of accuracy, f1, matthews requested) give ``{"accuracy": 1.0
    or 0.0}``; regression tasks give ``{"squared_error": (p - g)^2, "abs_error": |p - g|}``.
    F1 and Matthews do not decompose over examples, so correctness is the paired unit.
    """
    if not metric_names:
        raise OptionError("no metrics given: name at least one of " + ", ".join(METRIC_NAMES))
    for metric in metric_names:
        _check_metric(metric)
    kind = "accuracy" if set(metric_names) & set(CLASSIFICATION_METRICS) else "pearson"
    gold_v, pred_v = _checked_pair(
        kind, _as_vector(gold, "gold"), _as_vector(predicted, "predictions"), "predictions"
    )
    if kind == "accuracy":
        return [{"accuracy": 1.0 if hit else 0.0} for hit in (gold_v == pred_v).tolist()]
    error = pred_v - gold_v
    return [{"squared_error": e * e, "abs_error": abs(e)} for e in error.tolist()]


def _category_counts(categories: np.ndarray, indices: np.ndarray, n_categories: int) -> np.ndarray:
    """Counts (B, n_categories) of per-example categories 0..n_categories-1 in each resample."""
    drawn = categories[indices]
    counts = np.empty((indices.shape[0], n_categories))
    for k in range(n_categories - 1):
        counts[:, k] = np.count_nonzero(drawn == k, axis=1)
    counts[:, -1] = indices.shape[1] - counts[:, :-1].sum(axis=1)
    return counts


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0.0 where the denominator is 0 (sklearn's zero_division=0)."""
    return np.divide(numerator, denominator, out=np.zeros_like(numerator), where=denominator > 0)


def _accuracy_from_counts(counts: np.ndarray) -> np.ndarray:
    return counts[:, 1] / counts.sum(axis=1)  # categories: 0 wrong, 1 correct


def _f1_from_counts(counts: np.ndarray) -> np.ndarray:
    _, fp, fn, tp = counts.T  # categories: 2 * gold + predicted
    return _ratio(2 * tp, 2 * tp + fp + fn)


def _matthews_from_counts(counts: np.ndarray) -> np.ndarray:
    """Multiclass MCC from the confusion matrix, the formula of sklearn's matthews_corrcoef."""
    k = int(round(np.sqrt(counts.shape[1])))
    cells = counts.reshape(-1, k, k)  # categories: k * gold + predicted
    n = counts.sum(axis=1)
    true_sum, pred_sum = cells.sum(axis=2), cells.sum(axis=1)
    cov_tp = np.trace(cells, axis1=1, axis2=2) * n - np.einsum("bk,bk->b", true_sum, pred_sum)
    cov_pp = n * n - np.einsum("bk,bk->b", pred_sum, pred_sum)
    cov_tt = n * n - np.einsum("bk,bk->b", true_sum, true_sum)
    return _ratio(cov_tp, np.sqrt(cov_tt * cov_pp))


Replicates = Callable[[np.ndarray], np.ndarray]  # indices (B, n) -> values (B, runs)


def _classification_fn(metric: str, gold: np.ndarray, runs: list[np.ndarray]) -> Replicates:
    """Each example falls in one category (correct, or a confusion cell); replicates count them."""
    if metric == "accuracy":
        categories, k2, formula = [gold == run for run in runs], 2, _accuracy_from_counts
    elif metric == "f1":
        categories, k2, formula = [2 * gold + run for run in runs], 4, _f1_from_counts
    else:
        # Re-index classes to 0..K-1 over every label seen; MCC is invariant to relabelling.
        _, inverse = np.unique(np.concatenate([gold, *runs]), return_inverse=True)
        k = int(inverse.max()) + 1
        categories = [
            k * inverse[: len(gold)] + run for run in np.split(inverse[len(gold) :], len(runs))
        ]
        k2, formula = k * k, _matthews_from_counts
    dtype = np.uint8 if k2 <= 256 else np.int64
    categories = [c.astype(dtype) for c in categories]

    def replicates(indices: np.ndarray) -> np.ndarray:
        return np.stack([formula(_category_counts(c, indices, k2)) for c in categories], axis=1)

    return replicates


def _correlation(x: np.ndarray, y: np.ndarray, constant: np.ndarray) -> np.ndarray:
    """Row-wise Pearson of (B, n) arrays, two-pass like scipy; 0.0 where a side is constant."""
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    denominator = np.sqrt(np.einsum("bi,bi->b", dx, dx) * np.einsum("bi,bi->b", dy, dy))
    r = np.divide(np.einsum("bi,bi->b", dx, dy), denominator, out=np.zeros(len(x)), where=~constant)
    return np.clip(r, -1.0, 1.0)


def _resampled_values(values: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Resampled values (B, n) and which resamples are constant (correlation undefined)."""
    drawn = values[indices]
    return drawn, drawn.min(axis=1) == drawn.max(axis=1)


def _resampled_ranks(tie_group: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (B, n) of each resample, exactly as scipy.stats.rankdata('average').

    ``tie_group`` numbers the examples' distinct values in ascending order. In a resample, a
    group drawn c_g times after L lower draws holds ranks L+1..L+c_g, average L + (c_g+1)/2,
    so one bincount per chunk re-ranks every replicate. Also returns which are all ties.
    """
    b, n = indices.shape
    n_groups = int(tie_group.max()) + 1
    drawn = tie_group[indices]
    rows = (np.arange(b) * n_groups)[:, None]
    counts = np.bincount((drawn + rows).ravel(), minlength=b * n_groups).reshape(b, n_groups)
    group_rank = np.cumsum(counts, axis=1) - counts + (counts + 1) / 2.0
    return np.take_along_axis(group_rank, drawn, axis=1), counts.max(axis=1) == n


def _regression_fn(metric: str, gold: np.ndarray, runs: list[np.ndarray]) -> Replicates:
    """Pearson on the resampled values, Spearman as Pearson on exact per-resample ranks."""
    resample: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
    if metric == "pearson":
        resample, columns = _resampled_values, [gold, *runs]
    else:
        ties = [np.unique(v, return_inverse=True)[1] for v in (gold, *runs)]
        resample, columns = _resampled_ranks, ties

    def replicates(indices: np.ndarray) -> np.ndarray:
        x, x_constant = resample(columns[0], indices)
        correlations = []
        for column in columns[1:]:
            y, y_constant = resample(column, indices)
            correlations.append(_correlation(x, y, x_constant | y_constant))
        return np.stack(correlations, axis=1)

    return replicates


def _replicate_values(
    metric: str, gold: np.ndarray, runs: Sequence[np.ndarray], indices: np.ndarray
) -> np.ndarray:
    """Metric of every run on every resample: ``indices`` (B, n) -> values (B, runs)."""
    return replicate_scores(metric, gold, runs)(np.asarray(indices))


def replicate_scores(metric: str, gold: np.ndarray, runs: Sequence[np.ndarray]) -> Replicates:
    """A function from resample indices (B, n) to each run's metric (B, runs)."""
    gold = _as_vector(gold, "gold")
    checked = [
        _checked_pair(metric, gold, _as_vector(run, f"run {i}"), f"run {i}")
        for i, run in enumerate(runs)
    ]
    gold = checked[0][0]
    predictions = [pair[1] for pair in checked]
    if metric in CLASSIFICATION_METRICS:
        return _classification_fn(metric, gold, predictions)
    return _regression_fn(metric, gold, predictions)


def bootstrap_interval(
    metric: str,
    gold: np.ndarray,
    runs: Sequence[np.ndarray],
    aggregate: str = "mean",
    resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile-bootstrap interval of the mean or median of ``metric`` over runs.

    Each replicate draws n example indices with replacement (``np.random.default_rng(seed)``)
    and scores every run on that same resample, since the runs are predictions of several
    fine-tuning runs on the same eval examples; the replicate value is the aggregate over
    runs. With one run this is the usual bootstrap CI of the metric. Spearman re-ranks each
    resample exactly (ties averaged), not the common rank-once approximation. Degenerate
    resamples score as in :func:`score` (0.0 for a constant side).

    Fewer than two examples cannot vary under resampling, so the interval collapses to the
    point value (low = high = aggregate of :func:`score`, stderr 0.0).
    """
    _check_metric(metric)
    if aggregate not in AGGREGATES:
        raise OptionError(f"unknown aggregate {aggregate!r}: choose one of {', '.join(AGGREGATES)}")
    if isinstance(resamples, bool) or not isinstance(resamples, int | np.integer) or resamples < 2:
        raise OptionError(
            f"resamples must be an integer >= 2, got {resamples!r}: 1000 is customary"
        )
    if not isinstance(confidence, float | int) or not 0.0 < confidence < 1.0:
        raise OptionError(
            f"confidence must lie strictly between 0 and 1, got {confidence!r}: e.g. 0.95"
        )
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise OptionError(f"seed must be a non-negative integer, got {seed!r}: e.g. 0")
    if len(runs) == 0:
        raise DataError("no prediction runs to aggregate: pass the predictions of at least one run")
    combine = np.mean if aggregate == "mean" else np.median
    gold = _as_vector(gold, "gold")
    n = len(gold)
    if n < 2:
        point = float(combine([score([metric], gold, run)[metric] for run in runs]))
        return Interval(low=point, high=point, stderr=0.0, n=n)
    replicate = replicate_scores(metric, gold, runs)
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_ELEMENTS // n)
    index_dtype = np.int32 if n < 2**31 else np.int64
    values = np.empty(resamples)
    for start in range(0, resamples, chunk):
        b = min(chunk, resamples - start)
        indices = rng.integers(0, n, size=(b, n), dtype=index_dtype)
        values[start : start + b] = combine(replicate(indices), axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return Interval(low=float(low), high=float(high), stderr=float(values.std(ddof=1)), n=n)
