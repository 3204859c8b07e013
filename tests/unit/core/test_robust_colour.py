"""Heatmaps a person can read (issue 19): robust colour limits that say on the figure when
they clip, symmetric around 0 for signed values, one shared colour bar on panel grids,
and legends of line plots that sit off the data."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from posharness.base.errors import DataError, OptionError
from posharness.stats.plotting import pyplot, robust_scale, save_figure
from posharness.tasks.geometry.figures import (
    heatmap_grid,
    heatmap_grid_figure,
    position_gram_figure,
)
from posharness.tasks.geometry.toeplitz import Toeplitz


def sinusoid_gram(n: int = 48, first_norm: float | None = None) -> np.ndarray:
    """E_P E_Pᵀ of sinusoidal positions (Toeplitz by construction), optionally with
    position 0's squared norm blown up as learned absolute tables often have it."""
    positions = np.arange(n)[:, None]
    frequencies = np.exp(-np.arange(8) / 2)
    table = np.concatenate([np.sin(positions * frequencies), np.cos(positions * frequencies)], 1)
    gram = table @ table.T
    if first_norm is not None:
        gram[0, 0] = first_norm
    return gram


def attention_with_sinks(n: int = 128, sinks: tuple[int, ...] = (0, 127)) -> np.ndarray:
    """Local attention whose rows also put most of their mass on [CLS]/[SEP] columns."""
    rng = np.random.default_rng(0)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    scores = np.exp(-distance / 3.0) + 0.05 * rng.random((n, n))
    scores[:, list(sinks)] += 20.0
    return scores / scores.sum(axis=1, keepdims=True)


def test_one_huge_outlier_is_left_out_of_the_scale_and_reported() -> None:
    scale = robust_scale(sinusoid_gram(first_norm=1e6))
    assert scale.vmax < 100 and scale.vmin == -scale.vmax
    assert (scale.below, scale.above, scale.extend) == (0, 1, "max")
    assert scale.note.startswith("colour clipped to [") and "1 of 2304 cells beyond" in scale.note


def test_sink_columns_above_one_percent_of_the_cells_are_still_clipped() -> None:
    attention = attention_with_sinks()  # two sink columns: 1.6 % of the cells
    scale = robust_scale(attention)
    assert (attention[:, [0, 127]] > scale.vmax).all()
    assert scale.clipped <= 0.02 * attention.size + 1  # the tail share a side, rounded up
    assert scale.vmax < 0.1 * attention.max()


@pytest.mark.parametrize(
    "values",
    [
        np.linspace(0.0, 1.0, 101),
        np.random.default_rng(2).normal(size=(64, 64)),
        np.exp(-np.abs(np.arange(64)[:, None] - np.arange(64)[None, :]) / 10.0),
        sinusoid_gram(),
        np.full((8, 8), 0.125),
    ],
    ids=["uniform", "gaussian", "smooth-decay", "sinusoid-gram", "constant"],
)
def test_a_matrix_without_outliers_is_not_clipped(values: np.ndarray) -> None:
    scale = robust_scale(values)
    assert scale.clipped == 0 and scale.note == "" and scale.extend == "neither"
    assert scale.vmax >= values.max() and (scale.vmin <= values.min())


def test_signed_values_get_symmetric_limits_and_a_diverging_map() -> None:
    signed = robust_scale(np.random.default_rng(3).normal(0.7, 1.0, size=(32, 32)))
    assert signed.vmin == -signed.vmax and signed.cmap == "RdBu_r"
    assert signed.vmax > 0
    positive = robust_scale(np.random.default_rng(3).random((32, 32)))
    assert positive.cmap == "viridis" and positive.vmin >= 0


def test_non_finite_cells_are_ignored_and_bad_options_refused() -> None:
    values = np.array([[0.0, np.nan], [1.0, np.inf]])
    assert (robust_scale(values).vmin, robust_scale(values).vmax) == (0.0, 1.0)
    with pytest.raises(OptionError, match="tail"):
        robust_scale(values, tail=0.7)


def _axes_pixels(fig, path: Path) -> np.ndarray:
    """The RGB pixels inside the first axes of ``fig``, read back from the saved PNG."""
    fig.canvas.draw()
    box = fig.axes[0].get_window_extent()
    height = fig.canvas.get_width_height()[1]
    save_figure(fig, path)
    image = np.asarray(Image.open(path).convert("RGB"), dtype=np.float64)
    inset = 3  # keep the spines out
    rows = slice(height - int(box.y1) + inset, height - int(box.y0) - inset)
    return image[rows, int(box.x0) + inset : int(box.x1) - inset]


