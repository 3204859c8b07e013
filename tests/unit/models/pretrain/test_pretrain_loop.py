"""Masked-LM pretraining: masking, learning, determinism, checkpoints and resuming."""

from __future__ import annotations

import json

import pytest
import torch

from posharness.base.errors import DataError, OptionError
from posharness.models.pretrain.checkpoint import latest_checkpoint
from posharness.models.pretrain.loop import (
    PretrainSettings,
    mask_tokens,
    masked_lm_masker,
    pretrain,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


def tiny_bert(vocab_size: int):
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return BertForMaskedLM(config)


def dropout_free_bert(vocab_size: int):
    """The tiny BERT with every dropout off: training is then a function of the data."""
    model = tiny_bert(vocab_size)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    return model


def settings(**changes) -> PretrainSettings:
    values = dict(steps=6, batch_size=8, block_size=16, learning_rate=1e-3, log_every=1)
    return PretrainSettings(**(values | changes))


def losses(log_path) -> list[float]:
    return [r["loss"] for r in json.loads(log_path.read_text())["records"]]


def test_masking_takes_15_percent_and_splits_them_80_10_10(tokenizer):
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, len(tokenizer), (400, 64), generator=generator)
    ids[:, 0], ids[:, -1] = tokenizer.cls_token_id, tokenizer.sep_token_id
    specials = torch.tensor(tokenizer.all_special_ids)
    inputs, labels = mask_tokens(ids, masked_lm_masker(tokenizer, 0.15), specials, seed=1)
    chosen = labels != -100
    assert not chosen[:, 0].any() and not chosen[:, -1].any()  # [CLS]/[SEP] never masked
    assert torch.equal(labels[chosen], ids[chosen])
    # 400 x 62 = 24,800 candidates: the rate's standard deviation is about 0.0023.
    assert abs(chosen.float().mean().item() * 64 / 62 - 0.15) < 0.01
    n = chosen.sum().item()  # ~3,700: each share's standard deviation is below 0.007
    as_mask = (inputs[chosen] == tokenizer.mask_token_id).sum().item() / n
    kept = (inputs[chosen] == ids[chosen]).sum().item() / n
    assert abs(as_mask - 0.8) < 0.03
    assert abs(kept - 0.1) < 0.025  # a random draw equals the original 1 time in ~90
    assert abs(1 - as_mask - kept - 0.1) < 0.025
    assert torch.equal(inputs[~chosen], ids[~chosen])


def test_the_loss_falls_over_30_steps_and_is_logged_with_a_curve(tokenizer, corpus, tmp_path):
    outcome = pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=30, save_every=30))
    curve = losses(outcome.log_path)
    assert len(curve) == 30
    assert sum(curve[-5:]) / 5 < sum(curve[:5]) / 5 - 0.3
    assert outcome.final_loss == curve[-1]
    log = json.loads(outcome.log_path.read_text())
    assert log["settings"]["learning_rate"] == 1e-3 and log["settings"]["steps"] == 30
    assert log["corpus"]["name"] == corpus.name and len(log["corpus"]["sha256"]) == 64
    assert "path" not in log["corpus"]  # no path of the machine (issue 39)
    assert log["model"]["hidden_size"] == 32 and log["model"]["class"] == "BertForMaskedLM"
    assert set(log["records"][0]) == {"step", "loss", "learning_rate", "seconds"}
    rates = [r["learning_rate"] for r in log["records"]]
    assert rates[0] < rates[1] and rates[-1] < rates[10]  # linear warmup, then decay
    assert outcome.curve_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_same_seed_gives_identical_losses(tokenizer, corpus, tmp_path):
    runs = [
        losses(
            pretrain(tiny_bert, tokenizer, corpus, tmp_path / name, settings(seed=seed)).log_path
        )
        for name, seed in (("a", 7), ("b", 7), ("c", 8))
    ]
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


class Killed(Exception):
    pass


