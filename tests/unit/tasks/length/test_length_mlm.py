"""``length_mlm``: the seeded masking (BERT's 80/10/10, the same for every model with one
tokenizer), scoring against an oracle and a random head, and runs through the harness on
a tiny zoo model with a learned absolute table."""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from posharness.base.errors import OptionError
from posharness.contracts.adapter import Mode
from posharness.tasks.length.length_mlm import LengthMLM, resolve_lengths, score
from posharness.tasks.length.mlm_head import MaskedLM, training_length
from posharness.tasks.length.mlm_masks import IGNORE, mask_block, masked_blocks

STREAM = np.random.default_rng(7).integers(5, 200, size=5000)
MASK_ID, VOCAB = 4, 200


def test_masks_are_seeded_and_identical_for_two_models_with_one_tokenizer():
    first = masked_blocks(STREAM, 62, 16, MASK_ID, VOCAB, seed=0, length=64)
    again = masked_blocks(STREAM.tolist(), 62, 16, MASK_ID, VOCAB, seed=0, length=64)
    assert np.array_equal(first.inputs, again.inputs)
    assert np.array_equal(first.labels, again.labels)
    other = masked_blocks(STREAM, 62, 16, MASK_ID, VOCAB, seed=1, length=64)
    assert not np.array_equal(first.starts, other.starts)


def test_masking_follows_berts_recipe():
    ids = STREAM[:4000]
    inputs, labels = mask_block(ids, MASK_ID, VOCAB, seed=0, length=4002, block=0)
    chosen = labels != IGNORE
    assert chosen.sum() == 600  # exactly 15 %
    assert np.array_equal(labels[chosen], ids[chosen])
    assert np.array_equal(inputs[~chosen], ids[~chosen])  # unchosen tokens untouched
    masked = (inputs[chosen] == MASK_ID).mean()
    kept = (inputs[chosen] == ids[chosen]).mean()
    assert masked == pytest.approx(0.8, abs=0.05) and kept == pytest.approx(0.1, abs=0.04)
    inputs, labels = mask_block([9, 9], MASK_ID, VOCAB, seed=0, length=4, block=0)
    assert (labels != IGNORE).sum() == 1  # at least one token per block


class FakeModel:
    """Just what ``score`` asks of an adapter: a [CLS] … [SEP] frame and a fingerprint."""

    spec = "fake"
    max_length = 4096

    def __init__(self, name: str) -> None:
        self.name = name
        self.modes = {Mode.BOTH: None}

    def fingerprint(self) -> str:
        return self.name

    def wrap_token_ids(self, ids):
        return SimpleNamespace(
            input_ids=(1, *ids, 2), special_tokens_mask=(True, *[False] * len(ids), True)
        )


def _ctx(tmp_path: Path) -> SimpleNamespace:
    from posharness.storage.cache import FeatureCache

    return SimpleNamespace(
        mode=Mode.BOTH,
        device="cpu",
        cache=FeatureCache(tmp_path / "cache"),
        progress=lambda label, total: lambda n: None,
    )


def _oracle(originals: dict[tuple[int, ...], np.ndarray]) -> MaskedLM:
    import torch

    def logits(input_ids, attention_mask):
        rows = [originals[tuple(row.tolist())] for row in input_ids]
        gold = torch.tensor(np.stack(rows))
        return torch.nn.functional.one_hot(gold, VOCAB).float() * 50.0

    return MaskedLM(logits, MASK_ID, VOCAB)


def test_an_oracle_head_scores_one_and_a_random_head_scores_chance(tmp_path: Path):
    import torch

    made = masked_blocks(STREAM, 62, 8, MASK_ID, VOCAB, seed=0, length=64)
    model = FakeModel("oracle")
    framed = {
        (1, *made.inputs[b].tolist(), 2): np.array([1, *STREAM[s : s + 62].tolist(), 2])
        for b, s in enumerate(made.starts)
    }
    correct, loss = score(
        model, _ctx(tmp_path), _oracle(framed), made.inputs, made.labels, 64, Path(__file__)
    )
    assert correct.shape == (8, 9) and correct.mean() == 1.0
    assert loss.max() < 1e-6
    generator = torch.Generator().manual_seed(0)
    noise = MaskedLM(
        lambda ids, mask: torch.randn(*ids.shape, VOCAB, generator=generator), MASK_ID, VOCAB
    )
    made = masked_blocks(STREAM, 510, 64, MASK_ID, VOCAB, seed=0, length=512)
    correct, loss = score(
        FakeModel("random"), _ctx(tmp_path), noise, made.inputs, made.labels, 512, Path(__file__)
    )
    assert correct.mean() == pytest.approx(1 / VOCAB, abs=0.004)
    assert loss.mean() > np.log(VOCAB)  # random logits: no better than uniform


def test_pseudo_log_likelihood_is_log_one_over_vocab_for_a_uniform_head_and_zero_for_a_sure_one():
    import torch

    from posharness.tasks.length.pll import token_log_likelihoods

    framed = np.array([[1, 7, 7, 7, 7, 2], [1, 7, 7, 7, 7, 2]])
    content = np.array([False, True, True, True, True, False])
    uniform = MaskedLM(lambda ids, mask: torch.zeros(*ids.shape, VOCAB), MASK_ID, VOCAB)
    values = token_log_likelihoods(uniform, framed, content, "cpu", tokens_per_batch=12)
    assert values.shape == (2, 4) and np.allclose(values, -np.log(VOCAB))
    seen = []

    def sure(ids, mask):
        seen.append(ids.clone())
        return torch.nn.functional.one_hot(torch.full_like(ids, 7), VOCAB).float() * 50.0

    values = token_log_likelihoods(MaskedLM(sure, MASK_ID, VOCAB), framed, content, "cpu", 12)
    assert np.abs(values).max() < 1e-6
    rows = torch.cat(seen)
    assert (rows == MASK_ID).sum(dim=1).tolist() == [1] * 8  # one token masked per pass


