"""Heatmaps of positional attention (Chen et al. 2023, Fig. 1 and A3), written as PNGs.

matplotlib runs headless (Agg) and is imported only when a figure is drawn.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    """Write the PNG under a temporary name and rename it: never a half-written figure."""
    plt = _pyplot()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fig.savefig(tmp, format="png")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if tmp.exists():
            tmp.unlink()
    return path


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
    plt = _pyplot()
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
    return _save(fig, path)


def heatmap_grid(matrices: np.ndarray, path: Path, title: str, panel: str = "layer") -> Path:
    """Several matrices side by side (one panel per layer or head), each on its own scale.

    Each panel's colours are clipped at its 99th percentile.
    """
    plt = _pyplot()
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
    return _save(fig, path)


def accuracy_by_distance(
    series: Mapping[str, Sequence[tuple[str, float, float]]], path: Path, title: str
) -> Path:
    """Best-head accuracy per relation against its mean distance (Chen et al. 2023, Fig. 5).

    ``series`` maps a label (an attention mode) to (relation, mean distance, accuracy)
    points; each series is drawn as a line through its relations in distance order, so
    where the positional and contextual lines cross reads off directly.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.4), dpi=110)
    named: dict[str, tuple[float, float]] = {}
    for label, points in series.items():
        ordered = sorted(points, key=lambda p: p[1])
        xs = [p[1] for p in ordered]
        ys = [100 * p[2] for p in ordered]
        ax.plot(xs, ys, marker="o", markersize=3.5, linewidth=1.2, label=label)
        for relation, distance, accuracy in ordered:
            top = named.get(relation, (distance, -1.0))[1]
            named[relation] = (distance, max(top, 100 * accuracy))
    for relation, (distance, accuracy) in named.items():
        ax.annotate(
            relation,
            (distance, accuracy),
            textcoords="offset points",
            xytext=(2, 4),
            fontsize=6,
            rotation=45,
        )
    from matplotlib.ticker import FormatStrFormatter

    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.tick_params(axis="x", which="minor", labelsize=7)
    ax.set_xlabel("mean dependent-head distance (words, log scale)")
    ax.set_ylabel("best-head accuracy (%)")
    ax.set_ylim(0, 105)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def delta_bars(
    groups: Sequence[str],
    series: Mapping[str, Sequence[tuple[float, float | None, float | None] | None]],
    references: Mapping[str, Sequence[float]],
    path: Path,
    title: str,
) -> Path:
    """Grouped bars of accuracy changes with their intervals (Chen et al. 2023, Table 3).

    ``series`` maps a label (an attention mode) to one (delta, low, high) per group, in
    points, or None where that cell is missing; ``references`` are published values drawn
    as black markers over the bars, so a row reads against the paper at a glance.
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.2 * len(groups) + 2.5, 4.2), dpi=110)
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for k, (label, points) in enumerate(series.items()):
        offset = (k - (len(series) - 1) / 2) * width
        for i, point in enumerate(points):
            if point is None:
                continue
            value, low, high = point
            errors = None
            if low is not None and high is not None:
                errors = [[max(0.0, value - low)], [max(0.0, high - value)]]
            ax.bar(
                x[i] + offset,
                value,
                width,
                yerr=errors,
                capsize=2,
                ecolor="dimgray",
                color=f"C{k}",
                label=label if i == next(j for j, p in enumerate(points) if p) else None,
            )
    for label, values in references.items():
        ax.scatter(x, values, marker="D", s=22, color="crimson", zorder=3, label=label)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(x, groups)
    ax.set_ylabel("Δ accuracy vs originals (points)")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)
