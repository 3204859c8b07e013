"""``posharness report``: one static folder with leaderboards, figures and paired tests.

    from posharness.report import build_report
    build_report([Path("leaderboards/minilm.json")], Path("report"))

Four stages, one module each: ``collect`` reads the boards and the result files they name
into a view model (and fails on bad input before anything is drawn or written),
``figure_store`` draws the figures the report needs that its content cache lacks,
``pages`` / ``markdown`` format the view model, ``write`` replaces the output folder all at
once. The same inputs give a byte-identical folder: no timestamps unless asked for,
stable ordering, SVGs without dates or random ids.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from posharness.base.version import __version__
from posharness.report.collect import DEFAULT_SCATTERS, ReportInputs, collect
from posharness.report.figure_store import FigureStore
from posharness.report.model import PaperTable
from posharness.report.paper import paper_views, sources
from posharness.report.write import FORMAT, check_target, write_folder
from posharness.storage.hashing import hash_file

__all__ = ["DEFAULT_SCATTERS", "PaperTable", "ReportInputs", "ReportOutcome", "build_report"]


@dataclass(frozen=True)
class ReportOutcome:
    output: Path
    entry: Path  # the page to open
    pages: int
    figures_drawn: int
    figures_reused: int  # taken from the figure cache
    files_copied: int
    seconds: float
    seconds_drawing: float


def build_report(
    boards: list[Path],
    output: Path,
    *,
    results: list[Path] | None = None,
    comparisons: list[tuple[Path, Path]] | None = None,
    fmt: Literal["html", "md"] = "html",
    overwrite: bool = False,
    all_metrics: bool = False,
    scatters: tuple[tuple[str, str, str], ...] = DEFAULT_SCATTERS,
    cache_dir: Path | None = None,
    timestamp: bool = False,
    paper_tables: Sequence[PaperTable] = (),
    title: str | None = None,
) -> ReportOutcome:
    """Everything ``posharness report`` does; ``cache_dir=None`` draws every figure.

    ``paper_tables``: a study's tables (models as rows), shown on their own page
    (``tables.html`` / ``tables.md``) that the index links first, their files copied
    beside; ``title`` names the report in its header (``"study chen2023-mini"``). A
    report with paper tables sits in its study's folder: boards inside the folder that
    holds the report are named relative to it, so no page names the machine's folders.
    Without either, the folder is what it was before studies existed, byte for byte.
    """
    start = time.perf_counter()
    inputs = ReportInputs(
        boards=tuple(boards),
        results=tuple(results or ()),
        comparisons=tuple(comparisons or ()),
        all_metrics=all_metrics,
        scatters=scatters,
        shown_from=output.parent if paper_tables else None,
    )
    everything = [*inputs.boards, *inputs.results, *(p for c in inputs.comparisons for p in c)]
    check_target(output, overwrite, [*everything, *sources(paper_tables)])
    tables, table_copies = paper_views(paper_tables)
    study = collect(inputs)
    study.paper_tables, study.title = tables, title
    study.copies.extend(table_copies)
    if timestamp:
        study.stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    store = FigureStore(cache_dir)
    texts = {href: store.svg(request) for href, request in sorted(study.figures.items())}
    if fmt == "md":
        from posharness.report.markdown import render_markdown

        pages = render_markdown(study)
    else:
        from posharness.report.pages import render_html

        pages = render_html(study)
    texts.update(pages)
    copies = {copy.target: copy.source for copy in study.copies}
    write_folder(output, texts, copies, _manifest(study, fmt, inputs, output))
    entry = "index.md" if fmt == "md" else "index.html"
    return ReportOutcome(
        output=output,
        entry=output / entry,
        pages=sum(1 for name in pages if name.endswith((".html", ".md"))),
        figures_drawn=store.drawn,
        figures_reused=store.reused,
        files_copied=len(copies),
        seconds=time.perf_counter() - start,
        seconds_drawing=store.seconds_drawing,
    )


def _manifest(study, fmt: str, inputs: ReportInputs, output: Path) -> dict:
    """What the folder is and what it was made from: marks it as a report to replace.
    Results folders are named relative to the report, so a committed report names no
    path of the machine that built it."""
    manifest = {
        "format": FORMAT,
        "posharness": __version__,
        "pages": fmt,
        "leaderboards": [
            {
                "name": b.name,
                "file": b.source,
                "sha256": hash_file(b.path or b.source),
                "page": b.slug,
            }
            for b in study.boards
        ],
        "results": [_relative_to(Path(p), output) for p in inputs.results],
        "comparisons": [[c.a.source, c.b.source] for c in study.comparisons],
        "figures": sorted(study.figures),
    }
    if study.stamp:
        manifest["built"] = study.stamp
    if study.title is not None:
        manifest["title"] = study.title
    if study.paper_tables:  # by id and copied file: no path of the machine they came from
        manifest["paper_tables"] = [
            {"id": t.table.id, "anchor": t.slug, "files": [f.href for f in t.files]}
            | ({"figure": t.figure.href} if t.figure else {})
            for t in study.paper_tables
        ]
    return manifest


def _relative_to(path: Path, output: Path) -> str:
    """``path`` as seen from the report folder (``../results``), or as given when the two
    share no root (another drive)."""
    try:
        return Path(os.path.relpath(path.resolve(), output.resolve())).as_posix()
    except ValueError:
        return str(path)
