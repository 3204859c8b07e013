"""Paired tests and intervals of a difference B − A, each on exactly the printed statistic.

Three tests, chosen by the metric's declared type (``metric_types``), never by its values:
- exact McNemar for a mean of binary per-example outcomes (McNemar 1947; only the
  discordant pairs carry information);
- a sign-flip permutation test for a mean of continuous per-example values (the paired
  randomisation test: under H0 each example's difference is as likely negated);
- a paired bootstrap for an aggregate of all the examples (F1, Matthews, correlations,
  symmetry of an averaged map): both aggregates are recomputed on each joint resample.

Every test carries a 95 % BCa interval of Δ (bias-corrected and accelerated; Efron 1987)
from 2,000 joint resamples of the examples, or from the cell's kept replicates: a
standard interval whose endpoints are quantiles of the replicates, so it never leaves
the statistic's range, and whose bias correction follows a statistic that resampling
biases (an averaged map's symmetry falls when repeated words enter the average). The
interval is not adjusted for multiplicity; the verdicts are (Holm). The bootstrap test of
an aggregate shifts the replicates to mean zero (Efron & Tibshirani 1993, §16.4).

The tests of one comparison are adjusted together by Holm's step-down method (Holm 1979),
which controls the family-wise error rate under any dependence between the tests; it is
written out here (a dozen lines) rather than pulling in statsmodels for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from posharness.stats.precision import scale_of, tolerance

RESAMPLES = 2000  # the first pass of every resampling test, and of every interval
# A Monte Carlo p cannot go below 1/(R+1); Holm multiplies the smallest p by the family
# size m, so a family of m tests needs R >= m/alpha before anything can be significant.
# R follows the family: FLOOR_MARGIN * m / alpha keeps the floor twenty times below
# alpha/m (60 tests: 24,000 resamples, floor 4.2e-5, Holm-adjusted 2.5e-3).
FLOOR_MARGIN = 20
MAX_RESAMPLES = 200_000  # families up to 500 tests get the full margin
# Only a p the first pass put below REFINE_BELOW is redrawn: with 2,000 resamples a p̂
# has a standard error <= 0.011, so a true p below alpha reads above 2 alpha with
# probability < 1e-5, and Holm never adjusts a p downwards (a sequential scheme that
# stops early when a p is clearly large).
REFINE_BELOW = 0.1  # twice alpha
_SIGNS_PER_BLOCK = 2_000_000  # random bytes drawn at once: bounded memory
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
    resamples: int | None = None  # Monte Carlo draws behind p; None: an exact p
    # redraws p with more resamples when the family needs a lower floor, giving the new p
    # and its draws (None: it enumerated every pattern instead); None: it cannot redraw
    refine: Callable[[int], tuple[float, int | None]] | None = field(
        default=None, repr=False, compare=False
    )
    # every sign pattern a permutation test enumerated (2**n), where it enumerated them
    # instead of drawing: what was done, never the draws it would have made
    patterns: int | None = None

    @property
    def floor(self) -> float | None:
        """The smallest p this test could return: 1/(R+1); None for an exact p."""
        return None if self.resamples is None else 1.0 / (self.resamples + 1)

    @property
    def at_floor(self) -> bool:
        return self.floor is not None and self.p_value <= self.floor * (1.0 + 1e-9)

    @property
    def p_method(self) -> str:
        """How p was found: "exact" (an exact distribution, or every sign pattern
        enumerated) or "Monte Carlo" (random resamples, with a floor of 1/(R+1))."""
        return "exact" if self.resamples is None else "Monte Carlo"

    @property
    def p_how(self) -> str:
        """``p_method`` with what it rests on, for a table's test column."""
        if self.patterns is not None:
            return f"exact: all {self.patterns:,} sign patterns"
        if self.resamples is None:
            return "exact"
        return f"Monte Carlo: {self.resamples:,} resamples"

    @property
    def mean_delta(self) -> float:  # the name results written before the rename read
        return self.delta

    def significant(self, alpha: float = ALPHA) -> bool:
        """By the adjusted p where the comparison adjusted it, else by the raw p."""
        p = self.p_adjusted if self.p_adjusted is not None else self.p_value
        return p < alpha


