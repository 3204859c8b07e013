"""The comparison page's numbers: the paired tests ``posharness compare`` computes.

Rows pair as ``compare.pair_rows`` pairs them and each metric is tested by
``compare.compare_metrics`` (the test its declared type calls for, on the printed
statistic), Holm-adjusted across the page as ``compare`` adjusts across one comparison:
the same family (``compare.family_keys``: the metrics printed), so the page and
``posharness compare`` with the same ``--all-metrics`` print the same adjusted p-values.
The per-example outputs come from the same places: the result files where the board
names them, its study folder's ``results/`` (a board in ``<study>/boards/``), the
``--results`` folders (``compare --results`` searches them with the report's own
``ResultLocator``), then the board's ``*.examples.json.gz`` bundle.
"""

from __future__ import annotations

from pathlib import Path

from posharness.boards.cell_outputs import Outputs, row_outputs, study_folder
from posharness.boards.compare import (
    RowFilter,
    adjust_comparisons,
    compare_metrics,
    family_keys,
    pair_rows,
)
from posharness.boards.example_bundle import read_bundle
from posharness.boards.leaderboard import Leaderboard, Row
from posharness.boards.schema import NOT_SHIPPED
from posharness.contracts.results import read_result
from posharness.report.locate import Found
from posharness.report.model import BoardView, ComparisonView, PairView


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
        keys = family_keys(left, a, b, all_metrics)
        missing: list[str] = []
        sides = []
        for side, row in ((0, a), (1, b)):
            position = index[side][id(row)].index
            sides.append(
                row_examples(
                    row, paths[side], found[side].get(position, {}), bundles[side], missing
                )
            )
        metrics = compare_metrics(keys, a, b, sides[0], sides[1])
        pairs.append(PairView(index[0][id(a)], index[1][id(b)], tuple(metrics), tuple(missing)))
    adjust_comparisons([m for pair in pairs for m in pair.metrics])
    return ComparisonView(slug, views[0], views[1], tuple(pairs))


def row_examples(
    row: Row, board: Path, found: dict[str, Found], bundle: dict, missing: list[str]
) -> Outputs:
    """Per-example outputs of the lowest seed of each task that kept them: from the result
    files at hand (or in the board's study folder), else from the bundle; result files in
    none go to ``missing``."""
    study = study_folder(board)

    def at_hand(relative: str):
        hit = found.get(relative)
        if hit is not None:
            return hit.path, hit.result
        if study is not None and relative.startswith(NOT_SHIPPED):
            path = study / relative.removeprefix(NOT_SHIPPED)
            return (path, read_result(path)) if path.is_file() else None
        return None

    return row_outputs(row, board, at_hand, bundle, missing)
