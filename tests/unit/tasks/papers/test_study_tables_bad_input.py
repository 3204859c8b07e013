"""A study table column whose metric a model's board does not hold reads "n/a" with the
reason, never a blank, a zero or another metric's value: Table A3 read from a dep_heads
run without Root scoring, Table 1's MNLI from a cell that predates mean_accuracy."""

from __future__ import annotations

from pathlib import Path

from posharness.boards.leaderboard import save
from posharness.boards.schema import Leaderboard, Row, Score
from posharness.study.tables import UNDEFINED, ModelRow, compute_table
from posharness.tasks.papers.tables import all_tables

TABLES = {table.id: table for table in all_tables()}


def board(tmp_path: Path, scores: dict[str, float]) -> Path:
    """A board of one model in the three modes holding only ``scores``."""
    rows = [
        Row(
            model="zoo:bert-a",
            fingerprint="f0",
            mode=mode,
            exact=True,
            pe_family="learned",
            scores={key: Score(mean=value, n_seeds=1) for key, value in scores.items()},
            results=[],
        )  # fmt: skip
        for mode in ("both", "contextual", "positional")
    ]
    path = tmp_path / "board.json"
    save(Leaderboard(name="b", created_at="2025-01-01", columns=[], rows=rows), path)
    return path


def test_table_a3_without_root_scoring_reads_na_and_says_what_records_it(tmp_path: Path) -> None:
    path = board(tmp_path, {"dep_heads/macro": 0.5, "dep_heads/macro_short": 0.6})
    table = compute_table(TABLES["chen2023.tablea3"], [ModelRow("BERT", path)], {}, "")
    (ours,) = [row for row in table.rows if not row.published]
    assert [cell.text for cell in ours.cells] == [UNDEFINED] * 9
    assert all(cell.value is None for cell in ours.cells)  # never the no-Root macro's 50.0
    said = [note for note in table.notes if note.startswith(f"{UNDEFINED} in ")]
    assert len(said) == 9  # one line per column, naming its metric and what records it
    assert said[0] == (
        "n/a in Macro Avg (contextual): dep_heads ran but recorded no macro_with_root: "
        "run dep_heads with --task-arg dep_heads.score_root=true"
    )
    assert "score_root=true" in table.caption and "read n/a" in table.caption


def test_mnli_from_a_cell_without_mean_accuracy_reads_na_not_matched(tmp_path: Path) -> None:
    path = board(tmp_path, {"mnli/matched_accuracy": 0.7, "sickr/spearman": 0.8})
    table = compute_table(TABLES["chen2023.table1"], [ModelRow("BERT", path)], {}, "")
    (ours,) = [row for row in table.rows if not row.published]
    cells = dict(zip([c.key for c in TABLES["chen2023.table1"].columns], ours.cells, strict=False))
    assert cells["mnli"].text == UNDEFINED  # not matched accuracy under the m/mm mean's name
    assert cells["sickr"].text == UNDEFINED  # not the test Spearman under the dev column
    assert ours.cells[-1].text == "incomplete"  # the average needs all ten
    assert "reads n/a: rerun it" in table.caption
    assert (
        "n/a in MNLI: mnli ran but recorded no mean_accuracy: mnli records it from task "
        "version 2 on" in table.notes
    )
    assert "n/a in SICK-R: sickr ran but recorded no dev_spearman" in table.notes


def test_a_task_the_study_ran_in_one_mode_reads_not_in_study_in_the_others(
    tmp_path: Path,
) -> None:
    """The length group read in mode ``both`` only, geometry in three modes: the length
    table's contextual and positional rows were never meant to run (issue 41's study)."""
    from posharness.study.table_registry import study_table
    from posharness.study.tables import NOT_IN_STUDY, NOT_RUN

    path = board(tmp_path, {"passkey/ndcg_at_1_len64": 0.1, "locality_symmetry/locality": 0.2})
    spec = study_table("length.passkey")
    tasks = frozenset(c.task for c in spec.columns) | {"locality_symmetry"}
    modes = frozenset({"both", "contextual", "positional"})
    ran = frozenset({(t, "both") for t in tasks} | {("locality_symmetry", "contextual")})
    table = compute_table(spec, [ModelRow("BERT", path)], {}, "", tasks, modes, ran)
    rows = {row.mode: row for row in table.rows if not row.published}
    assert rows["both"].cells[0].text == "10.0"
    assert {c.text for c in rows["contextual"].cells[:-1]} == {NOT_IN_STUDY}
    assert {c.text for c in rows["positional"].cells[:-1]} == {NOT_IN_STUDY}
    assert NOT_RUN in {c.text for c in rows["both"].cells}  # ran, but no length_geometry here
