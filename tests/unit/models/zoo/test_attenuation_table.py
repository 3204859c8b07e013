"""BERT-A* as Chen et al. (2023) define it: a learnable positional weight table per layer and
head, initialised from Eq. 8 at BERT's geometry and added to the logits (Listing 1)."""

from __future__ import annotations

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder import PEForMaskedLM, PEModel, config_for, pe_card
from posharness.models.zoo.encoder.options import pe_options
from posharness.models.zoo.schemes.attenuation_table import gather_table, initial_table
from posharness.stats.geometry import locality, symmetry

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

VOCAB = 50


def tiny(name: str, **overrides: object) -> PEModel:
    torch.manual_seed(0)
    return PEModel(config_for(name, "tiny", vocab_size=VOCAB, **overrides)).eval()


@pytest.mark.parametrize("length", [64, 128, 512])
def test_initial_table_has_berts_locality_and_symmetry_at_the_fit_length(length: int) -> None:
    """§3.3.2: w and s are fitted so that delta shares BERT's locality 0.17 and symmetry 1."""
    table = initial_table(length, 0.17, 1.0).double().numpy()
    assert locality(table) == pytest.approx(0.17, abs=0.005)
    assert symmetry(table) == pytest.approx(1.0, abs=1e-6)
    assert table.sum(axis=1) == pytest.approx(1.0, abs=1e-5)  # rows are attention rows


def test_every_layer_and_head_starts_from_the_same_fitted_table() -> None:
    model = tiny("bert-a-star")
    start = initial_table(64, 0.17, 1.0)
    for layer in model.layer:
        table = layer.attention.layer_score.table
        assert table.shape == (2, 64, 64)
        assert torch.equal(table.detach(), start.expand(2, -1, -1))


def test_the_table_is_added_to_the_scaled_logits_as_in_listing_1() -> None:
    model = tiny("bert-a-star")
    with torch.no_grad():
        for layer in model.layer:  # a table no softmax could produce
            layer.attention.layer_score.table.normal_(0.0, 3.0)
    ids = torch.randint(5, VOCAB, (1, 9), generator=torch.Generator().manual_seed(1))
    record = model.attention_record(ids)
    for layer, terms in zip(model.layer, record, strict=True):
        table = layer.attention.layer_score.table[:, :9, :9]
        assert torch.equal(terms.delta[0], table)
        assert torch.allclose(terms.logits, terms.gamma + table)


def test_a_large_gradient_moves_table_entries_outside_zero_one() -> None:
    """Every entry is a parameter the optimiser moves directly: no softmax keeps delta a
    probability row (the project's earlier w, s variant could never leave [0, 1])."""
    torch.manual_seed(0)
    model = PEForMaskedLM(config_for("bert-a-star", "tiny", vocab_size=VOCAB))
    ids = torch.randint(5, VOCAB, (4, 16), generator=torch.Generator().manual_seed(2))
    model(ids, labels=ids).loss.backward()
    optimiser = torch.optim.SGD(model.parameters(), lr=1e4)
    optimiser.step()
    table = model.pe.layer[0].attention.layer_score.table.detach()
    assert table.min() < 0.0 or table.max() > 1.0
    untouched = initial_table(64, 0.17, 1.0)
    assert torch.equal(table[:, 16:, 16:], untouched[16:, 16:].expand(2, -1, -1))


def test_shared_table_is_one_per_layer_and_the_fixed_table_has_no_parameters() -> None:
    shared = tiny("bert-a-star-s").layer[0].attention.layer_score
    assert shared.table.shape == (1, 64, 64) and shared.table.requires_grad
    fixed = tiny("bert-a-star-fixed").layer[0].attention.layer_score
    assert fixed.table.shape == (1, 64, 64)
    assert not list(fixed.parameters())


