"""Tiny studies written by the tests: zoo PEs at random weights (no pretraining) or
pretrained a few steps on a corpus the tests write."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from tests.conftest import WORDS

GEOMETRY_RUN = """
[run]
tasks = ["locality_symmetry"]
modes = ["both", "positional"]
device = "cpu"
model_args = { init = "random", size = "tiny" }
task_args = { locality_symmetry = { words = "12", length = "32" } }
"""


def write_study(folder: Path, text: str, name: str = "study.toml") -> Path:
    path = folder / name
    path.write_text(text.lstrip(), encoding="utf-8")
    return path


# Two zoo PEs at random weights (seeds = []: used as they are), the geometry tables.
RANDOM_WEIGHTS_STUDY = (
    """
[study]
name = "geometry-check"
tables = ["chen2023.fig2", "tisa2021.toeplitz"]
baselines = ["BERT-A"]

[[model]]
name = "bert-a"
label = "BERT-A"
seeds = []

[[model]]
name = "rope"
label = "RoPE"
seeds = []
"""
    + GEOMETRY_RUN
)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A few hundred lines of word salad from a small vocabulary: enough to pretrain on."""
    rng = random.Random(0)
    lines = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 20))) for _ in range(400)]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


PRETRAIN_STUDY = """
[study]
name = "pretrain-check"
tables = ["chen2023.fig2"]
baselines = ["bert-a"]

[[model]]
name = "bert-a"

[[model]]
name = "alibi"

[pretrain]
size = "tiny"
corpus = "corpus.txt"
steps = 4
batch_size = 4
block_size = 32
vocab_size = 120
save_every = 2
device = "cpu"

[run]
tasks = ["locality_symmetry"]
modes = ["both"]
device = "cpu"
task_args = { locality_symmetry = { words = "12", length = "32" } }
"""
