"""A test between two positional encodings over their pretraining seeds (DESIGN.md §12).

A claim about a PE is a claim about every model it would give, not about the models
trained: seed-to-seed spread is far larger than the intervals over one model's probe
words (issue 46: a new TUPE-R seed fell 5 points below both committed ones, beside a
per-cell interval of ±0.4). So PE against PE is tested over pretraining seeds, each
seed's model contributing one value: its metric over the task's examples (the probe
words), exactly the value its board prints.

**The test: Welch's t over the seed-level values** (Welch 1947), two samples. Why this,
and not a hierarchical bootstrap over seeds then examples (Saravanan et al. 2020):

- *It is the two-level model's test.* With value_s = μ_PE + u_s + ē_s (a seed effect u
  and the mean of its examples' noise), the seed values are independent with variance
  σ²_seed + σ²_examples/n: their sample variance already holds both levels, so a t test
  on them tests μ_A = μ_B under normal seed effects (with Welch's approximation for
  unequal variances) — the "summary statistics" approach to nested data (Holmes &
  Friston 1998; Aarts et al. 2014), which loses nothing when every seed is scored on the
  same number of examples, as a study's are.
- *A bootstrap needs more units than a study has.* Resampling 3 seeds gives 10 distinct
  resamples; its percentile interval undercovers badly at 3-5 units, while the t
  distribution carries the small-sample uncertainty exactly.
- *Two samples, not pairs.* Seed 0 of TUPE-R and seed 0 of BERT are two models whose
  only shared part is a number; pairing by it would assume a correlation nothing creates.
  Welch assumes neither equal variances (PEs differ in how much seeds move them) nor
  equal counts.

Fewer than ``MIN_RUNS`` (3) seeds a side gives no test — a two-seed spread is no
estimate — and the reason, so a study table prints no ▲/▼ between those PEs. A test over
one model's examples (``compare``'s per-example tests, a study table's cells) stays
available, labelled ``WITHIN_ONE_MODEL``. The type-I error at α = 0.05 is checked in
simulation (``tests/unit/core/test_stats_pe_level.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from posharness.contracts.metric_types import MetricType
from posharness.stats.paired_tests import PairedTest
from posharness.stats.seed_tests import MIN_RUNS, run_level_test
from posharness.stats.value_ranges import value_range

PRETRAINING_SEEDS = "pretraining seeds (one model each)"
WITHIN_ONE_MODEL = "within one model"  # the label of a test over one model's examples


def pe_level_test(
    a: Mapping[int | str, float],
    b: Mapping[int | str, float],
    delta: float | None = None,
    *,
    metric: str | None = None,
    kind: MetricType | None = None,
) -> tuple[PairedTest | None, str]:
    """Welch's t test of PE B against PE A over their pretraining seeds, or why there is
    none.

    ``a``, ``b``: pretraining seed -> that seed's model's value of the metric (the value
    its board prints: a mean over the probe words, an accuracy), one PE each. ``delta``:
    the printed B − A, by default the difference of the seeds' means (the value a study
    table prints per PE). ``metric`` and ``kind``, when given, keep the interval inside
    the range a difference of the metric's values can take (``value_ranges``).

    Returns ``(test, reason)``. ``test`` is a ``PairedTest`` named ``welch-t``: ``delta``,
    the two-sided ``p_value`` (exact, t distribution; Holm-adjust it with the table's
    other tests via ``paired_tests.adjust``), the 95 % Welch interval of the difference of
    the seed means (``ci_low``, ``ci_high``), ``n`` = the seeds on both sides, and ``on``
    naming the seeds. ``test`` is None, and ``reason`` says why in one line to print
    under the table, when a side has fewer than 3 seeds (then no ▲/▼ between these
    PEs), or when the seeds do not vary and Δ is exact. Never raises on few seeds.
    """
    bounds = value_range(metric or "", kind)
    left = {str(seed): float(v) for seed, v in a.items()}
    right = {str(seed): float(v) for seed, v in b.items()}
    if min(len(left), len(right)) < MIN_RUNS:
        return None, (
            f"fewer than {MIN_RUNS} pretraining seeds a side (A {len(left)}, B {len(right)}): "
            "no test between the PEs, so no ▲/▼; tests over one model's examples are "
            f"{WITHIN_ONE_MODEL}"
        )
    if delta is None:
        delta = sum(right.values()) / len(right) - sum(left.values()) / len(left)
    return run_level_test(left, right, delta, PRETRAINING_SEEDS, bounds=bounds, pair=False)
