"""Progress as lines where no bar is drawn (issue 40, part 5): a fine-tuning inside
``posharness run`` and the stages of a study say their rate and the time left when their
output is a log, at most every ``$POSHARNESS_PROGRESS_SECONDS``; short work says nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from posharness.base.progress_lines import ProgressLines, counter, interval_from_environment
from tests.unit.tasks.finetune.test_finetune_task import run, write_rte


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_count_says_its_rate_and_time_left_once_per_interval() -> None:
    written: list[str] = []
    clock = Clock()
    lines = ProgressLines("study", 4, written.append, interval=60, clock=clock, unit="stage")
    lines.start()
    for done, now in ((1, 100.0), (2, 130.0), (3, 200.0)):
        clock.now = now
        lines.update(done)
    assert written == [
        "study: stage 1/4, 100.0 s/stage, about 5 min left",
        "study: stage 3/4, 66.7 s/stage, about 67 s left",
    ]


def test_work_shorter_than_the_interval_says_nothing_and_longer_work_ends_with_a_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    written: list[str] = []
    advance = counter("features", 10, written.append, interval=1e9)
    for _ in range(10):
        advance(1)
    assert written == []
    monkeypatch.setenv("POSHARNESS_PROGRESS_SECONDS", "0")
    assert interval_from_environment() == 0
    advance = counter("features", 3, written.append)
    for _ in range(3):
        advance(1)
    assert len(written) == 3 and written[-1].startswith("features: 3/3, ")
    assert written[-1].endswith("about 0 s left")


def test_a_fine_tuning_in_a_log_writes_its_rate_and_time_left(
    tmp_path: Path,
    tiny_bert: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("POSHARNESS_PROGRESS_SECONDS", "0")
    write_rte(tmp_path / "data", train=8, dev=4)
    options = ("rte.epochs=1", "rte.seeds=1", "rte.bootstrap=0", "rte.keep_checkpoints=none")
    assert run(tmp_path, tiny_bert, "rte", *(f"--task-arg={o}" for o in options)) == 0
    err = capsys.readouterr().err  # captured: no terminal, so no bar is drawn
    line = re.compile(
        r"fine-tuning rte .*, examples: (\d+)/(\d+), [\d.e-]+ s each, about \d+ s left"
    )
    found = [m for m in map(line.search, err.splitlines()) if m]
    assert found, err
    assert found[-1][1] == found[-1][2]  # the last line is the finished count


def test_a_study_says_its_stages_done_with_the_rate_and_time_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from posharness.study.dag import EVALUATE, Stage
    from posharness.study.execute import run_stages
    from posharness.study.folder import StudyFolder

    monkeypatch.setenv("POSHARNESS_PROGRESS_SECONDS", "0")
    # Evaluation stages whose every task lacks data here: each ends at once, without a model.
    stages = [Stage(f"evaluate/m{i}", EVALUATE, {"i": i}, evaluate={"tasks": []}) for i in range(3)]
    said: list[str] = []
    outcome = run_stages(stages, StudyFolder(tmp_path / "study"), None, said.append)
    assert outcome.done == [stage.id for stage in stages]
    progress = [line for line in said if line.startswith("study: stage ")]
    assert [line.split(",")[0] for line in progress] == ["study: stage 1/3", "study: stage 2/3"]
    # (a clock too coarse to see the stages' time would say it is still measuring)
    pattern = r"(s/stage, about \d+ s left|measuring the rate)$"
    assert all(re.search(pattern, line) for line in progress), progress


def test_work_inside_a_study_cell_says_its_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    from posharness.study.execute import _CellLines

    monkeypatch.setenv("POSHARNESS_PROGRESS_SECONDS", "0")
    said: list[str] = []
    advance = _CellLines(said.append).progress("fine-tuning rte, examples", 4)
    for _ in range(2):
        advance(2)
    assert said[-1].startswith("  fine-tuning rte, examples: 4/4, ") and "left" in said[-1]
