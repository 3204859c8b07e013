"""The PE zoo's attention modes: logits = gamma + delta, and what each mode keeps."""

from __future__ import annotations

import pytest
import torch

from posharness.base.errors import OptionError, UnsupportedModeError
from posharness.models.zoo.encoder import (
    NAMED_MODELS,
    PEForMaskedLM,
    PEModel,
    config_for,
    mode_support,
)
from posharness.models.zoo.encoder.config import scheme_class
from posharness.pe import registry

VOCAB = 50


def _kind(name: str) -> str:
    return registry.declaration(scheme_class(NAMED_MODELS[name]["scheme"])).kind


# CA(PA(X)) models (bert-a-star-seq, alibi-seq, ...): component ablations, not a logit split.
SEQUENCE = [name for name in NAMED_MODELS if _kind(name) == registry.POSITIONAL_ATTENTION]
# BERT-only-p: logits from positions alone, so mode both is the positional mode.
POSITIONS_ONLY = ["bert-only-p"]
ADDITIVE = [name for name in NAMED_MODELS if name not in SEQUENCE + POSITIONS_ONLY]
WITH_POSITIONAL = [name for name in NAMED_MODELS if _kind(name) != registry.POSITION_FREE]
WITH_CONTEXTUAL = [name for name in NAMED_MODELS if name not in POSITIONS_ONLY]


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


def tiny(name: str, **overrides: object) -> PEModel:
    torch.manual_seed(0)
    model = PEModel(config_for(name, "tiny", vocab_size=VOCAB, **overrides)).eval()
    with torch.no_grad():  # move every parameter off its initial value (zero biases, ...)
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return model


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, VOCAB, (2, 9), generator=generator)
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    return ids, mask


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    key_mask = mask[:, None, None, :].bool()
    return torch.softmax(logits.masked_fill(~key_mask, torch.finfo(logits.dtype).min), dim=-1)


@pytest.mark.parametrize("name", list(NAMED_MODELS))
def test_every_named_model_trains_with_gradients_everywhere(name: str) -> None:
    torch.manual_seed(0)
    model = PEForMaskedLM(config_for(name, "tiny", vocab_size=VOCAB))
    ids, mask = batch()
    out = model(ids, mask, labels=ids)
    out.loss.backward()
    assert torch.isfinite(out.loss)
    missing = [n for n, p in model.named_parameters() if p.grad is None]
    assert missing == []


@pytest.mark.parametrize("name", ADDITIVE)
def test_mode_both_logits_are_exactly_gamma_plus_delta(name: str) -> None:
    model = tiny(name)
    ids, mask = batch()
    record = model.attention_record(ids, mask)
    attentions = model(ids, mask, output_attentions=True).attentions
    assert len(record) == len(attentions) == 2
    for terms, weights in zip(record, attentions, strict=True):
        assert torch.equal(terms.logits, terms.gamma + terms.delta)
        assert torch.allclose(terms.probabilities, masked_softmax(terms.logits, mask), atol=1e-6)
        assert torch.allclose(weights, terms.probabilities, atol=1e-6)
        assert weights.shape == (2, 2, 9, 9)


@pytest.mark.parametrize("name", ADDITIVE)
def test_contextual_mode_is_softmax_of_gamma(name: str) -> None:
    model = tiny(name)
    model.set_attention_mode("contextual")
    ids, mask = batch()
    for terms in model.attention_record(ids, mask):
        assert torch.equal(terms.logits, terms.gamma)
        assert torch.allclose(terms.probabilities, masked_softmax(terms.gamma, mask), atol=1e-6)


@pytest.mark.parametrize("name", [n for n in WITH_POSITIONAL if n in ADDITIVE])
def test_positional_mode_is_softmax_of_delta(name: str) -> None:
    model = tiny(name)
    model.set_attention_mode("positional")
    ids, mask = batch()
    attentions = model(ids, mask, output_attentions=True).attentions
    for terms, weights in zip(model.attention_record(ids, mask), attentions, strict=True):
        assert torch.equal(terms.logits, terms.delta)
        expected = masked_softmax(terms.delta.expand(2, 2, 9, 9), mask)
        assert torch.allclose(terms.probabilities, expected, atol=1e-6)
        assert torch.allclose(weights, expected, atol=1e-6)


@pytest.mark.parametrize("name", [n for n in WITH_POSITIONAL if n not in ("shaw",)])
def test_positional_mode_ignores_token_identity_and_matches_positional_scores(name: str) -> None:
    model = tiny(name)
    model.set_attention_mode("positional")
    ids = torch.randint(5, VOCAB, (1, 7), generator=torch.Generator().manual_seed(2))
    first = model(ids, output_attentions=True).attentions
    second = model(torch.flip(ids, [1]), output_attentions=True).attentions
    scores = model.positional_scores(7)
    assert scores.shape == (2, 2, 7, 7)
    for layer, (a, b) in enumerate(zip(first, second, strict=True)):
        assert torch.allclose(a, b, atol=1e-6)
        if name in SEQUENCE:  # PA's weights are the attention
            assert torch.allclose(a[0], scores[layer], atol=1e-6)
        else:
            assert torch.allclose(a[0], torch.softmax(scores[layer], -1), atol=1e-6)


@pytest.mark.parametrize("name", WITH_CONTEXTUAL)
def test_contextual_mode_removes_all_word_order(name: str) -> None:
    model = tiny(name)
    model.set_attention_mode("contextual")
    ids = torch.randint(5, VOCAB, (1, 8), generator=torch.Generator().manual_seed(3))
    order = torch.tensor([3, 0, 7, 1, 6, 2, 5, 4])
    out = model(ids).last_hidden_state
    permuted = model(ids[:, order]).last_hidden_state
    assert torch.allclose(out[:, order], permuted, atol=1e-5)


