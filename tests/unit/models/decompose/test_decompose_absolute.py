"""Input-added absolute PEs: BERT, RoBERTa, ALBERT (shared layers), DistilBERT, ELECTRA."""

from __future__ import annotations

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.models.decompose.absolute import (
    MEAN_WORD_STREAM,
    POSITIONAL_STREAM,
    TISA_MEAN_WORD,
    AbsoluteSplit,
)
from tests.unit.models.decompose import decompose_checks as checks

VOCAB = 64
SMALL = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=37,
    max_position_embeddings=24,
)


def _build(kind: str):
    import transformers as tf

    torch.manual_seed(0)
    if kind == "bert":
        model = tf.BertModel(tf.BertConfig(**SMALL), add_pooling_layer=False)
    elif kind == "roberta":
        model = tf.RobertaModel(
            tf.RobertaConfig(**{**SMALL, "max_position_embeddings": 26}, pad_token_id=1),
            add_pooling_layer=False,
        )
    elif kind == "albert":
        config = tf.AlbertConfig(
            **{**SMALL, "num_hidden_layers": 4},
            embedding_size=16,
            num_hidden_groups=2,
            inner_group_num=2,
        )
        model = tf.AlbertModel(config, add_pooling_layer=False)
    elif kind == "distilbert":
        config = tf.DistilBertConfig(
            vocab_size=VOCAB,
            dim=32,
            n_layers=2,
            n_heads=4,
            hidden_dim=37,
            max_position_embeddings=24,
        )
        model = tf.DistilBertModel(config)
    elif kind == "electra":
        model = tf.ElectraModel(tf.ElectraConfig(**SMALL, embedding_size=16))
    else:
        raise ValueError(kind)
    model.set_attn_implementation("eager")
    return model.eval()


KINDS = ["bert", "roberta", "albert", "distilbert", "electra"]
DEFINITIONS = [TISA_MEAN_WORD, POSITIONAL_STREAM, MEAN_WORD_STREAM]


@pytest.fixture(scope="module", params=KINDS)
def original(request):
    return _build(request.param)


@pytest.fixture(scope="module", params=DEFINITIONS, ids=lambda d: d.name)
def setup(request, original):
    family = AbsoluteSplit()
    model = checks.installed(original, family, request.param, reference_vocab=VOCAB)
    return family, model, request.param


@pytest.mark.parametrize("pad", [False, True])
def test_both_reproduces_the_unmodified_model(original, setup, pad):
    family, model, _ = setup
    ids, mask = checks.batch(VOCAB, pad=pad)
    checks.check_both_reproduces(original, model, family, ids, mask)


@pytest.mark.parametrize("pad", [False, True])
def test_gamma_delta_and_residual_sum_to_the_logits(setup, pad):
    family, model, _ = setup
    ids, mask = checks.batch(VOCAB, pad=pad)
    assert checks.check_split_sums(model, family, ids, mask, exact=False) < 1e-5


def test_padding_gets_no_attention_in_any_mode(setup):
    family, model, _ = setup
    ids, mask = checks.batch(VOCAB, pad=True)
    checks.check_padding_ignored(model, family, ids, mask)


def test_positional_mode_ignores_token_identity(setup):
    family, model, _ = setup
    checks.check_positional_content_free(model, family, VOCAB)


def test_modes_differ_from_both(setup):
    family, model, _ = setup
    ids, mask = checks.batch(VOCAB, pad=False)
    checks.check_modes_differ(model, family, ids, mask)


def test_positional_scores_are_what_positional_mode_uses(setup):
    family, model, definition = setup
    _, attentions = checks.default_run(model, *checks.batch(VOCAB, pad=False))
    checks.check_positional_scores(model, family, definition, 12, layers=len(attentions))
    ids, _ = checks.batch(VOCAB, length=12, pad=False)
    checks.check_scores_match_positional_attention(model, family, definition, ids)


def test_a_batch_longer_than_the_statistics_is_a_clear_error(original):
    family = AbsoluteSplit()
    model = checks.installed(original, family, POSITIONAL_STREAM, reference_vocab=VOCAB)
    ids, mask = checks.batch(VOCAB, length=20, pad=False)  # the reference covers 16
    with pytest.raises(OptionError, match="reference_length"):
        checks.run_mode(model, family, checks.Mode.POSITIONAL, ids, mask)


def test_albert_tables_follow_depth_not_module():
    """ALBERT runs 2 group modules x 2 inner layers x 2 repeats: 8 calls, 4 modules."""
    family = AbsoluteSplit()
    model = checks.installed(_build("albert"), family, MEAN_WORD_STREAM)
    assert len(family.attention_modules(model)) == 4
    scores = family.positional_scores(model, 6, MEAN_WORD_STREAM)
    assert scores.shape == (8, 4, 6, 6)
    assert not torch.allclose(scores[0], scores[2])  # same module, different depth input
