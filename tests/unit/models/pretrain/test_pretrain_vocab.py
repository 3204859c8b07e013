"""The pretraining tokenizer: a deterministic uncased WordPiece, or an existing tokenizer."""

from __future__ import annotations

import json

import pytest

from posharness.base.errors import ModelLoadError, OptionError
from posharness.models.pretrain.vocab import PROVENANCE, tokenizer_for, train_wordpiece
from tests.unit.models.pretrain.test_pretrain_corpus import toy_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return toy_corpus(tmp_path_factory.mktemp("corpus"))


def test_wordpiece_training_is_deterministic(corpus):
    # Before seeding the ## characters, about half of such trainings disagreed
    # (huggingface/tokenizers#1794); six in a row agreeing by luck is unlikely.
    vocabularies = [train_wordpiece(corpus, 80).get_vocab() for _ in range(6)]
    assert all(vocab == vocabularies[0] for vocab in vocabularies)


def test_the_specials_have_bert_ids_and_the_size_is_capped(corpus, tmp_path):
    tokenizer = tokenizer_for(None, corpus, 60, tmp_path)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert tokenizer.convert_tokens_to_ids(specials) == [0, 1, 2, 3, 4]
    assert (tokenizer.pad_token_id, tokenizer.mask_token_id) == (0, 4)
    assert len(tokenizer) <= 60
    assert sorted(tokenizer.all_special_ids) == [0, 1, 2, 3, 4]


def test_the_trained_tokenizer_is_uncased_bert_style(corpus, tmp_path):
    tokenizer = tokenizer_for(None, corpus, 200, tmp_path)
    ids = tokenizer("The DOG plays!")["input_ids"]
    assert ids[0] == 2 and ids[-1] == 3  # [CLS] ... [SEP]
    assert tokenizer.convert_ids_to_tokens(ids[1:-1])[:2] == ["the", "dog"]
    assert tokenizer.tokenize("Plays Café") == tokenizer.tokenize("plays cafe")
    assert tokenizer.tokenize("zebra")[0] != "zebra"  # unseen: pieces or [UNK]


def test_the_tokenizer_is_saved_and_reused_for_the_same_corpus_and_size(corpus, tmp_path):
    from transformers import AutoTokenizer

    first = tokenizer_for(None, corpus, 200, tmp_path)
    saved = tmp_path / "tokenizer"
    assert AutoTokenizer.from_pretrained(str(saved)).get_vocab() == first.get_vocab()
    provenance = json.loads((saved / PROVENANCE).read_text())
    assert provenance["vocab_size"] == 200
    assert tokenizer_for(None, corpus, 200, tmp_path).get_vocab() == first.get_vocab()
    with pytest.raises(OptionError, match="another corpus or --vocab-size: use a new --out"):
        tokenizer_for(None, corpus, 150, tmp_path)


def test_an_existing_tokenizer_folder_is_loaded_as_it_is(corpus, tmp_path):
    trained = tokenizer_for(None, corpus, 200, tmp_path / "first")
    loaded = tokenizer_for(str(tmp_path / "first" / "tokenizer"), None, 0, tmp_path / "second")
    assert loaded.get_vocab() == trained.get_vocab()
    assert (tmp_path / "second" / "tokenizer" / "tokenizer.json").exists()


def test_a_missing_tokenizer_is_a_one_line_model_load_error(tmp_path):
    with pytest.raises(ModelLoadError, match="does not exist") as caught:
        tokenizer_for(str(tmp_path / "no" / "such" / "tokenizer"), None, 0, tmp_path)
    assert "\n" not in str(caught.value)


def test_a_tokenizer_without_a_mask_token_is_refused(corpus, tmp_path):
    trained = tokenizer_for(None, corpus, 200, tmp_path / "first")
    config_file = tmp_path / "first" / "tokenizer" / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config.pop("mask_token")
    config_file.write_text(json.dumps(config))
    assert trained.mask_token == "[MASK]"
    with pytest.raises(OptionError, match="has no mask_token: masked-LM pretraining needs"):
        tokenizer_for(str(config_file.parent), None, 0, tmp_path / "second")


@pytest.mark.parametrize("vocab_size", [0, 5])
def test_a_vocabulary_no_larger_than_the_specials_is_refused(corpus, tmp_path, vocab_size):
    with pytest.raises(OptionError, match=f"--vocab-size {vocab_size}: must exceed"):
        tokenizer_for(None, corpus, vocab_size, tmp_path)
