"""A tiny study on the staged data, end to end: two zoo PEs pretrained a few steps on
WikiText-2, geometry, dependency heads on UD EWT, a small fine-tune, the SNLI classifier and
the word-swap probes — every table written; killed with SIGKILL in pretraining and in
fine-tuning, the same command finishes it with the uninterrupted study's numbers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posharness.base.errors import StagesFailed
from posharness.base.faults import ENV_VAR
from posharness.study.workflow import run_study
from tests.conftest import shared_data_dir

pytestmark = [pytest.mark.integration, pytest.mark.slow]

TABLES = ["chen2023.table1", "chen2023.table3", "chen2023.fig2", "chen2023.table9",
          "chen2023.tablea3", "tupe2021.glue", "tisa2021.toeplitz"]  # fmt: skip
SNLI_TRAIN = "snli/train_subset_1pct/snli_1.0_train_0.01.jsonl"


def _study(folder: Path, data: Path) -> Path:
    folder.mkdir()
    corpus = folder / "corpus.txt"
    corpus.write_text((data / "wikitext-2" / "wiki.valid.tokens").read_text()[:300_000])
    text = f"""
[study]
name = "staged"
tables = {json.dumps(TABLES)}
baselines = ["bert-a"]
allow_missing = true
notes = ["a CI-sized study: nothing here is a finding"]

[[model]]
name = "bert-a"

[[model]]
name = "rope"

[pretrain]
size = "tiny"
corpus = "corpus.txt"
steps = 4
batch_size = 4
block_size = 64
vocab_size = 800
save_every = 2

[[run]]
tasks = ["locality_symmetry", "toeplitz", "dep_heads"]
modes = ["both", "positional"]
data_dir = "{data}"
limit = 40
device = "cpu"
no_cache = true

[run.task_args]
locality_symmetry = {{ words = "10", length = "64" }}
toeplitz = {{ length = "64" }}

[[run]]
tasks = ["snli", "shuffle", "rte", "qnli"]
data_dir = "{data}"
limit = 40
train_limit = 48
device = "cpu"
no_cache = true

[run.task_args]
snli = {{ train = "{data / SNLI_TRAIN}", max_length = "64" }}
rte = {{ max_length = "64" }}
"""
    path = folder / "study.toml"
    path.write_text(text.lstrip())
    return path


def _scores(folder: Path) -> dict[str, float]:
    return {
        f"{board.stem}/{row['mode']}/{key}": score["mean"]
        for board in sorted((folder / "boards").glob("*.json"))
        for row in json.loads(board.read_text())["rows"]
        for key, score in row["scores"].items()
    }


def test_a_staged_study_writes_every_table_and_resumes_after_kills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = shared_data_dir()
    if data is None:
        pytest.skip("../shared/data is absent (set POSHARNESS_SHARED_DATA to its folder)")
    reference = _study(tmp_path / "a", data)
    run_study(reference, lambda line: None)
    tables = reference.parent / "study" / "tables"
    for table in TABLES:
        assert (tables / f"{table}.md").is_file() and (tables / f"{table}.tex").is_file()
    table3 = (tables / "chen2023.table3.md").read_text()
    row = next(line for line in table3.splitlines() if line.startswith("| rope | both |"))
    assert "not run" not in row and "not in study" not in row  # SNLI, Shuffle-x, SR all ran
    assert "| data missing |" in (tables / "chen2023.table1.md").read_text()  # QNLI, MNLI, QQP
    assert "BERT (published)" in table3
    expected = _scores(reference.parent / "study")

    interrupted = _study(tmp_path / "b", data)
    monkeypatch.setenv(ENV_VAR, "pretrain-step:3")  # every pretraining child dies at step 3
    with pytest.raises(StagesFailed):
        run_study(interrupted, lambda line: None)
    monkeypatch.delenv(ENV_VAR)
    env = {**os.environ, ENV_VAR: "train-step:5"}  # the study dies fine-tuning
    command = [sys.executable, "-m", "posharness", "study", "run", str(interrupted)]
    killed = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200)
    assert killed.returncode == -9, killed.stderr[-2000:]
    run_study(interrupted, lambda line: None)
    assert _scores(interrupted.parent / "study") == pytest.approx(expected, rel=1e-6, abs=1e-9)
