"""MNLI's ``mean_accuracy``, the mean of matched and mismatched accuracy that Chen et al.
2023 print for MNLI (App. A.4): recorded by both the quick and the chen2023 protocol, with
its own n and interval, and per-example values a paired test reads; every other MNLI
metric is left as it was. On tiny files the test writes, with a tiny random BERT."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from posharness.boards.cell_outputs import CellOutputs
from posharness.boards.compare import paired_test
from posharness.boards.schema import Score
from posharness.contracts.examples import Example
from posharness.contracts.metric_types import MEAN_CONTINUOUS, metric_type
from posharness.tasks.finetune.profiles import PROFILES
from tests.cli_helpers import run_isolated
from tests.conftest import WORDS

HEADER = "index\tsentence1\tsentence2\tgold_label\n"
LABELS = ("entailment", "neutral", "contradiction")
SIZES = {"train": 24, "dev_matched": 12, "dev_mismatched": 9}  # unequal on purpose


def write_mnli(root: Path) -> None:
    folder = root / "glue_data" / "MNLI"
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(3)

    def sentence() -> str:
        return " ".join(rng.sample(WORDS[:40], rng.randint(3, 8)))

    for split, size in SIZES.items():
        rows = [f"{i}\t{sentence()}\t{sentence()}\t{LABELS[i % 3]}" for i in range(size)]
        (folder / f"{split}.tsv").write_text(HEADER + "\n".join(rows) + "\n")


def mnli_cell(tmp_path: Path, model: Path, *args: str) -> tuple[dict, list[dict]]:
    write_mnli(tmp_path / "data")
    code = run_isolated(
        tmp_path, "--model", f"hf:{model}", "--tasks", "mnli",
        "--task-arg", "mnli.epochs=1", "--task-arg", "mnli.bootstrap=200", *args,
    )  # fmt: skip
    assert code == 0
    path = next((tmp_path / "results").rglob("mnli__both__seed0.json"))
    out = json.loads(path.read_text())
    lines = (path.parent / out["examples_file"]).read_text().splitlines()
    return out, [json.loads(line) for line in lines]


def test_mnli_declares_the_mean_beside_matched_and_mismatched() -> None:
    mnli = PROFILES["mnli"]
    assert mnli.headline == ("matched_accuracy", "mismatched_accuracy", "mean_accuracy")
    assert mnli.main_metric == "matched_accuracy"  # unchanged: boards keep their main column
    assert mnli.parts("mean_accuracy") == [
        ("matched_", "dev_matched", "accuracy"),
        ("mismatched_", "dev_mismatched", "accuracy"),
    ]
    assert metric_type("mnli", "mean_accuracy") == MEAN_CONTINUOUS
    assert metric_type("mnli", "matched_accuracy").outcome == "binary"


def test_sickr_reports_its_dev_spearman() -> None:
    """Chen et al. read SICK-R on dev ("we evaluate the fine-tuned model on the Dev set")."""
    assert "dev_spearman" in PROFILES["sickr"].reported
    assert PROFILES["sickr"].main_metric == "spearman"  # test, as before


@pytest.mark.parametrize("protocol", ["quick", "chen2023"])
def test_both_protocols_record_the_mean_with_its_n_interval_and_examples(
    tmp_path: Path, tiny_bert: Path, protocol: str
) -> None:
    out, rows = mnli_cell(tmp_path, tiny_bert, "--task-arg", f"mnli.protocol={protocol}")
    metrics = out["metrics"]
    matched, mismatched = metrics["matched_accuracy"], metrics["mismatched_accuracy"]
    mean = metrics["mean_accuracy"]
    assert mean["value"] == pytest.approx((matched["value"] + mismatched["value"]) / 2)
    assert (matched["n"], mismatched["n"], mean["n"]) == (12, 9, 21)
    assert mean["ci_low"] <= mean["value"] <= mean["ci_high"] and mean["stderr"] > 0
    assert out["task"]["version"] == "2"
    # one value per example of both sets, whose mean is the metric (what compare checks)
    shares = [row["mean_accuracy"] for row in rows]
    assert len(shares) == 21
    if protocol == "quick":  # one run: its examples reproduce the value exactly
        assert sum(shares) / 21 == pytest.approx(mean["value"], abs=1e-12)
    else:  # five rates, one run each, mean over rates; each run records the mean too
        assert len(out["details"]["runs"]) == 5
        per_run = [run["scores"]["mean_accuracy"] for run in out["details"]["runs"]]
        assert sum(per_run) / 5 == pytest.approx(mean["value"])
        assert set(out["details"]["per_rate"]["5e-05"]) >= {"mean_accuracy", "matched_accuracy"}


def test_a_paired_test_reads_the_mean_of_weighted_examples() -> None:
    """A matched correct answer weighs N / (2 n_matched), a mismatched one N / (2 n_mm): the
    mean over all examples is the mean accuracy, and compare tests it as a continuous mean."""

    def outputs(correct: list[int]) -> CellOutputs:
        weights = [21 / 24] * 12 + [21 / 18] * 9
        pairs = enumerate(zip(correct, weights, strict=True))
        return CellOutputs({f"{i}": Example(id=f"{i}", mean_accuracy=c * w) for i, (c, w) in pairs})

    a = [1] * 12 + [1] * 9
    b = [1] * 6 + [0] * 6 + [1] * 3 + [0] * 6
    value_b = (6 / 12 + 3 / 9) / 2
    scores = Score(mean=1.0, n_seeds=1), Score(mean=value_b, n_seeds=1)
    test, note = paired_test(outputs(a), outputs(b), "mean_accuracy", MEAN_CONTINUOUS, *scores)
    assert test is not None, note
    assert test.n == 21 and test.delta == pytest.approx(value_b - 1.0)  # B - A
    assert test.p_value < 0.01
