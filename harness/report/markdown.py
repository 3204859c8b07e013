"""The same report as Markdown (``--format md``): tables and figure links for a paper's
appendix or a repository README, from the view model the HTML pages use."""

from __future__ import annotations

from posharness.boards.compare import family_size
from posharness.boards.compare_output import test_text
from posharness.report import model
from posharness.report.artifacts import is_image
from posharness.report.model import (
    BoardView,
    ComparisonView,
    FigureRef,
    PaperTableView,
    Provenance,
    Study,
)
from posharness.run.flags import FLAG_MARK
from posharness.stats.paired_tests import format_p


def render_markdown(study: Study) -> dict[str, str]:
    pages = {"index.md": _index(study)}
    if study.paper_tables:
        pages["tables.md"] = _paper_tables(study)
    for board in study.boards:
        pages[f"boards/{board.slug}.md"] = _board(board)
    for comparison in study.comparisons:
        pages[f"compare/{comparison.slug}.md"] = _comparison(comparison)
    return pages


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> list[str]:
    rule = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(_cell(h) for h in header) + " |", "| " + " | ".join(rule) + " |"]
    return lines + ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]


def _figure(figure: FigureRef, root: str) -> str:
    if is_image(figure.href):
        return f"![{_cell(figure.caption)}]({root}{figure.href})"
    return f"- [{_cell(figure.caption)}]({root}{figure.href})"


def _index(study: Study) -> str:
    lines = [f"# {study.title}", ""] if study.title else []
    if study.paper_tables:
        lines += ["## [Study tables](tables.md)", ""]
        lines += [
            f"- [{_cell(t.table.title)}](tables.md#{t.slug}) `{t.table.id}`"
            for t in study.paper_tables
        ]
        lines.append("")
    lines += ["## Leaderboards" if study.title else "# Leaderboards", ""]
    rows = [
        [
            f"[{b.name}](boards/{b.slug}.md)",
            ", ".join(b.models),
            ", ".join(b.modes),
            ", ".join(b.tasks),
            str(len(b.rows)),
            f"{b.results_at_hand} of {b.results_named}",
            model.when(b.created_at),
        ]
        for b in study.boards
    ]
    header = ["leaderboard", "models", "modes", "tasks", "rows", "result files at hand", "built"]
    lines += _table(header, rows, {4, 5})
    lines += ["", "## Locality and symmetry across every model and mode", ""]
    for scatter in study.scatters:
        if scatter.figure is None:
            lines.append(
                f"{scatter.title}: no row has both `{scatter.x}` and `{scatter.y}`, "
                "so there is nothing to plot."
            )
        else:
            lines.append(_figure(scatter.figure, ""))
        lines.append("")
    if study.comparisons:
        lines += ["## Comparisons", ""]
        lines += [f"- [{c.a.name} → {c.b.name}](compare/{c.slug}.md)" for c in study.comparisons]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _board(board: BoardView) -> str:
    lines = [f"# {board.name}", ""]
    lines.append(f"- file: `{board.source}`; built {model.when(board.created_at)}")
    lines.append(f"- result files at hand: {board.results_at_hand} of {board.results_named}")
    lines += [f"- {line}" for line in board.how_made]
    lines += [
        "",
        "Mean over task seeds; ± sd over task seeds, or [the task's 95 % interval] with one "
        "seed. A task seed draws the task's sample for the row's one model, never its "
        "pretraining. "
        "! marks a flagged task, ° a number whose result files are not at hand.",
        "",
    ]
    for section in board.kinds:
        lines += [f"## {section.kind}", ""]
        header = ["PE family", "model", "mode"] + [c.key for c in section.columns]
        rows = []
        for view in section.rows:
            note = model.settings_text(view.row, [t.name for t in section.tasks])
            cells = [
                view.row.pe_family,
                view.label,
                view.mode_label + (f" · {note}" if note else ""),
            ]
            for column in section.columns:
                score = view.row.scores.get(column.key)
                text = f"{model.mean_text(score)} {model.spread_text(score)}".strip()
                if score is not None and column.task in view.row.flags:
                    text += " !"
                if score is not None and not view.provenance[column.task].at_hand:
                    text += " °"
                cells.append(text)
            rows.append(cells)
        lines += _table(header, rows, set(range(3, len(header))))
        lines.append("")
        for task in section.tasks:
            if task.figures or task.files:
                lines += [f"### {task.name}", ""]
                lines += [_figure(f, "../") for f in (*task.figures, *task.files)]
                lines.append("")
        if section.summaries or section.tables:
            lines += ["### Across modes", ""]
            lines += [_figure(f, "../") for f in (*section.summaries, *section.tables)]
            lines.append("")
    if board.figures:
        lines += ["## Across the board", ""] + [_figure(f, "../") for f in board.figures] + [""]
    lines += ["## Provenance", ""]
    blocks = [p for view in board.rows for p in view.provenance.values()]
    lines += _table(
        ["model", "mode", "task", "fingerprint", "split", "task version", "data hash", "result"],
        [_provenance_row(p) for p in blocks],
    )
    return "\n".join(lines).rstrip() + "\n"


