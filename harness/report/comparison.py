"""The comparison page's numbers: the paired tests ``posharness compare`` computes.

Rows pair as ``compare.pair_rows`` pairs them and each metric is tested by
``compare.paired_test`` (exact McNemar for 0/1 outcomes, sign-flip permutation otherwise,
paired bootstrap for F1/MCC/correlations). Only where the per-example outputs come from
differs: the report also looks in the ``--results`` folders, then in the board's
``*.examples.json.gz`` bundle, as ``compare`` does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from posharness.compare import MetricComparison, RowFilter, pair_rows, paired_test
from posharness.example_bundle import read_bundle
from posharness.io import json_object_lines
from posharness.leaderboard import Leaderboard, Row
from posharness.report.locate import Found
from posharness.report.model import BoardView, ComparisonView, PairView

Examples = dict[str, dict[str, dict[str, Any]]]  # task → example id → example


def compare_boards(
    slug: str,
    views: tuple[BoardView, BoardView],
    boards: tuple[Leaderboard, Leaderboard],
    paths: tuple[Path, Path],
    found: tuple[dict[int, dict[str, Found]], dict[int, dict[str, Found]]],
    all_metrics: bool,
) -> ComparisonView:
    """``found`` maps a row's position on its board to its results at hand, by the path
    the board names them."""
    left, right = boards
    index = [{id(v.row): v for v in view.rows} for view in views]
    bundles = [read_bundle(path) for path in paths]
    pairs = []
    for a, b in pair_rows(left, right, RowFilter()):
        keys = [
            c.key
            for c in left.columns
            if (c.headline or all_metrics) and c.key in a.scores and c.key in b.scores
        ]
        missing: list[str] = []
        sides = []
        for side, row in ((0, a), (1, b)):
            position = index[side][id(row)].index
            sides.append(
                row_examples(
                    row, paths[side], found[side].get(position, {}), bundles[side], missing
                )
            )
        metrics = []
        for key in keys:
            task, metric = key.split("/", 1)
            test, note = paired_test(sides[0].get(task), sides[1].get(task), metric)
            metrics.append(
                MetricComparison(key, a.scores[key].mean, b.scores[key].mean, test, note)
            )
        pairs.append(PairView(index[0][id(a)], index[1][id(b)], tuple(metrics), tuple(missing)))
    return ComparisonView(slug, views[0], views[1], tuple(pairs))


def row_examples(
    row: Row, board: Path, found: dict[str, Found], bundle: dict[str, Any], missing: list[str]
) -> Examples:
    """Per-example outputs of the lowest seed of each task that kept them: from the result
    files at hand, else from the bundle; result files in neither go to ``missing``."""
    kept: dict[str, tuple[int, dict[str, dict[str, Any]]]] = {}

    def keep(task: str, seed: int, rows: list[dict[str, Any]]) -> None:
        if task not in kept or kept[task][0] > seed:
            kept[task] = (seed, {str(e["id"]): e for e in rows if "id" in e})

    for relative in row.results:
        at_hand = found.get(relative)
        if at_hand is None:
            entry = bundle.get(Path(relative).as_posix())
            if entry is None:
                missing.append(os.path.normpath(board.parent / relative))
            else:
                keep(entry["task"], entry["seed"], entry["examples"])
            continue
        result = at_hand.result
        if result.examples_file is None:
            continue
        examples = at_hand.path.parent / result.examples_file
        if examples.is_file() and (
            result.task.name not in kept or kept[result.task.name][0] > result.seed
        ):
            lines = json_object_lines(examples, "one per-example output, as the run wrote it")
            keep(result.task.name, result.seed, [example for _, example in lines])
    return {task: rows for task, (_, rows) in kept.items()}