def bca_interval(
    delta: float, replicates: np.ndarray, acceleration: float = 0.0
) -> tuple[float, float]:
    """95 % BCa interval of Δ from its bootstrap replicates (Efron 1987; Efron &
    Tibshirani 1993, §14.3).

    The bias correction z0 = Φ⁻¹(share of replicates below Δ, ties counted half) moves
    the percentiles to where Δ sits in its replicates — an averaged map's symmetry falls
    when repeated words enter the average, so its replicates sit below Δ — and the
    acceleration corrects for skew (0 where the examples are not kept: Efron's
    bias-corrected percentile interval). Its endpoints are quantiles of the replicates,
    so the interval never leaves the range the statistic can take.
    """
    from scipy.special import ndtr, ndtri

    count = len(replicates)
    share = (
        np.count_nonzero(replicates < delta) + 0.5 * np.count_nonzero(replicates == delta)
    ) / count
    z0 = float(ndtri(min(max(share, 1.0 / (count + 1)), count / (count + 1))))
    tail = (1.0 - CONFIDENCE) / 2.0
    z = ndtri(np.array([tail, 1.0 - tail]))
    levels = ndtr(z0 + (z0 + z) / (1.0 - acceleration * (z0 + z)))
    if not np.all(np.isfinite(levels)):  # an extreme acceleration: the BC interval
        levels = ndtr(2.0 * z0 + z)
    low, high = (float(v) for v in np.quantile(replicates, levels))
    # replicates of a constant difference can differ from Δ in the last bit (summation
    # order): close that gap, nothing more
    scale = _NOISE * max(1.0, abs(delta))
    if delta < low <= delta + scale:
        low = delta
    if delta - scale <= high < delta:
        high = delta
    return low, high


def mean_acceleration(diff: np.ndarray) -> float:
    """BCa's acceleration of a mean, from its jackknife in closed form: the leave-one-out
    means differ from their mean by (d_i − d̄)/(n − 1), so a = Σ(d_i − d̄)³ / (6 (Σ(d_i −
    d̄)²)^{3/2}) (Efron & Tibshirani 1993, eq. 14.15)."""
    centred = diff - diff.mean()
    spread = float(np.sum(centred**2))
    denominator = 6.0 * spread**1.5  # underflows to 0 for differences of ~1e-100
    if denominator == 0.0 or not np.isfinite(denominator):
        return 0.0
    return float(np.sum(centred**3)) / denominator


def bootstrap_p(delta: float, replicates: np.ndarray) -> float:
    """Two-sided p of H0: Δ = 0, from the replicates shifted to mean zero."""
    null = replicates - replicates.mean()
    if delta == 0.0:
        return 1.0
    extreme = int(np.count_nonzero(np.abs(null) >= abs(delta) * (1.0 - _NOISE)))
    return (1 + extreme) / (1 + len(null))


def bootstrap_of_aggregate(
    delta: float,
    replicates: np.ndarray,
    n: int,
    on: str,
    redraw: Callable[[int], np.ndarray] | None = None,
) -> PairedTest:
    """A paired bootstrap from the replicate differences of an aggregate (drawn jointly).

    ``redraw(R)`` gives R fresh replicate differences when the family needs a lower floor
    (predictions kept); without it (replicates kept with the cells) p keeps its floor.
    """
    low, high = bca_interval(delta, replicates)
    if not low <= delta <= high:  # said, never hidden by moving the interval
        on += "; Δ lies outside its BCa interval: resampling biases this statistic"
    p = bootstrap_p(delta, replicates)
    refine = None if redraw is None else (lambda r: (bootstrap_p(delta, redraw(r)), r))
    return PairedTest(
        BOOTSTRAP, n, delta, p, low, high, on=on, resamples=len(replicates), refine=refine
    )


def mean_difference_replicates(diff: np.ndarray, seed: int = 0) -> np.ndarray:
    """Paired-bootstrap replicates of the mean difference: examples drawn jointly."""
    rng = np.random.default_rng(seed)
    n = len(diff)
    chunks = []
    for start in range(0, RESAMPLES, _CHUNK):
        draws = rng.integers(0, n, size=(min(_CHUNK, RESAMPLES - start), n))
        chunks.append(diff[draws].mean(axis=1))
    return np.concatenate(chunks)


def mean_interval(diff: np.ndarray, seed: int = 0) -> tuple[float, float]:
    """95 % BCa interval of a mean paired difference (2,000 joint resamples)."""
    replicates = mean_difference_replicates(diff, seed)
    return bca_interval(float(np.mean(diff)), replicates, mean_acceleration(diff))


def effect_size(diff: np.ndarray, floor: float = 0.0) -> float | None:
    """Cohen's d_z: the mean paired difference in units of its standard deviation; None
    when that sd is at most ``floor`` (numerical precision: ``precision.tolerance``), where
    the ratio would only measure rounding."""
    if len(diff) < 2:
        return None
    sd = float(np.std(diff, ddof=1))
    return None if sd <= floor or sd == 0.0 else float(np.mean(diff)) / sd


def mcnemar(x: np.ndarray, y: np.ndarray, seed: int = 0) -> PairedTest:
    """Exact McNemar on 0/1 outcomes: a binomial test of the discordant pairs."""
    from scipy.stats import binomtest

    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else float(binomtest(only_b, discordant, 0.5).pvalue)
    diff = y - x
    delta = float(np.mean(diff))
    low, high = mean_interval(diff, seed)
    d_z = effect_size(diff, tolerance(scale_of(x, y)))
    return PairedTest(MCNEMAR, len(x), delta, p, low, high, d_z, on="per-example correctness")


