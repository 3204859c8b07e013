"""Heatmaps of positional attention (Chen et al. 2023, Fig. 1 and A3), written as PNGs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from posharness.plotting import pyplot, save_figure


def _colour_limit(matrix: np.ndarray, quantile: float | None) -> float | None:
    """Clip the colour scale so a few hot cells ([CLS]/[SEP] sinks) do not hide the rest."""
    return None if quantile is None else float(np.quantile(matrix, quantile))


def heatmap(
    matrix: np.ndarray,
    path: Path,
    title: str,
    *,
    label: str = "attention",
    clip_quantile: float | None = 0.99,
) -> Path:
    """One matrix: rows are query positions, columns are key positions."""
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5.2, 4.6), dpi=110)
    vmax = _colour_limit(matrix, clip_quantile)
    image = ax.imshow(matrix, cmap="viridis", interpolation="nearest", vmax=vmax)
    suffix = f" (colour clipped at q={clip_quantile})" if clip_quantile is not None else ""
    ax.set_title(title + suffix, fontsize=8)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=label)
    fig.tight_layout()
    return save_figure(fig, path)


def heatmap_grid(matrices: np.ndarray, path: Path, title: str, panel: str = "layer") -> Path:
    """Several matrices side by side (one panel per layer or head), each on its own scale.

    Each panel's colours are clipped at its 99th percentile.
    """
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    count = len(matrices)
    cols = min(count, 6)
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.3 * cols, 2.3 * rows + 0.4), dpi=110, squeeze=False
    )
    for index, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if index >= count:
            ax.axis("off")
            continue
        vmax = _colour_limit(matrices[index], 0.99)
        ax.imshow(matrices[index], cmap="viridis", interpolation="nearest", vmax=vmax)
        ax.set_title(f"{panel} {index}", fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return save_figure(fig, path)
