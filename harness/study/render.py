"""A computed study table as Markdown, as LaTeX (booktabs) and, for a scatter, a figure.

The three are written from one :class:`~posharness.study.tables.ComputedTable`, so the
paper-ready LaTeX, the Markdown and the report never disagree on a number. Every text of
the table (labels, cells, caption, notes) is escaped on the way out (``latex_text`` for
LaTeX, ``|`` for Markdown), so a name never breaks the file.
"""

from __future__ import annotations

from pathlib import Path

from posharness.study.latex_text import latex_escape, latex_label
from posharness.study.tables import ComputedTable, TableRow

__all__ = ["draw_scatter", "latex_escape", "to_latex", "to_markdown"]

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
    if table.tests:
        lines += ["", "Paired tests (Δ = PE − baseline, in the board's unit):", ""]
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


def draw_scatter(table: ComputedTable, path: Path) -> Path:
    """Chen et al. Fig. 2: one point per model and mode (x: first column, y: second);
    published points hollow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    markers = {"both": "o", "contextual": "s", "positional": "^"}
    for row in table.rows:
        x, y = (row.cells[0].value, row.cells[1].value) if len(row.cells) > 1 else (None, None)
        if x is None or y is None:
            continue
        face = "none" if row.published else None
        ax.scatter([x], [y], marker=markers.get(row.mode, "o"), facecolors=face,
                   edgecolors="black" if row.published else None)  # fmt: skip
        ax.annotate(f"{_label(row)} · {row.mode}", (x, y), fontsize=7, xytext=(3, 3),
                    textcoords="offset points")  # fmt: skip
    ax.set_xlabel(table.header[2])
    ax.set_ylabel(table.header[3])
    ax.set_title(table.spec.title, fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)
    return path
