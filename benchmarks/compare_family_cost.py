"""What does a table-sized ``compare`` cost once resamples follow the Holm family?

Issue 38, part 1: a family of m tests needs R >= 20·m/α resamples per test before a clear
effect can survive Holm (100 tests: 40,000). This times a table-sized comparison —
``--rows`` paired rows of ``--examples`` continuous per-example values, every row a clear
effect (the worst case: every p is redrawn at the family's R) — three ways:

| method    | what it does                                                                   |
|-----------|--------------------------------------------------------------------------------|
| `before`  | what compare did before: ``scipy.stats.permutation_test``, 2,000 resamples, and  |
|           | the 2,000-draw bootstrap interval per row, then Holm                            |
| `scipy-R` | the same scipy test at the family's R ("just raise R"), timed on ``--scipy-rows`` |
|           | rows and scaled to all (its significant count is not measured: -1)            |
| `now`     | ``permutation_test`` (2,000 first pass) + ``adjust`` (redraw at the family's R) |

Target: `now` under 10 s on 2 cores. Prints a table and the number significant after
Holm for each, writes JSON to ``--out`` (default ``benchmarks/out/compare_family_cost.json``).

    OMP_NUM_THREADS=2 python benchmarks/compare_family_cost.py [--rows 100] [--examples 1000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from posharness.stats.paired_tests import (
    ALPHA,
    RESAMPLES,
    adjust,
    family_resamples,
    holm,
    mean_difference_replicates,
    permutation_test,
)

TARGET_S = 10.0


def _data(rows: int, examples: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(38)
    out = []
    for _ in range(rows):
        x = rng.normal(0.5, 0.1, size=examples)
        out.append((x, x + 0.05 + rng.normal(0.0, 0.2, size=examples)))
    return out


def _scipy(data, resamples: int) -> tuple[float, int]:
    start = time.perf_counter()
    ps = []
    for seed, (x, y) in enumerate(data):
        ps.append(
            stats.permutation_test(
                (x, y),
                lambda u, v, axis: np.mean(v - u, axis=axis),
                permutation_type="samples",
                vectorized=True,
                n_resamples=resamples,
                rng=np.random.default_rng(seed),
            ).pvalue
        )
        diff = y - x
        replicates = mean_difference_replicates(diff, seed)  # the re-centred interval then
        np.quantile(replicates - replicates.mean() + diff.mean(), [0.025, 0.975])
    significant = int(sum(p < ALPHA for p in holm(ps)))
    return time.perf_counter() - start, significant


def _now(data) -> tuple[float, int]:
    start = time.perf_counter()
    tests = [permutation_test(x, y, seed=seed) for seed, (x, y) in enumerate(data)]
    adjust(tests)
    return time.perf_counter() - start, int(sum(t.significant() for t in tests))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--examples", type=int, default=1000)
    parser.add_argument("--scipy-rows", type=int, default=3, help="rows timed for scipy-R")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out/compare_family_cost.json"))
    args = parser.parse_args()
    data = _data(args.rows, args.examples)
    family = family_resamples(args.rows)
    results = {"before": _scipy(data, RESAMPLES), "now": _now(data)}
    if args.scipy_rows:  # scipy at the family's R is slow: time a few rows, scale up
        seconds, _ = _scipy(data[: args.scipy_rows], family)
        results["scipy-R"] = (seconds * args.rows / args.scipy_rows, -1)
    print(f"{args.rows} rows × {args.examples} examples; family R = {family}")
    print(f"{'method':<10}{'seconds':>10}{'significant':>14}")
    for name, (seconds, significant) in results.items():
        print(f"{name:<10}{seconds:>10.2f}{significant:>14}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "rows": args.rows,
                "examples": args.examples,
                "family_resamples": family,
                "results": {k: {"seconds": s, "significant": n} for k, (s, n) in results.items()},
                "target_s": TARGET_S,
            },
            indent=2,
        )
    )
    return 0 if results["now"][0] < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
