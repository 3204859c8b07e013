"""A study's paper tables in the report: models as rows, published rows apart, paired
tests, the LaTeX/Markdown files and the Fig. 2 PNG copied beside — in HTML and Markdown.

The study layer hands the report plain ``PaperTable`` objects (the report never imports
``posharness.study``); these tests build them by hand next to one small run's board.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from markupsafe import escape

from posharness.base.errors import DataError
from posharness.report import PaperTable, build_report
from posharness.report.model import PUBLISHED_LABEL
from tests.unit.core.test_report import png, write_run

HEADER = ("model", "mode", "MR", "SST-2", "RTE", "mean")
ROWS = (
    ("BERT-A (published)", "both", "80.1", "91.2", "66.4", "79.2"),
    ("TUPE-R (published)", "both", "81.0", "92.0", "68.2*", "80.4"),
    ("nope", "both", "61.3 ± 0.4", "70.2 ± 1.1", "data missing (RTE: stage glue)", "65.8"),
    ("bert-a", "both", "63.0 ± 0.2", "72.9 ± 0.3", "data missing (RTE: stage glue)", "68.0"),
)
TESTS = (
    ("nope", "MR", "bert-a", "-1.7000", "0.012", "McNemar exact, n=1000"),
    ("nope", "SST-2", "bert-a", "-2.7000", "0.31", "McNemar exact, n=872"),
    ("nope", "RTE", "bert-a", "–", "–", "data missing"),
)
NOTES = (
    "Published rows: Chen et al. (2023), Table 1, p. 6; BERT-base, 1M steps.",
    "* the paper's own footnote: median of 5 runs.",
)


def paper_table(folder: Path, **changes) -> PaperTable:
    tables = folder / "tables"
    tables.mkdir(parents=True, exist_ok=True)
    tex, md = tables / "chen2023.table1.tex", tables / "chen2023.table1.md"
    tex.write_text("\\begin{tabular}{llrrrr}\\toprule x \\\\ \\bottomrule\\end{tabular}\n")
    md.write_text("| model | mode |\n|---|---|\n")
    figure = tables / "chen2023.fig2.png"
    png(figure, 70)
    fields = dict(
        id="chen2023.table1",
        title="Table 1: downstream tasks per PE",
        caption="Accuracy ×100, mean over learning rates. Ours: size mini, 200 steps, seed 0.",
        header=HEADER,
        rows=ROWS,
        published=(True, True, False, False),
        notes=NOTES,
        tests=TESTS,
        files=(("LaTeX", tex), ("Markdown", md)),
        figure=figure,
    )
    return PaperTable(**(fields | changes))


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict:
    """One run's board and a paper table, reported in both formats (relative paths, as
    ``study report`` passes them from the study folder)."""
    root = tmp_path_factory.mktemp("paper")
    board = write_run(root, "a", False).relative_to(root)
    table = paper_table(root)
    relative = paper_table(
        root, files=tuple((k, p.relative_to(root)) for k, p in table.files), figure=None
    )
    cache = root / "cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        for fmt in ("html", "md"):
            build_report(
                [board],
                Path(f"report-{fmt}"),
                fmt=fmt,
                cache_dir=cache,
                paper_tables=[table, relative],
                title="study chen2023-mini",
            )
        build_report([board], Path("plain"), cache_dir=cache)
    return {"root": root, "board": board, "tables": [table, relative], "cache": cache}


def pages(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): p.read_text(encoding="utf-8")
        for p in folder.rglob("*")
        if p.suffix in {".html", ".md"} and p.relative_to(folder).parts[0] != "tables"
    }


def test_html_tables_page_shows_every_cell_and_sets_published_rows_apart(made):
    page = (made["root"] / "report-html" / "tables.html").read_text()
    for row in ROWS:
        for cell in row:
            assert f">{escape(cell)}</t" in page, cell
    assert page.count('<tr class="published">') == 2 * 2  # two tables, two published rows
    assert f'scope="rowgroup">{PUBLISHED_LABEL}</th>' in page
    assert 'id="chen2023-table1"' in page and 'id="chen2023-table1-2"' in page
    assert "Accuracy ×100, mean over learning rates" in page
    for note in NOTES:
        assert escape(note) in page
    assert '<details class="paired-tests">' in page and "Paired tests (3)" in page
    assert '<tr class="sig">' in page and '<tr class="ns">' in page
    assert '<tr class="untested">' in page
    assert "McNemar exact, n=872" in page
    assert 'href="static/paper.css"' in page


def test_html_copies_the_latex_and_the_figure_and_links_them_relatively(made):
    out = made["root"] / "report-html"
    page = (out / "tables.html").read_text()
    table = made["tables"][0]
    tex = out / "tables" / "chen2023-table1" / "chen2023.table1.tex"
    assert tex.read_bytes() == table.files[0][1].read_bytes()
    assert '<a href="tables/chen2023-table1/chen2023.table1.tex">LaTeX</a>' in page
    assert '<a href="tables/chen2023-table1/chen2023.table1.md">Markdown</a>' in page
    assert '<img src="tables/chen2023-table1/chen2023.fig2.png"' in page
    assert (out / "tables/chen2023-table1/chen2023.fig2.png").read_bytes() == (
        table.figure.read_bytes()
    )
    hrefs = [part.split('"')[0] for part in page.split('href="')[1:]]
    local = [h.split("#")[0] for h in hrefs if not h.startswith(("data:", "#"))]
    assert local and all((out / h).is_file() for h in local), local
    anchors = [h[1:] for h in hrefs if h.startswith("#")]
    assert anchors and all(f'id="{a}"' in page for a in anchors)
    manifest = json.loads((out / "report.json").read_text())
    assert manifest["title"] == "study chen2023-mini"
    assert manifest["paper_tables"][0]["files"][0] == "tables/chen2023-table1/chen2023.table1.tex"


def test_index_links_the_tables_first_and_the_title_names_the_report(made):
    out = made["root"] / "report-html"
    index = (out / "index.html").read_text()
    assert index.index('href="tables.html"') < index.index('href="boards/a.html"', 400)
    assert 'href="tables.html#chen2023-table1"' in index
    assert "<h1>study chen2023-mini</h1>" in index
    assert '<a class="home" href="index.html">study chen2023-mini</a>' in index
    board = (out / "boards" / "a.html").read_text()
    assert 'href="../tables.html">study tables</a>' in board
    assert "· study chen2023-mini</title>" in board


def test_no_page_holds_a_path_of_the_machine(made):
    root = made["root"]
    for fmt in ("html", "md"):
        for name, text in pages(root / f"report-{fmt}").items():
            assert str(root) not in text, name
            assert "/tmp" not in text, name


def test_markdown_tables_page_has_the_same_cells_italic_published_rows_and_links(made):
    out = made["root"] / "report-md"
    assert not list(out.rglob("*.html")) and not (out / "static").exists()
    page = (out / "tables.md").read_text()
    assert "| model | mode | MR | SST-2 | RTE | mean |" in page
    assert "| --- | --- | ---: | ---: | ---: | ---: |" in page
    assert "| *BERT-A (published)* | *both* | *80.1* |" in page
    assert "*68.2\\**" in page  # the paper's footnote mark stays text inside the italics
    assert "| nope | both | 61.3 ± 0.4 | 70.2 ± 1.1 | data missing (RTE: stage glue) |" in page
    assert f"*Italic rows: {PUBLISHED_LABEL}.*" in page
    assert "1. Published rows: Chen et al. (2023)" in page
    assert "| nope | SST-2 | bert-a | -2.7000 | 0.31 | McNemar exact, n=872 |" in page
    assert "[LaTeX](tables/chen2023-table1/chen2023.table1.tex)" in page
    assert "![Table 1: downstream tasks per PE](tables/chen2023-table1/chen2023.fig2.png)" in page
    links = [part.split(")")[0] for part in page.split("](")[1:]]
    assert links and all((out / link).is_file() for link in links), links
    index = (out / "index.md").read_text()
    assert index.startswith("# study chen2023-mini\n\n## [Study tables](tables.md)\n")
    assert "## Leaderboards" in index


def test_same_inputs_give_the_same_bytes(made, tmp_path, monkeypatch):
    root = made["root"]
    monkeypatch.chdir(root)
    again = tmp_path / "again"
    build_report(
        [made["board"]],
        again,
        cache_dir=made["cache"],
        paper_tables=made["tables"],
        title="study chen2023-mini",
    )
    first = root / "report-html"
    files = {str(p.relative_to(first)) for p in first.rglob("*") if p.is_file()}
    assert files == {str(p.relative_to(again)) for p in again.rglob("*") if p.is_file()}
    assert all((first / f).read_bytes() == (again / f).read_bytes() for f in files)


def test_without_paper_tables_the_report_has_no_tables_page_or_title(made):
    out = made["root"] / "plain"
    assert not (out / "tables.html").exists() and not (out / "tables").exists()
    assert not (out / "static" / "paper.css").exists()
    index = (out / "index.html").read_text()
    assert "tables.html" not in index and "paper.css" not in index
    assert "<h1>Leaderboards</h1>" in index and ">posharness report</a>" in index
    manifest = json.loads((out / "report.json").read_text())
    assert "paper_tables" not in manifest and "title" not in manifest


def test_a_missing_table_file_fails_in_one_line_with_nothing_written(made, tmp_path):
    table = paper_table(tmp_path, files=(("LaTeX", tmp_path / "absent.tex"),))
    with pytest.raises(DataError, match=r"chen2023.table1: .*absent.tex is not a file"):
        build_report([made["root"] / made["board"]], tmp_path / "out", paper_tables=[table])
    assert not (tmp_path / "out").exists()


def test_a_row_of_the_wrong_width_is_refused_when_the_table_is_made():
    with pytest.raises(DataError, match="row 2 has 2 cells, the header 3"):
        PaperTable("t", "T", "", ("a", "b", "c"), (("x", "1", "2"), ("y", "1")), (False, False))
    with pytest.raises(DataError, match="2 rows but 1 published flags"):
        PaperTable("t", "T", "", ("a",), (("x",), ("y",)), (False,))


def test_a_study_report_names_its_boards_relative_to_the_study_folder(made, tmp_path):
    """``study report`` passes the boards by absolute path; the pages name them from the
    folder that holds the report (the study's), never by the machine's folders."""
    study = tmp_path / "study"
    board = write_run(study, "a", False)
    out = study / "report"
    build_report([board], out, cache_dir=made["cache"], paper_tables=[paper_table(study)])
    for name, text in pages(out).items():
        assert str(tmp_path) not in text, name
    assert '<code class="source">boards/a.json</code>' in (out / "index.html").read_text()
    manifest = json.loads((out / "report.json").read_text())
    assert manifest["leaderboards"][0]["file"] == "boards/a.json"
