"""Tests of a difference whose unit of variance is the run: seeds and protocol runs.

A fine-tuned cell varies from seed to seed far more than a test over one run's examples
can see: TUPE's cells (Ke et al. 2021, Table 2) are the median of 5 seeds at the best of 4
learning rates, Chen et al. 2023's Table 1 the mean over 5 learning rates, a board row the
mean over its ``--seeds``. McNemar on the median run, as if it were the cell, rejects a
true null 31-67 % of the time when per-seed accuracy varies by 5-10 points (issue 38's
simulation, reproduced in tests/unit/core/test_stats_seeds.py), so such a value is tested
over its runs, never over one run's examples:

- both sides ran the same runs (the same labels: learning rate and seed) -> Student's
  paired t-test on the per-run differences (Student 1908), with its t interval of the
  mean difference;
- otherwise -> Welch's t-test on the two sets of run values (Welch 1947), which assumes
  neither equal variances nor equal counts, with its Welch interval.

Both test the mean of the runs. Where the printed value is their mean (a mean over rates
or seeds) the interval is of exactly the printed Δ; where it is a median (TUPE), the p is
of the runs' means and no interval is printed, since a t interval is not one of the
median difference and five runs do not support a bootstrap of it. With fewer than
``MIN_RUNS`` runs a side no test is printed, and the reason is. The p-values are exact
(t distribution) and are adjusted with the comparison's other tests (Holm).

Exactness is decided on the runs, never on the printed Δ (issue 47, part 1): a Δ of two
medians, or of two accuracies, is often 0 while the runs behind it differ, and that is a
result to test. Only runs that are equal on both sides run by run (paired), or that do
not vary on either side, make Δ exact. A t interval is symmetric about Δ and can cross
the metric's bound (three seeds of two accuracies gave [0.622, 1.178]): it is clipped to
the range a difference can take (``value_ranges``), and the row says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from posharness.stats.paired_tests import CONFIDENCE, PairedTest
from posharness.stats.precision import (
    NO_VARIABILITY,
    constant,
    exact_verdict,
    scale_of,
    why_exact,
)
from posharness.stats.value_ranges import Bounds, clip_interval

MIN_RUNS = 3  # a side with fewer runs has no estimate of their spread worth a test
PAIRED_T = "paired-t"
WELCH_T = "welch-t"
SD_FLOOR = 1e-12  # d_z is printed only above it (stats.precision's reasoning)


def run_level_test(
    a: Mapping[str, float],
    b: Mapping[str, float],
    delta: float,
    unit: str,
    combine: str = "mean",
    bounds: Bounds | None = None,
    pair: bool = True,
) -> tuple[PairedTest | None, str]:
    """The test of ``delta`` (the printed B - A) over run-level values ``a`` and ``b``
    (label -> value of one run or seed), or why there is none.

    ``unit`` names what a run is in the output ("task seeds", "runs of the protocol",
    "pretraining seeds"); ``combine`` is how the printed value combines them (mean |
    median); ``bounds``, the range one value can take (``value_ranges.value_range``),
    keeps the interval inside the range of a difference. ``pair=False`` never pairs, even
    when both sides carry the same labels: pretraining seed 0 of one PE and of another
    are two models, not one unit measured twice (``stats.pe_level``)."""
    from scipy import stats

    counts = f"A {len(a)}, B {len(b)}"
    if min(len(a), len(b)) < MIN_RUNS:
        return None, (
            f"the value is a {combine} over {unit} ({counts}): fewer than {MIN_RUNS} a "
            "side, so no test over them (and never one over a single run's examples)"
        )
    paired = pair and a.keys() == b.keys()
    labels = sorted(a) if paired else []
    x = np.array([a[k] for k in labels] if paired else list(a.values()), dtype=float)
    y = np.array([b[k] for k in labels] if paired else list(b.values()), dtype=float)
    scale = scale_of(x, y)
    exact = why_exact(x, y, delta, scale, units=unit, paired=paired)
    if exact is not None:
        return None, exact
    if paired and constant(y - x, scale):
        return None, (
            f"{exact_verdict(delta, scale)}; {NO_VARIABILITY}: every one of the {len(x)} "
            f"{unit} differs by the same amount, so Δ is exact: no p, interval or d_z"
        )
    if paired:
        result = stats.ttest_rel(y, x)
        differences = y - x
        sd = float(differences.std(ddof=1))
        effect = float(differences.mean()) / sd if sd > SD_FLOOR else None
        name, on = PAIRED_T, f"{len(labels)} {unit} run on both sides, paired by run"
    else:
        result = stats.ttest_ind(y, x, equal_var=False)
        effect, name = None, WELCH_T
        why = "" if not pair else ", not the same runs on both sides"
        on = f"{unit}, {counts}{why}: two samples"
    p = float(result.pvalue) if math.isfinite(result.pvalue) else 1.0
    low = high = None
    clipped = ""
    if combine == "mean":
        interval = result.confidence_interval(confidence_level=CONFIDENCE)
        low, high, clipped = clip_interval(float(interval.low), float(interval.high), bounds)
    if clipped:
        on += f"; {clipped}"
    test = PairedTest(name, len(x) + (0 if paired else len(y)), delta, p, low, high, effect, on=on)
    what = "their mean, as printed" if combine == "mean" else "their means (printed: medians)"
    return test, f"{name} over {on}; tests {what}"
