"""Initial values a scheme's docstring promises, read off a freshly built tiny model."""

from __future__ import annotations

import pytest
import torch

from posharness.models.zoo.encoder import PEModel, config_for

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("kernels", [1, 4, 5])
def test_tisa_starts_with_sharpness_one_half_and_centres_spread_evenly(kernels: int):
    """Wennberg & Henter's kernels, initialised for training from scratch: |b| = 0.5 and
    the centres c_s = -(S-1)/2, ..., (S-1)/2 one apart, in every layer and head."""
    torch.manual_seed(0)
    model = PEModel(config_for("tisa", "tiny", vocab_size=50, tisa_kernels=kernels))
    centres = [s - (kernels - 1) / 2 for s in range(kernels)]
    for layer in model.layer:
        score = layer.attention.layer_score
        assert score.sharpness.detach().abs().tolist() == [[0.5] * kernels] * 2
        assert torch.allclose(score.centre.detach(), torch.tensor(centres).expand(2, -1))
        assert score.amplitude.detach().abs().sum() > 0  # drawn, not left at zero
