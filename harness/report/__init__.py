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

import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from posharness.base.version import __version__
from posharness.report.collect import DEFAULT_SCATTERS, ReportInputs, collect
from posharness.report.figure_store import FigureStore
from posharness.report.write import FORMAT, check_target, write_folder
from posharness.storage.hashing import hash_file

__all__ = ["DEFAULT_SCATTERS", "ReportInputs", "ReportOutcome", "build_report"]


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
) -> ReportOutcome:
    """Everything ``posharness report`` does; ``cache_dir=None`` draws every figure."""
    start = time.perf_counter()
    inputs = ReportInputs(
        boards=tuple(boards),
        results=tuple(results or ()),
        comparisons=tuple(comparisons or ()),
        all_metrics=all_metrics,
        scatters=scatters,
    )
    everything = [*inputs.boards, *inputs.results, *(p for c in inputs.comparisons for p in c)]
    check_target(output, overwrite, everything)
    study = collect(inputs)
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
    write_folder(output, texts, copies, _manifest(study, fmt, inputs))
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


def _manifest(study, fmt: str, inputs: ReportInputs) -> dict:
    """What the folder is and what it was made from: marks it as a report to replace."""
    manifest = {
        "format": FORMAT,
        "posharness": __version__,
        "pages": fmt,
        "leaderboards": [
            {"name": b.name, "file": b.source, "sha256": hash_file(b.source), "page": b.slug}
            for b in study.boards
        ],
        "results": [str(p) for p in inputs.results],
        "comparisons": [[c.a.source, c.b.source] for c in study.comparisons],
        "figures": sorted(study.figures),
    }
    if study.stamp:
        manifest["built"] = study.stamp
    return manifest