def sign_flip_p(diff: np.ndarray, resamples: int, seed: int) -> tuple[float, int | None]:
    """Two-sided sign-flip p of the mean difference, and the draws behind it (None: exact).

    Under H0 each paired difference is as likely negated. All 2**n sign patterns are
    enumerated when there are no more of them than ``resamples`` (n <= 10 at 2,000);
    otherwise ``resamples`` random patterns, and p = (1 + #extreme) / (1 + R), which
    counts the observed pattern (Phipson & Smyth 2010). Each random byte flips eight
    examples at once through a 256-entry table of their partial sums, so 40,000 patterns
    of 1,000 examples cost about 0.05 s.
    """
    n = len(diff)
    total = float(diff.sum())
    # a pattern ties the observed sum when it differs by rounding only
    tolerance = 1e-9 * float(np.abs(diff).sum())
    if 2**n <= resamples:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
        sums = total - 2.0 * (patterns @ diff)
        return float(np.count_nonzero(np.abs(sums) >= abs(total) - tolerance)) / 2**n, None
    # Eight examples share one random byte: a table holds, for each of the 256 bytes, the
    # sum of the differences its bits negate, so one pattern costs n/8 look-ups. The
    # table is float32 (half the memory traffic); its rounding, < 1e-6 of sum |d|, is far
    # inside the tie tolerance below, which only ever counts a near-tie as extreme.
    padded = np.zeros(-(-n // 8) * 8)
    padded[:n] = diff
    bits = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little")
    table = (bits.astype(np.float64) @ padded.reshape(-1, 8).T).astype(np.float32)
    flat = table.T.ravel()  # byte b of group j at 256·j + b
    offsets = np.arange(table.shape[1], dtype=np.intp) * 256
    near = max(tolerance, 1e-5 * float(np.abs(diff).sum()))
    rng = np.random.default_rng(seed)
    block = max(1, _SIGNS_PER_BLOCK // max(1, table.shape[1]))
    extreme = 0
    for start in range(0, resamples, block):
        count = min(block, resamples - start)
        packed = rng.integers(0, 256, size=(count, table.shape[1]), dtype=np.uint8)
        negated = np.take(flat, packed + offsets).sum(axis=1, dtype=np.float64)
        sums = total - 2.0 * negated
        extreme += int(np.count_nonzero(np.abs(sums) >= abs(total) - near))
    return (1 + extreme) / (1 + resamples), resamples


def permutation_test(x: np.ndarray, y: np.ndarray, seed: int = 0) -> PairedTest:
    """Sign-flip permutation test of the mean difference, with its bootstrap interval."""
    diff = np.asarray(y, dtype=np.float64) - np.asarray(x, dtype=np.float64)
    delta = float(np.mean(diff))
    if not np.any(diff):  # every pattern gives the observed sum: p = 1, exactly
        return PairedTest(PERMUTATION, len(x), 0.0, 1.0, 0.0, 0.0, None, on="per-example values")
    p, drawn = sign_flip_p(diff, RESAMPLES, seed)
    low, high = mean_interval(diff, seed)
    return PairedTest(
        PERMUTATION,
        len(x),
        delta,
        p,
        low,
        high,
        effect_size(diff, tolerance(scale_of(x, y))),
        on="per-example values",
        resamples=drawn,
        refine=None if drawn is None else (lambda r: sign_flip_p(diff, r, seed)),
        patterns=2 ** len(diff) if drawn is None else None,
    )


def family_resamples(m: int, alpha: float = ALPHA) -> int:
    """Resamples a family of ``m`` Holm-adjusted tests needs: a floor 1/(R+1) at most
    alpha / (FLOOR_MARGIN * m), capped at MAX_RESAMPLES, never below the first pass."""
    return int(min(MAX_RESAMPLES, max(RESAMPLES, math.ceil(FLOOR_MARGIN * m / alpha))))


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


def adjust(tests: Sequence[PairedTest], alpha: float = ALPHA) -> None:
    """Set ``p_adjusted`` of every test by Holm across all of them (one family).

    First every p the first pass left small is redrawn with the resamples the family's
    size calls for (``family_resamples``), so its floor sits well below alpha/m; a test
    that cannot redraw (replicates kept with a cell) keeps its floor, printed as such. A
    sign-flip test whose 2**n patterns fit in the new count enumerates them: it records
    the patterns and an exact p, not the draws it would have made.
    """
    needed = family_resamples(len(tests), alpha)
    for test in tests:
        coarse = test.resamples is not None and test.resamples < needed
        if test.refine is not None and coarse and test.p_value < REFINE_BELOW:
            test.p_value, test.resamples = test.refine(needed)
            if test.resamples is None:
                test.patterns = 2**test.n
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


def format_p(value: float | None, resamples: int | None = None) -> str:
    """A p-value; one at its Monte Carlo floor reads "< 1/(R+1)", since no draw was as
    extreme and all the test can say is that p lies below the floor."""
    if value is None:
        return "–"
    if resamples is not None and value <= (1.0 + 1e-9) / (resamples + 1):
        return f"< 1/{resamples + 1}"
    return f"{value:.3g}"
