"""Issue 46, part 1: a test between PEs over their pretraining seeds.

Two equal PEs, a seed-level spread five times the probe words' (issue 46: a new TUPE-R
seed 5 points off, beside a per-cell interval of ±0.4): Welch over the seed values
rejects at the nominal 5 %, where a test over one model's probe words would reject
almost always. Fewer than three seeds a side gives no test and says so.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from posharness.contracts.metric_types import MEAN_CONTINUOUS
from posharness.stats.pe_level import WITHIN_ONE_MODEL, pe_level_test
from posharness.stats.seed_tests import WELCH_T

SEED_SD = 0.05  # one model's locality from seed to seed
WORD_SD = 0.2  # one probe word's locality around its model's
WORDS = 100


def _seed_values(rng: np.random.Generator, tables: int, seeds: int, mean: float) -> np.ndarray:
    """Each seed's value: the PE's mean, its seed effect, the mean of its 100 words."""
    words = rng.normal(0.0, WORD_SD, size=(tables, seeds, WORDS)).mean(axis=2)
    return mean + rng.normal(0.0, SEED_SD, size=(tables, seeds)) + words


@pytest.mark.parametrize("seeds", [3, 5])
def test_two_equal_pes_are_rejected_at_the_nominal_rate(seeds):
    rng = np.random.default_rng(46 + seeds)
    tables = 400
    a, b = _seed_values(rng, tables, seeds, 0.4), _seed_values(rng, tables, seeds, 0.4)
    rejected = 0
    for left, right in zip(a, b, strict=True):
        test, note = pe_level_test(dict(enumerate(left)), dict(enumerate(right)))
        assert test is not None and test.name == WELCH_T, note
        rejected += test.p_value < 0.05
    low, high = binom.interval(0.999, tables, 0.05)  # the band a true 5 % falls in
    assert low <= rejected <= high, f"{rejected} of {tables}"


def test_a_real_difference_between_pes_is_found_over_five_seeds():
    rng = np.random.default_rng(3)
    a, b = _seed_values(rng, 1, 5, 0.40)[0], _seed_values(rng, 1, 5, 0.55)[0]
    test, note = pe_level_test(dict(enumerate(a)), dict(enumerate(b)), metric="locality")
    assert test is not None and test.p_value < 0.01 and test.n == 10
    assert test.ci_low <= test.delta <= test.ci_high
    assert "pretraining seeds" in note and "two samples" in note  # never paired by seed


def test_fewer_than_three_seeds_a_side_gives_no_test_and_says_why():
    test, note = pe_level_test({0: 0.44, 1: 0.40}, {0: 0.10, 1: 0.09, 2: 0.11})
    assert test is None
    assert "fewer than 3 pretraining seeds a side (A 2, B 3)" in note and "no ▲/▼" in note
    assert WITHIN_ONE_MODEL in note


def test_the_interval_stays_in_the_metrics_range():
    """Three seeds of a locality near 0 against three near 1: a Welch interval would
    cross 1; clipped to the range of a difference of two localities."""
    test, note = pe_level_test(
        {0: 0.02, 1: 0.10, 2: 0.30},
        {0: 0.99, 1: 0.97, 2: 0.90},
        metric="locality",
        kind=MEAN_CONTINUOUS,
    )
    assert test is not None and -1.0 <= test.ci_low <= test.ci_high <= 1.0
