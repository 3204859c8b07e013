"""A computed study table as Markdown, as LaTeX (booktabs) and, for a scatter, a figure.

The three are written from one :class:`~posharness.study.tables.ComputedTable`, so the
paper-ready LaTeX, the Markdown and the report never disagree on a number. Every text of
the table (labels, cells, caption, notes) is escaped on the way out (``latex_text`` for
LaTeX, ``|`` for Markdown), so a name never breaks the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from posharness.study.latex_text import latex_escape, latex_label
from posharness.study.tables import ComputedTable, TableRow

__all__ = [
    "draw_dynamics",
    "draw_scatter",
    "scatter_panels",
    "latex_escape",
    "to_latex",
    "to_markdown",
]

PUBLISHED_TAG = "published"


def _label(row: TableRow) -> str:
    return f"{row.label} ({PUBLISHED_TAG})" if row.published else row.label


def _values(row: TableRow) -> list[str]:
    return [cell.shown for cell in row.cells]


def _md_row(cells: list[str]) -> str:
    """A Markdown table row; a ``|`` or a line break inside a cell would split the row."""
    return "| " + " | ".join(" ".join(c.replace("|", r"\|").split()) for c in cells) + " |"


def to_markdown(table: ComputedTable) -> str:
    lines = [f"## {table.spec.title}", "", table.caption, ""]
    lines.append(_md_row(table.header))
    lines.append("|" + "|".join([":--", ":--"] + ["--:"] * (len(table.header) - 2)) + "|")
    ours = [r for r in table.rows if not r.published]
    theirs = [r for r in table.rows if r.published]
    for row in ours + theirs:
        lines.append(_md_row([_label(row), row.mode, *_values(row)]))
    lines += [""] + [f"- {note}" for note in table.notes]
    if table.pe_tests:
        lines += ["", "PE-level tests over pretraining seeds (Δ = PE mean − baseline mean, in "
                  "the table's unit):", ""]  # fmt: skip
        lines.append("| PE | column | baseline PE | Δ | p (Holm) | test |")
        lines.append("|:--|:--|:--|--:|--:|:--|")
        lines += [_md_row(list(line.cells())) for line in table.pe_tests]
    if table.tests:
        within = " within one model" if any(row.seeds for row in table.rows) else ""
        lines += ["", f"Paired tests{within} (Δ = PE − baseline, in the board's unit):", ""]
        lines.append("| row | column | baseline | Δ | p (Holm) | test |")
        lines.append("|:--|:--|:--|--:|--:|:--|")
        lines += [_md_row(list(line.cells())) for line in table.tests]
    return "\n".join(lines) + "\n"


def to_latex(table: ComputedTable) -> str:
    """A ``table`` with ``booktabs`` rules (\\usepackage{booktabs}, amssymb for ▲▼)."""
    columns = "ll" + "r" * (len(table.header) - 2)
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{columns}}}",
        r"\toprule",
        " & ".join(latex_escape(h) for h in table.header) + r" \\",
        r"\midrule",
    ]
    ours = [r for r in table.rows if not r.published]
    theirs = [r for r in table.rows if r.published]
    for row in ours:
        lines.append(
            " & ".join(latex_escape(t) for t in [row.label, row.mode, *_values(row)]) + r" \\"
        )
    if theirs:
        lines.append(r"\midrule")
        span = len(table.header)
        lines.append(
            rf"\multicolumn{{{span}}}{{l}}{{\emph{{{PUBLISHED_TAG}, BERT-base scale}}}} \\"
        )
        for row in theirs:
            cells = [row.label, row.mode, *_values(row)]
            lines.append(" & ".join(latex_escape(t) for t in cells) + r" \\")
    caption = " ".join([table.caption, *table.notes])
    lines += [
        r"\bottomrule",
        r"\end{tabular}",
        rf"\caption{{{latex_escape(caption)}}}",
        rf"\label{{tab:{latex_label(table.spec.id)}}}",
        r"\end{table}",
    ]
    return "\n".join(lines) + "\n"


Point = tuple[TableRow, float, float]


def scatter_panels(table: ComputedTable) -> dict[int | None, list[Point]]:
    """A scatter's points by probe length (None: the table has no probe axis): ours at
    the length their stage probed at, the published ones at the paper's."""
    probe = table.spec.probe
    points: dict[int | None, list[Point]] = {}
    for row in table.rows:
        x, y = (row.cells[0].value, row.cells[1].value) if len(row.cells) > 1 else (None, None)
        if x is None or y is None:
            continue
        length = None
        if probe is not None:
            length = probe.published if row.published else table.probe_lengths.get(row.label)
        points.setdefault(length, []).append((row, x, y))
    return points


