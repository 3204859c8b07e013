"""Word-swap probe deltas with intervals beside the paper's (Chen et al. 2023 Table 3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from posharness.plotting import pyplot, save_figure


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
    plt = pyplot()
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
    # Beside the axes, not over them: a legend inside can hide the points it names.
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout()
    return save_figure(fig, path, bbox_inches="tight")
