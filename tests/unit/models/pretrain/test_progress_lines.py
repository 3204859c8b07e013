"""posharness pretrain says its progress in lines where stderr is no terminal (issue 40:
a Slurm log or `| cat` showed nothing but the run folder for the whole run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from posharness.models.pretrain.progress_lines import ProgressLines, duration
from tests.cli_helpers import cli
from tests.conftest import WORDS


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_with_the_rate_and_the_time_left() -> None:
    clock, written = Clock(), []
    lines = ProgressLines("bert-a (tiny)", 100, written.append, interval=60, clock=clock)
    for step in range(10, 101, 10):  # a log record every 10 steps, 30 s apart
        lines.update(step, 5.0 - step / 100)
        clock.now += 30
    assert written[0] == "bert-a (tiny): step 10/100, loss 4.900, measuring the rate"
    # 30 s per 10 steps: 3 s/step; at step 30, 70 steps left are 210 s
    assert written[1] == "bert-a (tiny): step 30/100, loss 4.700, 3.00 s/step, about 4 min left"
    assert len(written) == 6  # steps 10, 30, 50, 70, 90 and the last one, always
    assert written[-1].startswith("bert-a (tiny): step 100/100") and "about 0 s left" in written[-1]


@pytest.mark.parametrize(
    ("seconds", "text"), [(12, "12 s"), (600, "10 min"), (5400, "1.5 h"), (89, "89 s")]
)
def test_durations_read_at_a_glance(seconds: float, text: str) -> None:
    assert duration(seconds) == text


def test_pretrain_piped_prints_progress_lines(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("POSHARNESS_PROGRESS_SECONDS", "0")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(" ".join(WORDS[i : i + 12]) for i in range(200)) + "\n")
    code = cli(
        "pretrain", "--model", "bert-a", "--size", "tiny", "--corpus", str(corpus),
        "--vocab-size", "120", "--batch-size", "4", "--block-size", "24", "--steps", "3",
        "--log-every", "1", "--device", "cpu", "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0
    err = capsys.readouterr().err
    assert "bert-a (tiny): step 1/3, loss" in err
    assert "bert-a (tiny): step 3/3, loss" in err and "s/step, about" in err
