"""The figures the report draws itself, as SVG text: generic over metrics, never a family's.

Two kinds, each a function of JSON data alone (``figure_store`` caches by that data):

* ``scatter`` — metric X against metric Y, one point per (model, mode), one colour per
  leaderboard, one marker per mode: Chen et al. (2023), Fig. 2 ("locality and symmetry
  values of positional encodings") when X and Y are ``locality_symmetry``'s metrics.
* ``dots`` — one panel per metric of a task, one line per row, the value with its interval
  (the task's 95 % CI with one seed, ± sd over seeds), coloured by mode.

A value from a flagged cell (``posharness.run.flags``: a degenerate classifier, too few
examples, uniform attention) is ringed in the flag colour and its name carries the tables'
"!", with a note at the foot; every marking element's SVG id starts with ``FLAG_GID``.

Output is byte-stable for the same data: a fixed ``svg.hashsalt``, no date in the
metadata, text drawn as paths (sharp in every viewer, no font needed).
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from typing import Any

from posharness.run.flags import FLAG_COLOUR, FLAG_GID, FLAG_MARK, flagged_label, note_flagged

MODE_MARKERS = {"both": "o", "contextual": "s", "positional": "^"}
MODE_COLOURS = {"both": "C0", "contextual": "C1", "positional": "C2"}
RC = {
    "svg.hashsalt": "posharness-report",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
}


def draw(kind: str, data: Any) -> str:
    from posharness.stats.plotting import pyplot

    plt = pyplot()
    import matplotlib

    with matplotlib.rc_context(RC):
        fig = RENDERERS[kind](plt, data)
        try:
            buffer = io.StringIO()
            fig.savefig(buffer, format="svg", metadata={"Date": None})
        finally:
            plt.close(fig)
    return buffer.getvalue()


def _scatter(plt, data: dict[str, Any]):
    """Points ``[label, mode, x, y, x_low, x_high, y_low, y_high]`` per series (a board)."""
    fig, ax = plt.subplots(figsize=(7.2, 5.0), dpi=100)
    xs = [p[2] for s in data["series"] for p in s["points"]]
    if xs and min(xs) > 0 and max(xs) / min(xs) >= 8:
        _log_axis(ax.xaxis)  # values a decade apart (near-uniform vs local attention)
    for k, series in enumerate(data["series"]):
        colour = f"C{k % 10}"
        for mode in sorted({p[1] for p in series["points"]}):
            points = [p for p in series["points"] if p[1] == mode]
            ax.errorbar(
                [p[2] for p in points],
                [p[3] for p in points],
                xerr=_spans([(p[2], p[4], p[5]) for p in points]),
                yerr=_spans([(p[3], p[6], p[7]) for p in points]),
                fmt=MODE_MARKERS.get(mode, "D"),
                color=colour,
                markersize=6,
                alpha=0.85,
                elinewidth=0.7,
                capsize=0,
            )
    marked = [p for s in data["series"] for p in s["points"] if _is_flagged(p)]
    if marked:
        _rings(ax, [p[2] for p in marked], [p[3] for p in marked], 110, "scatter")
    _label_points(ax, [p for s in data["series"] for p in s["points"]])
    ax.set_xlabel(data["x"])
    ax.set_ylabel(data["y"])
    ax.set_title(data["title"])
    ax.grid(alpha=0.3)
    handles = [
        plt.Line2D([], [], color=f"C{k % 10}", marker="o", linestyle="", label=s["name"])
        for k, s in enumerate(data["series"])
    ]
    modes = sorted({p[1] for s in data["series"] for p in s["points"]})
    handles += [
        plt.Line2D([], [], color="grey", marker=MODE_MARKERS.get(m, "D"), linestyle="", label=m)
        for m in modes
    ]
    if marked:
        handles.append(_ring_handle(plt))
    ax.legend(handles=handles, fontsize=7, loc="best", frameon=False)
    fig.tight_layout(rect=(0, note_flagged(fig, len(marked)), 1, 1))
    return fig


def _is_flagged(point: list[Any]) -> bool:
    """A scatter point's flag: its ninth field (absent in data drawn before flags were)."""
    return len(point) > 8 and bool(point[8])


def _rings(ax, xs: list[float], ys: list[float], size: float, tag: str) -> None:
    """Rings around flagged values, each its own SVG element with an id unique in the
    figure (``tag`` tells the axes apart) and the same on every drawing."""
    for k, (x, y) in enumerate(zip(xs, ys, strict=True)):
        ax.scatter(
            [x], [y], s=size, facecolors="none", edgecolors=FLAG_COLOUR, linewidths=1.1,
            zorder=4, gid=f"{FLAG_GID}-{tag}-{k}",
        )  # fmt: skip


