"""Each positional scheme's delta against its paper's definition."""

from __future__ import annotations

import math

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder import NAMED_MODELS, PEModel, config_for
from posharness.pe.positions import alibi_slopes, t5_buckets
from posharness.stats.geometry import locality, symmetry_magnitude

VOCAB = 50


pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py


def tiny(name: str, **overrides: object) -> PEModel:
    torch.manual_seed(0)
    model = PEModel(config_for(name, "tiny", vocab_size=VOCAB, **overrides)).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(0.05 * torch.randn_like(parameter))
    return model


def positions(n: int) -> torch.Tensor:
    return torch.arange(n).unsqueeze(0)


def reference_t5_bucket(k: int, num_buckets: int, max_distance: int) -> int:
    """Raffel et al.'s bidirectional bucket of offset k = j - i, written from the definition."""
    half = num_buckets // 2
    base = half if k > 0 else 0
    exact = half // 2
    if abs(k) < exact:
        return base + abs(k)
    ladder = exact + int(math.log(abs(k) / exact) / math.log(max_distance / exact) * (half - exact))
    return base + min(ladder, half - 1)


@pytest.mark.parametrize(("buckets", "distance"), [(32, 128), (16, 40), (64, 256)])
def test_t5_buckets_equal_the_definition(buckets: int, distance: int) -> None:
    offsets = torch.arange(-700, 701)
    expected = [reference_t5_bucket(int(k), buckets, distance) for k in offsets]
    assert t5_buckets(offsets, buckets, distance).tolist() == expected


def test_t5_bias_is_one_table_shared_by_all_layers() -> None:
    model = tiny("t5")
    terms = model.attention_terms(torch.randint(5, VOCAB, (1, 12)))
    table = model.shared_positions.bias.weight  # [buckets, H]
    buckets = t5_buckets(torch.arange(12)[None, :] - torch.arange(12)[:, None])
    for _, delta in terms:
        assert torch.equal(delta[0], table[buckets].permute(2, 0, 1))


def test_alibi_slopes_for_8_and_12_heads() -> None:
    assert alibi_slopes(8).tolist() == pytest.approx([2.0**-k for k in range(1, 9)])
    twelve = [2.0**-k for k in range(1, 9)] + [2.0**-0.5, 2.0**-1.5, 2.0**-2.5, 2.0**-3.5]
    assert alibi_slopes(12).tolist() == pytest.approx(twelve)


def test_alibi_delta_is_minus_slope_times_distance() -> None:
    model = tiny("alibi")
    scores = model.positional_scores(6)
    distance = (torch.arange(6)[None, :] - torch.arange(6)[:, None]).abs().float()
    for head, slope in enumerate(alibi_slopes(2)):
        assert torch.allclose(scores[1, head], -slope * distance)


def test_tupe_resets_cls_row_to_theta1_and_column_to_theta2() -> None:
    model = tiny("tupe-a")
    tupe = model.shared_positions
    delta = tupe(positions(7))[0]
    untied = tupe.untied(positions(7))[0]
    theta = tupe.thetas()  # [2, H]
    for head in range(2):
        assert torch.equal(delta[head, 0], theta[0, head].expand(7))  # [CLS] row, (0,0) too
        assert torch.equal(delta[head, 1:, 0], theta[1, head].expand(6))  # [CLS] column
        assert torch.equal(delta[head, 1:, 1:], untied[head, 1:, 1:])
    assert not torch.allclose(theta[0], theta[1])


def test_tupe_tie_cls_keeps_the_untied_term_at_cls() -> None:
    tupe = tiny("tupe-a-tie-cls").shared_positions
    assert torch.equal(tupe(positions(7)), tupe.untied(positions(7)))
    assert not hasattr(tupe, "theta")


def test_tupe_scales_both_terms_by_sqrt_2d() -> None:
    model = tiny("tupe-a")
    head_size = model.config.head_size
    assert model.layer[0].attention.scale == 1 / math.sqrt(2 * head_size)
    assert model.shared_positions.scale == 1 / math.sqrt(2 * head_size)


def test_tupe_r_gives_cls_its_own_relative_buckets() -> None:
    tupe = tiny("tupe-r").shared_positions
    delta = tupe(positions(7))[0]
    theta = tupe.thetas()
    bias = tupe.relative.bias.weight  # [33, H]: bucket 16 for the [CLS] row, 32 its column
    assert bias.shape[0] == 33
    plain = t5_buckets(torch.arange(7)[None, :] - torch.arange(7)[:, None])
    untied = tupe.untied(positions(7))[0]
    for head in range(2):
        assert torch.allclose(delta[head, 0], theta[0, head] + bias[16, head])
        assert torch.allclose(delta[head, 1:, 0], theta[1, head] + bias[32, head])
        assert torch.allclose(delta[head, 1:, 1:], untied[head, 1:, 1:] + bias[plain, head][1:, 1:])