def _card(folder: Path, block_size, long_block_size=None) -> None:
    settings = {"block_size": block_size, "long_block_size": long_block_size}
    (folder / "pretraining.json").write_text(json.dumps({"recipe": {"settings": settings}}))


def test_the_training_length_is_read_from_the_card_or_given(tmp_path: Path):
    model = SimpleNamespace(folder=tmp_path, spec="bert-a@x")
    _card(tmp_path, 64)
    assert training_length(model, "") == (64, str(tmp_path / "pretraining.json"))
    _card(tmp_path, 64, 256)
    assert training_length(model, "")[0] == 256  # the long phase is the longest trained
    assert training_length(model, "100") == (100, "given")
    options = {"lengths": "", "multiples": "0.5,1,2,4,8", "train_length": "64"}
    assert resolve_lengths(model, options)[0] == (32, 64, 128, 256, 512)


@pytest.mark.parametrize("card", [None, "not json", '{"recipe": {}}'])
def test_an_unreadable_training_length_is_one_line_asking_for_it(tmp_path: Path, card):
    if card is not None:
        (tmp_path / "pretraining.json").write_text(card)
    model = SimpleNamespace(folder=tmp_path, spec="bert-a@x")
    with pytest.raises(OptionError, match="length_mlm.train_length=") as caught:
        training_length(model, "")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "options",
    [
        {"lengths": "64,0", "multiples": "1", "train_length": "64"},
        {"lengths": "", "multiples": "1,-2", "train_length": "64"},
        {"lengths": "", "multiples": "1", "train_length": "-5"},
    ],
)
def test_lengths_that_are_not_positive_are_one_line(tmp_path: Path, options):
    with pytest.raises(OptionError) as caught:
        resolve_lengths(SimpleNamespace(folder=tmp_path, spec="x"), options)
    assert "\n" not in str(caught.value) and "length_mlm." in str(caught.value)


@pytest.fixture(scope="module")
def tiny_zoo(tmp_path_factory: pytest.TempPathFactory, tiny_bert: Path) -> Path:
    """A random tiny ``bert-a`` with its MLM head and a 128-position table, carded as if
    pretrained at block size 64."""
    import torch
    from transformers import AutoTokenizer

    from posharness.models.zoo.encoder import PEForMaskedLM, config_for

    folder = tmp_path_factory.mktemp("tiny-bert-a")
    tokenizer = AutoTokenizer.from_pretrained(tiny_bert)
    config = config_for("bert-a", "tiny", vocab_size=len(tokenizer), max_position_embeddings=128)
    torch.manual_seed(0)
    PEForMaskedLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    _card(folder, 64)
    return folder


def run_mlm(model: str, tmp_path: Path, **task_args):
    from posharness.api import evaluate

    outcome = evaluate(
        model,
        "length_mlm",
        output_dir=tmp_path / "results",
        cache_dir=tmp_path / "cache",
        device="cpu",
        task_args={"length_mlm": {key: str(value) for key, value in task_args.items()}},
    )
    (cell,) = outcome.cells
    return cell


def test_a_tiny_zoo_model_runs_and_lengths_past_its_table_are_not_applicable(
    tiny_zoo: Path, tmp_path: Path
):
    started = time.perf_counter()
    result = run_mlm(f"bert-a@{tiny_zoo}", tmp_path, pll=32).result
    assert time.perf_counter() - started < 60
    metrics = {name: metric.value for name, metric in result.metrics.items()}
    assert {f"accuracy_len{n}" for n in (32, 64, 128)} <= set(metrics)
    assert "accuracy_len256" not in metrics
    assert all(0.0 <= metrics[f"accuracy_len{n}"] <= 1.0 for n in (32, 64, 128))
    assert metrics["cross_entropy_len64"] > 0
    assert metrics["pll_len32"] < 0 and "pll_len64" not in metrics  # PLL only up to 32
    reasons = result.details["not_applicable"]
    assert set(reasons) == {"256", "512"}
    assert "exceed the model's 128 positions" in reasons["256"]
    assert result.task.settings["train_length"] == 64
    assert result.task.settings["lengths"] == [32, 64, 128, 256, 512]


def test_a_model_without_an_mlm_head_is_one_line_naming_what_it_can_run(
    tiny_bert: Path, tmp_path: Path
):
    from posharness.base.errors import UnsupportedModeError

    # Known from its configuration (saved as BertModel): refused while the run is planned.
    with pytest.raises(UnsupportedModeError, match="has no masked-LM head") as caught:
        run_mlm(f"hf:{tiny_bert}", tmp_path, train_length=32)
    assert "passkey" in str(caught.value) and "\n" not in str(caught.value)


def test_the_task_is_registered():
    from posharness.tasks.length import TASKS

    assert TASKS["length_mlm"] is LengthMLM
