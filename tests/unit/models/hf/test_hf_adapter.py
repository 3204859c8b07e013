"""The Hugging Face adapter on a tiny random BERT written by the test (no download)."""

from __future__ import annotations

import pytest
import torch

from posharness.base.errors import ModelLoadError
from posharness.compute.batching import BatchedEncoder, pad_batch
from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode
from posharness.contracts.model_spec import LoadOptions, build_adapter, parse_model_spec
from posharness.models.hf.adapter import HFEncoderAdapter
from posharness.models.hf.builders import build_hf
from tests.conftest import write_tiny_bert


@pytest.fixture()
def adapter(tiny_bert):
    return build_adapter(parse_model_spec(f"hf:{tiny_bert}"), LoadOptions(device="cpu"))


def test_encode_matches_the_unwrapped_transformers_model(adapter, tiny_bert):
    from transformers import AutoModel, AutoTokenizer

    texts = ["the man plays the guitar on stage", "a dog runs"]
    reference = AutoModel.from_pretrained(tiny_bert, attn_implementation="eager").eval()
    enc = AutoTokenizer.from_pretrained(tiny_bert)(texts, padding=True, return_tensors="pt")
    with torch.no_grad():
        expected = reference(**enc, output_attentions=True, output_hidden_states=True)
    batch = pad_batch(adapter.tokenize(texts), adapter.pad_token_id)
    out = adapter.encode(batch, Mode.BOTH, frozenset({HIDDEN, ATTENTIONS}))
    assert len(out.hidden_states) == adapter.num_layers + 1
    assert len(out.attentions) == adapter.num_layers
    torch.testing.assert_close(out.hidden_states[-1], expected.hidden_states[-1], atol=1e-5, rtol=0)
    torch.testing.assert_close(out.attentions[0], expected.attentions[0], atol=1e-6, rtol=0)
    assert out.attn_implementation == "eager"


def test_tokenize_marks_special_tokens_and_word_ids(adapter):
    (item,) = adapter.tokenize(["the players"])  # "players" is not in the vocab → pieces
    assert item.special_tokens_mask[0] and item.special_tokens_mask[-1]
    assert item.word_ids[0] is None and item.word_ids[-1] is None
    assert item.word_ids[1] == 0
    assert set(w for w in item.word_ids if w is not None) == {0, 1}


def test_pre_split_words_keep_their_word_ids(adapter):
    (item,) = adapter.tokenize([["a", "dog", "runs"]])
    assert [w for w in item.word_ids if w is not None] == [0, 1, 2]


def test_padding_receives_no_attention(adapter):
    items = adapter.tokenize(["the man plays the guitar on stage", "a dog"])
    batch = pad_batch(items, adapter.pad_token_id)
    out = adapter.encode(batch, Mode.BOTH, frozenset({ATTENTIONS}))
    short = len(items[1])
    for layer in out.attentions:
        assert float(layer[1, :, :short, short:].abs().max()) < 1e-6
        row_sums = layer[1, :, :short, :short].sum(-1)
        torch.testing.assert_close(row_sums, torch.ones_like(row_sums), atol=1e-5, rtol=0)


def test_batched_encoder_restores_the_original_order(adapter):
    texts = ["a", "the man plays the guitar on stage", "a dog runs in the park"]
    items = adapter.tokenize(texts)
    encoder = BatchedEncoder(adapter, Mode.BOTH, frozenset({HIDDEN}), batch_size=2)
    by_index = {}
    for indices, out in encoder.batches(items):
        for row, index in enumerate(indices):
            by_index[index] = out.hidden_states[-1][row, : len(items[index])]
    assert encoder.log.sizes_used == [2, 1]
    for index in range(len(texts)):
        alone = adapter.encode(
            pad_batch([items[index]], adapter.pad_token_id), Mode.BOTH, frozenset({HIDDEN})
        )
        torch.testing.assert_close(by_index[index], alone.hidden_states[-1][0], atol=1e-5, rtol=0)


