"""The committed controlled study (issue 48) is what its README says it is: `posharness
controlled report` rebuilds its boards and text tables from the folder alone, to the byte;
no file names a folder of the machine that made it; every verdict its README states is
the verdict the rebuilt statements table prints; and it never calls the stand-in GloVe."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

STUDY = Path(__file__).resolve().parents[4] / "leaderboards" / "chen-controlled-study"

pytestmark = pytest.mark.skipif(
    not (STUDY / "results" / "controlled.json").is_file(),
    reason="the committed study has no results (see its README)",
)


def test_report_rebuilds_the_committed_tables_from_the_folder_alone(tmp_path) -> None:
    from click.testing import CliRunner

    from posharness.tasks.controlled.commands import controlled

    copy = tmp_path / "study"
    shutil.copytree(STUDY / "results", copy / "results")
    run = CliRunner().invoke(controlled, ["report", str(copy)])
    assert run.exit_code == 0, run.output
    for suffix in (".md", ".tex"):
        for path in sorted((STUDY / "tables").glob(f"*{suffix}")):
            assert (copy / "tables" / path.name).read_text() == path.read_text(), path.name
    board = "boards/controlled.json"
    assert (copy / board).read_text() == (STUDY / board).read_text()


def test_no_committed_file_names_a_machine_path() -> None:
    from posharness.boards.portable import MACHINE_PATH

    found = [
        f"{path.name}: {match.group(0)}"
        for path in STUDY.rglob("*")
        if path.is_file() and path.suffix in {".json", ".md", ".tex", ".log", ".txt"}
        for match in [re.search(MACHINE_PATH, path.read_text())]
        if match
    ]
    assert not found


def test_the_readme_states_the_verdicts_the_statements_table_prints() -> None:
    readme = (STUDY / "README.md").read_text()
    rows = [
        line.split(" | ")
        for line in (STUDY / "tables" / "controlled.statements.md").read_text().splitlines()
        if line.startswith("| MR") or line.startswith("| SUBJ")
    ]
    assert rows  # a sweep cut short by the machine has fewer (the README says which)
    for row in rows:
        dataset, statement, verdict = row[0].strip("| "), row[1], row[-1].strip(" |")
        line = next(x for x in readme.splitlines() if dataset in x and statement in x)
        assert verdict in line, (dataset, statement, verdict)
    assert "word2vec stand-in" in readme
    assert not re.search(r"GloVe (accurac|number|result)", readme)