def draw_scatter(table: ComputedTable, path: Path) -> Path:
    """Chen et al. Fig. 2: one point per model and mode (x: first column, y: second);
    published points hollow. Each model has a colour and each mode a marker, named in a
    legend beside the axes, not by text at each point (36 labels overlapped). With a
    probe axis (``StudyTable.probe``) the points of each probe length get their own panel
    with the flat map's x value at that length drawn: a uniform map's locality is 9.0 at
    32 tokens and 2.3 at 128, so one axis would read a length difference as locality."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    probe = table.spec.probe
    points = scatter_panels(table)
    panels = sorted(points, key=lambda n: (n is None, n or 0)) or [None]
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4.2 * len(panels) + 2.4, 4.4), squeeze=False, sharey=True
    )
    markers = {"both": "o", "contextual": "s", "positional": "^"}
    labels = list(dict.fromkeys(_label(row) for row in table.rows))
    palette = plt.get_cmap("tab20")
    colour = {label: palette(index % 20) for index, label in enumerate(labels)}
    for ax, length in zip(axes[0], panels, strict=True):
        for row, x, y in points.get(length, []):
            ax.scatter(
                [x],
                [y],
                marker=markers.get(row.mode, "o"),
                s=36,
                facecolors="none" if row.published else colour[_label(row)],
                edgecolors=colour[_label(row)],
                linewidths=1.2,
            )
        if probe is not None and length is not None:
            flat = probe.flat(length)
            ax.axvline(flat, color="grey", linestyle="--", linewidth=1)
            ax.annotate(
                f"flat map {flat:.1f}",
                (flat, 1.0),
                xycoords=("data", "axes fraction"),
                xytext=(3, -10),
                textcoords="offset points",
                fontsize=7,
                color="grey",
            )
            ax.set_title(f"probe of {length} tokens", fontsize=9)
        ax.set_xlabel(table.header[2])
    axes[0][0].set_ylabel(table.header[3])
    handles = [
        Line2D([], [], linestyle="", marker="o", color=colour[label], label=label)
        for label in labels
        if any(_label(r) == label for group in points.values() for r, _, _ in group)
    ]
    modes = dict.fromkeys(row.mode for group in points.values() for row, _, _ in group)
    handles += [
        Line2D([], [], linestyle="", marker=markers.get(mode, "o"), color="black", label=mode)
        for mode in modes
    ]
    names = [handle.get_label() for handle in handles]
    return _save_with_legend(fig, handles, names, 2.2, table.spec.title, path)


def draw_dynamics(table: ComputedTable, path: Path) -> Path:
    """A dynamics table as a figure: one panel per column, the metric against tokens seen
    (log x-axis), one line per PE (the mean over its seeds) with a band from its lowest to
    its highest seed, and the flat map's value dashed where the column has one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = [c.label for c in table.spec.columns]
    fig, axes = plt.subplots(
        1, len(columns), figsize=(3.4 * len(columns) + 1.6, 3.6), squeeze=False
    )
    labels = list(dict.fromkeys(row.label for row in table.rows))
    palette = plt.get_cmap("tab10")
    colour = {label: palette(index % 10) for index, label in enumerate(labels)}
    for ax, column in zip(axes[0], columns, strict=True):
        series = table.series.get(column)
        for label, points in (series.points if series else {}).items():
            points = sorted(points)
            tokens = [p[0] for p in points]
            ax.plot(tokens, [p[1] for p in points], marker="o", ms=3, color=colour[label],
                    label=label)  # fmt: skip
            ax.fill_between(tokens, [p[2] for p in points], [p[3] for p in points],
                            color=colour[label], alpha=0.2, linewidth=0)  # fmt: skip
        if series is not None and series.flat is not None:
            ax.axhline(series.flat, color="grey", linestyle="--", linewidth=1, label="flat map")
        ax.set_xscale("log")
        ax.set_xlabel("tokens seen")
        ax.set_title(column, fontsize=9)
    handles, names = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for handle, name in zip(*ax.get_legend_handles_labels(), strict=True):
            if name not in names:
                handles.append(handle)
                names.append(name)
    return _save_with_legend(fig, handles, names, 1.4, table.spec.title, path)


def _save_with_legend(
    fig: Any, handles: list[Any], names: list[str], legend_inches: float, title: str, path: Path
) -> Path:
    """A study figure finished alike: ``title`` above, the legend in a margin of
    ``legend_inches`` on the right (its longest names' width), written to ``path``
    without a software stamp (the same figure, the same bytes) and closed."""
    import matplotlib.pyplot as plt

    fig.legend(handles, names, loc="center right", fontsize=7, frameon=False)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout(rect=(0, 0, 1 - legend_inches / fig.get_figwidth(), 1))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return path
