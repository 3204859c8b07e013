"""Modes through the Hugging Face adapter: options, reference corpus, caching, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from posharness.base.errors import DataError, OptionError, UnsupportedModeError
from posharness.compute.batching import pad_batch
from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode, mode_identity
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.builders import build_hf
from posharness.models.hf.reference_statistics import REFERENCE_KIND
from tests.conftest import WORDS

SENTENCES = ["a man plays the guitar on stage", "the old dog runs in the park with a child"]


def write_corpus(folder: Path, lines: int = 200) -> Path:
    generator = torch.Generator().manual_seed(0)
    path = folder / "corpus.txt"
    rows = []
    for _ in range(lines):
        picks = torch.randint(0, 40, (12,), generator=generator).tolist()
        rows.append(" ".join(WORDS[i] for i in picks))
    path.write_text(" = Heading = \n\n" + "\n".join(rows) + "\n")
    return path


def adapter_with(tiny_bert: Path, tmp_path: Path, **args: str):
    options = LoadOptions(
        device="cpu", model_args=tuple(args.items()), cache_dir=tmp_path / "cache"
    )
    return build_hf(str(tiny_bert), options)


def encode_all_modes(adapter):
    batch = pad_batch(adapter.tokenize(SENTENCES), adapter.pad_token_id)
    return {
        mode: adapter.encode(batch, mode, frozenset({HIDDEN, ATTENTIONS})) for mode in Mode
    }, batch


def test_bert_offers_three_modes_with_the_default_definition(tiny_bert, tmp_path):
    corpus = write_corpus(tmp_path)
    adapter = adapter_with(tiny_bert, tmp_path, reference_corpus=str(corpus))
    assert set(adapter.modes) == set(Mode)
    positional = adapter.modes[Mode.POSITIONAL]
    assert positional.definition == "tisa-mean-word"
    assert positional.exact is False and positional.content_free_delta is True
    assert "corpus.txt" in positional.reference_corpus and "sha256" in positional.reference_corpus
    assert mode_identity(adapter, Mode.POSITIONAL) != mode_identity(adapter, Mode.BOTH)


def test_modes_run_switch_back_and_cache_their_statistics(tiny_bert, tmp_path):
    corpus = write_corpus(tmp_path)
    adapter = adapter_with(
        tiny_bert,
        tmp_path,
        reference_corpus=str(corpus),
        reference_length="32",
        reference_sequences="4",
    )
    outputs, batch = encode_all_modes(adapter)
    for mode, out in outputs.items():
        for attention in out.attentions:
            assert torch.isfinite(attention).all(), mode
            padded = attention[0, :, :, batch.attention_mask[0] == 0]
            assert padded.numel() > 0 and float(padded.abs().sum()) == 0.0
    both = outputs[Mode.BOTH].attentions[0]
    for mode in (Mode.CONTEXTUAL, Mode.POSITIONAL):
        assert float((outputs[mode].attentions[0] - both).abs().max()) > 1e-3
    # back to `both` after the other modes: the model as trained again
    again = adapter.encode(batch, Mode.BOTH, frozenset({ATTENTIONS})).attentions[0]
    torch.testing.assert_close(again, both)
    cached = list((tmp_path / "cache" / REFERENCE_KIND).rglob("*.safetensors"))
    assert len(cached) == 1
    fresh = adapter_with(
        tiny_bert,
        tmp_path,
        reference_corpus=str(corpus),
        reference_length="32",
        reference_sequences="4",
    )
    scores = fresh.positional_scores(10)
    torch.testing.assert_close(scores, adapter.positional_scores(10))
    assert scores.shape == (2, 2, 10, 10)


def test_mean_word_stream_needs_no_corpus(tiny_bert, tmp_path):
    adapter = adapter_with(tiny_bert, tmp_path, absolute="mean-word-stream")
    assert adapter.modes[Mode.POSITIONAL].reference_corpus is None
    outputs, _ = encode_all_modes(adapter)
    assert all(torch.isfinite(a).all() for a in outputs[Mode.POSITIONAL].attentions)


def test_missing_corpus_fails_before_work_and_names_the_fixes(tiny_bert, tmp_path, monkeypatch):
    from posharness.models.decompose import reference

    # an installation that lost its embedded corpus, and no corpus given anywhere
    monkeypatch.setattr(reference, "EMBEDDED_CORPUS", tmp_path / "missing" / "english.txt")
    adapter = adapter_with(tiny_bert, tmp_path)  # default definition
    adapter.check_mode(Mode.BOTH)  # mode both never needs one
    with pytest.raises(DataError) as info:
        adapter.check_mode(Mode.POSITIONAL)
    message = str(info.value)
    assert "reference_corpus=FILE" in message and "absolute=mean-word-stream" in message
    assert adapter._model is None  # nothing was loaded


def test_the_data_dir_supplies_the_default_corpus(tiny_bert, tmp_path):
    data = tmp_path / "data" / "wikitext-2"
    data.mkdir(parents=True)
    write_corpus(tmp_path).rename(data / "wiki.valid.tokens")
    options = LoadOptions(device="cpu", data_dir=tmp_path / "data")
    adapter = build_hf(str(tiny_bert), options)
    assert "wiki.valid.tokens" in adapter.modes[Mode.CONTEXTUAL].reference_corpus


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        ({"absolute": "nope"}, ["absolute=nope", "tisa-mean-word", "positional-stream"]),
        ({"widgets": "1"}, ["--model-arg widgets", "reference_corpus"]),
        ({"absolute": "mean-word-stream", "reference_length": "x"}, []),
        ({"reference_corpus": "/no/such/file.txt"}, ["not a file"]),
        ({"reference_length": "0", "reference_corpus": "/no/such"}, ["positive integer"]),
        ({"reference_length": "999", "reference_corpus": "/no/such"}, ["exceeds"]),
    ],
)
def test_bad_model_args_are_one_line_errors(tiny_bert, tmp_path, args, fragments):
    if not fragments:  # reference keys are ignored by a definition without a corpus
        adapter_with(tiny_bert, tmp_path, **args)
        return
    with pytest.raises((OptionError, DataError)) as info:
        adapter_with(tiny_bert, tmp_path, **args)
    message = str(info.value)
    assert "\n" not in message
    for fragment in fragments:
        assert fragment in message


def test_a_family_without_a_split_offers_only_both(tmp_path):
    folder = tmp_path / "funnel"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "funnel", "num_hidden_layers": 2}')
    adapter = build_hf(str(folder), LoadOptions(device="cpu"))
    assert set(adapter.modes) == {Mode.BOTH}
    with pytest.raises(UnsupportedModeError, match="supports modes both"):
        adapter.check_mode(Mode.POSITIONAL)
    assert adapter.positional_scores(4) is None
    with pytest.raises(OptionError, match="no contextual/positional split"):
        build_hf(str(folder), LoadOptions(device="cpu", model_args=(("absolute", "x"),)))
