"""Every registered study table's ``.tex`` compiles, whatever its names hold: each table is
rendered with LaTeX's specials (``^ _ { } & % # ~ \\ $``) in its row labels, column
labels, published models, notes and caption. The text is always checked at parser level;
it is compiled where a LaTeX engine is on PATH (pdflatex, lualatex or tectonic) and the
test is skipped with that reason where none is."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from posharness.study.render import to_latex
from posharness.study.table_registry import study_tables
from posharness.study.table_spec import StudyTable
from posharness.study.tables import Cell, ComputedTable, ModelRow, compute_table
from tests.unit.study.latex_check import latex_problems, tabular_problems

NASTY = r" ^_{}&%#~\$ [x]"
TABLES = study_tables()
ENGINES = ("pdflatex", "lualatex", "tectonic")
DOCUMENT = r"""\documentclass{article}
\usepackage[utf8]{inputenc}
\usepackage{booktabs}
\usepackage{amssymb}
\begin{document}
%s
\end{document}
"""


def _nasty(spec: StudyTable) -> StudyTable:
    """The table with specials in every name it prints."""
    return replace(
        spec,
        title=spec.title + NASTY,
        caption=spec.caption + " lr in {2, 3, 4, 5}e-5" + NASTY,
        columns=tuple(replace(c, label=c.label + "^_{}") for c in spec.columns),
        published=tuple(
            replace(r, model=r.model + NASTY, note=r.note + NASTY) for r in spec.published
        ),  # fmt: skip
    )


def _computed(spec: StudyTable, folder: Path) -> ComputedTable:
    models = [
        ModelRow("TUPE-A^mid_{x} & 50% #1 ~\\$", folder / "absent.json", baseline=True),
        ModelRow("BERT-A^d", folder / "absent-too.json"),
    ]
    missing = {spec.tasks[0]: ["put the files under ~/data_{x} & retry (100% #1)"]}
    table = compute_table(spec, models, missing, "scale: mini, lr {2, 3, 4, 5}e-5 & 10%")
    first = table.rows[0]
    first.cells[0] = Cell("12.3", 12.3, mark="▲", flags=("degenerate_{x}",))
    return table


def _rendered(folder: Path) -> dict[str, str]:
    return {tid: to_latex(_computed(_nasty(spec), folder)) for tid, spec in TABLES.items()}


def test_some_tables_are_registered() -> None:
    assert {"chen2023.table1", "chen2023.tablea3", "tupe2021.glue"} <= set(TABLES)


@pytest.mark.parametrize("table_id", TABLES)
def test_every_table_tex_passes_the_parser_check(table_id: str, tmp_path: Path) -> None:
    tex = to_latex(_computed(_nasty(TABLES[table_id]), tmp_path))
    assert latex_problems(tex, cells_allowed=True) == []
    assert tabular_problems(tex) == []
    caption = tex[tex.index(r"\caption{") :]
    assert latex_problems(caption.splitlines()[0]) == []  # no & inside the caption either
    assert r"\{2, 3, 4, 5\}e-5" in tex and "TUPE-A\\textasciicircum{}mid" in tex


def test_every_table_tex_compiles(tmp_path: Path) -> None:
    engine = next((name for name in ENGINES if shutil.which(name)), None)
    if engine is None:
        pytest.skip(f"no LaTeX engine on PATH ({', '.join(ENGINES)}): parser check only")
    body = "\n\\clearpage\n".join(_rendered(tmp_path).values())
    source = tmp_path / "tables.tex"
    source.write_text(DOCUMENT % body, encoding="utf-8")
    command = [engine, source.name] if engine == "tectonic" else [
        engine, "-interaction=nonstopmode", "-halt-on-error", source.name]  # fmt: skip
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    errors = [line for line in done.stdout.splitlines() if line.startswith("!")]
    assert done.returncode == 0, f"{engine} failed: {errors or done.stdout[-2000:]}"
    assert (tmp_path / "tables.pdf").is_file()
