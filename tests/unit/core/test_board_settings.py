"""Leaderboards never mix settings silently, live beside their results by default, and
every output location is checked before any compute."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from posharness.api import evaluate
from posharness.base.errors import OutputError, SettingsConflictError

FAST = {"length": "16", "words": "6", "bootstrap": "10", "figures": "false"}


def grid(tiny_bert: Path, tmp_path: Path, **overrides):
    values = dict(
        models=f"hf:{tiny_bert}",
        tasks="locality_symmetry",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        task_args={"locality_symmetry": dict(FAST)},
    )
    values.update(overrides)
    return evaluate(**values)


def test_the_default_board_lives_beside_the_results_not_in_the_repository(
    tiny_bert, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    outcome = grid(tiny_bert, tmp_path)
    assert outcome.leaderboard_path.parent == tmp_path / "results"
    assert not (tmp_path / "leaderboards").exists()


def test_a_limited_run_is_its_own_row_and_says_so(tiny_bert, tmp_path):
    from posharness.boards.views import to_markdown

    board = tmp_path / "board.json"
    grid(tiny_bert, tmp_path, leaderboard=board)
    limited = grid(tiny_bert, tmp_path, leaderboard=board, limit=3)
    rows = limited.leaderboard.rows
    assert sorted(str(r.settings.get("limit")) for r in rows) == ["3", "None"]
    assert "limit 3" in to_markdown(limited.leaderboard)
    saved = [row["settings"].get("limit") for row in json.loads(board.read_text())["rows"]]
    assert sorted(map(str, saved)) == ["3", "None"]


def test_a_task_rerun_with_other_options_is_refused_in_one_line(tiny_bert, tmp_path):
    board = tmp_path / "board.json"
    grid(tiny_bert, tmp_path, leaderboard=board)
    before = board.read_bytes()
    other = {"locality_symmetry": {**FAST, "length": "12"}}
    with pytest.raises(SettingsConflictError) as caught:
        grid(tiny_bert, tmp_path, leaderboard=board, task_args=other)
    message = str(caught.value)
    assert "length=12" in message and "--leaderboard" in message and "\n" not in message
    assert board.read_bytes() == before


def test_rebuilding_a_board_from_its_results_gives_the_same_rows(tiny_bert, tmp_path):
    from posharness.boards import leaderboard as lb

    board = tmp_path / "board.json"
    grid(tiny_bert, tmp_path, leaderboard=board)
    grid(tiny_bert, tmp_path, leaderboard=board, limit=3)
    rebuilt = lb.build(lb.collect_results(tmp_path / "results"), "board", board)
    saved = lb.load(board)
    assert [r.model_dump() for r in rebuilt.rows] == [r.model_dump() for r in saved.rows]


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write to read-only folders")
def test_an_unwritable_leaderboard_fails_before_any_cell_runs(tiny_bert, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="--leaderboard"):
            grid(tiny_bert, tmp_path, leaderboard=locked / "board.json")
    finally:
        locked.chmod(0o700)
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*.json"))


def test_a_leaderboard_path_that_is_a_folder_or_under_a_file_fails_before_any_cell(
    tiny_bert, tmp_path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    for path, words in ((tmp_path, "is a folder"), (blocker / "board.json", "not writable")):
        with pytest.raises(OutputError, match=words):
            grid(tiny_bert, tmp_path, leaderboard=path)
    assert not any((tmp_path / "results").rglob("*.json"))


def test_a_cache_folder_under_a_file_fails_before_any_cell(tiny_bert, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(OutputError, match="cache folder .* --no-cache"):
        grid(tiny_bert, tmp_path, cache_dir=blocker / "cache")
    assert not any((tmp_path / "results").rglob("*.json"))


def test_overwrite_replaces_a_task_s_options_in_the_row(tiny_bert, tmp_path):
    board = tmp_path / "board.json"
    grid(tiny_bert, tmp_path, leaderboard=board)
    other = {"locality_symmetry": {**FAST, "length": "12"}}
    outcome = grid(tiny_bert, tmp_path, leaderboard=board, task_args=other, overwrite=True)
    (row,) = outcome.leaderboard.rows
    assert row.settings["options"]["locality_symmetry"]["length"] == 12


def test_a_forced_attention_path_is_its_own_row_and_compare_still_pairs_it(tiny_bert, tmp_path):
    """``--model-arg attention=eager`` agrees with the default only to float tolerance:
    its row stays apart and says so, and compare matches it with the default row."""
    from posharness.boards.compare import compare_files
    from posharness.boards.views import to_markdown

    board = tmp_path / "board.json"
    grid(tiny_bert, tmp_path, leaderboard=board)
    forced = grid(tiny_bert, tmp_path, leaderboard=board, model_args={"attention": "eager"})
    rows = forced.leaderboard.rows
    assert sorted(str(r.settings.get("attention")) for r in rows) == ["None", "eager"]
    assert "attention eager" in to_markdown(forced.leaderboard)
    other = tmp_path / "eager.json"
    grid(tiny_bert, tmp_path / "e", leaderboard=other, model_args={"attention": "eager"})
    default = tmp_path / "default.json"
    grid(tiny_bert, tmp_path / "d", leaderboard=default)
    (pair,) = compare_files(default, other)
    assert pair.b.settings.get("attention") == "eager" and "attention" not in pair.a.settings


def test_a_gpu_cell_is_its_own_row_and_compare_still_pairs_it(tmp_path):
    """A cell run on a GPU agrees with the CPU's only to float tolerance (other kernels):
    its row stays apart and says so in every table; the device index does not matter."""
    from posharness.boards.compare import compare_files
    from posharness.boards.leaderboard import build, save
    from posharness.boards.views import to_markdown
    from posharness.contracts.results import Metric
    from tests.result_factory import PLAIN_ENVIRONMENT, save_cell, synthetic_result

    def board(name: str, *devices: str):
        folder = tmp_path / name
        results = []
        for device in devices:
            result = synthetic_result(
                spec="m",
                fingerprint="f",
                task="t",
                metrics={"score": Metric(value=0.5 if device == "cpu" else 0.5000001)},
                cell_id=f"cell-{device}",
                environment=PLAIN_ENVIRONMENT.model_copy(update={"device": device}),
            )
            results.append((save_cell(folder / device.replace(":", "-"), result), result))
        made = build(results, name, tmp_path / f"{name}.json")
        save(made, tmp_path / f"{name}.json")
        return made

    mixed = board("mixed", "cpu", "cuda:1")
    assert sorted(str(r.settings.get("device")) for r in mixed.rows) == ["None", "cuda"]
    assert "on cuda" in to_markdown(mixed)
    board("cpu", "cpu")
    board("gpu", "cuda:0")
    (pair,) = compare_files(tmp_path / "cpu.json", tmp_path / "gpu.json")
    assert pair.b.settings.get("device") == "cuda" and "device" not in pair.a.settings


def test_a_refused_rerun_computes_and_rewrites_nothing(tiny_bert, tmp_path):
    """The refusal comes before any compute: the results the board points to stay the
    ones it was built from."""
    board = tmp_path / "board.json"
    grid(tiny_bert, tmp_path, leaderboard=board)
    results = {p: p.read_bytes() for p in (tmp_path / "results").rglob("*.json")}
    other = {"locality_symmetry": {**FAST, "length": "12"}}
    with pytest.raises(SettingsConflictError):
        grid(tiny_bert, tmp_path, leaderboard=board, task_args=other)
    assert {p: p.read_bytes() for p in (tmp_path / "results").rglob("*.json")} == results