def test_auto_batch_size_halves_on_out_of_memory(adapter, monkeypatch):
    real_encode = adapter.encode
    calls = []

    def encode_with_memory_limit(batch, mode, want):
        calls.append(batch.size)
        if batch.size > 8:
            raise torch.OutOfMemoryError("CUDA out of memory (simulated limit of 8 sequences)")
        return real_encode(batch, mode, want)

    monkeypatch.setattr(adapter, "encode", encode_with_memory_limit)
    items = adapter.tokenize(["a dog runs"] * 20)
    encoder = BatchedEncoder(adapter, Mode.BOTH, frozenset({HIDDEN}), batch_size="auto")
    seen = sum(len(indices) for indices, _ in encoder.batches(items))
    assert seen == 20
    assert encoder.log.halvings == 2  # 32 → 16 → 8
    assert max(encoder.log.sizes_used) == 8


def test_fixed_batch_size_does_not_hide_out_of_memory(adapter, monkeypatch):
    def always_oom(batch, mode, want):
        raise torch.OutOfMemoryError("out of memory")

    monkeypatch.setattr(adapter, "encode", always_oom)
    encoder = BatchedEncoder(adapter, Mode.BOTH, frozenset({HIDDEN}), batch_size=4)
    with pytest.raises(torch.OutOfMemoryError):
        list(encoder.batches(adapter.tokenize(["a dog"])))


def test_fingerprint_changes_with_weights_and_dtype(tiny_bert, tmp_path):
    other = write_tiny_bert(tmp_path / "other", seed=1)
    base = build_hf(str(tiny_bert), LoadOptions(device="cpu"))
    assert base.fingerprint() == build_hf(str(tiny_bert), LoadOptions(device="cpu")).fingerprint()
    assert base.fingerprint() != build_hf(str(other), LoadOptions(device="cpu")).fingerprint()
    half = build_hf(str(tiny_bert), LoadOptions(device="cpu", dtype="bfloat16"))
    assert base.fingerprint() != half.fingerprint()


def test_construction_does_not_load_weights(tiny_bert):
    adapter = HFEncoderAdapter(tiny_bert, LoadOptions(device="cpu"))
    adapter.fingerprint()
    assert adapter._model is None


def test_probe_vocabulary_has_only_whole_alphabetic_words(adapter):
    vocabulary = adapter.probe_vocabulary()
    words = [w for w, _ in vocabulary]
    assert "man" in words and "guitar" in words
    assert not any(w.startswith("##") or len(w) < 2 or w.startswith("[") for w in words)


def test_wrap_token_ids_adds_cls_and_sep(adapter):
    item = adapter.wrap_token_ids([42, 42, 42])
    assert item.input_ids[0] == adapter.tokenizer.cls_token_id
    assert item.input_ids[-1] == adapter.tokenizer.sep_token_id
    assert item.special_tokens_mask == (True, False, False, False, True)


def test_position_table_is_exposed(adapter):
    table = adapter.position_embeddings()
    assert tuple(table.shape) == (64, 32)


def test_missing_local_folder_fails_fast_with_one_line(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist") as info:
        build_hf(str(tmp_path / "nope") + "/", LoadOptions())
    assert "\n" not in str(info.value)


def test_folder_without_config_is_rejected(tmp_path):
    with pytest.raises(ModelLoadError, match="config.json"):
        build_hf(str(tmp_path), LoadOptions())


def test_uncached_hub_id_fails_without_touching_the_network_when_offline(monkeypatch):
    """Fast by construction: with HF_HUB_OFFLINE no connection (and no retry) is tried."""
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("a network connection was attempted while offline")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    with pytest.raises(ModelLoadError, match="HF_HUB_OFFLINE") as info:
        build_hf("nobody-has/this-model", LoadOptions())
    assert "hf download" in str(info.value)


def test_uncached_hub_id_fails_fast_when_hub_unreachable(monkeypatch):
    # Online as far as every variable goes, whatever the shell set (the README's offline
    # setup sets all three; either of the first two alone would make this the offline case).
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # discard port: refuses at once
    with pytest.raises(ModelLoadError, match="unreachable"):
        build_hf("nobody-has/this-model", LoadOptions())
