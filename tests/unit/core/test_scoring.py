"""Official fine-tuning metrics and their bootstrap intervals, on hand-checked numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from posharness.base.errors import DataError, OptionError, PosharnessError
from posharness.stats import classification as finetune_metrics
from posharness.stats.classification import (
    METRIC_NAMES,
    Interval,
    bootstrap_interval,
    per_example,
    score,
)

# tp = 3, fn = 1, fp = 1, tn = 5
GOLD_2X2 = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0])
PRED_2X2 = np.array([1, 1, 1, 0, 1, 0, 0, 0, 0, 0])


def classification_runs(n: int, runs: int, classes: int, seed: int, accuracy: float = 0.8):
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, classes, n)
    predictions = []
    for _ in range(runs):
        wrong = rng.integers(1, classes, n)
        predictions.append(np.where(rng.random(n) < accuracy, gold, (gold + wrong) % classes))
    return gold, predictions


def regression_runs(n: int, runs: int, seed: int):
    """STS-B-like scores on a 0..5 grid with ties, and noisy float predictions."""
    rng = np.random.default_rng(seed)
    gold = np.round(rng.uniform(0, 5, n) * 2) / 2
    predictions = [np.round(gold + rng.normal(0, 1.2, n), 1) for _ in range(runs)]
    return gold, predictions


REFERENCE = {
    "accuracy": accuracy_score,
    "f1": f1_score,
    "matthews": matthews_corrcoef,
    "pearson": lambda g, p: pearsonr(g, p)[0],
    "spearman": lambda g, p: spearmanr(g, p)[0],
}


def test_classification_metrics_match_the_hand_computed_2x2_confusion():
    values = score(["accuracy", "f1", "matthews"], GOLD_2X2, PRED_2X2)
    assert values["accuracy"] == pytest.approx(0.8)  # a fraction, not 80
    assert values["f1"] == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
    assert values["matthews"] == pytest.approx((3 * 5 - 1 * 1) / math.sqrt(4 * 4 * 6 * 6))


def test_correlations_match_hand_computed_values():
    gold = np.array([1.0, 2.0, 3.0, 4.0])
    predicted = np.array([1.0, 9.0, 4.0, 16.0])  # ranks 1, 3, 2, 4
    values = score(["pearson", "spearman"], gold, predicted)
    assert values["pearson"] == pytest.approx(20 / math.sqrt(5 * 129))
    assert values["spearman"] == pytest.approx(0.8)


def test_constant_prediction_scores_zero_instead_of_nan():
    gold = np.array([0.5, 1.5, 4.0, 2.0])
    values = score(["pearson", "spearman"], gold, np.full(4, 3.0))
    assert values == {"pearson": 0.0, "spearman": 0.0}
    assert score(["matthews"], GOLD_2X2, np.zeros(10, dtype=int)) == {"matthews": 0.0}


def test_integral_float_labels_count_as_class_ids():
    assert score(["f1"], GOLD_2X2.astype(float), PRED_2X2) == score(["f1"], GOLD_2X2, PRED_2X2)


@pytest.mark.parametrize("metric", METRIC_NAMES)
def test_replicate_metric_equals_reference_on_the_same_resampled_indices(metric):
    if metric in ("pearson", "spearman"):
        gold, runs = regression_runs(300, 2, seed=1)
    else:
        gold, runs = classification_runs(300, 2, classes=2 if metric == "f1" else 3, seed=1)
    indices = np.random.default_rng(2).integers(0, 300, size=(5, 300))
    values = finetune_metrics._replicate_values(metric, gold, runs, indices)
    expected = [[REFERENCE[metric](gold[row], run[row]) for run in runs] for row in indices]
    np.testing.assert_allclose(values, expected, rtol=0, atol=1e-9)


def test_spearman_replicates_rerank_ties_created_by_resampling():
    gold = np.array([3.0, 1.0, 2.0, 2.0, 5.0])
    predicted = np.array([2.0, 1.0, 2.0, 3.0, 4.0])
    indices = np.array([[0, 0, 2, 3, 3], [4, 1, 1, 1, 0]])
    values = finetune_metrics._replicate_values("spearman", gold, [predicted], indices)
    expected = [spearmanr(gold[row], predicted[row])[0] for row in indices]
    np.testing.assert_allclose(values[:, 0], expected, rtol=0, atol=1e-12)


def test_all_tied_resample_scores_zero_like_score():
    gold, predicted = np.array([1.0, 2.0, 3.0]), np.array([1.0, 3.0, 2.0])
    indices = np.array([[1, 1, 1]])
    for metric in ("pearson", "spearman"):
        assert finetune_metrics._replicate_values(metric, gold, [predicted], indices)[0, 0] == 0.0


def test_one_run_interval_is_the_percentile_bootstrap_of_sklearn_scores():
    gold, (predicted,) = classification_runs(200, 1, classes=2, seed=3)
    interval = bootstrap_interval("f1", gold, [predicted], resamples=200, seed=7)
    indices = np.random.default_rng(7).integers(0, 200, size=(200, 200), dtype=np.int32)
    replicates = [f1_score(gold[row], predicted[row]) for row in indices]
    assert interval.low == pytest.approx(np.quantile(replicates, 0.025), abs=1e-12)
    assert interval.high == pytest.approx(np.quantile(replicates, 0.975), abs=1e-12)
    assert interval.stderr == pytest.approx(np.std(replicates, ddof=1), abs=1e-12)
    assert interval.n == 200


@pytest.mark.parametrize("metric", METRIC_NAMES)
def test_interval_contains_the_point_estimate_and_narrows_as_n_grows(metric):
    widths = []
    for n in (200, 3200):
        if metric in ("pearson", "spearman"):
            gold, runs = regression_runs(n, 3, seed=4)
        else:
            gold, runs = classification_runs(n, 3, classes=2, seed=4)
        point = np.mean([score([metric], gold, run)[metric] for run in runs])
        interval = bootstrap_interval(metric, gold, runs, resamples=300)
        assert interval.low < point < interval.high
        widths.append(interval.high - interval.low)
    assert widths[1] < widths[0] / 2  # width shrinks like 1/sqrt(n): 4x fewer is expected


def test_median_of_runs_ignores_an_outlier_run_that_moves_the_mean():
    gold, runs = classification_runs(500, 5, classes=2, seed=5, accuracy=0.85)
    runs[4] = 1 - gold  # a diverged seed: every prediction wrong
    mean = bootstrap_interval("accuracy", gold, runs, aggregate="mean", resamples=200)
    median = bootstrap_interval("accuracy", gold, runs, aggregate="median", resamples=200)
    assert median.low > mean.high
    assert 0.8 < median.low < 0.85 < median.high < 0.9


def test_same_seed_gives_the_same_interval_and_another_seed_does_not():
    gold, runs = regression_runs(150, 2, seed=6)
    first = bootstrap_interval("spearman", gold, runs, resamples=100, seed=11)
    assert bootstrap_interval("spearman", gold, runs, resamples=100, seed=11) == first
    assert bootstrap_interval("spearman", gold, runs, resamples=100, seed=12) != first


def test_chunking_of_replicates_does_not_change_the_interval(monkeypatch):
    gold, runs = classification_runs(1000, 2, classes=3, seed=8)
    whole = bootstrap_interval("matthews", gold, runs, resamples=64)
    monkeypatch.setattr(finetune_metrics, "_CHUNK_ELEMENTS", 3000)  # 3 replicates a chunk
    assert bootstrap_interval("matthews", gold, runs, resamples=64) == whole


def test_accuracy_bootstrap_handles_100k_examples_with_1000_resamples():
    gold, (predicted,) = classification_runs(100_000, 1, classes=3, seed=9)
    interval = bootstrap_interval("accuracy", gold, [predicted], resamples=1000)
    assert interval.n == 100_000
    assert interval.low < 0.8 < interval.high  # agreement was drawn at 0.8
    assert 0.0 < interval.stderr < 0.002  # sqrt(0.8 * 0.2 / 1e5) ~ 0.0013


def test_fewer_than_two_examples_collapse_the_interval_to_the_point_value():
    interval = bootstrap_interval("accuracy", [1], [[1], [0], [1]], aggregate="median")
    assert interval == Interval(low=1.0, high=1.0, stderr=0.0, n=1)
    assert bootstrap_interval("pearson", [2.5], [[3.0]]) == Interval(0.0, 0.0, 0.0, 1)


def test_per_example_gives_correctness_for_classification_tasks():
    rows = per_example(["f1"], [1, 0, 1], [1, 1, 1])
    assert rows == [{"accuracy": 1.0}, {"accuracy": 0.0}, {"accuracy": 1.0}]


def test_per_example_gives_squared_and_absolute_error_for_regression_tasks():
    rows = per_example(["pearson", "spearman"], [1.0, 4.0], [3.0, 3.5])
    assert rows == [
        {"squared_error": 4.0, "abs_error": 2.0},
        {"squared_error": 0.25, "abs_error": 0.5},
    ]


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: score(["acuracy"], [1], [1]), OptionError, "did you mean 'accuracy'"),
        (lambda: score(["f1"], [0, 2], [0, 1]), DataError, "labels are [0, 1, 2]"),
        (lambda: score(["accuracy"], [0, 1], [0, 0.5]), DataError, "example 1: 0.5"),
        (lambda: score(["accuracy"], ["a"], ["a"]), DataError, "not class ids"),
        (lambda: score(["pearson"], [1.0, 2.0], [1.0, np.nan]), DataError, "not finite"),
        (lambda: score(["accuracy"], [], []), DataError, "no examples"),
        (lambda: score(["accuracy"], [[0, 1]], [[0, 1]]), DataError, "1-D"),
        (lambda: bootstrap_interval("accuracy", [0, 1], [[0, 1], [1]]), DataError, "run 1"),
        (lambda: bootstrap_interval("accuracy", [0, 1], []), DataError, "at least one run"),
        (lambda: bootstrap_interval("f1", [0, 1], [[0, 1]], aggregate="max"), OptionError, "max"),
        (lambda: bootstrap_interval("f1", [0, 1], [[0, 1]], resamples=1), OptionError, ">= 2"),
        (lambda: bootstrap_interval("f1", [0, 1], [[0, 1]], confidence=95), OptionError, "0.95"),
        (lambda: bootstrap_interval("f1", [0, 1], [[0, 1]], seed=-1), OptionError, "seed"),
        (lambda: bootstrap_interval("f1", [0, 1], [[0, 1, 1]]), DataError, "3 predictions"),
        (lambda: per_example([], [1], [1]), OptionError, "at least one"),
    ],
)
def test_bad_input_raises_one_line_harness_errors(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert isinstance(raised.value, PosharnessError)
    assert words in str(raised.value)
    assert "\n" not in str(raised.value)
