"""A rerun after an edit keeps its board consistent (issue 39, part 4).

After a plugin PE's code is edited, a rerun into the same folder writes its cells over
the earlier result files under a new fingerprint. The earlier rows then named files that
hold another model, and ``posharness report`` refused the board. The merge now drops
each earlier row whose result file a fresh row of another key took (superseded), says so
in its summary, and leaves the files on disk; rows in files of their own are kept.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from posharness.base.errors import DataError
from posharness.boards import leaderboard as lb
from posharness.contracts.results import Metric, read_result
from posharness.report.locate import ResultLocator
from tests.plugin_sources import scaled_bias
from tests.result_factory import save_cell, synthetic_result
from tests.unit.models.zoo.test_check_pe import scratch  # noqa: F401 (a fixture)

TINY_PROBE = {"words": "4", "length": "16", "bootstrap": "0", "paired_replicates": "0"}


@pytest.mark.usefixtures("scratch")  # the plugin's registration ends with the test
def test_an_edited_plugin_pe_rerun_into_its_folder_supersedes_its_rows_and_reports(
    tmp_path: Path,
) -> None:
    from posharness.api import evaluate
    from posharness.plugins import include_paths
    from posharness.report import build_report

    name = f"t-edited-{uuid.uuid4().hex[:8]}"
    plugin = tmp_path / "edited_bias.py"
    plugin.write_text(scaled_bias(name))
    include_paths([plugin])
    board = tmp_path / "results" / "board.json"

    def run() -> object:
        return evaluate(
            [name], ["locality_symmetry"], ["positional"],
            output_dir=tmp_path / "results", leaderboard=board, cache_dir=None,
            device="cpu", limit=4, model_args={"init": "random", "size": "tiny"},
            task_args={"locality_symmetry": {**TINY_PROBE, "figures": "false"}},
        )  # fmt: skip

    first = run()
    before = {row.fingerprint for row in first.leaderboard.rows}
    plugin.write_text(plugin.read_text().replace("SCALE = 1.0", "SCALE = 3.0"))  # the edit
    second = run()

    rows = second.leaderboard.rows
    after = {row.fingerprint for row in rows}
    assert len(before) == len(after) == 1 and before != after
    assert [row.mode for row in rows] == ["positional"]  # one row, not two of one label
    text = second.merged.text()
    assert "1 earlier row dropped, superseded" in text and before.pop() in text
    report = build_report([board], tmp_path / "report", cache_dir=None, scatters=())
    assert (tmp_path / "report" / "index.html").is_file(), report


# -- the rule, on synthetic results (no model) -----------------------------------------


def cell(folder: Path, fingerprint: str, task: str, value: float, **kw) -> Path:
    return save_cell(
        folder,
        synthetic_result(
            spec="fire", fingerprint=fingerprint, task=task, metrics={"m": Metric(value)}, **kw
        ),
    )


def board_of(folder: Path, board: Path) -> lb.Leaderboard:
    return lb.build(lb.collect_results(folder), "b", board)


def test_a_row_whose_file_another_key_took_is_dropped_naming_its_tasks_not_rerun(
    tmp_path: Path,
) -> None:
    results, board = tmp_path / "results", tmp_path / "board.json"
    cell(results, "pe-old", "toeplitz", 0.5)
    cell(results, "pe-old", "locality", 0.2)
    lb.save(board_of(results, board), board)
    rerun = cell(results, "pe-new", "toeplitz", 0.7)  # the edited model's rerun
    fresh = lb.build([(rerun, read_result(rerun))], "b", board)

    saved = lb.merge_and_save(fresh, board)

    assert [row.fingerprint for row in saved.board.rows] == ["pe-new"]
    assert saved.merged.superseded == (
        "fire (both) pe-old: rerun as pe-new (its code or weights changed), locality not "
        "rerun (run it again)",
    )
    assert saved.merged.kept == 0 and saved.merged.added == 1
    assert (results / "fire" / "locality__both__seed0.json").is_file()  # files stay


def test_a_row_of_another_fingerprint_in_files_of_its_own_is_kept(tmp_path: Path) -> None:
    """A row of one label but its own files (another output folder, another dtype) is a
    valid row: only a file taken from it supersedes it."""
    board = tmp_path / "board.json"
    cell(tmp_path / "run-a", "pe-old", "toeplitz", 0.5)
    cell(tmp_path / "run-b", "pe-new", "toeplitz", 0.7)
    lb.save(board_of(tmp_path / "run-a", board), board)

    saved = lb.merge_and_save(board_of(tmp_path / "run-b", board), board)

    assert {row.fingerprint for row in saved.board.rows} == {"pe-old", "pe-new"}
    assert saved.merged.superseded == () and saved.merged.kept == 1


def test_an_older_board_holding_a_superseded_row_is_refused_naming_the_fix(
    tmp_path: Path,
) -> None:
    results, board = tmp_path / "results", tmp_path / "board.json"
    cell(results, "pe-old", "toeplitz", 0.5)
    built = board_of(results, board)
    cell(results, "pe-new", "toeplitz", 0.7)  # a rerun over the file, the board not merged
    row = built.rows[0]

    with pytest.raises(DataError) as caught:
        ResultLocator([]).locate(board, row.results[0], row)

    message = str(caught.value)
    assert "a later run of fire (fingerprint pe-new" in message
    assert f"posharness leaderboard build {results} --output {board}" in message
