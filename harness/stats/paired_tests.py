"""Paired tests and intervals of a difference B − A, each on exactly the printed statistic.

Three tests, chosen by the metric's declared type (``metric_types``), never by its values:
- exact McNemar for a mean of binary per-example outcomes (McNemar 1947; only the
  discordant pairs carry information);
- a sign-flip permutation test for a mean of continuous per-example values (the paired
  randomisation test: under H0 each example's difference is as likely negated);
- a paired bootstrap for an aggregate of all the examples (F1, Matthews, correlations,
  symmetry of an averaged map): both aggregates are recomputed on each joint resample.

Every test carries a 95 % paired-bootstrap interval of Δ. The interval is the percentile
interval of the replicate differences re-centred on the observed Δ (the replicates' mean
bias removed): a statistic that resampling biases — an averaged map's symmetry falls
when repeated words enter the average — would otherwise leave Δ outside its own interval;
for a mean the bias is zero and the interval is the plain percentile one. The bootstrap
test of an aggregate uses the same re-centred replicates shifted to Δ = 0 (Efron &
Tibshirani 1993, §16.4), so its p and its interval agree.

The tests of one comparison are adjusted together by Holm's step-down method (Holm 1979),
which controls the family-wise error rate under any dependence between the tests; it is
written out here (a dozen lines) rather than pulling in statsmodels for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
CONFIDENCE = 0.95
ALPHA = 0.05
_CHUNK = 200  # replicates drawn at once: bounded memory on large eval sets
# Float noise between a statistic computed once and the same statistic recomputed on a
# replicate (e.g. a mean summed in another order); never a real difference.
_NOISE = 1e-12

MCNEMAR = "mcnemar-exact"
PERMUTATION = "paired-permutation"
BOOTSTRAP = "paired-bootstrap"


@dataclass
class PairedTest:
    """One paired test of Δ = B − A, on the statistic the table prints."""

    name: str  # MCNEMAR | PERMUTATION | BOOTSTRAP
    n: int  # examples behind both sides
    delta: float  # B − A of the tested statistic on all n examples: the printed Δ
    p_value: float
    ci_low: float | None = None  # 95 % paired-bootstrap interval of Δ
    ci_high: float | None = None
    effect_size: float | None = None  # Cohen's d_z: mean / sd of per-example differences
    p_adjusted: float | None = None  # Holm-adjusted across the comparison's tests
    on: str = ""  # what was resampled, in words

    @property
    def mean_delta(self) -> float:  # the name results written before the rename read
        return self.delta

    def significant(self, alpha: float = ALPHA) -> bool:
        """By the adjusted p where the comparison adjusted it, else by the raw p."""
        p = self.p_adjusted if self.p_adjusted is not None else self.p_value
        return p < alpha


def recentred_interval(delta: float, replicates: np.ndarray) -> tuple[float, float]:
    """Percentile interval of the replicate deltas, re-centred on the observed ``delta``."""
    centred = replicates - replicates.mean() + delta
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = (float(v) for v in np.quantile(centred, [tail, 1.0 - tail]))
    # the mean of a sample lies inside its own central 95 %, but quantile interpolation and
    # summation order can put it a rounding error outside: close that gap, nothing more
    scale = _NOISE * max(1.0, abs(delta))
    if delta < low <= delta + scale:
        low = delta
    if delta - scale <= high < delta:
        high = delta
    return low, high


def bootstrap_p(delta: float, replicates: np.ndarray) -> float:
    """Two-sided p of H0: Δ = 0, from the replicates shifted to mean zero."""
    null = replicates - replicates.mean()
    if delta == 0.0:
        return 1.0
    extreme = int(np.count_nonzero(np.abs(null) >= abs(delta) * (1.0 - _NOISE)))
    return (1 + extreme) / (1 + len(null))


def bootstrap_of_aggregate(delta: float, replicates: np.ndarray, n: int, on: str) -> PairedTest:
    """A paired bootstrap from the replicate differences of an aggregate (drawn jointly)."""
    low, high = recentred_interval(delta, replicates)
    return PairedTest(BOOTSTRAP, n, delta, bootstrap_p(delta, replicates), low, high, on=on)


def mean_difference_replicates(diff: np.ndarray, seed: int = 0) -> np.ndarray:
    """Paired-bootstrap replicates of the mean difference: examples drawn jointly."""
    rng = np.random.default_rng(seed)
    n = len(diff)
    chunks = []
    for start in range(0, RESAMPLES, _CHUNK):
        draws = rng.integers(0, n, size=(min(_CHUNK, RESAMPLES - start), n))
        chunks.append(diff[draws].mean(axis=1))
    return np.concatenate(chunks)


def effect_size(diff: np.ndarray) -> float | None:
    """Cohen's d_z: the mean paired difference in units of its standard deviation."""
    if len(diff) < 2:
        return None
    sd = float(np.std(diff, ddof=1))
    return None if sd == 0.0 else float(np.mean(diff)) / sd


def mcnemar(x: np.ndarray, y: np.ndarray) -> PairedTest:
    """Exact McNemar on 0/1 outcomes: a binomial test of the discordant pairs."""
    from scipy.stats import binomtest

    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(binomtest(only_b, discordant, 0.5).pvalue)
    diff = y - x
    delta = float(np.mean(diff))
    low, high = recentred_interval(delta, mean_difference_replicates(diff))
    return PairedTest(
        MCNEMAR, len(x), delta, p, low, high, effect_size(diff), on="per-example correctness"
    )


def permutation_test(x: np.ndarray, y: np.ndarray, seed: int = 0) -> PairedTest:
    """Sign-flip permutation test of the mean difference, with its bootstrap interval."""
    from scipy import stats

    diff = y - x
    delta = float(np.mean(diff))
    if not np.any(diff):
        return PairedTest(PERMUTATION, len(x), 0.0, 1.0, 0.0, 0.0, None, on="per-example values")
    permutation = stats.permutation_test(
        (x, y),
        lambda u, v, axis: np.mean(v - u, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        rng=np.random.default_rng(seed),
    )
    low, high = recentred_interval(delta, mean_difference_replicates(diff, seed))
    return PairedTest(
        PERMUTATION,
        len(x),
        delta,
        float(permutation.pvalue),
        low,
        high,
        effect_size(diff),
        on="per-example values",
    )


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (Holm 1979)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def adjust(tests: Sequence[PairedTest]) -> None:
    """Set ``p_adjusted`` of every test by Holm across all of them (one comparison)."""
    for test, p in zip(tests, holm([t.p_value for t in tests]), strict=True):
        test.p_adjusted = p


def format_delta(value: float | None) -> str:
    """A signed difference that never reads ±0.0000 unless it is zero: four decimals,
    or two significant digits in scientific notation below 0.0005."""
    if value is None:
        return "–"
    if value == 0.0:
        return "0"
    if abs(value) < 5e-4:
        return f"{value:+.2e}"
    return f"{value:+.4f}"


def format_p(value: float | None) -> str:
    return "–" if value is None else f"{value:.3g}"
