"""Heatmaps of positional attention (Chen et al. 2023, Fig. 1 and A3), written as PNGs."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from posharness.plotting import pyplot, robust_scale, save_figure


def heatmap(
    matrix: np.ndarray,
    path: Path,
    title: str,
    *,
    label: str = "attention",
) -> Path:
    """One matrix: rows are query positions, columns are key positions. Colours span the
    1st-99th percentiles (``robust_scale``); the figure says when cells were clipped."""
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(5.2, 4.6), dpi=110)
    scale = robust_scale(matrix)
    image = ax.imshow(
        matrix, cmap=scale.cmap, interpolation="nearest", vmin=scale.vmin, vmax=scale.vmax
    )
    ax.set_title(title + (f"\n{scale.note}" if scale.note else ""), fontsize=8)
    ax.set_xlabel("key position j")
    ax.set_ylabel("query position i")
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=label)
    fig.tight_layout()
    return save_figure(fig, path)


def heatmap_grid(matrices: np.ndarray, path: Path, title: str, panel: str = "layer") -> Path:
    """Several matrices side by side (one panel per layer or head) on one colour scale,
    so panels compare, with one colour bar for all of them."""
    plt = pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    count = len(matrices)
    cols = min(count, 6)
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(
        rows, cols, figsize=(2.3 * cols + 0.8, 2.3 * rows + 0.6), dpi=110, squeeze=False
    )
    scale = robust_scale(np.asarray(matrices))
    image = None
    for index, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if index >= count:
            ax.axis("off")
            continue
        image = ax.imshow(
            matrices[index],
            cmap=scale.cmap,
            interpolation="nearest",
            vmin=scale.vmin,
            vmax=scale.vmax,
        )
        ax.set_title(f"{panel} {index}", fontsize=8)
    fig.suptitle(title + (f"\n{scale.note}" if scale.note else ""), fontsize=9)
    fig.tight_layout()
    if image is not None:
        fig.colorbar(
            image, ax=axes.ravel().tolist(), fraction=0.02, pad=0.02, label="shared by all panels"
        )
    return save_figure(fig, path, bbox_inches="tight")  # keep the colour bar's labels
