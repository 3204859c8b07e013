"""The HTML pages, rendered with Jinja2 from the view model; one folder, relative links.

Pages sit at the root (``index.html``, a study's ``tables.html``) or one level down
(``boards/``, ``compare/``); each gets ``root``, the way back to the report's root, so
every link works from ``file://``. The stylesheet and the few lines of sorting/provenance
script are copied from ``static/`` — no CDN, no framework, nothing fetched.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from posharness.base.version import __version__
from posharness.report import model
from posharness.report.artifacts import is_image
from posharness.report.model import Study

HERE = Path(__file__).parent
STATIC = ("report.css", "report.js")
PAPER_STATIC = "paper.css"  # only in a report with paper tables: others stay as they were


@cache
def _environment():
    from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        mean=model.mean_text,
        spread=model.spread_text,
        signed=model.signed,
        plain=model.plain,
        pairs=_pairs,
        when=model.when,
    )
    env.tests.update(image=is_image)
    env.globals.update(
        significant=model.significant,
        settings_text=model.settings_text,
        version=__version__,
        alpha=model.ALPHA,
        published_label=model.PUBLISHED_LABEL,
        test_header=model.TEST_HEADER,
    )
    return env


def _pairs(mapping: dict[str, Any] | None) -> str:
    """``key=value, …`` in key order, for option and PE-card dictionaries."""
    if not mapping:
        return "–"
    return ", ".join(f"{k}={v}" for k, v in sorted(mapping.items()))


def render_html(study: Study) -> dict[str, str]:
    """Relative path → page text, the static files included."""
    env = _environment()
    pages = {"index.html": env.get_template("index.html").render(study=study, root="")}
    for board in study.boards:
        pages[board.href] = env.get_template("board.html").render(
            study=study, board=board, root="../"
        )
    for comparison in study.comparisons:
        pages[comparison.href] = env.get_template("compare.html").render(
            study=study, comparison=comparison, root="../"
        )
    static = STATIC
    if study.paper_tables:
        pages["tables.html"] = env.get_template("tables.html").render(
            study=study, root="", tables_page=True
        )
        static += (PAPER_STATIC,)
    for name in static:
        pages[f"static/{name}"] = (HERE / "static" / name).read_text(encoding="utf-8")
    return pages