def _ring_handle(plt):
    return plt.Line2D(
        [], [], marker="o", markersize=9, markerfacecolor="none", markeredgecolor=FLAG_COLOUR,
        linestyle="", label=f"{FLAG_MARK} flagged: not a finding",
    )  # fmt: skip


def _log_axis(axis) -> None:
    """A log scale labelled in plain numbers (0.02, 0.05, 0.1), not powers of ten."""
    from matplotlib.ticker import FuncFormatter

    axis.axes.set_xscale("log")
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:.0e}"[0] in "25" else ""))


def _spans(points: list[tuple[float, float | None, float | None]]):
    """Asymmetric error bars, or None when no point has an interval."""
    if all(low is None or high is None for _, low, high in points):
        return None
    below = [0.0 if low is None else max(0.0, value - low) for value, low, _ in points]
    above = [0.0 if high is None else max(0.0, high - value) for value, _, high in points]
    return [below, above]


def _label_points(ax, points: list[list[Any]], max_names: int = 4) -> None:
    """Name the points; points that fall on one spot share one label, so a cluster of
    near-uniform models reads as one list instead of a smudge of overlapping text."""
    ax.autoscale_view()  # the data limits, so positions in the axes are final
    to_axes = ax.transAxes.inverted()
    anchors: list[tuple[float, float, list[str]]] = []
    for point in points:
        fx, fy = to_axes.transform(ax.transData.transform((point[2], point[3])))
        name = flagged_label(point[0], _is_flagged(point))
        for ax_x, ax_y, names in anchors:
            if math.hypot(fx - ax_x, fy - ax_y) < 0.035:
                if name not in names:
                    names.append(name)
                break
        else:
            anchors.append((fx, fy, [name]))
    for fx, fy, names in anchors:
        shown = names[:max_names] + (
            [f"+{len(names) - max_names}"] if len(names) > max_names else []
        )
        right = fx > 0.7  # near the right edge the label goes left of its point
        ax.annotate(
            ", ".join(shown),
            (fx, fy),
            xycoords="axes fraction",
            xytext=(-4 if right else 4, 3),
            textcoords="offset points",
            horizontalalignment="right" if right else "left",
            fontsize=6.5,
            color="#333333",
        )


def _dots(plt, data: dict[str, Any]):
    """Rows ``labels`` with ``modes``; panels of ``[mean, low, high]`` (or None) per row."""
    panels = data["panels"]
    rows = data["labels"]
    columns = min(4, len(panels))
    lines = math.ceil(len(panels) / columns)
    height = 0.24 * len(rows) + 1.0
    fig, axes = plt.subplots(
        lines,
        columns,
        figsize=(2.3 * columns + 1.6, height * lines),
        dpi=100,
        sharey=True,
        squeeze=False,
    )
    positions = list(range(len(rows)))[::-1]  # first row on top, as in the table
    marked_rows = [
        any(panel.get("flagged", [False] * len(rows))[r] for panel in panels)
        for r in range(len(rows))
    ]
    for index, ax in enumerate(axes.flat):
        if index >= len(panels):
            ax.set_visible(False)
            continue
        panel = panels[index]
        for mode in sorted(set(data["modes"])):  # one call per mode: fast for 1,000 rows
            points = [
                (y, value)
                for y, m, value in zip(positions, data["modes"], panel["values"], strict=True)
                if m == mode and value is not None
            ]
            if not points:
                continue
            ax.errorbar(
                [value[0] for _, value in points],
                [y for y, _ in points],
                xerr=_spans([tuple(value) for _, value in points]),
                fmt=MODE_MARKERS.get(mode, "D"),
                color=MODE_COLOURS.get(mode, "C3"),
                markersize=4,
                elinewidth=0.8,
                capsize=1.5,
            )
        rings = [
            (value[0], y)
            for y, value, marked in zip(
                positions, panel["values"], panel.get("flagged", [False] * len(rows)), strict=True
            )
            if marked and value is not None
        ]
        if rings:
            _rings(ax, [x for x, _ in rings], [y for _, y in rings], 60, f"panel{index}")
        ax.set_title(panel["metric"])
        ax.grid(axis="x", alpha=0.3)
        ax.set_yticks(
            positions, [flagged_label(r, m) for r, m in zip(rows, marked_rows, strict=True)]
        )
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.tick_params(axis="y", length=0)
    fig.suptitle(data["title"], fontsize=9)
    fig.tight_layout(rect=(0, note_flagged(fig, sum(marked_rows)), 1, 1))
    return fig


RENDERERS: dict[str, Callable[[Any, Any], Any]] = {"scatter": _scatter, "dots": _dots}
