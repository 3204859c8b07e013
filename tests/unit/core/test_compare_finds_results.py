"""Issue 47, part 3: compare and the report agree on every board they can both read.

compare had no way to find per-example outputs that are not where a board names them
(two committed study boards: compare ran 0 tests, ``report --results`` 27). It takes
``--results`` as the report does, and finds a study folder's ``results/`` by itself; the
report's Markdown comparison page states the family's size and prints the flags.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from posharness.report.collect import ReportInputs, collect
from posharness.report.markdown import render_markdown
from tests.cli_helpers import cli
from tests.unit.core.test_stats_one_family import _board

FLAG = "fewer than 30 examples"


def _moved_boards(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Two boards whose result files have moved away from where the boards name them."""
    a, b = _board(tmp_path, "a", False), _board(tmp_path, "b", True)
    moved = tmp_path / "elsewhere"
    shutil.move(tmp_path / "runs", moved / "runs")
    board = json.loads(b.read_text())
    board["rows"][0]["flags"] = {"probe": [FLAG]}
    b.write_text(json.dumps(board))
    return a, b, moved


def _compare_json(capsys, *args: str) -> dict:
    capsys.readouterr()
    assert cli("compare", *args, "--format", "json") == 0
    return json.loads(capsys.readouterr().out)


def test_compare_and_the_report_find_the_same_family_under_results(tmp_path, capsys):
    a, b, moved = _moved_boards(tmp_path)
    assert _compare_json(capsys, str(a), str(b))["family_size"] == 0  # nothing at hand
    document = _compare_json(capsys, str(a), str(b), "--results", str(moved))
    printed = {
        (r["a_model"], f"{r['task']}/{r['metric']}"): r["p_holm"]
        for r in document["comparisons"]
        if r["test"] is not None
    }
    study = collect(ReportInputs(boards=(), comparisons=((a, b),), results=(moved,)))
    (page,) = study.comparisons
    reported = {
        (pair.a.row.model, m.key): m.test.p_adjusted
        for pair in page.pairs
        for m in pair.metrics
        if m.test is not None
    }
    assert printed == reported and document["family_size"] == len(reported) == 2
    markdown = render_markdown(study)[f"compare/{page.slug}.md"]
    assert "adjusted over the 2 tests on this page (the family)" in markdown
    assert f"! probe/acc: B: {FLAG} — not a finding on its own" in markdown
    assert "! flagged |" in markdown  # beside the verdict, as the HTML page and compare


def test_compare_finds_a_study_folders_results_by_itself(tmp_path, capsys):
    """A board in ``<study>/boards/`` names its results by the not-shipped key
    ``results/<output folder>/<model folder>/<file>``; the study keeps its output folder
    ``results/`` beside ``boards/`` (as the committed cpu-hour study does)."""
    a, b, moved = _moved_boards(tmp_path)
    study = tmp_path / "study"
    (study / "boards").mkdir(parents=True)
    boards = []
    for board in (a, b):
        document = json.loads(board.read_text())
        for row in document["rows"]:
            named = []
            for path in row["results"]:  # ../runs/<board>/<model>/<file>
                _, _, name, model, file = path.split("/")
                target = study / "results" / f"{name}-{model}"
                shutil.copytree(moved / "runs" / name / model, target, dirs_exist_ok=True)
                named.append(f"results/results/{name}-{model}/{file}")
            row["results"] = named
        (study / "boards" / board.name).write_text(json.dumps(document))
        boards.append(str(study / "boards" / board.name))
    assert _compare_json(capsys, *boards)["family_size"] == 2