def test_card_counts_the_papers_sizes_at_base() -> None:
    """App. A.2: 512 x 512 x 12 x 12 = 37.7M (BERT-A*), 512 x 512 x 12 = 3.1M (BERT-A*-s)."""
    per_head = pe_card(config_for("bert-a-star", "base")).positional_parameters
    shared = pe_card(config_for("bert-a-star-s", "base")).positional_parameters
    assert per_head == 512 * 512 * 12 * 12 == pytest.approx(37.7e6, abs=0.1e6)
    assert shared == 512 * 512 * 12 == pytest.approx(3.1e6, abs=0.1e6)
    assert pe_card(config_for("bert-a-star-fixed", "base")).positional_parameters == 0


def test_saved_and_loaded_table_keeps_what_training_wrote(tmp_path) -> None:
    from transformers import AutoModel

    model = tiny("bert-a-star")
    with torch.no_grad():
        model.layer[1].attention.layer_score.table.add_(5.0)
    model.save_pretrained(tmp_path)
    loaded = AutoModel.from_pretrained(tmp_path)
    assert torch.equal(
        loaded.layer[1].attention.layer_score.table, model.layer[1].attention.layer_score.table
    )
    fixed = tiny("bert-a-star-fixed")
    fixed.save_pretrained(tmp_path / "fixed")
    again = AutoModel.from_pretrained(tmp_path / "fixed")
    start = initial_table(64, 0.17, 1.0)[None]
    assert torch.equal(again.layer[0].attention.layer_score.table, start)


def test_gather_reads_rows_at_query_positions_and_columns_at_key_positions() -> None:
    table = torch.arange(2 * 6 * 6, dtype=torch.float32).view(2, 6, 6)
    positions = torch.tensor([[0, 1, 2], [3, 4, 5]])
    out = gather_table(table, positions)
    assert out.shape == (2, 2, 3, 3)
    assert torch.equal(out[1, 0], table[0, 3:, 3:])
    assert torch.equal(gather_table(table, positions[:1])[0], table[:, :3, :3])


def test_sequence_variant_uses_the_table_as_the_positional_attention() -> None:
    """Draft Listing 2: ``scores = pe``, padding keys set to 0, no softmax."""
    model = tiny("bert-a-star-seq")
    model.set_attention_mode("positional")
    ids = torch.randint(5, VOCAB, (2, 7), generator=torch.Generator().manual_seed(3))
    mask = torch.ones_like(ids)
    mask[1, 5:] = 0
    weights = model(ids, mask, output_attentions=True).attentions[0]
    table = model.layer[0].attention.layer_score.table[:, :7, :7]
    assert torch.equal(weights[0], table)
    assert torch.equal(weights[1, :, :, 5:], torch.zeros(2, 7, 2))


def test_locality_and_symmetry_options_set_the_tables_target() -> None:
    options = pe_options("bert-a-star", {"locality": "0.3", "symmetry": "0.8"})
    assert options == {"table_locality": 0.3, "table_symmetry": 0.8}
    table = tiny("bert-a-star", **options).layer[0].attention.layer_score.table[0]
    assert locality(table.detach().double().numpy()) == pytest.approx(0.3, abs=0.005)
    with pytest.raises(OptionError, match="fitted at the model's positions"):
        pe_options("bert-a-star", {"locality": "0.3", "fit_length": "128"})


def test_more_positions_than_the_table_has_is_one_line() -> None:
    layer_score = tiny("bert-a-star").layer[0].attention.layer_score
    with pytest.raises(OptionError, match="more positions than it has \\(64\\)"):
        layer_score(torch.arange(65)[None])
    with pytest.raises(OptionError, match="exceeds the 64 positions"):
        tiny("bert-a-star")(torch.ones(1, 65, dtype=torch.long))


def test_an_unreachable_target_is_refused_when_the_model_is_built() -> None:
    with pytest.raises(OptionError, match="table_locality=0.001"):
        config_for("bert-a-star", "tiny", table_locality=0.001)
