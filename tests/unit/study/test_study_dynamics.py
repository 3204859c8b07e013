"""[dynamics]: every saved checkpoint of a study's pretraining runs evaluated, and a table
of each PE's metric against tokens seen, seeds aligned by tokens (issue 46, part 2)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from posharness.base.errors import StudyFileError
from posharness.study import dynamics
from posharness.study.dag import EVALUATE, PRETRAIN, Stage, build_stages
from posharness.study.execute import run_one
from posharness.study.folder import StudyFolder
from posharness.study.stages import TrainingStage, training_stage
from posharness.study.study_file import StudyModel, read_study
from posharness.study.table_spec import PublishedSource, StudyColumn, StudyTable
from tests.unit.study.conftest import PRETRAIN_STUDY, write_study

DYNAMICS = (
    PRETRAIN_STUDY.replace(
        'tables = ["chen2023.fig2"]', 'tables = ["chen2023.fig2", "chen2023.dynamics"]'
    )
    + '\n[dynamics]\ncheckpoints = "all"\n'
)


def test_the_plan_evaluates_every_saved_checkpoint_but_the_last(tmp_path: Path) -> None:
    study = read_study(write_study(tmp_path, DYNAMICS), training_stage())
    stages = build_stages(study, training_stage())
    steps = [s for s in stages if s.kind == EVALUATE and s.step is not None]
    # steps = 4, save_every = 2: checkpoint-2 read here, checkpoint-4 is final/
    assert [s.id for s in steps] == ["evaluate/bert-a/step2", "evaluate/alibi/step2"]
    first = steps[0]
    assert first.spec == "bert-a@pretrain/bert-a-seed0/checkpoint-2"
    assert first.evaluate["leaderboard"] == StudyFolder(study.folder).dynamics_board("bert-a", 2)
    assert first.depends == ("pretrain/bert-a/seed0",)


def test_dynamics_seeds_limit_the_series_to_those_runs(tmp_path: Path) -> None:
    text = DYNAMICS.replace('checkpoints = "all"', "seeds = [1]").replace(
        '[[model]]\nname = "alibi"', '[[model]]\nname = "alibi"\nseeds = [0, 1]'
    )
    study = read_study(write_study(tmp_path, text), training_stage())
    steps = [s.id for s in build_stages(study, training_stage()) if s.step is not None]
    assert steps == ["evaluate/alibi s1/step2"]


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ('checkpoints = "some"', "checkpoints"),
        ("runs = [2]", "runs"),
        ("stride = 1", "stride"),
        ('seeds = "2"', "seeds"),
        ("seeds = [7]", "seeds"),
    ],
)
def test_a_wrong_dynamics_key_is_one_line_naming_it(tmp_path: Path, section: str, key: str) -> None:
    text = DYNAMICS.replace('checkpoints = "all"', section)
    with pytest.raises(StudyFileError) as caught:
        read_study(write_study(tmp_path, text), training_stage())
    assert f"[dynamics] {key}" in str(caught.value) and "\n" not in str(caught.value)


def test_dynamics_refuses_a_run_that_keeps_only_its_newest_checkpoints(tmp_path: Path) -> None:
    text = DYNAMICS.replace("save_every = 2", "save_every = 2\nkeep_checkpoints = 1")
    with pytest.raises(StudyFileError, match="keep_checkpoints"):
        read_study(write_study(tmp_path, text), training_stage())


def test_a_missing_checkpoint_fails_its_stage_in_one_line_naming_it(tmp_path: Path) -> None:
    folder = StudyFolder(tmp_path)
    missing = tmp_path / "pretrain" / "bert-a-seed0" / "checkpoint-2"
    stage = Stage("evaluate/bert-a/step2", EVALUATE, {}, step=2, checkpoint=missing)
    error = run_one(stage, folder, None, lambda line: None)
    assert error is not None and "pretrain/bert-a-seed0/checkpoint-2 is missing" in error
    assert "\n" not in error


COLUMNS = (
    StudyColumn("loc", "Locality (both)", "locality_symmetry", "locality", mode="both", flat=True),
    StudyColumn("loss", "MLM loss", "", "loss", scale=1.0, source="loss_log"),
)
TABLE = StudyTable(
    "t.dynamics", "t", COLUMNS, PublishedSource("p", "t", "1"), kind="dynamics", digits=1
)


def _training(trajectories: dict[str, dict[int, tuple[int, float]]]) -> TrainingStage:
    return TrainingStage(
        command="pretrain",
        options=(),
        reserved=frozenset(),
        can_pretrain=lambda name: True,
        corpus_commands=lambda values, folder: ([], {}),
        finished=lambda folder: None,
        progress=lambda folder: None,
        estimate=lambda values: None,  # type: ignore[arg-type,return-value]
        spec=lambda name, checkpoint: f"{name}@{checkpoint}",
        checkpoint_steps=lambda values: (2, 4),
        trajectory=lambda folder: trajectories.get(folder.name, {}),
    )


def _stages(tmp_path: Path, seeds: tuple[int, ...]) -> list[Stage]:
    model = StudyModel("bert-a", "BERT", seeds, pretrain={"steps": 4})
    folder = StudyFolder(tmp_path)
    stages = []
    for seed in seeds:
        row = model.row_label(seed)
        stages.append(Stage(f"pretrain/BERT/seed{seed}", PRETRAIN, {}, model=model, seed=seed))
        for step, board in ((2, folder.dynamics_board(row, 2)), (None, folder.board(row))):
            stages.append(
                Stage(f"evaluate/{row}/{step}", EVALUATE, {}, model=model, seed=seed,
                      row_label=row, step=step, evaluate={"leaderboard": board})
            )  # fmt: skip
    return stages


def _boards(monkeypatch: pytest.MonkeyPatch, values: dict[str, float]) -> None:
    """Boards read as their file name says: ``BERT-s0-step2.json`` holds ``values[name]``."""

    def load(path: Path) -> SimpleNamespace:
        score = SimpleNamespace(mean=values[path.stem])
        row = SimpleNamespace(mode="both", scores={"locality_symmetry/locality": score})
        return SimpleNamespace(rows=[row])

    monkeypatch.setattr(dynamics, "load", load)
    monkeypatch.setattr(Path, "is_file", lambda self: self.stem in values)


def test_a_pe_row_per_token_count_with_each_seed_beside_the_mean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _boards(monkeypatch, {"BERT-s0-step2": 0.10, "BERT-s1-step2": 0.20, "BERT-s0": 0.3,
                          "BERT-s1": 0.5})  # fmt: skip
    logs = {f"BERT-seed{s}": {2: (1000, 7.0 + s), 4: (2000, 6.0 + s)} for s in (0, 1)}
    table = dynamics.compute_dynamics(
        TABLE, _stages(tmp_path, (0, 1)), _training(logs), StudyFolder(tmp_path), "", flat=9.0
    )
    assert [(row.label, row.mode) for row in table.rows] == [
        ("BERT", "0.00M (2)"),
        ("BERT", "0.00M (4)"),
    ]
    first = table.rows[0].cells
    assert first[0].text == "15.0 (s0 10.0, s1 20.0)" and first[1].text == "7.5 (s0 7.0, s1 8.0)"
    assert table.series["Locality (both)"].points["BERT"] == [
        (1000, 15.0, 10.0, 20.0),
        (2000, 40.0, 30.0, 50.0),
    ]
    assert table.series["Locality (both)"].flat == 9.0
    assert table.series["MLM loss"].flat is None


def test_seeds_saved_at_different_tokens_are_aligned_by_tokens_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _boards(monkeypatch, {"BERT-s0-step2": 0.1, "BERT-s1-step2": 0.2, "BERT-s0": 0.3,
                          "BERT-s1": 0.5})  # fmt: skip
    logs = {
        "BERT-seed0": {2: (1000, 7.0), 4: (2000, 6.0)},
        "BERT-seed1": {2: (1500, 7.5), 4: (2000, 6.5)},  # a larger batch early on
    }
    table = dynamics.compute_dynamics(
        TABLE, _stages(tmp_path, (0, 1)), _training(logs), StudyFolder(tmp_path), ""
    )
    assert [row.mode for row in table.rows] == ["0.00M (2)", "0.00M (2)", "0.00M (4)"]
    assert table.rows[0].cells[0].text == "10.0 (s0 10.0)"  # seed 0 alone at 1,000 tokens
    assert table.rows[2].cells[0].text == "40.0 (s0 30.0, s1 50.0)"
    assert any("different token counts" in note for note in table.notes)
