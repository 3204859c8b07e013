"""Per-example outputs kept beside a committed leaderboard, so ``posharness compare`` can
run its paired tests on a fresh clone, where the result folders a board was built from
are not at hand.

``<board>.examples.json.gz`` maps each result file the board points to (relative to the
board, as in its rows) to that cell's task, seed and per-example rows, and, where the cell
kept them, its common-resample replicates (``paired_replicates``: what a paired bootstrap
of an aggregate such as an averaged map's symmetry needs) and the runs a protocol's value
combines (``run_values``: what a test over seeds needs). Gzip without a
timestamp, keys sorted: the same results give the same bytes.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError
from posharness.boards.leaderboard import relative_to_board
from posharness.boards.run_values import RUN_VALUES_KEY, run_values_of
from posharness.contracts.examples import read_example
from posharness.contracts.results import CellResult
from posharness.stats.paired_resampling import REPLICATES_KEY
from posharness.storage.io import atomic_target, json_object_lines

SUFFIX = ".examples.json.gz"


def bundle_path(board: Path) -> Path:
    return board.with_name(board.stem + SUFFIX)


def write_bundle(board: Path, results: list[tuple[Path, CellResult]]) -> Path | None:
    """The per-example rows of every result that kept them; None when none did."""
    entries: dict[str, Any] = {}
    for path, result in results:
        replicates = result.details.get(REPLICATES_KEY)
        runs = run_values_of(result.details)
        has_rows = (
            result.examples_file is not None and (path.parent / result.examples_file).exists()
        )
        if not has_rows and not replicates and runs is None:
            continue
        examples_path = path.parent / (result.examples_file or "")
        rows = json_object_lines(examples_path, "one per-example output") if has_rows else []
        key = relative_to_board(path, board.parent)  # as the board's rows name it
        entry: dict[str, Any] = {
            "task": result.task.name,
            "seed": result.seed,
            # validated on the way in: a row without an id is damage, said here, not dropped
            "examples": [read_example(row, f"{examples_path}:{n}").record() for n, row in rows],
        }
        if replicates:  # the common-resample replicates behind aggregates' paired tests
            entry[REPLICATES_KEY] = replicates
        if runs is not None:  # the runs a protocol's value combines: its test's unit
            entry[RUN_VALUES_KEY] = runs.record()
        entries[Path(key).as_posix()] = entry
    if not entries:
        return None
    target = bundle_path(board)
    write_entries(target, entries)
    return target


def write_entries(target: Path, entries: dict[str, Any]) -> None:
    """The bundle's one on-disk form: sorted compact JSON in a gzip stream without a
    timestamp or name, so the same entries give the same bytes (a committed bundle only
    changes in git when its content does)."""
    text = json.dumps(entries, sort_keys=True, separators=(",", ":")).encode()
    with (
        atomic_target(target) as tmp,
        tmp.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as zipped,
    ):
        zipped.write(text)


def read_bundle(board: Path) -> dict[str, Any]:
    """The bundle beside ``board``, or an empty mapping when there is none."""
    path = bundle_path(board)
    if not path.exists():
        return {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise DataError(
            f"{path}: not a per-example bundle ({exc}): rebuild it with "
            f"`posharness leaderboard build RESULTS -o {board} --keep-examples`"
        ) from None
    if not isinstance(data, dict):
        raise DataError(
            f"{path}: not a per-example bundle (not a JSON object): rebuild it with "
            f"`posharness leaderboard build RESULTS -o {board} --keep-examples`"
        )
    return data
