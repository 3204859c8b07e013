"""Per-layer probing accuracy, the curve behind each Table 9 number (Conneau et al. 2018
show such curves in their Fig. 2; Chen et al. report only the best layer)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from posharness.run.flags import FLAG_COLOUR, FLAG_GID, FLAG_MARK, flagged_label, note_flagged
from posharness.stats.plotting import pyplot, save_figure

BASELINE_STYLES = {"majority": ":", "chance": "--", "control": "-."}


def layer_curve(
    title: str,
    dev: Sequence[float],
    test: Sequence[float],
    baselines: Mapping[str, float],
    path: Path,
    flagged: bool = False,
) -> Path:
    """Dev and test accuracy per layer (0 = embeddings output), with the baselines as
    horizontal lines and the layer chosen on dev marked; a flagged cell (a degenerate
    classifier, a test split too small) has its title and curves marked."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.2, 3.4), dpi=110)
    layers = range(len(dev))
    for values, marker, label in ((dev, "o", "dev"), (test, "s", "test")):
        (line,) = ax.plot(
            layers, [100 * v for v in values], marker=marker, label=flagged_label(label, flagged)
        )
        if flagged:
            line.set(linestyle="--", gid=FLAG_GID)
    best = max(layers, key=lambda i: (dev[i], -i))
    ax.axvline(best, color="grey", alpha=0.3, linewidth=6, label=f"chosen on dev (layer {best})")
    for name, value in baselines.items():
        ax.axhline(
            100 * value,
            color="black",
            linestyle=BASELINE_STYLES.get(name, ":"),
            linewidth=0.9,
            label=name,
        )
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("accuracy (%)")
    ax.set_xticks(list(layers))
    ax.set_title(flagged_label(title, flagged), **({"color": FLAG_COLOUR} if flagged else {}))
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.tight_layout(rect=(0, note_flagged(fig, int(flagged)), 1, 1))
    return save_figure(fig, path)


def mode_curve_grid(
    panels: Sequence[tuple[str, Mapping[str, Sequence[float]], float]],
    path: Path,
    title: str,
    flagged: Collection[tuple[str, str]] = (),
) -> Path:
    """One panel per task: test accuracy per layer, one line per attention mode, chance
    dashed — where in the network the positional and contextual terms carry a property.
    ``flagged`` names the (panel, mode) cells whose result is flagged: their lines are
    dotted and marked with the tables' "!" at the last layer."""
    plt = pyplot()
    columns = min(5, len(panels))
    rows = -(-len(panels) // columns)
    fig, axes = plt.subplots(
        rows, columns, figsize=(2.6 * columns, 2.3 * rows + 0.6), dpi=110, squeeze=False
    )
    marked = 0
    for ax, (name, curves, chance) in zip(axes.flat, panels, strict=False):
        for k, (mode, values) in enumerate(curves.items()):
            ys = [100 * v for v in values]
            ax.plot(range(len(values)), ys, marker=".", label=mode, color=f"C{k}")
            if (name, mode) in flagged and values:
                marked += 1
                ax.plot(
                    range(len(values)), ys, color=FLAG_COLOUR, linestyle=":", linewidth=2.4,
                    gid=FLAG_GID,
                )  # fmt: skip
                ax.annotate(
                    FLAG_MARK,
                    (len(values) - 1, ys[-1]),
                    xytext=(3, 0),
                    textcoords="offset points",
                    color=FLAG_COLOUR,
                    fontweight="bold",
                    va="center",
                    gid=FLAG_GID,
                )
        ax.axhline(100 * chance, color="black", linestyle="--", linewidth=0.8)
        ax.set_title(flagged_label(name, any((name, m) in flagged for m in curves)), fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(panels) :]:
        ax.axis("off")
    margin = note_flagged(fig, marked)  # a foot line under the legend, when any is flagged
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="lower center",
        bbox_to_anchor=(0.5, margin),
        ncol=len(labels),
        fontsize=8,
        frameon=False,
    )
    fig.supxlabel("layer (0 = embeddings)", fontsize=8, y=0.06 + margin)
    fig.supylabel("test accuracy (%)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.07 + margin, 1, 1))
    return save_figure(fig, path)
