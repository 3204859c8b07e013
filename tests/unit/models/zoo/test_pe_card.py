"""PE cards, parameter counts, configuration errors and fitting the attenuated encoding."""

from __future__ import annotations

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.models.zoo.encoder import (
    NAMED_MODELS,
    SIZES,
    PEConfig,
    PEModel,
    attenuation_matrix,
    config_for,
    fit_attenuation,
    pe_card,
)
from posharness.models.zoo.encoder.attenuation import BERT_LIKE_W
from posharness.pe import scheme_names
from posharness.stats.geometry import locality, symmetry_magnitude

H, L, D, N = 2, 2, 32, 64  # the tiny preset


def test_tisa_counts_three_parameters_per_kernel_head_and_layer() -> None:
    card = pe_card(config_for("tisa", "tiny"))
    assert card.positional_parameters == 3 * 5 * H * L
    assert (card.reference_point, card.injection, card.unbounded_length) == (
        "relative",
        "attention matrix",
        True,
    )
    assert pe_card(config_for("tisa", "base")).positional_parameters == 3 * 5 * 12 * 12


def test_parameter_counts_per_scheme() -> None:
    counts = {
        name: pe_card(config_for(name, "tiny")).positional_parameters for name in NAMED_MODELS
    }
    tupe_a = N * D + 2 * D + 2 * D * D + 2 * D  # table, its LayerNorm, U^Q U^K, theta vectors
    assert counts == {
        "bert-a": N * D,
        "bert-r": N * D + 32 * H,
        "tupe-a": tupe_a,
        "tupe-a-tie-cls": tupe_a - 2 * D,
        "tupe-r": tupe_a + 33 * H,
        "tisa": 3 * 5 * H * L,
        "tisa-ape": N * D + 3 * 5 * H * L,
        # Chen et al.'s tables: n x n per layer and head (BERT-A*), per layer (-s), frozen (A)
        "bert-a-star": N * N * H * L,
        "bert-a-star-s": N * N * L,
        "bert-a-star-fixed": 0,
        "bert-a-star-seq": N * N * H * L,
        "bert-a-star-ws": 2 * H * L,
        "bert-a-star-ws-s": 2 * L,
        "bert-a-star-ws-fixed": 0,
        "bert-a-star-ws-seq": 2 * H * L,
        "alibi-softmax": 0,
        "alibi-seq": 0,
        "bert-only-c": 0,
        "bert-only-p": N * D,
        "rope": 0,
        "xpos": 0,
        "alibi": 0,
        "sinusoidal": 0,
        "shaw": (2 * 16 + 1) * (D // H) * L,
        "t5": 32 * H,
        "nope": 0,
    }


def position_parameters_of_a_built_model(name: str) -> int:
    model = PEModel(config_for(name, "tiny"))
    words = {"word_embeddings", "token_type_embeddings", "LayerNorm", "query", "key", "value"}
    total = 0
    for key, parameter in model.named_parameters():
        parts = key.split(".")
        if (
            parts[0] == "shared_positions"
            or "position_embeddings" in parts
            or "layer_score" in parts
        ):
            total += parameter.numel()
        else:
            assert words & set(parts) or parts[0] in ("layer", "pooler"), key
    return total


@pytest.mark.parametrize("name", ["tupe-r", "shaw", "bert-r", "bert-a-star-s", "bert-a-star-ws-s"])
def test_card_counts_what_the_model_builds(name: str) -> None:
    expected = position_parameters_of_a_built_model(name)
    assert pe_card(config_for(name, "tiny")).positional_parameters == expected


def test_cards_in_the_survey_terms() -> None:
    ape = pe_card(config_for("bert-a", "tiny"))
    assert (ape.family, ape.injection, ape.recurring, ape.learnable, ape.unbounded_length) == (
        "learned absolute",
        "input embedding",
        False,
        True,
        False,
    )
    bert_r = pe_card(config_for("bert-r", "tiny"))
    assert bert_r.reference_point == "both" and bert_r.family.startswith("learned absolute + T5")
    assert pe_card(config_for("rope", "tiny")).learnable is False
    assert pe_card(config_for("tupe-r", "tiny")).unbounded_length is False
    assert pe_card(config_for("bert-a-star-fixed", "tiny")).learnable is False
    assert pe_card(config_for("bert-a-star-ws-fixed", "tiny")).learnable is False


def test_sizes_follow_the_presets() -> None:
    base = config_for("bert-a", "base")
    assert (base.num_hidden_layers, base.hidden_size, base.num_attention_heads) == (12, 768, 12)
    assert (base.intermediate_size, base.max_position_embeddings, base.vocab_size) == (
        3072,
        512,
        30522,
    )
    assert set(SIZES) == {"tiny", "narrow", "mini", "small", "base"}
    assert {NAMED_MODELS[n]["scheme"] for n in NAMED_MODELS} == set(scheme_names())


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: PEConfig(scheme="ypos"),
            "unknown positional scheme 'ypos': pick one of alibi, alibi-seq",
        ),
        (
            lambda: config_for("bert-a", "huge"),
            "unknown size 'huge': pick one of tiny, narrow, mini",
        ),
        (
            lambda: config_for("bert-q"),
            "unknown PE model 'bert-q': pick one of alibi, alibi-seq",
        ),
        (lambda: config_for("t5", "tiny", bucket=3), "unknown PEConfig option"),
        (lambda: config_for("bert-a", "tiny", absolute="none"), "takes absolute='learned'"),
        (
            lambda: config_for("bert-a-star", "tiny", attenuation_learnable="row"),
            "pick one of head",
        ),
        (lambda: config_for("t5", "tiny", relative_buckets=31), "must be even"),
        (lambda: config_for("alibi", "tiny", num_attention_heads=3), "not a multiple"),
    ],
)
def test_bad_options_raise_one_line_option_errors(build, message: str) -> None:
    with pytest.raises(OptionError, match=message) as error:
        build()
    assert "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("target_locality", "target_symmetry"), [(0.17, 1.0), (0.3, 0.6), (0.5, 0.9)]
)
def test_fit_attenuation_hits_its_targets(target_locality: float, target_symmetry: float) -> None:
    w, s = fit_attenuation(target_locality, target_symmetry, length=128)
    matrix = attenuation_matrix(128, w, s)
    assert locality(matrix) == pytest.approx(target_locality, abs=1e-3)
    assert symmetry_magnitude(matrix) == pytest.approx(target_symmetry, abs=1e-3)


def test_hard_coded_default_is_the_fit_for_berts_geometry() -> None:
    w, s = fit_attenuation(0.17, 1.0, length=128)
    assert (w, s) == pytest.approx((BERT_LIKE_W, 1.0), rel=1e-9)
    assert config_for("bert-a-star-ws", "tiny").attenuation_w == BERT_LIKE_W


def test_fit_attenuation_refuses_unreachable_targets() -> None:
    with pytest.raises(OptionError, match="out of reach"):
        fit_attenuation(0.01, 1.0, length=128)  # below uniform attention's locality
    with pytest.raises(OptionError, match="out of reach"):
        fit_attenuation(0.2, 1.5)


def test_attenuation_matrix_matches_the_model() -> None:
    model = PEModel(
        config_for("bert-a-star-ws-fixed", "tiny", attenuation_w=0.2, attenuation_s=2.0)
    )
    scores = model.positional_scores(20)[0, 0].double()
    assert torch.allclose(scores, torch.from_numpy(attenuation_matrix(20, 0.2, 2.0)), atol=1e-6)