def _provenance_row(p: Provenance) -> list[str]:
    split = ("exact" if p.row.exact else "approximation") + f": {p.row.definition or '–'}"
    if not p.cells:
        return [p.row.model, p.row.mode, p.task, f"`{p.row.fingerprint}`", split] + [
            "–",
            "–",
            "result files not at hand",
        ]
    versions = ", ".join(sorted({c.result.task.version for c in p.cells}))
    hashes = ", ".join(sorted({f"`{c.result.task.data_hash}`" for c in p.cells}))
    links = ", ".join(f"[seed {c.result.seed}](../{c.href})" for c in p.cells)
    return [
        p.row.model,
        p.row.mode,
        p.task,
        f"`{p.row.fingerprint}`",
        split,
        versions,
        hashes,
        links,
    ]


def _comparison(comparison: ComparisonView) -> str:
    """The comparison page as ``compare --format md`` prints it: the family's size, each
    row's test with exact or Monte Carlo, and the flags beside the verdict and under the
    table (a flagged cell is never a finding on its own)."""
    size = family_size([m for pair in comparison.pairs for m in pair.metrics])
    lines = [
        f"# {comparison.a.name} → {comparison.b.name}",
        "",
        f"Δ = B − A; paired tests as `posharness compare` computes them, on the printed "
        f"statistic; 95 % BCa interval (not adjusted); p (Holm) adjusted over the {size} "
        f"tests on this page (the family); n.s. = adjusted p ≥ {model.ALPHA}; "
        f"{FLAG_MARK} flagged: a cell flagged by its run, not a finding on its own.",
        "",
    ]
    if not comparison.pairs:
        lines.append("No rows to compare: the boards share no (model, mode, limit).")
    for pair in comparison.pairs:
        a, b = pair.a, pair.b
        lines += [f"## A = {a.label} ({a.mode_label}) · B = {b.label} ({b.mode_label})", ""]
        rows = []
        for c in pair.metrics:
            verdict = model.significant(c)
            test = c.test
            said = f"p < {model.ALPHA}" if verdict else ("n.s." if verdict is False else c.note)
            rows.append(
                [
                    c.key,
                    model.plain(c.a),
                    model.plain(c.b),
                    model.signed(c.delta),
                    f"[{model.signed(test.ci_low)}, {model.signed(test.ci_high)}]"
                    if test and test.ci_low is not None
                    else "–",
                    test_text(test) if test else "no test",
                    format_p(test.p_value, test.resamples) if test else "–",
                    model.p_text(test.p_adjusted if test else None),
                    model.effect_text(test.effect_size if test else None),
                    str(test.n) if test else "–",
                    f"{said} {FLAG_MARK} flagged" if c.flags else said,
                ]
            )
        header = [
            "task/metric", "A", "B", "B − A", "95% CI of Δ", "test", "p", "p (Holm)", "d_z", "n",
            "verdict",
        ]  # fmt: skip
        lines += _table(header, rows, {1, 2, 3, 6, 7, 8, 9})
        flagged = [c for c in pair.metrics if c.flags]
        if flagged:
            lines.append("")
        lines += [
            f"{FLAG_MARK} {_cell(c.key)}: {_cell('; '.join(c.flags))} — not a finding on its own"
            for c in flagged
        ]
        if pair.missing:
            lines += [
                "",
                f"{len(pair.missing)} result file(s) not at hand, e.g. `{pair.missing[0]}`.",
            ]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _paper_tables(study: Study) -> str:
    """Each study table as in the paper (models as rows), published rows in italics."""
    title = "Study tables" + (f" · {study.title}" if study.title else "")
    lines = [f"# {title}", ""]
    lines += [
        f"Rows in italics are the papers' own numbers ({model.PUBLISHED_LABEL}); the "
        "others are this study's runs, at the scale each caption says. Paired tests: p "
        f"Holm-adjusted, n.s. = p ≥ {model.ALPHA}.",
        "",
    ]
    for view in study.paper_tables:
        lines += _paper_table(view)
    return "\n".join(lines).rstrip() + "\n"


def _paper_table(view: PaperTableView) -> list[str]:
    table = view.table
    lines = [f'<a id="{view.slug}"></a>', "", f"## {table.title} (`{table.id}`)", ""]
    if table.caption:
        lines += [_cell(table.caption), ""]
    rows = [
        [_italic(c) for c in row] if published else list(row)
        for row, published in zip(table.rows, table.published, strict=True)
    ]
    numeric = {k for k, right in enumerate(view.numeric) if right}
    lines += _table(list(table.header), rows, numeric)
    lines.append("")
    if any(table.published):
        lines += [f"*Italic rows: {model.PUBLISHED_LABEL}.*", ""]
    lines += [f"{k}. {_cell(note)}" for k, note in enumerate(table.notes, 1)]
    if table.notes:
        lines.append("")
    if table.tests:
        lines += [f"**Paired tests** ({len(table.tests)})", ""]
        lines += _table(list(model.TEST_HEADER), [list(t) for t in table.tests], {3, 4})
        lines.append("")
    if view.files:
        lines += ["Files: " + " · ".join(f"[{_cell(f.caption)}]({f.href})" for f in view.files), ""]
    if view.figure:
        lines += [_figure(view.figure, ""), ""]
    return lines


def _italic(text: str) -> str:
    """A published row's cell in italics; its own asterisks escaped so they stay text."""
    return f"*{text.replace('*', chr(92) + '*')}*" if text.strip() else text
