"""A toy corpus and a WordPiece tokenizer trained on it, shared by a module's tests."""

from __future__ import annotations

import pytest

from tests.unit.models.pretrain.test_pretrain_corpus import toy_corpus


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return toy_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def tokenizer(corpus, tmp_path_factory):
    from posharness.models.pretrain.vocab import tokenizer_for

    return tokenizer_for(None, corpus, 100, tmp_path_factory.mktemp("vocab"))
