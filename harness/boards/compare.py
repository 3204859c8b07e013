"""Compare two leaderboards: per task metric, both values, the delta and a paired test.

Two models scored on the same items give paired data; an unpaired test on it wastes
power and can mislead (lm-eval #3831). And a test must be of the statistic the table
prints: each metric declares how it is made from the examples (``metric_types``), and
the test follows the declaration — exact McNemar for a mean of 0/1 outcomes, sign-flip
permutation for a mean of continuous values, a paired bootstrap of the aggregate itself
for F1, Matthews, correlations and averaged-map geometry (``paired_tests``). Before any
test, the per-example outputs must reproduce the value the board prints, on the same
examples on both sides; where they cannot (a mean over seeds, a representative run of
several, other examples, nothing kept) the comparison says so instead of testing a
neighbouring statistic. The tests of one comparison are Holm-adjusted together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from posharness.boards.cell_outputs import (
    REPLICATES_KEY,
    CellOutputs,
    Outputs,
    ResultFinder,
    outputs_of_bundle_entry,
    outputs_of_result,
    row_outputs,
    row_outputs_from_files,
)
from posharness.boards.leaderboard import Leaderboard, Row, load
from posharness.boards.metric_testing import EXACT_PREFIX, paired_test
from posharness.contracts.cell_key import PairKey
from posharness.contracts.metric_types import MetricType, metric_type
from posharness.stats.paired_tests import (
    PairedTest,
    adjust,
)
from posharness.storage.hashing import hash_obj

__all__ = [  # the outputs' names stay importable from here (cell_outputs holds them)
    "REPLICATES_KEY",
    "CellOutputs",
    "MetricComparison",
    "Outputs",
    "RowComparison",
    "RowFilter",
    "adjust_comparisons",
    "compare_files",
    "compare_metrics",
    "family_keys",
    "family_size",
    "model_name",
    "outputs_of_bundle_entry",
    "outputs_of_result",
    "pair_rows",
    "paired_test",
    "row_outputs",
    "row_outputs_from_files",
]


@dataclass
class MetricComparison:
    key: str  # task/metric
    a: float | None
    b: float | None
    test: PairedTest | None
    note: str  # why there is no test, or what the test was run on
    kind: MetricType | None = None  # the metric's declared type
    # no test because none is meaningful: the tolerance verdict of a Δ below numerical
    # precision or of two values with no sampling variability (``stats.precision``)
    exact: str | None = None
    # the cells' flags (run/flags.py), "A: …"/"B: …": a flagged test is never a finding
    # on its own, so every output that prints the row prints them
    flags: tuple[str, ...] = ()

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
    """One pair per (model, mode, limits) both boards hold — never a cross product.

    Rows pair when their keys' pairing keys agree (``RowKey.pairing``: mode, limits,
    split definition and reference corpus) and their models match: by spec; failing that
    by registered name (``tupe-r`` before training against ``tupe-r@checkpoint`` after);
    failing that, when each board holds one model, those two. A forced attention path or
    the device kind may differ, since eager against SDPA or GPU against CPU are
    comparisons worth making.
    """
    a_rows = [r for r in left.rows if keep.keeps(r)]
    b_rows = [r for r in right.rows if keep.keeps(r)]
    matchers: list[Callable[[Row], str]] = [lambda r: r.model, lambda r: model_name(r.model)]
    if _one_model_each(a_rows, b_rows):
        matchers.append(lambda r: "the one model")
    for identify in matchers:
        b_index: dict[tuple[str, PairKey], Row] = {}
        for b in b_rows:
            b_index.setdefault((identify(b), b.key.pairing), b)
        pairs = [
            (a, b_index[key]) for a in a_rows if (key := (identify(a), a.key.pairing)) in b_index
        ]
        if pairs:
            return pairs
    return []


def _one_model_each(a_rows: list[Row], b_rows: list[Row]) -> bool:
    return len({r.fingerprint for r in a_rows}) == 1 and len({r.fingerprint for r in b_rows}) == 1


def family_keys(left: Leaderboard, a: Row, b: Row, all_metrics: bool, tasks=()) -> list[str]:
    """The metrics of one row pair that are printed, and so tested: the Holm family.

    One definition for ``compare`` and the report's comparison page: the headline metrics
    (every metric with ``all_metrics``) both rows hold, in the board's column order. A
    test is computed only for a metric that is printed, and every test printed is in
    the family, so the adjusted p of a row never depends on what is hidden.
    """
    return [
        c.key
        for c in left.columns
        if (c.headline or all_metrics)
        and c.key in a.scores
        and c.key in b.scores
        and (not tasks or c.task in tasks)
    ]


def compare_files(
    path_a: Path,
    path_b: Path,
    keep: RowFilter = RowFilter(),
    all_metrics: bool = True,
    find: ResultFinder | None = None,
) -> list[RowComparison]:
    """Every paired row of two boards, its printed metrics (``family_keys``) tested and
    Holm-adjusted together.

    Per-example outputs come from the result files where each board names them, its
    study folder's ``results/`` (``cell_outputs.study_folder``), ``find`` (the report's
    ``--results`` search, which ``posharness compare --results`` passes), else the
    board's examples bundle — the places the report looks, so both test one family."""
    left, right = load(path_a), load(path_b)
    out = []
    for a, b in pair_rows(left, right, keep):
        keys = family_keys(left, a, b, all_metrics, keep.tasks)
        missing: list[str] = []
        not_bundled: list[str] = []
        outputs_a = row_outputs_from_files(a, path_a, missing, not_bundled, find=find)
        outputs_b = row_outputs_from_files(b, path_b, missing, not_bundled, find=find)
        metrics = compare_metrics(keys, a, b, outputs_a, outputs_b)
        out.append(RowComparison(a, b, metrics, missing, not_bundled))
    adjust_comparisons([m for row in out for m in row.metrics])
    return out