def test_the_position_gram_figure_is_not_one_flat_colour(tmp_path: Path) -> None:
    gram = sinusoid_gram(first_norm=1e4 * np.abs(sinusoid_gram()).max())
    drawn = _axes_pixels(position_gram_figure(gram, "toy · P"), tmp_path / "position_gram.png")
    fig, ax = pyplot().subplots(figsize=(5.2, 4.6), dpi=110)
    ax.imshow(gram, cmap="RdBu_r")  # the old linear scale: one colour but for [0, 0]
    flat = _axes_pixels(fig, tmp_path / "linear.png")
    colours = len({tuple(pixel) for pixel in drawn.reshape(-1, 3)})
    assert len({tuple(pixel) for pixel in flat.reshape(-1, 3)}) <= 3
    assert colours >= 20
    assert drawn.std(axis=(0, 1)).mean() > 10 * flat.std(axis=(0, 1)).mean()


def test_the_toeplitz_task_writes_the_gram_figure_under_its_old_name(tmp_path: Path) -> None:
    ctx = SimpleNamespace(artifact_dir=tmp_path)
    model = SimpleNamespace(spec="toy")
    written = Toeplitz()._gram_figure(model, ctx, sinusoid_gram(first_norm=1e6))
    assert written == Path("position_gram.png")
    assert (tmp_path / written).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_panel_grid_has_exactly_one_colour_bar_shared_by_all_panels() -> None:
    layers = np.stack([attention_with_sinks(32, (0,)) ** (1 + k / 3) for k in range(7)])
    fig = heatmap_grid_figure(layers, "toy · per layer")
    try:
        bars = [ax for ax in fig.axes if ax.get_label() == "<colorbar>"]
        images = [image for ax in fig.axes for image in ax.get_images()]
        assert len(bars) == 1 and "shared by all layers" in bars[0].get_ylabel()
        assert len(images) == 7 and len({image.get_clim() for image in images}) == 1
        assert "cells beyond" in fig.get_suptitle()  # the sinks were clipped, and it says so
    finally:
        pyplot().close(fig)


def test_an_empty_panel_grid_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no matrices"):
        heatmap_grid(np.zeros((0, 4, 4)), tmp_path / "grid.png", "nothing")


def _captured(monkeypatch, module) -> list:
    figures: list = []

    def keep(fig, path, **_):
        fig.canvas.draw()
        figures.append(fig)
        return path

    monkeypatch.setattr(module, "save_figure", keep)
    return figures


def _legend_boxes(fig) -> list:
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    return [legend.get_window_extent() for legend in legends]


def test_line_plot_legends_sit_off_the_data(monkeypatch, tmp_path: Path) -> None:
    from posharness.tasks.dep_heads import figures as dep_figures
    from posharness.tasks.senteval import figures as senteval_figures
    from posharness.tasks.shuffle import figures as shuffle_figures

    drawn = _captured(monkeypatch, dep_figures)
    monkeypatch.setattr(senteval_figures, "save_figure", dep_figures.save_figure)
    monkeypatch.setattr(shuffle_figures, "save_figure", dep_figures.save_figure)
    points = [("nsubj", 1.5, 0.9), ("obj", 2.5, 0.7), ("amod", 1.2, 0.95), ("advcl", 9.0, 0.4)]
    modes = ("both", "contextual", "positional")
    dep_figures.accuracy_by_distance({m: points for m in modes}, tmp_path / "a.png", "t")
    curves = {m: [0.5, 0.6, 0.7, 0.65] for m in modes}
    senteval_figures.mode_curve_grid([("SentLen", curves, 0.17)] * 3, tmp_path / "b.png", "t")
    senteval_figures.layer_curve("t", [0.5, 0.7], [0.5, 0.6], {"chance": 0.5}, tmp_path / "c")
    cell = [(1.0, 0.0, 2.0), (-2.0, -3.0, -1.0)]
    shuffle_figures.delta_bars(
        ["a", "b"], {m: cell for m in modes}, {"paper": [1.0, -1.0]}, tmp_path / "d.png", "t"
    )
    assert len(drawn) == 4
    for fig in drawn:
        legends = _legend_boxes(fig)
        plots = [ax.get_window_extent() for ax in fig.axes if ax.has_data()]
        assert legends and plots
        assert not any(legend.overlaps(plot) for legend in legends for plot in plots)
        pyplot().close(fig)
