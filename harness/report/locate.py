"""Finding the result files a leaderboard's rows name: beside the board, or under --results.

A board names its results relative to itself, or, for results that were not beneath its
folder, by the portable key ``results/<output folder>/<model folder>/<file>``
(``leaderboard.relative_to_board``): a committed board's results are usually not shipped.
``--results DIR`` says where they are now: a file is matched by the longest tail of the
name the board gives (``minilm/toeplitz__both__seed0.json``). Whatever is found must agree
with the row — model fingerprint, mode, limits and, with one seed, the numbers — so a
folder of another run fails in one line instead of lending the board its figures and provenance.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from posharness.base.errors import DataError
from posharness.boards.leaderboard import Row
from posharness.contracts.results import CellResult, key_of_result, read_result


@dataclass(frozen=True)
class Found:
    path: Path
    result: CellResult
    digest: str  # sha256 of the file's bytes: names its folder in the report
    under_results: bool  # found under a --results folder, not beside the board

    @property
    def prefix(self) -> str:
        """Where the report keeps its copies: named by content, so the same file in two
        boards is copied once and a rerun cell never overwrites another's figures; one
        flat folder, since thousands of small folders cost more to write and remove than
        the files themselves."""
        return f"cells/{self.digest[:16]}"

    def copy_name(self, relative: str) -> str:
        """The report's name for a file the result lists, relative to the result's folder."""
        return f"{self.prefix}-{relative.replace('/', '--')}"


class ResultLocator:
    def __init__(self, folders: list[Path]) -> None:
        self.folders = folders
        self._by_name: dict[str, list[Path]] = defaultdict(list)
        for folder in folders:
            if not folder.is_dir():
                raise DataError(
                    f"--results {folder} is not a folder: pass the --output-dir of a run"
                )
            for path in sorted(folder.rglob("*.json")):
                self._by_name[path.name].append(path)
        self._read: dict[Path, Found] = {}
        self.found_under_results = 0

    def locate(self, board: Path, relative: str, row: Row) -> Found | None:
        """The result file ``relative`` (as ``board`` names it) for ``row``, or None."""
        beside = board.parent / relative
        if beside.is_file():
            found = self._load(beside, under_results=False)
        else:
            path = self._search(Path(relative), row)
            if path is None:
                return None
            found = self._load(path, under_results=True)
        check_matches(found, row, board)
        if found.under_results:
            self.found_under_results += 1
        return found

    def _search(self, relative: Path, row: Row) -> Path | None:
        candidates = self._by_name.get(relative.name, [])
        if not candidates:
            return None
        tails = {path: _common_tail(path, relative) for path in candidates}
        longest = max(tails.values())
        best = [path for path in candidates if tails[path] == longest]
        for path in best:  # two runs of one layout: the one holding this row's model
            key = key_of_result(self._load(path, under_results=True).result)
            if (key.fingerprint, key.mode) == (row.fingerprint, row.mode):
                return path
        return best[0]

    def _load(self, path: Path, under_results: bool) -> Found:
        key = path.resolve()
        if key not in self._read:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            self._read[key] = Found(path, read_result(path), digest, under_results)
        return self._read[key]


def _common_tail(path: Path, relative: Path) -> int:
    count = 0
    for mine, theirs in zip(reversed(path.parts), reversed(relative.parts), strict=False):
        if mine != theirs:
            break
        count += 1
    return count


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def check_matches(found: Found, row: Row, board: Path) -> None:
    """Refuse a result file whose cell is not the row's, in one line that says which."""
    result = found.result
    key, wanted = key_of_result(result).row, row.key
    where = f"result file {found.path} does not match leaderboard {board}"
    fix = (
        "pass the --results folder the board was built from, or rebuild the board with "
        "`posharness leaderboard build`"
    )
    if result.model.spec == row.model and key.fingerprint != wanted.fingerprint:
        # a rerun of the same model after an edit wrote over the row's file; boards merged
        # since then drop such rows (boards.merge), older ones still hold them
        raise DataError(
            f"{where}: a later run of {row.model} (fingerprint {key.fingerprint}: its code "
            f"or weights changed) wrote over the file of the row's {wanted.fingerprint}, "
            "whose result is gone: rerun into the board (the merge then drops the superseded "
            f"row), or rebuild it with `posharness leaderboard build {found.path.parent.parent} "
            f"--output {board}`"
        )
    if (key.fingerprint, key.mode) != (wanted.fingerprint, wanted.mode):
        raise DataError(
            f"{where}: it holds model {result.model.spec} [{key.fingerprint}] in mode "
            f"{key.mode}, the row {row.model} [{row.fingerprint}] in mode {row.mode}: " + fix
        )
    if (key.limit, key.train_limit) != (wanted.limit, wanted.train_limit):
        raise DataError(
            f"{where}: it was computed with limits {(key.limit, key.train_limit)}, the "
            f"row with {(wanted.limit, wanted.train_limit)}: {fix}"
        )
    for name in ("split", "reference"):  # rows written before these were kept have none
        if name in row.settings and getattr(key, name) != getattr(wanted, name):
            raise DataError(
                f"{where}: its {name} is {getattr(key, name)}, the row's "
                f"{getattr(wanted, name)}: " + fix
            )
    for metric, value in result.metrics.items():
        score = row.scores.get(f"{result.task.name}/{metric}")
        if score is None or score.n_seeds != 1 or _same(score.mean, value.value):
            continue
        if not math.isclose(score.mean, value.value, rel_tol=1e-9, abs_tol=1e-12):
            raise DataError(
                f"{where}: it holds {result.task.name}/{metric} = {value.value:.6g}, the board "
                f"{score.mean:.6g} (rerun after the board was built?): {fix}"
            )
