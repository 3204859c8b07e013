"""Where a row's per-example outputs come from, for a paired test: the result files at
hand (their examples file and replicates), else the board's examples bundle.

Result files are looked for where the board names them, then, for a board inside a
study folder (``boards/`` beside ``results/``), in the study's ``results/``, then by a
caller's finder (``posharness compare --results DIR``: the report's ``ResultLocator``),
so ``compare`` and ``report`` read the same outputs of the same boards."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.boards.example_bundle import read_bundle
from posharness.boards.leaderboard import Row
from posharness.boards.run_values import RunValues, run_values_of
from posharness.boards.schema import NOT_SHIPPED
from posharness.contracts.examples import Example, read_example
from posharness.contracts.results import CellResult, read_result
from posharness.stats.paired_resampling import REPLICATES_KEY
from posharness.storage.io import json_object_lines

__all__ = [  # REPLICATES_KEY stays importable from here (stats.paired_resampling holds it)
    "REPLICATES_KEY",
    "CellOutputs",
    "Outputs",
    "outputs_of_bundle_entry",
    "outputs_of_result",
    "ResultFinder",
    "row_outputs",
    "row_outputs_from_files",
    "study_folder",
]


@dataclass
class CellOutputs:
    """What a cell kept for paired tests: per-example rows, common-resample replicates
    and, where its value combines several runs, each run's values (the unit of its test)."""

    examples: dict[str, Example]  # example id → its output
    replicates: dict[str, Any] | None = None  # paired_resampling.replicates(...)
    runs: RunValues | None = None  # run_values.run_values_of(...)


Outputs = dict[str, CellOutputs]  # task → the outputs of its lowest seed
# (board, the path the board names, its row) → the result file found elsewhere, or None
ResultFinder = Callable[[Path, str, Row], tuple[Path, CellResult] | None]


def outputs_of_result(path: Path, result: CellResult) -> CellOutputs | None:
    """A result file's kept outputs: its examples file and its replicates."""
    replicates = result.details.get(REPLICATES_KEY)
    examples: dict[str, Example] = {}
    if result.examples_file is not None:
        examples_path = path.parent / result.examples_file
        if examples_path.exists():
            lines = json_object_lines(examples_path, "one per-example output, as the run wrote it")
            examples = _by_id(read_example(e, f"{examples_path}:{n}") for n, e in lines)
    runs = run_values_of(result.details)
    if not examples and not replicates and runs is None:
        return None
    return CellOutputs(examples, replicates, runs)


def outputs_of_bundle_entry(entry: dict[str, Any]) -> CellOutputs:
    rows = _by_id(read_example(e, "examples bundle") for e in entry.get("examples", []))
    return CellOutputs(rows, entry.get(REPLICATES_KEY), run_values_of(entry))


def _by_id(examples: Iterable[Example]) -> dict[str, Example]:
    return {example.id: example for example in examples}


def row_outputs(
    row: Row,
    board: Path,
    at_hand: Callable[[str], tuple[Path, CellResult] | None],
    bundle: dict[str, Any],
    missing: list[str],
    not_bundled: list[str] | None = None,
) -> Outputs:
    """task → the outputs of the lowest seed that kept any: from the result files at
    hand (``at_hand`` finds one by the path the board names), else from the board's
    bundle; result files found in neither are added to ``missing``."""
    kept: dict[str, tuple[int, CellOutputs]] = {}

    def keep(task: str, seed: int, outputs: CellOutputs | None) -> None:
        if outputs is not None and (task not in kept or kept[task][0] > seed):
            kept[task] = (seed, outputs)

    for relative in row.results:
        found = at_hand(relative)
        if found is None:
            entry = bundle.get(Path(relative).as_posix())
            if entry is not None:
                keep(entry["task"], entry["seed"], outputs_of_bundle_entry(entry))
                continue
            shown = os.path.normpath(board.parent / relative)  # no "board/../../"
            if shown not in missing:  # both sides may name one file
                missing.append(shown)
                if bundle and not_bundled is not None:
                    not_bundled.append(shown)
            continue
        path, result = found
        keep(result.task.name, result.seed, outputs_of_result(path, result))
    return {task: outputs for task, (_, outputs) in kept.items()}


def study_folder(board: Path) -> Path | None:
    """The study folder a board sits in (``<study>/boards/NAME.json`` beside
    ``<study>/results/``), which holds the output folders its not-shipped keys name."""
    study = board.absolute().parent.parent
    if board.absolute().parent.name == "boards" and (study / "results").is_dir():
        return study
    return None


def row_outputs_from_files(
    row: Row,
    board: Path,
    missing: list[str],
    not_bundled: list[str],
    kept_in: Path | None = None,
    find: ResultFinder | None = None,
) -> Outputs:
    """``row_outputs`` with result files looked for where the board names them.

    ``kept_in``: the folder that holds the output folders a board names by its not-shipped
    key ``results/<output folder>/…`` (a study folder holds ``results/`` beside ``boards/``;
    the key says which output folder, not where it is); by default the board's study
    folder, when it sits in one. ``find``: where else to look (``--results`` folders)."""
    kept_in = kept_in if kept_in is not None else study_folder(board)

    def beside(relative: str) -> tuple[Path, CellResult] | None:
        path = board.parent / relative
        if not path.exists() and kept_in is not None and relative.startswith(NOT_SHIPPED):
            path = kept_in / relative.removeprefix(NOT_SHIPPED)
        if path.exists():
            return path, read_result(path)
        return None if find is None else find(board, relative, row)

    return row_outputs(row, board, beside, read_bundle(board), missing, not_bundled)
