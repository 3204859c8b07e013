"""The PE zoo as a Hugging Face model family: Auto classes, checkpoints, heads."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from transformers import (
    AutoConfig,
    AutoModel,
    AutoModelForMaskedLM,
    AutoModelForSequenceClassification,
)

from posharness.models.zoo.encoder import (
    PEConfig,
    PEForMaskedLM,
    PEForSequenceClassification,
    PEModel,
    config_for,
)

VOCAB = 50


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.randint(5, VOCAB, (2, 9), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    mask[1, 6:] = 0
    return ids, mask


def trained_looking(model: torch.nn.Module) -> torch.nn.Module:
    """Move every parameter away from its initial value, so re-initialisation would show."""
    torch.manual_seed(5)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.1 * torch.randn_like(parameter))
    return model.eval()


@pytest.mark.parametrize(
    "name",
    ["tupe-r", "tisa-ape", "bert-a-star", "bert-a-star-seq", "shaw", "rope", "bert-a-star-fixed"],
)
def test_save_and_load_reproduces_outputs_exactly(name: str, tmp_path) -> None:
    model = trained_looking(PEForMaskedLM(config_for(name, "tiny", vocab_size=VOCAB)))
    model.save_pretrained(tmp_path)
    assert (tmp_path / "model.safetensors").is_file()
    loaded = AutoModelForMaskedLM.from_pretrained(tmp_path).eval()
    assert type(loaded) is PEForMaskedLM
    ids, mask = batch()
    assert torch.equal(model(ids, mask).logits, loaded(ids, mask).logits)
    assert loaded.config.name == name and loaded.config.size == "tiny"


def test_auto_classes_resolve_to_the_zoo(tmp_path) -> None:
    PEForMaskedLM(config_for("alibi", "tiny", vocab_size=VOCAB)).save_pretrained(tmp_path)
    assert type(AutoConfig.from_pretrained(tmp_path)) is PEConfig
    assert type(AutoModel.from_pretrained(tmp_path)) is PEModel
    classifier = AutoModelForSequenceClassification.from_pretrained(tmp_path, num_labels=3)
    assert type(classifier) is PEForSequenceClassification
    assert classifier.classifier.out_features == 3


def test_encoder_loaded_from_an_mlm_checkpoint_keeps_its_weights(tmp_path) -> None:
    mlm = trained_looking(PEForMaskedLM(config_for("tupe-a", "tiny", vocab_size=VOCAB)))
    mlm.save_pretrained(tmp_path)
    encoder = AutoModel.from_pretrained(tmp_path).eval()
    ids, mask = batch()
    expected = mlm.pe(ids, mask).last_hidden_state
    assert torch.equal(encoder(ids, mask).last_hidden_state, expected)


def test_mlm_decoder_is_tied_to_the_word_embeddings() -> None:
    model = PEForMaskedLM(config_for("t5", "tiny", vocab_size=VOCAB))
    assert model.cls.decoder.weight is model.pe.embeddings.word_embeddings.weight


def test_mlm_loss_ignores_minus_100_labels() -> None:
    model = trained_looking(PEForMaskedLM(config_for("rope", "tiny", vocab_size=VOCAB)))
    ids, mask = batch()
    labels = torch.full_like(ids, -100)
    labels[0, 2], labels[1, 4] = 7, 9
    out = model(ids, mask, labels=labels)
    picked = torch.stack([out.logits[0, 2], out.logits[1, 4]])
    assert torch.allclose(out.loss, F.cross_entropy(picked, torch.tensor([7, 9])))


def test_classifier_regresses_with_one_label_and_classifies_with_more() -> None:
    ids, mask = batch()
    regressor = PEForSequenceClassification(
        config_for("tisa", "tiny", vocab_size=VOCAB, num_labels=1)
    ).eval()
    out = regressor(ids, mask, labels=torch.tensor([0.5, 2.0]))
    assert out.logits.shape == (2, 1)
    assert torch.allclose(out.loss, F.mse_loss(out.logits.squeeze(-1), torch.tensor([0.5, 2.0])))
    classifier = PEForSequenceClassification(
        config_for("tisa", "tiny", vocab_size=VOCAB, num_labels=3)
    ).eval()
    out = classifier(ids, mask, labels=torch.tensor([2, 0]))
    assert out.logits.shape == (2, 3)
    assert torch.allclose(out.loss, F.cross_entropy(out.logits, torch.tensor([2, 0])))


def test_encoder_returns_every_hidden_state_and_attention() -> None:
    model = PEModel(config_for("bert-r", "tiny", vocab_size=VOCAB)).eval()
    ids, mask = batch()
    out = model(ids, mask, output_attentions=True, output_hidden_states=True)
    assert len(out.hidden_states) == 3 and len(out.attentions) == 2
    assert out.pooler_output.shape == (2, 32)
    assert torch.allclose(out.attentions[0].sum(-1), torch.ones(2, 2, 9), atol=1e-6)
    assert torch.all(out.attentions[0][1, :, :, 6:] == 0)  # padding gets no attention
    fast = model(ids, mask).last_hidden_state  # fused kernel when no weights are asked for
    assert torch.allclose(fast, out.last_hidden_state, atol=1e-5)
