"""Word-swap probe deltas with intervals beside the paper's (Chen et al. 2023 Table 3)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import numpy as np

from posharness.run.flags import FLAG_COLOUR, FLAG_GID, FLAG_HATCH, FLAG_MARK, note_flagged
from posharness.stats.plotting import pyplot, save_figure


def delta_bars(
    groups: Sequence[str],
    series: Mapping[str, Sequence[tuple[float, float | None, float | None] | None]],
    references: Mapping[str, Sequence[float]],
    path: Path,
    title: str,
    flagged: Collection[tuple[str, str]] = (),
) -> Path:
    """Grouped bars of accuracy changes with their intervals (Chen et al. 2023, Table 3).

    ``series`` maps a label (an attention mode) to one (delta, low, high) per group, in
    points, or None where that cell is missing; ``references`` are published values drawn
    as black markers over the bars, so a row reads against the paper at a glance.
    ``flagged`` names the (label, group) cells whose result is flagged (a degenerate
    classifier's +100 is not an effect): their bars are hatched and carry the tables' "!".
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.2 * len(groups) + 2.5, 4.2), dpi=110)
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    marked = 0
    from matplotlib.patches import Patch

    # Legend entries of their own: a series' first bar may be a flagged (hatched) one.
    handles: list = [
        Patch(facecolor=f"C{k}", label=label)
        for k, (label, points) in enumerate(series.items())
        if any(points)
    ]
    for k, (label, points) in enumerate(series.items()):
        offset = (k - (len(series) - 1) / 2) * width
        for i, point in enumerate(points):
            if point is None:
                continue
            value, low, high = point
            errors = None
            if low is not None and high is not None:
                errors = [[max(0.0, value - low)], [max(0.0, high - value)]]
            (bar,) = ax.bar(
                x[i] + offset,
                value,
                width,
                yerr=errors,
                capsize=2,
                ecolor="dimgray",
                color=f"C{k}",
            )
            if (label, groups[i]) in flagged:
                marked += 1
                bar.set(hatch=FLAG_HATCH, edgecolor="black", gid=FLAG_GID)
                tip = max(value, high or value) if value >= 0 else min(value, low or value)
                ax.annotate(
                    FLAG_MARK,
                    (x[i] + offset, tip),
                    xytext=(0, 3 if value >= 0 else -3),
                    textcoords="offset points",
                    ha="center",
                    va="bottom" if value >= 0 else "top",
                    color=FLAG_COLOUR,
                    fontweight="bold",
                    gid=FLAG_GID,
                )
    for label, values in references.items():
        ax.scatter(x, values, marker="D", s=22, color="crimson", zorder=3, label=label)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xticks(x, groups)
    ax.set_ylabel("Δ accuracy vs originals (points)")
    ax.set_title(title, fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    # Beside the axes, not over them: a legend inside can hide the points it names.
    handles += ax.get_legend_handles_labels()[0]  # the published references
    if marked:
        ax.margins(y=0.12)  # room for the "!" over a bar at the axis' end
        handles.append(
            Patch(
                facecolor="white",
                edgecolor="black",
                hatch=FLAG_HATCH,
                label=f"{FLAG_MARK} flagged: not a finding",
            )
        )
    ax.legend(
        handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False
    )
    fig.tight_layout(rect=(0, note_flagged(fig, marked), 1, 1))
    return save_figure(fig, path, bbox_inches="tight")
