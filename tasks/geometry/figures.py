"""Heatmaps of positional attention (Chen et al. 2023, Fig. 1 and A3) and of the position
Gram matrix (Wennberg & Henter 2021, Fig. 1), written as PNGs.

Every heatmap takes its colour limits from ``posharness.stats.plotting.robust_scale`` and says
on the figure when cells were clipped; the ``*_figure`` functions draw without saving so
a test can look at the axes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from posharness.base.errors import DataError
from posharness.stats.plotting import ColourScale, pyplot, robust_scale, save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _with_note(text: str, scale: ColourScale) -> str:
    return f"{text}\n{scale.note}" if scale.note else text


def heatmap_figure(
    matrix: np.ndarray,
    title: str,
    *,
    label: str = "attention",
    axis_labels: tuple[str, str] = ("key position j", "query position i"),
) -> Figure:
    """One matrix on a robust colour scale; a clipped scale is named under the title."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 4.6), dpi=110)
    scale = robust_scale(matrix)
    image = ax.imshow(matrix, interpolation="nearest", **scale.imshow_args())
    ax.set_title(_with_note(title, scale), fontsize=8)
    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04, label=label, extend=scale.extend)
    fig.tight_layout()
    return fig


def heatmap(matrix: np.ndarray, path: Path, title: str, *, label: str = "attention") -> Path:
    """One attention matrix: rows are query positions, columns are key positions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_figure(heatmap_figure(matrix, title, label=label), path)


def position_gram_figure(gram: np.ndarray, title: str) -> Figure:
    """P = E_P E_Pᵀ: inner products of position embeddings, both axes positions.

    Position 0's norm is often far above every other entry; the robust scale clips it
    instead of letting it turn the rest of P one colour.
    """
    return heatmap_figure(
        gram, title, label="inner product p_i · p_j", axis_labels=("position j", "position i")
    )


def position_gram(gram: np.ndarray, path: Path, title: str) -> Path:
    """Write ``position_gram_figure`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_figure(position_gram_figure(gram, title), path)


def heatmap_grid_figure(
    matrices: np.ndarray, title: str, panel: str = "layer", *, label: str = "attention"
) -> Figure:
    """One panel per layer (or head), all on one colour scale with one colour bar, so a
    colour means the same value in every panel."""
    if len(matrices) == 0:
        raise DataError(f"no matrices to draw for '{title}': expected one per {panel}")
    plt = pyplot()
    count = len(matrices)
    cols = min(count, 6)
    rows = math.ceil(count / cols)
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(2.3 * cols + 1.0, 2.3 * rows + 0.7),
        dpi=110,
        squeeze=False,
        layout="constrained",  # room for the shared colour bar and a two-line title
    )
    scale = robust_scale(np.asarray(matrices))
    image = None
    for index, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if index >= count:
            ax.axis("off")
            continue
        image = ax.imshow(matrices[index], interpolation="nearest", **scale.imshow_args())
        ax.set_title(f"{panel} {index}", fontsize=8)
    fig.suptitle(_with_note(title, scale), fontsize=9)
    fig.colorbar(
        image,
        ax=axes,
        shrink=0.9,
        label=f"{label} (one scale shared by all {panel}s)",
        extend=scale.extend,
    )
    return fig


def heatmap_grid(
    matrices: np.ndarray, path: Path, title: str, panel: str = "layer", *, label: str = "attention"
) -> Path:
    """Write ``heatmap_grid_figure`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_figure(heatmap_grid_figure(matrices, title, panel, label=label), path)