@pytest.mark.parametrize("name", list(NAMED_MODELS))
def test_padding_does_not_change_a_sequence(name: str) -> None:
    model = tiny(name)
    ids, mask = batch()
    alone = model(ids[1:, :6]).last_hidden_state
    padded = model(ids, mask).last_hidden_state[1:, :6]
    assert torch.allclose(alone, padded, atol=1e-5)


def test_mode_both_changes_with_word_order_for_every_positional_scheme() -> None:
    ids = torch.randint(5, VOCAB, (1, 8), generator=torch.Generator().manual_seed(4))
    order = torch.tensor([3, 0, 7, 1, 6, 2, 5, 4])
    for name in WITH_POSITIONAL:
        model = tiny(name)
        out, permuted = model(ids).last_hidden_state, model(ids[:, order]).last_hidden_state
        assert not torch.allclose(out[:, order], permuted, atol=1e-4), name


def test_rope_positional_delta_uses_no_batch_statistics() -> None:
    model = tiny("rope")
    model.set_attention_mode("positional")
    ids, mask = batch()
    one = model.attention_terms(ids, mask)
    other = model.attention_terms(torch.randint(5, VOCAB, (3, 9)))
    for (_, delta_a), (_, delta_b) in zip(one, other, strict=True):
        assert torch.equal(delta_a[0], delta_b[0])
        diagonals = [torch.diagonal(delta_a[0, 0], k).std() for k in range(-7, 8)]
        assert max(diagonals) < 1e-5  # Toeplitz: depends on j - i only


@pytest.mark.parametrize("name", ["bert-a-star-ws-seq", "bert-a-star-seq", "alibi-seq"])
def test_sequence_modes_are_component_ablations(name: str) -> None:
    model = tiny(name)
    ids, _ = batch()
    model.set_attention_mode("positional")
    layer = model.layer[0].attention
    weights = model(ids, output_attentions=True).attentions[0]
    assert torch.allclose(weights[0], layer.layer_score(torch.arange(9)[None], None)[0])
    if name != "bert-a-star-seq":  # a softmax over the real keys; the table is no softmax
        assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 9))
    outputs = {}
    for mode in ("both", "contextual", "positional"):
        model.set_attention_mode(mode)
        outputs[mode] = model(ids).last_hidden_state
    assert not torch.allclose(outputs["both"], outputs["contextual"], atol=1e-4)
    assert not torch.allclose(outputs["both"], outputs["positional"], atol=1e-4)


def test_nope_has_no_positional_mode() -> None:
    model = tiny("nope")
    with pytest.raises(UnsupportedModeError):
        model.set_attention_mode("positional")
    assert model.positional_scores(5) is None
    assert "positional" not in mode_support(model.config)


def test_unknown_mode_is_refused_in_one_line() -> None:
    with pytest.raises(OptionError, match="pick one of both, contextual, positional"):
        tiny("t5").set_attention_mode("mixed")


def test_mode_is_set_through_the_task_heads() -> None:
    model = PEForMaskedLM(config_for("alibi", "tiny", vocab_size=VOCAB))
    model.set_attention_mode("positional")
    assert model.pe.attention_mode == "positional" == model.attention_mode


def test_mode_support_names_every_definition() -> None:
    for name in NAMED_MODELS:
        support = mode_support(config_for(name, "tiny"))
        assert support["both"][:2] == (True, "as-trained")
        assert ("contextual" in support) is (name not in POSITIONS_ONLY)
    assert mode_support(config_for("bert-only-p", "tiny")) == {
        "both": (True, "as-trained", None),
        "positional": (True, "pp-term", True),
    }
    assert mode_support(config_for("bert-a", "tiny"))["positional"] == (False, "pp-term", True)
    assert mode_support(config_for("bert-a", "tiny"))["contextual"][:2] == (
        True,
        "no-input-positions",
    )
    bert_r = mode_support(config_for("bert-r", "tiny"))
    assert bert_r["contextual"][:2] == (True, "no-input-positions+drop-t5-bias")
    assert bert_r["positional"] == (False, "t5-bias+pp-term", True)
    assert mode_support(config_for("tupe-r", "tiny"))["positional"][0] is True
    assert mode_support(config_for("shaw", "tiny"))["positional"] == (
        True,
        "shaw-relative-keys",
        False,
    )
    assert mode_support(config_for("rope", "tiny"))["positional"][:2] == (
        False,
        "bias-qk-rotation",
    )


def test_positions_only_model_runs_its_positional_mode_as_its_own() -> None:
    """BERT-only-p (Chen et al. draft App. B.5: x_i removed from Eq. 2's logits): mode both
    is the pp-term attention, and there is no content term to keep alone."""
    model = tiny("bert-only-p")
    ids, mask = batch()
    both = model(ids, mask, output_attentions=True)
    model.set_attention_mode("positional")
    positional = model(ids, mask, output_attentions=True)
    assert torch.equal(both.last_hidden_state, positional.last_hidden_state)
    for a, b in zip(both.attentions, positional.attentions, strict=True):
        assert torch.equal(a, b)
    with pytest.raises(OptionError, match="mode contextual does not exist"):
        model.set_attention_mode("contextual")


def test_the_model_listing_names_the_modes_each_model_has() -> None:
    from posharness.plugins import models

    for name in NAMED_MODELS:
        listed = models.get(name).modes.split(", ")
        assert listed == list(mode_support(config_for(name, "tiny"))), name