def compare_metrics(
    keys: list[str], a: Row, b: Row, outputs_a: Outputs, outputs_b: Outputs
) -> list[MetricComparison]:
    metrics = []
    for key in keys:
        task, metric = key.split("/", 1)
        kind = metric_type(task, metric)
        differs = protocol_difference(a, b, task)
        test, note = (
            (None, differs)
            if differs
            else paired_test(
                outputs_a.get(task),
                outputs_b.get(task),
                metric,
                kind,
                a.scores[key],
                b.scores[key],
                row_seed(a, b, key),
            )
        )
        exact = note.split(";", 1)[0] if test is None and note.startswith(EXACT_PREFIX) else None
        flags = tuple(
            f"{side}: {flag}"
            for side, row in (("A", a), ("B", b))
            for flag in row.flags.get(task, ())
        ) + tuple(flag for flag in [options_flag(a, b, task)] if flag)
        metrics.append(
            MetricComparison(
                key, a.scores[key].mean, b.scores[key].mean, test, note, kind, exact, flags
            )
        )
    return metrics


def protocol_difference(a: Row, b: Row, task: str) -> str | None:
    """Why ``task``'s cells of two rows give no test: another task version (a changed
    stopping rule, metric definition or data reading), whose Δ mixes the PE's effect with
    the protocol's. A board written before task versions were recorded has none to tell."""
    versions = [row.task_versions.get(task) for row in (a, b)]
    if None not in versions and versions[0] != versions[1]:
        return (
            f"protocols differ: {task} version A {versions[0]}, B {versions[1]}: no test "
            "(rerun the older side, or compare boards of one version)"
        )
    return None


def options_flag(a: Row, b: Row, task: str) -> str | None:
    """A flag for cells run with other task options (a fine-tuning protocol, SentEval's
    search, a batch size): some change numbers and some do not, so the test is kept and
    marked, never shown as a finding on its own."""
    if not all(row.settings_known for row in (a, b)):
        return None
    options = [row.settings.get("options", {}).get(task, {}) for row in (a, b)]
    if options[0] == options[1]:
        return None
    shown = [", ".join(f"{k}={v}" for k, v in sorted(o.items())) or "defaults" for o in options]
    return f"A/B: other {task} options (A {shown[0]}; B {shown[1]})"


def adjust_comparisons(metrics: list[MetricComparison]) -> int:
    """Holm across every test one comparison prints (compare, a report's comparison page,
    a study table): resamples scaled to the family, then adjusted. Returns its size."""
    tests = [m.test for m in metrics if m.test is not None]
    adjust(tests)
    return len(tests)


def family_size(metrics: list[MetricComparison]) -> int:
    """How many tests one comparison's Holm family holds."""
    return sum(m.test is not None for m in metrics)


def row_seed(a: Row, b: Row, key: str) -> int:
    """The resampling seed of one test, derived from its row pair and metric: Monte Carlo
    errors are independent across the rows of a table, and a row's draws are the same
    every time it is compared."""
    identity = [a.model, a.mode, a.key.limit, b.model, b.mode, key]
    return int(hash_obj({"paired-test": [str(part) for part in identity]})[:8], 16)
