"""xPos (Sun et al. 2022): a query/key transform that knows which side it maps. Queries are
scaled by zeta^(n/B) and keys by zeta^(-m/B) on top of the rotation, so a logit is RoPE's
times zeta^((n - m)/B): it depends on n - m, with the sign the paper gives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posharness.models.zoo.encoder import PEModel, config_for
from posharness.models.zoo.schemes.xpos import XPos
from posharness.pe import QueryKeyTransform

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

D, N, THETA, GAMMA, BASE = 8, 12, 10000.0, 0.4, 512.0


def independent_logits(q: np.ndarray, k: np.ndarray, n: int, m: int) -> float:
    """Sun et al.'s score from the formula, with each rotated pair (i, i + d/2) as a complex
    number: Re(q_i conj(k_i) e^{i(n-m)theta_i}) zeta_i^((n-m)/B), summed over the pairs."""
    half = D // 2
    theta = THETA ** (-np.arange(half) / half)
    zeta = (2 * np.arange(half) / D + GAMMA) / (1 + GAMMA)
    zq, zk = q[:half] + 1j * q[half:], k[:half] + 1j * k[half:]
    turn = np.exp(1j * (n - m) * theta)
    return float(np.sum((zq * np.conj(zk) * turn).real * zeta ** ((n - m) / BASE)))


def xpos() -> XPos:
    return XPos(config_for("xpos", "tiny"), THETA, GAMMA, BASE)


def test_logits_equal_an_independent_xpos_computation() -> None:
    generator = torch.Generator().manual_seed(0)
    q = torch.randn(1, 1, N, D, generator=generator, dtype=torch.float64)
    k = torch.randn(1, 1, N, D, generator=generator, dtype=torch.float64)
    positions = torch.arange(N)[None]
    scheme = xpos().double()
    logits = scheme.transform(q, positions, "query") @ scheme.transform(k, positions, "key").mT
    expected = np.array(
        [[independent_logits(q[0, 0, n].numpy(), k[0, 0, m].numpy(), n, m) for m in range(N)]
         for n in range(N)]
    )  # fmt: skip
    assert logits[0, 0].numpy() == pytest.approx(expected, rel=1e-5, abs=1e-5)  # float32 angles


def test_the_score_depends_on_n_minus_m_and_decays_behind_the_query() -> None:
    vector = torch.zeros(1, 1, N, D, dtype=torch.float64)
    vector[..., 0] = 1.0  # one pair, the slowest-decaying zeta_0 = gamma / (1 + gamma)
    positions = torch.arange(N)[None]
    scheme = xpos().double()
    logits = (
        scheme.transform(vector, positions, "query") @ scheme.transform(vector, positions, "key").mT
    )
    rope = torch.cos((positions[0, :, None] - positions[0, None, :]).double())  # theta_0 = 1
    ratio = (logits[0, 0] / rope).numpy()
    zeta0 = GAMMA / (1 + GAMMA)
    offsets = np.subtract.outer(np.arange(N), np.arange(N))  # n - m
    assert ratio == pytest.approx(zeta0 ** (offsets / BASE), rel=1e-6)  # Toeplitz in n - m
    assert ratio[5, 2] < 1.0 < ratio[2, 5]  # key behind the query shrinks, ahead grows


def test_swapping_the_roles_changes_the_score() -> None:
    """The role decides the sign of the exponent: the transform is not applied alike."""
    x = torch.randn(1, 1, N, D, generator=torch.Generator().manual_seed(1))
    positions = torch.arange(N)[None]
    scheme = xpos()
    as_query = scheme.transform(x, positions, "query")
    as_key = scheme.transform(x, positions, "key")
    assert not torch.allclose(as_query, as_key)
    with pytest.raises(ValueError, match="role must be one of query, key"):
        scheme.transform(x, positions, "value")


def test_a_transform_without_a_role_is_applied_to_both_sides_alike() -> None:
    class Shift(QueryKeyTransform):
        def forward(self, x, positions):
            return x + positions[..., None].to(x.dtype)

    x, positions = torch.zeros(1, 1, 3, 2), torch.arange(3)[None]
    shift = Shift()
    assert torch.equal(shift.transform(x, positions, "query"), shift.transform(x, positions, "key"))


def test_positional_mode_of_xpos_is_content_free_and_toeplitz() -> None:
    torch.manual_seed(0)
    model = PEModel(config_for("xpos", "tiny", vocab_size=50)).eval()
    with torch.no_grad():
        for layer in model.layer:  # BERT initialises biases to zero: give them a value
            layer.attention.query.bias.normal_()
            layer.attention.key.bias.normal_()
    scores = model.positional_scores(10)
    assert scores.shape == (2, 2, 10, 10)
    delta = scores[0, 0]
    for offset in range(-8, 9):  # diagonals of two or more entries
        assert torch.diagonal(delta, offset).std() < 1e-5  # a function of m - n alone
    assert not torch.allclose(delta, delta.T, atol=1e-4)  # and not symmetric in it
