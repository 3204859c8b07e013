"""``posharness pretrain`` on one real WikiExtractor file, then the checkpoint measured.

One file of ``../shared/data/wikipedia_en_partial`` (about 1 MB) and the tiny preset keep
this under a minute on two cores; the full comparison of schemes at mini size is in
leaderboards/README.md.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import cli
from tests.conftest import shared_data_dir

pytestmark = pytest.mark.integration

WIKI_FILE = Path("wikipedia_en_partial") / "AA" / "wiki_00"


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    data = shared_data_dir()
    if data is None or not (data / WIKI_FILE).is_file():
        pytest.skip("../shared/data/wikipedia_en_partial is absent: no corpus to pretrain on")
    out = tmp_path_factory.mktemp("pretrain") / "bert-a-star"
    code = cli(
        "pretrain", "--model", "bert-a-star", "--size", "tiny", "--corpus", str(data / WIKI_FILE),
        "--steps", "150", "--batch-size", "16", "--block-size", "64", "--vocab-size", "4000",
        "--learning-rate", "2e-3", "--save-every", "50", "--device", "cpu", "--out", str(out),
    )  # fmt: skip
    assert code == 0
    return out


def test_the_masked_lm_loss_falls_on_real_text(run_folder: Path) -> None:
    records = json.loads((run_folder / "loss_log.json").read_text())["records"]
    assert records[-1]["step"] == 150
    assert records[-1]["loss"] < records[0]["loss"] - 0.5  # from about ln(4000) = 8.3


def test_the_trained_checkpoint_is_measured_in_every_mode(run_folder: Path, tmp_path: Path) -> None:
    code = cli(
        "run", "--model", f"bert-a-star@{run_folder / 'final'}", "--tasks", "locality_symmetry",
        "--mode", "both,contextual,positional", "--device", "cpu",
        "--task-arg", "locality_symmetry.words=8", "--task-arg", "locality_symmetry.length=48",
        "--output-dir", str(tmp_path / "results"), "--cache-dir", str(tmp_path / "cache"),
        "--leaderboard", str(tmp_path / "board.json"),
    )  # fmt: skip
    assert code == 0
    results = [json.loads(p.read_text()) for p in (tmp_path / "results").rglob("*__seed0.json")]
    assert {r["mode"]["name"] for r in results} == {"both", "contextual", "positional"}
    for result in results:
        assert 0.0 < result["metrics"]["locality"]["value"] <= 1.0