def test_a_resumed_run_matches_an_uninterrupted_one(tokenizer, corpus, tmp_path):
    straight = pretrain(tiny_bert, tokenizer, corpus, tmp_path / "straight", settings())

    def kill_after_step_4(step, loss):
        if step == 4:
            raise Killed

    interrupted = tmp_path / "interrupted"
    with pytest.raises(Killed):
        pretrain(
            tiny_bert,
            tokenizer,
            corpus,
            interrupted,
            settings(save_every=3),
            progress=kill_after_step_4,
        )
    assert latest_checkpoint(interrupted).step == 3
    resumed = pretrain(tiny_bert, tokenizer, corpus, interrupted, settings(save_every=3))

    assert resumed.resumed_from == 3
    assert [r["step"] for r in json.loads(resumed.log_path.read_text())["records"]] == [
        1,
        2,
        3,
        4,
        5,
        6,
    ]
    assert losses(resumed.log_path) == pytest.approx(losses(straight.log_path), abs=1e-6)
    from safetensors.torch import load_file

    expected = load_file(straight.checkpoint / "model.safetensors")
    actual = load_file(resumed.checkpoint / "model.safetensors")
    assert expected.keys() == actual.keys()
    for name, tensor in expected.items():
        torch.testing.assert_close(actual[name], tensor, atol=1e-6, rtol=0)


def test_checkpoints_load_with_auto_model_for_masked_lm(tokenizer, corpus, tmp_path):
    from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

    outcome = pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=4, save_every=2))
    assert outcome.checkpoint == tmp_path / "final"
    for folder in (tmp_path / "checkpoint-2", tmp_path / "checkpoint-4", outcome.checkpoint):
        model = AutoModelForMaskedLM.from_pretrained(folder)
        assert model.config.vocab_size == len(tokenizer)
        assert AutoTokenizer.from_pretrained(folder).get_vocab() == tokenizer.get_vocab()
    assert type(AutoModel.from_pretrained(outcome.checkpoint)).__name__ == "BertModel"
    assert (tmp_path / "checkpoint-4" / "optimizer.pt").exists()
    assert not (outcome.checkpoint / "optimizer.pt").exists()


def test_a_checkpoint_cut_short_is_never_resumed_from(tokenizer, corpus, tmp_path, monkeypatch):
    import posharness.models.pretrain.checkpoint as checkpoint

    real_save = torch.save

    def dies_on_the_second_optimizer(obj, path, *args, **kwargs):
        if str(path).endswith("optimizer.pt") and "checkpoint-2" in str(path):
            raise Killed
        return real_save(obj, path, *args, **kwargs)

    monkeypatch.setattr(checkpoint.torch, "save", dies_on_the_second_optimizer)
    with pytest.raises(Killed):
        pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=2, save_every=1))
    assert latest_checkpoint(tmp_path).step == 1
    assert not (tmp_path / "checkpoint-2").exists()
    assert (tmp_path / ".checkpoint-2.tmp").exists()  # what the kill left behind
    monkeypatch.undo()
    resumed = pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=2, save_every=1))
    assert resumed.resumed_from == 1
    assert not list(tmp_path.glob(".*.tmp"))


def test_other_settings_with_existing_checkpoints_are_refused(tokenizer, corpus, tmp_path):
    pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=2))
    with pytest.raises(OptionError, match="another learning_rate: use a new --out or the same"):
        pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=2, learning_rate=2e-3))

    def wider(vocab_size):
        model = tiny_bert(vocab_size)
        model.config.hidden_dropout_prob = 0.2
        return model

    with pytest.raises(OptionError, match="another model configuration"):
        pretrain(wider, tokenizer, corpus, tmp_path, settings(steps=2))
    # Only the reporting changed: the same run, found finished, is not trained again.
    again = pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(steps=2, log_every=5))
    assert again.resumed_from == 2 and len(losses(again.log_path)) == 2


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"steps": 0}, "--steps 0: must be a positive integer"),
        ({"batch_size": -1}, "--batch-size -1: must be a positive integer"),
        ({"block_size": 4}, "--block-size 4: must be at least 8"),
        ({"mask_probability": 0.0}, "--mask-probability 0.0: must lie strictly between 0 and 1"),
        ({"mask_probability": 1.0}, "--mask-probability 1.0: must lie strictly between 0 and 1"),
    ],
)
def test_bad_settings_are_one_line_option_errors(changes, message):
    with pytest.raises(OptionError, match=message) as caught:
        settings(**changes)
    assert "\n" not in str(caught.value)


def test_blocks_longer_than_the_model_s_positions_are_refused(tokenizer, corpus, tmp_path):
    with pytest.raises(OptionError, match="--block-size 128 exceeds the model's max_position"):
        pretrain(tiny_bert, tokenizer, corpus, tmp_path, settings(block_size=128))


def test_a_missing_corpus_is_a_one_line_data_error(tokenizer, tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        pretrain(tiny_bert, tokenizer, tmp_path / "nowhere", tmp_path / "out", settings())
