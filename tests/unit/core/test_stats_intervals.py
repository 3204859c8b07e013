"""Issue 38, part 6: a standard interval that stays in range, and seeds per row."""

from __future__ import annotations

import numpy as np

from posharness.boards.compare import row_seed
from posharness.boards.leaderboard import Leaderboard
from posharness.stats.paired_tests import mean_acceleration, mean_interval, permutation_test
from tests.unit.core.test_leaderboard_compare import _board


def test_differences_that_are_all_nonnegative_get_an_interval_that_is_too():
    diff = np.zeros(100)
    diff[:3] = 1e-6  # the case whose re-centred interval read -7.3e-7
    low, high = mean_interval(diff)
    assert 0.0 <= low <= diff.mean() <= high <= 1e-6


def test_the_acceleration_of_a_mean_is_its_jackknife_skewness_term():
    diff = np.array([0.0, 0.0, 0.0, 1.0])
    jack = np.array([(diff.sum() - d) / 3 for d in diff])
    u = jack.mean() - jack
    expected = np.sum(u**3) / (6 * np.sum(u**2) ** 1.5)
    assert (
        mean_acceleration(diff) == np.float64(expected).round(12)
        or abs(mean_acceleration(diff) - expected) < 1e-12
    )


def test_each_row_and_metric_draws_with_its_own_seed_and_always_the_same_one():
    board: Leaderboard = _board([("m", "f1", "both"), ("m", "f1", "positional")])
    both, positional = board.rows
    seeds = {
        row_seed(both, both, "t/acc"),
        row_seed(positional, positional, "t/acc"),
        row_seed(both, both, "t/f1"),
    }
    assert len(seeds) == 3 and row_seed(both, both, "t/acc") == row_seed(both, both, "t/acc")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=200), rng.normal(size=200)
    assert permutation_test(x, y, seed=1).ci_low != permutation_test(x, y, seed=2).ci_low
