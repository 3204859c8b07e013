"""The committed cpu-hour study read from a fresh clone (issue 46, part 4).

A clone sits at another absolute path, without the data the study was run on and without
the checkpoints' weights: ``study status`` must still read the committed ``state/`` as
done (a stage's digest names no folder of the machine that ran it), say what the absent
weights mean, and not read any task's data to do so; boards keep the asterisk of a
starred label apart from the unstarred one; captions name the probe length the cells
were read at; the scatter puts points of different probe lengths in their own panels,
each with its flat map.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posharness.study import workflow
from posharness.study.folder import StudyFolder, board_name
from posharness.study.render import scatter_panels
from posharness.study.table_spec import ProbeAxis, PublishedSource, StudyColumn, StudyTable
from posharness.study.tables import Cell, ComputedTable, TableRow

STUDY = Path(__file__).resolve().parents[3] / "leaderboards" / "cpu-hour-study"
# what `study status` reads: the study file as it ran, its records and plan, boards
STATUS_FILES = ("study.toml", "source.json", "plan.json", "plugins.json", "missing_data.json")


def _clone(tmp_path: Path) -> Path:
    """The committed records of the study, at another path, with no data beside it."""
    root = tmp_path / "clone" / "leaderboards"
    copy = root / "cpu-hour-study"
    for name in STATUS_FILES:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(STUDY / name, copy / name)
    for sub in ("state", "boards"):
        shutil.copytree(STUDY / sub, copy / sub, ignore=shutil.ignore_patterns("running.json"))
    for card in STUDY.glob("pretrain/*/final/config.json"):
        target = copy / card.relative_to(STUDY)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(card, target)
    shutil.copy2(STUDY / "study.toml", root / "cpu-hour-study.toml")
    return root / "cpu-hour-study.toml"


def test_status_on_a_fresh_clone_reads_the_committed_stages_as_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study_file = _clone(tmp_path)

    def no_data_read(*args: object) -> None:
        raise AssertionError("study status read the tasks' data")

    monkeypatch.setattr(workflow, "missing_data", no_data_read)
    rows = workflow.study_status(study_file)
    folder = StudyFolder(study_file.parent / "cpu-hour-study")
    recorded = [r for r in rows if (folder.record(r[0]) or {}).get("status") == "done"]
    assert len(recorded) >= 1 + 12 + 36  # corpus, 6 PEs x 2 seeds, 3 [[run]] each
    assert [r for r in recorded if r[1] != "done"] == []
    pretrain = [r for r in recorded if r[0].startswith("pretrain/")]
    assert all("weights absent" in detail for _, _, detail in pretrain)


def test_a_starred_label_keeps_its_star_in_the_board_name(tmp_path: Path) -> None:
    assert board_name("BERT-A* s0") == "BERT-A-star-s0"
    assert board_name("BERT s0") == "BERT-s0"
    folder = StudyFolder(tmp_path)
    assert folder.board("BERT-A* s0").name == "BERT-A-star-s0.json"
    folder.boards.mkdir()
    (folder.boards / "BERT-A-s0.json").write_text("{}")  # a folder written before: kept
    assert folder.board("BERT-A* s0").name == "BERT-A-s0.json"
    assert folder.board("BERT s0").name == "BERT-s0.json"


def test_a_caption_names_the_probe_length_the_cells_were_read_at(tmp_path: Path) -> None:
    from posharness.study.captions import caption_note
    from posharness.study.dag import build_stages
    from posharness.study.stages import training_stage
    from posharness.study.study_file import read_study
    from posharness.study.table_registry import study_table

    training = training_stage()
    study = read_study(_clone(tmp_path), training)
    stages = build_stages(study, training)
    note = caption_note(study, study_table("chen2023.table3"), stages)
    assert "locality_symmetry length=32" in note
    assert "dep_heads" not in note  # Table A3's input size, not Table 3's
    assert "dep_heads max_length=32" in caption_note(study, study_table("chen2023.tablea3"), stages)


def _row(label: str, x: float, published: bool = False) -> TableRow:
    return TableRow(label, "both", [Cell(f"{x}", x), Cell("80", 80.0)], published=published)


def test_the_scatter_draws_each_probe_length_in_its_own_panel_with_its_flat_map() -> None:
    probe = ProbeAxis("locality_symmetry", "length", 128, 128, lambda n: 100.0 / n)
    spec = StudyTable(
        id="t.fig",
        title="t",
        columns=(StudyColumn("x", "Locality", "locality_symmetry"), StudyColumn("y", "S", "s")),
        source=PublishedSource("p", "t", "1"),
        kind="scatter",
        probe=probe,
    )
    rows = [_row("A s0", 9.5), _row("B s0", 40.0), _row("BERT", 16.2, published=True)]
    table = ComputedTable(spec, ["model", "mode", "Locality", "S"], rows, "c")
    table.probe_lengths = {"A s0": 32, "B s0": 32}
    panels = scatter_panels(table)
    assert sorted(panels) == [32, 128]
    assert [row.label for row, _, _ in panels[32]] == ["A s0", "B s0"]
    assert [row.label for row, _, _ in panels[128]] == ["BERT"]
