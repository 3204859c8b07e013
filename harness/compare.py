"""Compare two leaderboards: per task metric, both values, the delta and a paired test.

Two models scored on the same items give paired data; an unpaired test on it wastes
power and can mislead (lm-eval #3831). When both sides kept per-example outputs for a
metric, the delta is tested on the items they share: McNemar's exact test for 0/1
outcomes (correct/incorrect), otherwise a paired sign-flip permutation test on the mean
difference with a paired bootstrap interval. Metrics that are not a mean over examples
(F1, Matthews, Pearson, Spearman) are tested by a paired bootstrap on the stored gold
labels and predictions. Where no per-example outputs exist the comparison says so
instead of inventing a p-value.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from posharness.io import json_object_lines
from posharness.leaderboard import Leaderboard, Row, load
from posharness.results import read_result

RESAMPLES = 2000


@dataclass
class PairedTest:
    name: str  # "mcnemar-exact" | "paired-permutation" | "paired-bootstrap"
    n: int
    mean_delta: float
    p_value: float
    ci_low: float | None = None
    ci_high: float | None = None


@dataclass
class MetricComparison:
    key: str  # task/metric
    a: float | None
    b: float | None
    test: PairedTest | None
    note: str  # why there is no test, or what the test was run on

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a


@dataclass
class RowComparison:
    a: Row
    b: Row
    metrics: list[MetricComparison]
    missing: list[str]  # result files a paired test would need that are not at hand
    # ... of which the board has an examples bundle that lacks them: their cells kept no
    # per-example outputs (dep_heads keeps none) or joined the board after the bundle
    not_bundled: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class RowFilter:
    """Which rows to compare: a model (its spec or its registered name), modes, tasks."""

    models: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    tasks: tuple[str, ...] = ()

    def keeps(self, row: Row) -> bool:
        named = not self.models or bool({row.model, model_name(row.model)} & set(self.models))
        return named and (not self.modes or row.mode in self.modes)


def model_name(spec: str) -> str:
    """The registered name a spec loads (``tupe-r`` of ``tupe-r@runs/x``); a Hugging Face
    spec is kept whole, since ``hf`` alone names no model."""
    return spec if spec.startswith("hf:") else spec.partition("@")[0]


def pair_rows(
    left: Leaderboard, right: Leaderboard, keep: RowFilter = RowFilter()
) -> list[tuple[Row, Row]]:
    """One pair per (model, mode, limit) both boards hold — never a cross product.

    Models match by spec; failing that by registered name (``tupe-r`` before training
    against ``tupe-r@checkpoint`` after); failing that, when each board holds one model,
    those two. Rows of other limits are never paired with each other.
    """
    a_rows = [r for r in left.rows if keep.keeps(r)]
    b_rows = [r for r in right.rows if keep.keeps(r)]
    matchers: list[Callable[[Row], str]] = [lambda r: r.model, lambda r: model_name(r.model)]
    if _one_model_each(a_rows, b_rows):
        matchers.append(lambda r: "the one model")
    for identify in matchers:
        # mode and limits must agree; a forced attention path (key[4]) and the device kind
        # (key[5]) may differ, since eager against SDPA and GPU against CPU are
        # comparisons worth making
        b_index = {(identify(b), *b.key[1:4]): b for b in b_rows}
        pairs = [
            (a, b_index[key]) for a in a_rows if (key := (identify(a), *a.key[1:4])) in b_index
        ]
        if pairs:
            return pairs
    return []


def _one_model_each(a_rows: list[Row], b_rows: list[Row]) -> bool:
    return len({r.fingerprint for r in a_rows}) == 1 and len({r.fingerprint for r in b_rows}) == 1


def compare_files(path_a: Path, path_b: Path, keep: RowFilter = RowFilter()) -> list[RowComparison]:
    left, right = load(path_a), load(path_b)
    out = []
    for a, b in pair_rows(left, right, keep):
        keys = [
            c.key
            for c in left.columns
            if c.key in a.scores and c.key in b.scores and (not keep.tasks or c.task in keep.tasks)
        ]
        missing: list[str] = []
        not_bundled: list[str] = []
        examples_a = _examples_by_task(a, path_a, missing, not_bundled)
        examples_b = _examples_by_task(b, path_b, missing, not_bundled)
        metrics = []
        for key in keys:
            task, metric = key.split("/", 1)
            test, note = paired_test(examples_a.get(task), examples_b.get(task), metric)
            metrics.append(
                MetricComparison(key, a.scores[key].mean, b.scores[key].mean, test, note)
            )
        out.append(RowComparison(a, b, metrics, missing, not_bundled))
    return out


def _examples_by_task(
    row: Row, board: Path, missing: list[str], not_bundled: list[str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """task → example id → example, from the lowest seed of each task that kept examples;
    from the result files, else from the board's bundle (``example_bundle``); result
    files found in neither are added to ``missing``."""
    from posharness.example_bundle import read_bundle

    found: dict[str, tuple[int, dict[str, dict[str, Any]]]] = {}
    bundle = read_bundle(board)
    base = board.parent
    for relative in row.results:
        path = base / relative
        if not path.exists():
            kept = bundle.get(Path(relative).as_posix())
            if kept is None:
                shown = os.path.normpath(path)  # no "board/../../" in messages
                if shown not in missing:  # both sides may name one file
                    missing.append(shown)
                    if bundle:
                        not_bundled.append(shown)
            elif kept["task"] not in found or found[kept["task"]][0] > kept["seed"]:
                rows = {str(e["id"]): e for e in kept["examples"] if "id" in e}
                found[kept["task"]] = (kept["seed"], rows)
            continue
        result = read_result(path)
        if result.examples_file is None:
            continue
        if result.task.name in found and found[result.task.name][0] <= result.seed:
            continue
        examples_path = path.parent / result.examples_file
        if not examples_path.exists():
            continue
        lines = json_object_lines(examples_path, "one per-example output, as the run wrote it")
        examples = [example for _, example in lines]
        found[result.task.name] = (result.seed, {str(e["id"]): e for e in examples if "id" in e})
    return {task: examples for task, (_, examples) in found.items()}


def paired_test(
    a: dict[str, dict[str, Any]] | None, b: dict[str, dict[str, Any]] | None, metric: str
) -> tuple[PairedTest | None, str]:
    if a is None or b is None:
        return None, "no per-example outputs on both sides: no paired test possible"
    shared = sorted(k for k in a.keys() & b.keys() if metric in a[k] and metric in b[k])
    if not shared:
        shared = _scored_on(a, b, metric)
        if len(shared) >= 2:
            return paired_bootstrap(a, b, shared, metric), (
                f"paired bootstrap of {metric} over {len(shared)} shared predictions"
            )
        if not any(metric in row for side in (a, b) for row in side.values()):
            return None, (
                f"'{metric}' has one value per cell, none per example: no paired test possible"
            )
        return None, f"no shared examples with per-example '{metric}': no paired test possible"
    x = np.array([float(a[k][metric]) for k in shared])
    y = np.array([float(b[k][metric]) for k in shared])
    if len(shared) < 2:
        return None, "one shared example: too few for a paired test"
    binary = set(np.unique(np.concatenate([x, y]))) <= {0.0, 1.0}
    test = mcnemar(x, y) if binary else permutation_test(x, y)
    return test, f"paired over {len(shared)} shared examples"


def _scored_on(
    a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], metric: str
) -> list[str]:
    """Shared examples whose gold and predictions determine ``metric`` (F1, MCC, r, rho).

    Fine-tune rows carry ``prefix``, ``label`` and ``prediction``; a metric such as
    ``dev_spearman`` is computed on the rows with prefix ``dev_``.
    """
    from posharness.scoring import METRIC_NAMES

    shared = []
    for key in sorted(a.keys() & b.keys()):
        left, right = a[key], b[key]
        if not {"label", "prediction"} <= left.keys() & right.keys():
            continue
        prefix = str(left.get("prefix", ""))
        known = metric.startswith(prefix) and metric[len(prefix) :] in METRIC_NAMES
        if known and left["label"] == right["label"]:
            shared.append(key)
    return shared


def paired_bootstrap(
    a: dict[str, dict[str, Any]], b: dict[str, dict[str, Any]], shared: list[str], metric: str
) -> PairedTest:
    """B − A of a metric that is not a mean over examples, on the same resamples.

    Both models are scored on each resample of the shared examples; the p-value is the
    two-sided share of resampled deltas on the far side of zero.
    """
    from posharness.scoring import replicate_scores

    prefix = str(a[shared[0]].get("prefix", ""))
    base = metric[len(prefix) :]
    gold = np.array([a[k]["label"] for k in shared])
    runs = [np.array([side[k]["prediction"] for k in shared]) for side in (a, b)]
    replicate = replicate_scores(base, gold, runs)
    full = replicate(np.arange(len(shared))[None, :])[0]
    rng = np.random.default_rng(0)
    deltas = np.concatenate(
        [
            np.diff(replicate(rng.integers(0, len(shared), size=(200, len(shared)))), axis=1)[:, 0]
            for _ in range(RESAMPLES // 200)
        ]
    )
    p = min(1.0, 2 * min(float(np.mean(deltas <= 0)), float(np.mean(deltas >= 0))))
    low, high = np.quantile(deltas, [0.025, 0.975])
    return PairedTest(
        "paired-bootstrap", len(shared), float(full[1] - full[0]), p, float(low), float(high)
    )


def mcnemar(x: np.ndarray, y: np.ndarray) -> PairedTest:
    """Exact McNemar: only the discordant pairs carry information."""
    from scipy.stats import binomtest

    only_a = int(np.sum((x == 1) & (y == 0)))
    only_b = int(np.sum((x == 0) & (y == 1)))
    discordant = only_a + only_b
    p = 1.0 if discordant == 0 else binomtest(only_b, discordant, 0.5).pvalue
    return PairedTest("mcnemar-exact", len(x), float(np.mean(y - x)), float(p))


def permutation_test(x: np.ndarray, y: np.ndarray, seed: int = 0) -> PairedTest:
    from scipy import stats

    diff = y - x
    if np.allclose(diff, 0.0):
        return PairedTest("paired-permutation", len(x), 0.0, 1.0, 0.0, 0.0)
    rng = np.random.default_rng(seed)
    perm = stats.permutation_test(
        (x, y),
        lambda u, v, axis: np.mean(v - u, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=RESAMPLES,
        rng=rng,
    )
    boot = stats.bootstrap((diff,), np.mean, n_resamples=RESAMPLES, rng=rng, method="percentile")
    low, high = boot.confidence_interval
    return PairedTest(
        "paired-permutation",
        len(x),
        float(diff.mean()),
        float(perm.pvalue),
        float(low),
        float(high),
    )
