"""Heatmaps a person can read: quantile colour limits, said on the figure when they clip,
symmetric around 0 for signed values, one shared colour bar on panel grids (issue 19)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from posharness.plotting import robust_scale
from posharness.tasks.geometry.figures import heatmap, heatmap_grid


def gram_with_a_huge_first_position(n: int = 32) -> np.ndarray:
    """Like E_P E_Pᵀ of learned absolute positions: position 0's norm dwarfs the rest."""
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, 8)) + 3.0
    gram = vectors @ vectors.T
    gram[0, 0] = 1e6
    return gram


def test_one_outlier_is_clipped_and_said() -> None:
    scale = robust_scale(gram_with_a_huge_first_position())
    assert scale.vmax < 1e3 and scale.clipped >= 1
    assert scale.note.startswith("colour clipped to [")


def test_a_matrix_without_outliers_is_not_clipped_much_and_a_constant_one_not_at_all() -> None:
    constant = robust_scale(np.full((8, 8), 0.125))
    assert constant.clipped == 0 and constant.note == ""
    uniform = robust_scale(np.linspace(0, 1, 101))
    assert uniform.vmin == 0.01 and abs(uniform.vmax - 0.99) < 1e-12


def test_signed_values_get_symmetric_limits_and_a_diverging_map() -> None:
    scale = robust_scale(np.array([[-2.0, 0.5], [1.0, 3.0]]))
    assert scale.vmin == -scale.vmax and scale.cmap == "RdBu_r"


def _inside_colours(path: Path) -> int:
    image = np.asarray(Image.open(path).convert("RGB"))
    h, w, _ = image.shape
    centre = image[h // 4 : 3 * h // 4, w // 6 : 2 * w // 3]  # inside the axes
    return len({tuple(pixel) for pixel in centre.reshape(-1, 3)})


def test_the_position_gram_figure_is_not_one_flat_colour(tmp_path: Path) -> None:
    gram = gram_with_a_huge_first_position()
    path = heatmap(gram, tmp_path / "position_gram.png", "gram", label="inner product")
    linear = robust_scale(gram, low=0.0, high=1.0)  # what the old extremes-based scale did
    assert linear.clipped == 0
    assert _inside_colours(path) > 20


def test_a_panel_grid_has_one_shared_colour_bar(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg", force=True)
    from matplotlib import pyplot as plt

    created = []
    original = plt.Figure.colorbar

    def counting(self, *args, **kwargs):
        created.append(1)
        return original(self, *args, **kwargs)

    plt.Figure.colorbar = counting
    try:
        matrices = np.random.default_rng(1).random((4, 6, 6))
        heatmap_grid(matrices, tmp_path / "grid.png", "per layer")
    finally:
        plt.Figure.colorbar = original
    assert created == [1]
    assert (tmp_path / "grid.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
