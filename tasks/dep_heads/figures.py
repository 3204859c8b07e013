"""Best-head accuracy against relation distance per attention mode (Chen et al. 2023 Fig. 5)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from posharness.run.flags import FLAG_GID, flagged_label, note_flagged
from posharness.stats.plotting import pyplot, save_figure


def accuracy_by_distance(
    series: Mapping[str, Sequence[tuple[str, float, float]]],
    path: Path,
    title: str,
    flagged: Collection[str] = (),
) -> Path:
    """Best-head accuracy per relation against its mean distance (Chen et al. 2023, Fig. 5).

    ``series`` maps a label (an attention mode) to (relation, mean distance, accuracy)
    points; each series is drawn as a line through its relations in distance order, so
    where the positional and contextual lines cross reads off directly. Series named in
    ``flagged`` (their cell's result is flagged) are dashed and carry the tables' "!".
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.4), dpi=110)
    named: dict[str, tuple[float, float]] = {}
    for label, points in series.items():
        ordered = sorted(points, key=lambda p: p[1])
        xs = [p[1] for p in ordered]
        ys = [100 * p[2] for p in ordered]
        marked = label in flagged
        (line,) = ax.plot(
            xs, ys, marker="o", markersize=3.5, linewidth=1.2, label=flagged_label(label, marked)
        )
        if marked:
            line.set(linestyle="--", gid=FLAG_GID)
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
    # Beside the axes, not over them: a legend inside can hide the points it names.
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout(rect=(0, note_flagged(fig, sum(label in flagged for label in series)), 1, 1))
    return save_figure(fig, path, bbox_inches="tight")