def test_tisa_delta_is_f_of_j_minus_i_with_the_papers_sign() -> None:
    model = tiny("tisa", tisa_kernels=1)
    score = model.layer[0].attention.layer_score
    with torch.no_grad():  # one kernel peaking at j - i = +2: asymmetric on purpose
        score.amplitude.copy_(torch.tensor([[1.0], [-0.5]]))
        score.sharpness.copy_(torch.tensor([[-0.8], [0.3]]))  # |b| is used
        score.centre.copy_(torch.tensor([[2.0], [-1.0]]))
    delta = score(positions(9))[0]
    for i in range(9):
        for j in range(9):
            k = j - i
            assert delta[0, i, j].item() == pytest.approx(math.exp(-0.8 * (k - 2) ** 2), abs=1e-6)
            assert delta[1, i, j].item() == pytest.approx(
                -0.5 * math.exp(-0.3 * (k + 1) ** 2), abs=1e-6
            )
    assert int(delta[0, 3].argmax()) == 5  # the released code's i - j - 1 would peak at j = 0


def test_tisa_delta_depends_only_on_the_offset() -> None:
    delta = tiny("tisa").positional_scores(10)
    for k in range(-9, 10):
        diagonal = torch.diagonal(delta, k, dim1=-2, dim2=-1)
        assert torch.equal(diagonal, diagonal[..., :1].expand_as(diagonal))


def test_shaw_delta_is_query_dot_clipped_relative_key() -> None:
    model = tiny("shaw", shaw_max_distance=3)
    attention = model.layer[0].attention
    query = torch.randn(1, 2, 8, model.config.head_size)
    delta = attention.layer_score(query, positions(8), attention.scale)
    keys = attention.layer_score.keys.weight
    for i in range(8):
        for j in range(8):
            offset = max(-3, min(3, j - i)) + 3
            expected = (query[0, :, i] * keys[offset]).sum(-1) * attention.scale
            assert torch.allclose(delta[0, :, i, j], expected, atol=1e-6)


def attenuated_map(name: str = "bert-a-star-ws-fixed", **overrides: object) -> torch.Tensor:
    return tiny(name, **overrides).positional_scores(64)[0, 0]


def test_attenuated_rows_sum_to_one_and_s1_is_symmetric() -> None:
    delta = attenuated_map(attenuation_w=0.05, attenuation_s=1.0)
    assert torch.allclose(delta.sum(-1), torch.ones(64))
    assert symmetry_magnitude(delta) == pytest.approx(1.0, abs=1e-9)


def test_attenuated_larger_w_is_more_local_and_s_above_1_looks_back() -> None:
    assert locality(attenuated_map(attenuation_w=0.5)) > locality(
        attenuated_map(attenuation_w=0.05)
    )
    skewed = attenuated_map(attenuation_w=0.05, attenuation_s=3.0)
    assert skewed[30, 25] > skewed[30, 35]  # i > j carries -w l^2, i <= j carries -s w l^2


def test_attenuated_default_matches_berts_locality() -> None:
    model = PEModel(
        config_for("bert-a-star-ws", "tiny", vocab_size=VOCAB, max_position_embeddings=128)
    )
    delta = model.positional_scores(128)[0, 0].double()
    assert locality(delta) == pytest.approx(0.17, abs=1e-3)


def test_attenuated_per_head_and_per_layer_parameters() -> None:
    per_head = tiny("bert-a-star-ws").layer[0].attention.layer_score
    per_layer = tiny("bert-a-star-ws-s").layer[0].attention.layer_score
    fixed = tiny("bert-a-star-ws-fixed").layer[0].attention.layer_score
    assert per_head.w.shape == per_head.s.shape == (2,)
    assert per_layer.w.shape == (1,)
    assert list(fixed.parameters()) == []


# Models whose tables limit the input: learned absolute positions, TUPE's table, and Chen et
# al.'s n x n weight tables.
BOUNDED = (
    "bert-a",
    "bert-r",
    "tupe-a",
    "tupe-a-tie-cls",
    "tupe-r",
    "tisa-ape",
    "bert-a-star",
    "bert-a-star-s",
    "bert-a-star-fixed",
    "bert-a-star-seq",
    "bert-only-p",
)


@pytest.mark.parametrize(
    ("name", "bounded"),
    [(name, name in BOUNDED) for name in NAMED_MODELS],
)
def test_length_limits(name: str, bounded: bool) -> None:
    model = tiny(name)
    ids = torch.randint(5, VOCAB, (1, 2 * model.config.max_position_embeddings))
    if bounded:
        assert model.max_length == 64
        with pytest.raises(
            OptionError, match="sequence of 128 tokens exceeds the 64 positions"
        ) as error:
            model(ids)
        assert "\n" not in str(error.value)
    else:
        assert model.max_length is None
        assert model(ids).last_hidden_state.shape == (1, 128, 32)
