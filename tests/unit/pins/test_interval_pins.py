"""The 95 % BCa interval of a mean paired difference (``stats.paired_tests``), pinned to
Efron & Tibshirani's (1993) §14.3 recipe written out here: the bias correction
z0 = Φ⁻¹(share of replicates below Δ, ties one half), the acceleration from the jackknife
(eq. 14.15, the leave-one-out means computed one by one), and the interval's ends the
replicates' quantiles at Φ(z0 + (z0 + z_α) / (1 − a (z0 + z_α))), α = 0.025 and 0.975.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from posharness.stats.paired_tests import (
    RESAMPLES,
    bca_interval,
    bootstrap_of_aggregate,
    bootstrap_p,
    mean_acceleration,
    mean_difference_replicates,
    mean_interval,
)


def jackknife_acceleration(diff: np.ndarray) -> float:
    """a = Σ (θ̄ − θ_(i))³ / (6 (Σ (θ̄ − θ_(i))²)^(3/2)), θ_(i) the mean without example i."""
    leave_one_out = np.array([np.delete(diff, i).mean() for i in range(len(diff))])
    spread = leave_one_out.mean() - leave_one_out
    return float(np.sum(spread**3) / (6.0 * np.sum(spread**2) ** 1.5))


def bca_by_hand(delta: float, replicates: np.ndarray, a: float) -> tuple[float, float]:
    count = len(replicates)
    below = np.mean(replicates < delta) + 0.5 * np.mean(replicates == delta)
    # a Δ outside every replicate: the share is kept within one draw of 0 and 1
    z0 = norm.ppf(min(max(below, 1 / (count + 1)), count / (count + 1)))
    ends = []
    for alpha in (0.025, 0.975):
        z = norm.ppf(alpha)
        ends.append(float(np.quantile(replicates, norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))))
    return ends[0], ends[1]


def skewed_differences(seed: int, n: int = 40) -> np.ndarray:
    return np.random.default_rng(seed).exponential(1.0, size=n) - 0.6  # skewed: a != 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_acceleration_of_a_mean_equals_the_jackknife_by_hand(seed: int):
    diff = skewed_differences(seed)
    assert mean_acceleration(diff) == pytest.approx(jackknife_acceleration(diff), rel=1e-10)
    assert abs(jackknife_acceleration(diff)) > 0.01


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_interval_of_a_mean_equals_bca_by_hand(seed: int):
    diff = skewed_differences(seed)
    replicates = mean_difference_replicates(diff, seed)
    expected = bca_by_hand(float(diff.mean()), replicates, jackknife_acceleration(diff))
    assert mean_interval(diff, seed) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_bca_with_no_acceleration_is_the_bias_corrected_percentile_interval():
    replicates = np.random.default_rng(3).normal(0.2, 1.0, size=RESAMPLES)
    for delta in (-5.0, 0.0, 0.2, 0.5, 5.0):  # ±5: outside every replicate
        expected = bca_by_hand(delta, replicates, 0.0)
        assert bca_interval(delta, replicates) == pytest.approx(expected, rel=1e-12)


def test_replicates_are_means_of_examples_drawn_with_replacement():
    """Their mean is Δ and their spread the plug-in standard error s·√((n − 1)/n)/√n,
    within the Monte Carlo error of 2,000 draws."""
    diff = skewed_differences(4, n=30)
    replicates = mean_difference_replicates(diff, 0)
    assert len(replicates) == RESAMPLES
    se = diff.std(ddof=0) / math.sqrt(len(diff))
    assert abs(replicates.mean() - diff.mean()) < 5 * se / math.sqrt(RESAMPLES)
    # the sd of a sample sd is about sd / √(2R) for a near-normal statistic
    assert replicates.std() == pytest.approx(se, rel=5 / math.sqrt(2 * RESAMPLES))
    # each replicate is a mean of n values of diff: n · replicate is a sum of them
    sums = replicates * len(diff)
    assert np.all(sums >= len(diff) * diff.min() - 1e-9)
    assert np.all(sums <= len(diff) * diff.max() + 1e-9)


def test_the_bootstrap_p_counts_centred_replicates_as_far_as_delta():
    """Efron & Tibshirani (1993, §16.4): shift the replicates to mean zero, then
    p = (1 + #{|r − r̄| >= |Δ|}) / (1 + R), the observed value counted once."""
    null = np.linspace(-1.0, 1.0, 201)  # mean zero, steps of 0.01
    for shift in (0.0, 3.5):
        replicates = null + shift  # where they sit does not matter: they are centred
        for delta, extreme in ((0.905, 20), (-0.5, 102), (1.5, 0), (0.01, 200)):
            expected = (1 + extreme) / (1 + len(null))
            assert bootstrap_p(delta, replicates) == pytest.approx(expected, rel=1e-12)
    assert bootstrap_p(0.0, null) == 1.0


def test_a_bootstrap_test_of_an_aggregate_carries_its_p_and_interval():
    replicates = np.random.default_rng(5).normal(0.3, 0.1, size=RESAMPLES)
    test = bootstrap_of_aggregate(0.3, replicates, n=50, on="F1")
    centred = np.abs(replicates - replicates.mean())
    assert test.p_value == pytest.approx((1 + np.sum(centred >= 0.3)) / (1 + RESAMPLES))
    assert (test.ci_low, test.ci_high) == pytest.approx(bca_by_hand(0.3, replicates, 0.0))
    assert test.resamples == RESAMPLES and test.n == 50


def test_the_default_draws_are_seed_zeros_so_a_rerun_prints_the_same_interval():
    diff = skewed_differences(6)
    replicates = mean_difference_replicates(diff, 0)
    expected = bca_by_hand(float(diff.mean()), replicates, jackknife_acceleration(diff))
    assert mean_interval(diff) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert np.array_equal(mean_difference_replicates(diff), replicates)
