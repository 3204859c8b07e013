"""The drift figure of ``length_geometry``: each geometry metric against the probe length,
one panel per metric, the probe's attention and the positional term as two lines, so a
reader sees at a glance whether a PE's locality, symmetry or Toeplitzness moves with
length. ``drift_figure_draw`` draws without saving, so a test can look at the axes.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from posharness.stats.plotting import pyplot, save_figure

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PANELS = (
    ("locality", "locality", "positional_term_locality"),
    ("symmetry", "symmetry", "positional_term_symmetry"),
    ("Toeplitz R²", "attention_r2", "positional_term_r2"),
)


def drift_figure_draw(per_length: dict[int, dict[str, float]], title: str) -> Figure:
    """Lengths on a log-2 axis; a metric absent at a length leaves a gap, never a zero."""
    plt = pyplot()
    fig, axes = plt.subplots(1, len(PANELS), figsize=(11, 3.4), dpi=110, layout="constrained")
    lengths = sorted(per_length)
    for ax, (label, probe, term) in zip(axes, PANELS, strict=True):
        for name, style, legend in ((probe, "o-", "probe attention"), (term, "s--", "softmax(δ)")):
            points = [(n, per_length[n][name]) for n in lengths if name in per_length[n]]
            if points:
                xs, ys = zip(*points, strict=True)
                ax.plot(xs, ys, style, label=legend if name != "positional_term_r2" else "δ")
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(n) for n in lengths])
        ax.set_xlabel("probe length (tokens)")
        ax.set_title(label, fontsize=9)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    return fig


def drift_figure(per_length: dict[int, dict[str, float]], path: Path, title: str) -> Path:
    """Write ``drift_figure_draw`` to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_figure(drift_figure_draw(per_length, title), path)
