"""``posharness run --tasks shuffle``: the SNLI classifier is trained once and probed six ways."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posharness.tasks.shuffle.scoring import probe_result
from tests.cli_helpers import cli, run_isolated
from tests.snli_parsed import write_jsonl, write_parsed_snli


def run(tmp_path: Path, model: Path, tasks: str, *args: str, group: str = "shuffle") -> int:
    """One ``posharness run``; ``group`` names who gets one epoch and 200 resamples."""
    return run_isolated(
        tmp_path, "--model", f"hf:{model}", "--tasks", tasks,
        "--task-arg", f"{group}.epochs=1", "--task-arg", f"{group}.bootstrap=200", *args,
    )  # fmt: skip


def result(tmp_path: Path, task: str, mode: str = "both") -> dict:
    path = next((tmp_path / "results").rglob(f"{task}__{mode}__seed0.json"))
    return json.loads(path.read_text())


def test_the_group_trains_one_classifier_and_writes_table3(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_parsed_snli(tmp_path / "data")
    import posharness.tasks.finetune.runs as runs

    trained = []
    real = runs.fine_tune
    monkeypatch.setattr(runs, "fine_tune", lambda *a, **k: trained.append(1) or real(*a, **k))
    assert run(tmp_path, tiny_bert, "shuffle") == 0
    assert len(trained) == 1  # six probes, one SNLI classifier
    for task in ("shuffle_3", "shuffle_4", "shuffle_5", "shuffle_6", "shuffle_random"):
        out = result(tmp_path, task)
        m = out["metrics"]
        assert m["delta"]["value"] == pytest.approx(
            m["shuffled_accuracy"]["value"] - m["original_accuracy"]["value"]
        )
        assert m["delta"]["ci_low"] <= m["delta"]["value"] <= m["delta"]["ci_high"]
        assert 0.0 <= m["mcnemar_p"]["value"] <= 1.0
        assert out["task"]["settings"]["probe"] == task
    sr = result(tmp_path, "shuffle_sr")
    assert sr["metrics"]["delta"]["n"] == 8  # the entailment pairs of the 24 test pairs
    assert 0.0 <= sr["metrics"]["still_entailment"]["value"] <= 1.0
    summary = next((tmp_path / "results").rglob("shuffle__seed0__summary"))
    table = (summary / "table3.md").read_text()
    assert "Shuffle-SR" in table and "Chen et al. BERT-base" in table and "| both |" in table
    assert (summary / "table3.png").stat().st_size > 0


def test_a_probe_reuses_the_snli_cells_classifier(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_parsed_snli(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "snli", group="snli") == 0
    import posharness.tasks.finetune.runs as runs

    def no_training(*args, **kwargs):
        raise AssertionError("the snli cell's classifier should have been reused")

    monkeypatch.setattr(runs, "fine_tune", no_training)
    assert run(tmp_path, tiny_bert, "shuffle_random") == 0
    rows_file = result(tmp_path, "shuffle_random")["examples_file"]
    folder = next((tmp_path / "results").rglob("shuffle_random__both__seed0.json")).parent
    rows = [json.loads(line) for line in (folder / rows_file).read_text().splitlines()]
    assert rows and {"original_prediction", "prediction", "delta"} <= set(rows[0])


def test_prebuilt_probes_are_read_from_their_folder(tmp_path: Path, tiny_bert: Path) -> None:
    write_parsed_snli(tmp_path / "data")
    source = tmp_path / "data" / "snli" / "snli_1.0" / "snli_1.0_test.jsonl"
    assert cli("build-probes", "shuffle", "--snli", str(source), "--out", str(tmp_path / "p")) == 0
    probes = f"shuffle.probes={tmp_path / 'p'}"
    assert run(tmp_path, tiny_bert, "shuffle_3", "--task-arg", probes) == 0
    out = result(tmp_path, "shuffle_3")
    assert out["task"]["settings"]["probe_source"]["file"].endswith("shuffle_3.jsonl")
    probe_size = len((tmp_path / "p" / "shuffle_3.jsonl").read_text().splitlines())
    assert out["metrics"]["delta"]["n"] == probe_size


def test_an_empty_or_broken_probe_file_fails_in_one_line_before_any_model_loads(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_parsed_snli(tmp_path / "data")
    probes = tmp_path / "p"
    write_jsonl(probes / "shuffle_3.jsonl", [])
    assert run(tmp_path, tiny_bert, "shuffle_3", "--task-arg", f"shuffle.probes={probes}") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "probe shuffle_3 has no records" in err
    write_jsonl(probes / "shuffle_3.jsonl", ['{"id": 1'])
    assert run(tmp_path, tiny_bert, "shuffle_3", "--task-arg", f"shuffle.probes={probes}") == 2
    assert "shuffle_3.jsonl:1: not a JSON line" in capsys.readouterr().err
    assert not (tmp_path / "results").exists() or not list((tmp_path / "results").rglob("*.json"))


def test_scores_count_flips_and_test_them_on_the_same_items() -> None:
    records = [
        {
            "id": str(i),
            "label": "contradiction",
            "original": {"label": "entailment"},
            "change": {"side": "premise"},
        }
        for i in range(4)
    ]
    original = np.array([0, 0, 0, 1])  # three right on the originals
    changed = np.array([0, 2, 0, 2])  # two swaps still called entailment
    result = probe_result("shuffle_sr", records, original, changed, 200, 0)
    m = result.metrics
    assert m["original_accuracy"].value == 0.75 and m["shuffled_accuracy"].value == 0.5
    assert m["delta"].value == -0.25
    assert (m["flipped_to_wrong"].value, m["flipped_to_right"].value) == (2.0, 1.0)
    assert m["still_entailment"].value == 0.5
    assert m["prediction_changed"].value == 0.5
    assert result.examples[1].value("delta") == 0.0 and result.examples[3].value("delta") == 1.0
