"""`posharness run` says how long the whole run will take before its first cell (issue
45, part 3): the estimate's simple model (seconds per cell kind, per training example and
per example scored, from ``posharness.base.timings``), a borrowed classifier counted
once, kinds without a rate named rather than guessed, and the line itself."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from posharness.base.timings import (
    CELL_SECONDS,
    EVAL_SECONDS_PER_EXAMPLE,
    TRAIN_SECONDS_PER_EXAMPLE,
)
from posharness.run.estimate import estimate


@dataclass
class Spec:
    name: str
    kind: str
    borrows: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Task:
    spec: Spec
    work: tuple[int, int] | None = None

    def __getattr__(self, name: str) -> Any:
        if name == "planned_examples" and self.work is not None:
            return lambda *args: self.work
        raise AttributeError(name)


@dataclass
class Cell:
    task: Task
    spec: Any = field(default_factory=lambda: SimpleNamespace(text="m"))
    mode: str = "both"
    seed: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    limit: int | None = None
    train_limit: int | None = None


def test_each_kind_costs_its_measured_rate() -> None:
    geometry = Cell(Task(Spec("locality_symmetry", "attention-geometry")))
    finetune = Cell(Task(Spec("rte", "fine-tune"), work=(1000, 100)))
    found = estimate([geometry, geometry, finetune], None)
    expected = 2 * CELL_SECONDS["attention-geometry"]
    expected += 1000 * TRAIN_SECONDS_PER_EXAMPLE + 100 * EVAL_SECONDS_PER_EXAMPLE
    assert found.seconds == pytest.approx(expected)
    assert found.cells == {"attention-geometry": 2, "fine-tune": 1}
    assert "pretraining aside" in found.text() and "load" in found.text()


def test_a_borrowed_classifier_trains_once_and_not_when_its_own_cell_runs() -> None:
    snli = Task(Spec("snli", "fine-tune"), work=(5000, 10))
    probes = [
        Cell(Task(Spec(f"shuffle_{n}", "perturbation", borrows={"snli": ("train",)})))
        for n in (3, 4)
    ]
    found = estimate(probes, None, lambda name: (snli, {}))
    classifier = 5000 * TRAIN_SECONDS_PER_EXAMPLE
    assert found.seconds == pytest.approx(2 * CELL_SECONDS["perturbation"] + classifier)
    with_own = estimate([Cell(snli), *probes], None, lambda name: (snli, {}))
    own = 5000 * TRAIN_SECONDS_PER_EXAMPLE + 10 * EVAL_SECONDS_PER_EXAMPLE
    assert with_own.seconds == pytest.approx(2 * CELL_SECONDS["perturbation"] + own)


def test_a_limit_scales_a_cell_and_a_kind_without_a_rate_is_named() -> None:
    full = estimate([Cell(Task(Spec("dep_heads", "attention-analysis")))], None)
    short = estimate([Cell(Task(Spec("dep_heads", "attention-analysis")), limit=20)], None)
    assert short.seconds < full.seconds / 50
    unknown = estimate([Cell(Task(Spec("sentlen", "probe")))], None)
    assert unknown.seconds == 0 and "not estimated (no measured rate): 1 probe" in unknown.text()


def test_the_estimate_is_said_before_the_first_cell(tmp_path: Path, tiny_bert: Path) -> None:
    from posharness.api import evaluate
    from posharness.run.runner import SilentReporter

    said: list[str] = []

    class Recording(SilentReporter):
        def run_estimate(self, found) -> None:
            said.append(found.text())

        def cell_started(self, cell, index: int, total: int) -> None:  # type: ignore[override]
            said.append("cell")

    evaluate(
        f"hf:{tiny_bert}",
        ["toeplitz"],
        ["both"],
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        task_args={"toeplitz": {"words": 4, "length": 16, "controls": 2}},
        reporter=Recording(),
    )
    assert said[0].startswith("estimate: about ") and said[1:] == ["cell"]


def test_the_fine_tune_task_counts_its_work_from_the_planned_splits(tmp_path: Path) -> None:
    from posharness.plugins import tasks as task_registry

    rows = "\n".join(f"{i}\tA sentence {i}.\tAnother {i}.\tentailment" for i in range(30))
    folder = tmp_path / "RTE"
    folder.mkdir()
    for split in ("train", "dev"):
        (folder / f"{split}.tsv").write_text(
            "index\tsentence1\tsentence2\tlabel\n" + rows + "\n", encoding="utf-8"
        )
    task = task_registry.get("rte")()
    options = {**task.spec.defaults, "path": str(folder)}
    assert task.planned_examples(options, None, 0, None, None) == (3 * 30, 3 * 30)
    assert task.planned_examples(options, None, 0, 5, 10) == (3 * 10, 3 * 5)
