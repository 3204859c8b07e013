"""A finished rerun of the word-swap probes redraws no Table 3 chart (issue 40, part 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

import posharness.tasks.shuffle.figures as figures
from tests.cli_helpers import run_isolated
from tests.snli_parsed import write_parsed_snli


def run(tmp_path: Path, model: Path) -> int:
    return run_isolated(
        tmp_path, "--model", f"hf:{model}", "--tasks", "shuffle_sr",
        "--task-arg", "shuffle_sr.epochs=1", "--task-arg", "shuffle_sr.bootstrap=50",
    )  # fmt: skip


def test_the_chart_is_drawn_once_for_the_same_cells(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_parsed_snli(tmp_path / "data")
    drawn = []
    real = figures.delta_bars
    monkeypatch.setattr(figures, "delta_bars", lambda *a, **k: drawn.append(1) or real(*a, **k))
    assert run(tmp_path, tiny_bert) == 0
    assert run(tmp_path, tiny_bert) == 0  # every cell finished
    assert drawn == [1]
    chart = next((tmp_path / "results").rglob("table3.png"))
    chart.unlink()  # a chart that is gone is drawn again
    assert run(tmp_path, tiny_bert) == 0
    assert drawn == [1, 1] and chart.is_file()
