"""TUPE's untied positional term (Ke et al. 2021, Eq. 8-10) recomputed by hand in numpy from
the module's weights: p = LayerNorm(table), delta_ij = (p_i U^Q)(p_j U^K)ᵀ / √(2d) per head,
the [CLS] row reset to theta_1 and its column to theta_2, theta_k = (p_θk U^Q)(p_θk U^K)ᵀ /
√(2d) from the layer-normed p_θk — never from the module's own ``untied`` or ``thetas``."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posharness.models.zoo.encoder import PEModel, config_for

pytestmark = pytest.mark.usefixtures("one_thread")

N = 7


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps) * weight + bias


def tupe_by_hand(tupe, eps: float) -> np.ndarray:
    """delta [H, n, n] of TUPE-A from its weights, in float64."""

    def weight(module) -> np.ndarray:
        return module.weight.detach().double().numpy()

    norm = (weight(tupe.norm), tupe.norm.bias.detach().double().numpy())
    heads, d = tupe.heads, tupe.head_size
    p = layer_norm(weight(tupe.table)[:N], *norm, eps)
    uq, uk = weight(tupe.query), weight(tupe.key)  # nn.Linear: x Wᵀ

    def per_head(x: np.ndarray) -> np.ndarray:
        return x.reshape(len(x), heads, d).transpose(1, 0, 2)  # [H, rows, d]

    q, k = per_head(p @ uq.T), per_head(p @ uk.T)
    delta = q @ k.transpose(0, 2, 1) / np.sqrt(2 * d)
    p_theta = layer_norm(tupe.theta.detach().double().numpy(), *norm, eps)
    tq, tk = per_head(p_theta @ uq.T), per_head(p_theta @ uk.T)  # [H, 2, d]
    theta = (tq * tk).sum(-1) / np.sqrt(2 * d)  # [H, 2]
    delta[:, 1:, 0] = theta[:, 1:2]  # the [CLS] column of every other row: theta_2
    delta[:, 0, :] = theta[:, 0:1]  # the [CLS] row, [CLS]->[CLS] included: theta_1
    return delta


def test_tupe_a_delta_equals_the_untied_product_with_the_cls_reset_by_hand():
    torch.manual_seed(0)
    config = config_for("tupe-a", "tiny", vocab_size=50, num_attention_heads=4)
    model = PEModel(config).eval()
    tupe = model.shared_positions
    with torch.no_grad():  # a layer norm that is not the identity
        tupe.norm.weight.normal_(1.0, 0.3)
        tupe.norm.bias.normal_(0.0, 0.3)
    with torch.no_grad():
        delta = tupe(torch.arange(N)[None])[0].double().numpy()
        scores = model.positional_scores(N).double().numpy()
    expected = tupe_by_hand(tupe, config.layer_norm_eps)
    np.testing.assert_allclose(delta, expected, rtol=1e-4, atol=1e-6)
    # and what the model's positional mode reads is that term, in every layer
    for layer in scores:
        np.testing.assert_allclose(layer, expected, rtol=1e-4, atol=1e-6)
