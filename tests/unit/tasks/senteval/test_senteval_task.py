"""``posharness run --tasks senteval_probing``: per-layer probes, Table 9, features once."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from posharness.tasks.senteval.catalog import TASKS
from posharness.tasks.senteval.features import SentenceFeatureStore, sentence_key
from tests.cli_helpers import run_isolated
from tests.unit.tasks.senteval.probing_data import probing_lines, write_probing_folder


def run(tmp_path: Path, model: Path, tasks: str, *args: str) -> int:
    probes = tmp_path / "probes"
    return run_isolated(
        tmp_path, "--model", f"hf:{model}", "--tasks", tasks,
        "--task-arg", f"senteval_probing.probes={probes}", *args,
    )  # fmt: skip


def result(tmp_path: Path, task: str, mode: str = "both") -> dict:
    path = next((tmp_path / "results").rglob(f"{task}__{mode}__seed0.json"))
    return json.loads(path.read_text())


def test_the_group_probes_every_layer_and_writes_table9(tmp_path: Path, tiny_bert: Path) -> None:
    write_probing_folder(tmp_path / "probes")
    assert run(tmp_path, tiny_bert, "senteval_probing") == 0
    for task in TASKS:
        out = result(tmp_path, task.name)
        m, details = out["metrics"], out["details"]
        assert len(details["layers"]) == 3  # embeddings output + 2 layers of the tiny BERT
        best = int(m["best_layer"]["value"])
        dev = [p["dev_accuracy"] for p in details["layers"]]
        assert dev[best] == max(dev) and best == dev.index(max(dev))  # ties: lower layer
        assert m["accuracy"]["value"] == details["layers"][best]["test_accuracy"]
        assert m["accuracy"]["n"] == 16 and details["sizes"] == {"tr": 48, "va": 16, "te": 16}
        assert m["selectivity"]["value"] == pytest.approx(
            m["accuracy"]["value"] - m["control_accuracy"]["value"]
        )
        assert m["chance"]["value"] == pytest.approx(1 / len(details["classes"]))
        expected = "logreg" if task.name == "wc" else "mlp"
        assert details["protocol"]["classifier"] == expected
        assert len(details["protocol"]["grid"]) == (4 if expected == "logreg" else 36)
        examples = [json.loads(line) for line in _examples(tmp_path, out)]
        assert len(examples) == 16
        assert np.mean([e["accuracy"] for e in examples]) == pytest.approx(m["accuracy"]["value"])
        # selectivity is a paired difference: its per-sentence values average to it
        assert np.mean([e["selectivity"] for e in examples]) == pytest.approx(
            m["selectivity"]["value"]
        )
        assert {e["selectivity"] for e in examples} <= {-1.0, 0.0, 1.0}
        assert all(e["id"].isdigit() for e in examples)  # line numbers of the probing file
    summary = next((tmp_path / "results").rglob("senteval_probing__seed0__summary"))
    table = (summary / "table9.md").read_text()
    assert "| SentLen | WC | TreeDepth |" in table and "*Chen et al. TUPE-p*" in table
    assert (summary / "table9_layers.png").stat().st_size > 0
    cell = next((tmp_path / "results").rglob("bshift__both__seed0"))
    assert (cell / "layers.png").stat().st_size > 0


def _examples(tmp_path: Path, out: dict) -> list[str]:
    folder = next((tmp_path / "results").rglob(f"{out['task']['name']}__both__seed0.json")).parent
    return (folder / out["examples_file"]).read_text().splitlines()


def test_a_sentence_is_encoded_once_per_model_and_mode(tmp_path: Path, tiny_bert: Path) -> None:
    """bshift and somo share their sentences here: the second task and a rerun encode
    nothing; another pooling is another store."""
    folder = write_probing_folder(tmp_path / "probes", ["bshift"])
    lines = [x.replace("\tI\t", "\tC\t") for x in probing_lines("bshift")]
    (folder / "odd_man_out.txt").write_text("\n".join(lines) + "\n")
    assert run(tmp_path, tiny_bert, "bshift,somo") == 0
    first, second = result(tmp_path, "bshift"), result(tmp_path, "somo")
    assert first["task"]["settings"]["sentences_encoded"] == 80
    assert second["task"]["settings"]["sentences_encoded"] == 0
    assert second["task"]["settings"]["sentences_reused"] == 80
    assert run(tmp_path, tiny_bert, "bshift", "--overwrite") == 0
    assert result(tmp_path, "bshift")["task"]["settings"]["sentences_encoded"] == 0
    other_board = ("--leaderboard", str(tmp_path / "cls.json"))
    assert run(tmp_path, tiny_bert, "bshift", "--task-arg", "bshift.pooling=cls", *other_board) == 0
    cls_results = [
        json.loads(p.read_text()) for p in (tmp_path / "results").rglob("bshift__*.json")
    ]
    assert any(
        r["task"]["settings"].get("pooling") == "cls"
        and r["task"]["settings"]["sentences_encoded"] == 80
        for r in cls_results
    )


def test_limits_cap_train_and_evaluation_splits(tmp_path: Path, tiny_bert: Path) -> None:
    write_probing_folder(tmp_path / "probes", ["tense"])
    args = ("--limit", "10", "--train-limit", "20", "--task-arg", "tense.control=false")
    assert run(tmp_path, tiny_bert, "tense", *args) == 0
    path = next((tmp_path / "results").rglob("tense__both__seed0*.json"))
    out = json.loads(path.read_text())
    assert out["details"]["sizes"] == {"tr": 20, "va": 10, "te": 10}
    assert "control_accuracy" not in out["metrics"]


def test_the_store_gives_back_each_layer_in_the_order_asked(tmp_path: Path) -> None:
    store = SentenceFeatureStore(tmp_path / "store")
    rng = np.random.default_rng(0)
    sentences = [f"sentence {i}" for i in range(10)]
    layers = [rng.normal(size=(10, 4)).astype(np.float32) for _ in range(3)]
    store.add(sentences[:6], [a[:6] for a in layers])
    store.add(sentences[6:], [a[6:] for a in layers])
    again = SentenceFeatureStore(tmp_path / "store")  # a later process reads the chunks
    order = [9, 0, 5, 6, 3]
    assert again.layers([sentences[0]]) == 3
    for layer in range(3):
        assert np.array_equal(
            again.layer([sentences[i] for i in order], layer), layers[layer][order]
        )
    assert again.missing([*sentences, "new one", "new one"]) == ["new one"]
    assert len({sentence_key(s) for s in sentences}) == 10
