"""A study run end to end on zoo PEs at random weights: every stage, the tables beside the
published rows, resume, status, a report rebuilt from the folder alone, and an edited file
that would mix old and new settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from posharness.base.errors import PlanProblems, StudyChanged
from posharness.storage.hashing import hash_file
from posharness.study.workflow import rebuild_report, run_study, study_status
from tests.unit.study.conftest import RANDOM_WEIGHTS_STUDY, write_study


def _quiet(line: str) -> None:
    pass


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("study")
    path = write_study(folder, RANDOM_WEIGHTS_STUDY)
    run_study(path, _quiet)
    return path


def test_a_study_writes_every_table_as_markdown_latex_and_in_the_report(finished: Path) -> None:
    tables = finished.parent / "study" / "tables"
    for stem in ("chen2023.fig2", "tisa2021.toeplitz"):
        assert (tables / f"{stem}.md").is_file() and (tables / f"{stem}.tex").is_file()
    assert (tables / "chen2023.fig2.png").is_file()
    markdown = (tables / "chen2023.fig2.md").read_text()
    assert "| BERT-A | both |" in markdown and "| RoPE | positional |" in markdown
    assert "BERT (published) | both | 16.2 | 87.9" in markdown  # Chen et al. Table 3
    latex = (tables / "chen2023.fig2.tex").read_text()
    assert r"\toprule" in latex and r"\bottomrule" in latex and "published" in latex
    report = (finished.parent / "study" / "report").rglob("*.html")
    assert any("RoPE" in page.read_text() and "Fig. 2" in page.read_text() for page in report)


def test_the_table_value_is_the_board_value_scaled_and_flags_are_marked(finished: Path) -> None:
    board = json.loads((finished.parent / "study" / "boards" / "RoPE.json").read_text())
    row = next(r for r in board["rows"] if r["mode"] == "both")
    locality = row["scores"]["locality_symmetry/locality"]["mean"] * 100
    markdown = (finished.parent / "study" / "tables" / "chen2023.fig2.md").read_text()
    assert f"| RoPE | both | {locality:.1f}" in markdown  # then its marks (▲▼, ! flagged)
    if row["flags"].get("locality_symmetry"):  # random weights: near-uniform attention
        assert "! flagged: not a finding" in markdown
        assert (
            f"! RoPE (both), locality_symmetry: {row['flags']['locality_symmetry'][0]}" in markdown
        )


def test_rerunning_a_finished_study_runs_nothing_and_changes_no_table(finished: Path) -> None:
    table = finished.parent / "study" / "tables" / "chen2023.fig2.tex"
    before = table.read_bytes()
    outcome = run_study(finished, _quiet)
    assert outcome.done == [] and len(outcome.skipped) == 2
    assert table.read_bytes() == before


def test_status_lists_every_stage_as_done(finished: Path) -> None:
    rows = study_status(finished)
    assert [(stage, state) for stage, state, _ in rows] == [
        ("evaluate/BERT-A", "done"),
        ("evaluate/RoPE", "done"),
    ]


def test_the_report_is_rebuilt_from_the_folder_alone(finished: Path, tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "shared-study"
    shutil.copytree(finished.parent / "study", copy)
    before = (copy / "tables" / "chen2023.fig2.md").read_text()
    shutil.rmtree(copy / "tables")
    shutil.rmtree(copy / "report")
    rebuild_report(copy)
    assert (copy / "tables" / "chen2023.fig2.md").read_text() == before
    manifest = json.loads((copy / "manifest.json").read_text())["files"]
    assert manifest["study.toml"] == hash_file(copy / "study.toml")
    assert any(name.startswith("boards/") for name in manifest)
    assert not any(str(finished.parent) in name for name in manifest)


def test_an_edited_task_option_names_what_changed_and_what_it_invalidates(
    finished: Path,
) -> None:
    finished_copy = finished.read_text()
    try:
        finished.write_text(finished_copy.replace('words = "12"', 'words = "13"'))
        with pytest.raises(StudyChanged) as caught:
            run_study(finished, _quiet)
    finally:
        finished.write_text(finished_copy)
    message = str(caught.value)
    assert "evaluate/BERT-A" in message and "evaluate/RoPE" in message
    assert "locality_symmetry.words" in message and '"12" → "13"' in message
    assert "--discard-changed" in message


def test_missing_data_is_listed_before_any_work_and_marked_with_allow_missing(
    finished: Path, tmp_path: Path
) -> None:
    text = finished.read_text().replace(
        'tasks = ["locality_symmetry"]', 'tasks = ["locality_symmetry", "snli", "rte"]'
    )
    text = text.replace(
        'name = "geometry-check"', 'name = "m"\noutput = "' + str(tmp_path / "m") + '"'
    )
    text = text.replace(
        'tables = ["chen2023.fig2", "tisa2021.toeplitz"]', 'tables = ["chen2023.table3"]'
    )
    path = write_study(tmp_path, text)
    with pytest.raises(PlanProblems) as caught:
        run_study(path, _quiet)
    problems = caught.value.problems
    assert any(p.startswith("snli:") for p in problems) and any(
        p.startswith("rte:") for p in problems
    )
    assert "--allow-missing" in problems[-1]
    assert not (tmp_path / "m").exists()  # nothing ran, nothing was written
    run_study(path, _quiet, allow_missing=True)
    table = (tmp_path / "m" / "tables" / "chen2023.table3.md").read_text()
    assert "| BERT-A | both |" in table and "data missing" in table
    assert "snli: data missing:" in table  # the fix, in a note


def test_discard_changed_redoes_exactly_the_changed_stages(finished: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(finished.parent / "study", tmp_path / "study")
    text = finished.read_text()
    edited = write_study(
        tmp_path, text.replace('modes = ["both", "positional"]', 'modes = ["both"]')
    )
    edited.write_text(edited.read_text().replace('words = "12"', 'words = "13"'))
    said: list[str] = []
    outcome = run_study(edited, said.append, discard_changed=True)
    assert sorted(outcome.done) == ["evaluate/BERT-A", "evaluate/RoPE"]
    assert "evaluate/BERT-A: discarded (its settings changed)" in said
    board = json.loads((tmp_path / "study" / "boards" / "RoPE.json").read_text())
    options = {row["settings"]["options"]["locality_symmetry"]["words"] for row in board["rows"]}
    assert options == {13}  # no row of the old setting is left to mix with the new


def test_a_full_disk_mid_study_fails_the_stage_in_one_line_and_a_rerun_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from posharness.base.errors import StagesFailed
    from tests.unit.core.test_full_disk import fail_writes_to

    path = write_study(tmp_path, RANDOM_WEIGHTS_STUDY)
    fail_writes_to(monkeypatch, ".RoPE.json", errno.ENOSPC)  # the board of RoPE, not its record
    with pytest.raises(StagesFailed) as caught:
        run_study(path, _quiet)
    (failure,) = caught.value.failures
    assert failure.startswith("evaluate/RoPE: ") and "No space left on device" in failure
    board = tmp_path / "study" / "boards" / "RoPE.json"
    assert not board.exists() and not list(tmp_path.rglob("*.tmp"))  # nothing half-written
    states = {stage: state for stage, state, _ in study_status(path)}
    assert states == {"evaluate/BERT-A": "done", "evaluate/RoPE": "failed"}
    monkeypatch.undo()
    outcome = run_study(path, _quiet)
    assert outcome.done == ["evaluate/RoPE"] and board.is_file()


def test_the_length_table_reads_passkey_and_drift_and_says_n_a_past_a_length(
    tmp_path: Path,
) -> None:
    text = RANDOM_WEIGHTS_STUDY.replace(
        'tables = ["chen2023.fig2", "tisa2021.toeplitz"]', 'tables = ["length.passkey"]'
    )
    text = text.replace('tasks = ["locality_symmetry"]', 'tasks = ["passkey", "length_geometry"]')
    text = text.replace(
        'task_args = { locality_symmetry = { words = "12", length = "32" } }',
        'task_args = { passkey = { lengths = "64", documents = "8", queries = "4" }, '
        'length_geometry = { lengths = "16,32", words = "8", figures = "false" } }',
    )
    path = write_study(tmp_path, text)
    run_study(path, _quiet)
    table = (tmp_path / "study" / "tables" / "length.passkey.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| RoPE | both |"))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[2].split()[0].replace(".", "").isdigit()  # passkey at 64 tokens, scored
    assert cells[3:6] == ["n/a", "n/a", "n/a"]  # 128, 256, 512: not asked for here
    assert cells[6] != "not run" and cells[-1] == "incomplete"
