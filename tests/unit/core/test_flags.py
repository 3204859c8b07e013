"""Degenerate outcomes are flagged: on the result, in the run output, in every table."""

from __future__ import annotations

from pathlib import Path

from posharness.contracts.examples import Example
from posharness.contracts.results import Metric
from posharness.run.flags import degenerate_flags


def test_a_classifier_that_answers_one_class_is_flagged_per_split():
    rows = [Example(id=f"t{i}", split="test", prediction=0) for i in range(40)] + [
        Example(id=f"d{i}", split="dev", prediction=i % 3) for i in range(40)
    ]
    flags = degenerate_flags("accuracy", {"accuracy": Metric(0.33, n=80)}, rows)
    assert len(flags) == 1
    assert "degenerate classifier" in flags[0] and "100 % of 40 examples on test" in flags[0]


def test_a_probe_whose_originals_are_one_class_is_flagged():
    rows = [
        Example(id=str(i), original_prediction="entailment", prediction="neutral")
        for i in range(20)
    ]
    flags = degenerate_flags("delta", {"delta": Metric(1.0, n=20)}, rows)
    assert any("original_prediction" in f for f in flags)
    assert any("prediction is 'neutral'" in f for f in flags)
    assert any("20 examples (fewer than 30)" in f for f in flags)


def test_a_score_no_better_than_its_shuffled_control_is_flagged():
    metrics = {"attention_r2": Metric(0.10, n=100), "attention_r2_shuffled": Metric(0.12, n=100)}
    (flag,) = degenerate_flags("attention_r2", metrics, None)
    assert flag.startswith("attention_r2 = 0.1 is no higher than its shuffled control")


def test_a_healthy_result_has_no_flags():
    rows = [Example(id=str(i), split="dev", prediction=i % 2) for i in range(100)]
    metrics = {"accuracy": Metric(0.8, n=100), "r2": Metric(0.9), "r2_shuffled": Metric(0.1)}
    assert degenerate_flags("accuracy", metrics, rows) == []


def test_flags_reach_the_result_and_every_leaderboard_table(tiny_bert: Path, tmp_path: Path):
    from posharness.api import evaluate
    from posharness.boards.views import to_markdown

    outcome = evaluate(
        f"hf:{tiny_bert}",
        "toeplitz",
        output_dir=tmp_path / "results",
        cache_dir=None,
        device="cpu",
        task_args={"toeplitz": {"length": "16", "words": "4", "controls": "2", "figures": "false"}},
    )
    (cell,) = outcome.cells
    few = [f for f in cell.result.flags if "fewer than 30" in f]
    assert few, cell.result.flags  # four probe words: the main metric's n is small
    (row,) = outcome.leaderboard.rows
    assert row.flags["toeplitz"] == cell.result.flags
    markdown = to_markdown(outcome.leaderboard)
    assert " !" in markdown and few[0] in markdown


def test_summaries_list_every_flag_of_their_cells():
    from types import SimpleNamespace

    from posharness.run.flags import flag_section

    flagged = SimpleNamespace(
        task=SimpleNamespace(name="shuffle_sr"),
        mode=SimpleNamespace(name="both"),
        flags=["degenerate classifier: x"],
    )
    clean = SimpleNamespace(task=flagged.task, mode=SimpleNamespace(name="positional"), flags=[])
    lines = flag_section([flagged, clean])
    assert lines[-1] == "- **shuffle_sr · both**: degenerate classifier: x"
    assert flag_section([clean]) == []


def test_summaries_of_limited_cells_say_so_and_full_ones_do_not():
    from types import SimpleNamespace

    from posharness.run.flags import limit_lines

    limited = SimpleNamespace(limit=10, train_limit=200)
    full = SimpleNamespace(limit=None, train_limit=None)
    (line, _) = limit_lines([limited, full])
    assert "at most 10 evaluation examples" in line and "at most 200 training examples" in line
    assert limit_lines([full]) == []
