"""``posharness list``: names whole in every format, plain in a pipe, JSON for scripts.

A listing is only useful if ``grep``, ``cut`` and ``--model NAME`` can take a name from
it, so every test here checks that names survive intact; the rest check that the three
formats tell the same story as the registry itself.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import pytest
from rich.console import Console

import posharness.cli.console as console_module
from posharness.plugins import models, positional_encodings, tasks
from tests.cli_helpers import cli, one_line_error

KINDS = ("models", "tasks", "groups", "pes")
BOX_DRAWING = re.compile("[\u2500-\u257f]")
ANSI_ESCAPE = "\x1b["


def registered_names(kind: str) -> list[str]:
    if kind == "models":
        return models.names()
    if kind == "tasks":
        return tasks.names()
    if kind == "pes":
        return positional_encodings.names()
    return sorted(tasks.groups())


def list_output(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert cli("list", *args) == 0
    return capsys.readouterr().out


def run_cli(*args: str, **popen: object) -> subprocess.CompletedProcess[str]:
    """``python -m posharness`` in a fresh interpreter; stdout is a pipe, never a tty."""
    env = {k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "TTY_COMPATIBLE"}}
    env["COLUMNS"] = "40"  # a narrow "terminal" that must not shape piped output
    return subprocess.run(
        [sys.executable, "-m", "posharness", *args],
        env=env,
        text=True,
        timeout=120,
        **popen,
    )


@pytest.fixture
def console_of_width(monkeypatch: pytest.MonkeyPatch):
    """Make the CLI's console a ``width``-column one writing to a buffer; returns the buffer."""

    def install(width: int) -> io.StringIO:
        buffer = io.StringIO()
        narrow = Console(file=buffer, width=width, color_system=None)
        monkeypatch.setattr(console_module, "console", lambda: narrow)
        return buffer

    return install


# -- plain: one line per entry, for grep and cut ----------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_plain_listing_is_one_tab_separated_line_per_registered_name(capsys, kind):
    lines = list_output(capsys, kind, "--format", "plain").splitlines()

    assert [line.split("\t")[0] for line in lines] == registered_names(kind)
    widths = {len(line.split("\t")) for line in lines}
    assert widths == {{"models": 5, "tasks": 4, "groups": 2, "pes": 6}[kind]}
    text = "\n".join(lines)
    assert not BOX_DRAWING.search(text) and ANSI_ESCAPE not in text and "…" not in text


@pytest.mark.parametrize("kind", KINDS)
def test_output_that_is_not_a_terminal_defaults_to_plain(capsys, kind):
    default = list_output(capsys, kind)

    assert default == list_output(capsys, kind, "--format", "plain")


def test_piped_list_models_can_be_grepped_for_a_long_name():
    proc = run_cli("list", "models", stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    assert proc.returncode == 0, proc.stderr
    found = [line for line in proc.stdout.splitlines() if "bert-a-star-seq" in line]
    assert [line.split("\t")[0] for line in found] == ["bert-a-star-seq"], proc.stdout
    assert all(len(line) > 40 for line in found)  # COLUMNS=40 cut nothing


def test_a_reader_that_stops_early_ends_the_listing_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)  # like `| head` that has already exited: every write fails
    try:
        proc = run_cli("list", "tasks", stdout=write_end, stderr=subprocess.PIPE)
    finally:
        os.close(write_end)

    assert proc.returncode == 0
    assert proc.stderr == ""


# -- table: names whole at any width ------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("width", [40, 20])
def test_table_keeps_every_name_whole_on_one_line(capsys, console_of_width, kind, width):
    buffer = console_of_width(width)
    list_output(capsys, kind, "--format", "table")
    table = buffer.getvalue()

    for name in registered_names(kind):
        assert re.search(rf"^│ {re.escape(name)} +│", table, re.MULTILINE), (name, table)
    assert "…" not in table


@pytest.mark.parametrize("kind", KINDS)
def test_table_fits_a_console_that_can_hold_its_names(capsys, console_of_width, kind):
    buffer = console_of_width(40)
    list_output(capsys, kind, "--format", "table")

    assert max(len(line) for line in buffer.getvalue().splitlines()) <= 40


@pytest.mark.parametrize("kind", KINDS)
def test_no_column_is_squeezed_away_in_a_very_narrow_console(capsys, console_of_width, kind):
    buffer = console_of_width(8)
    list_output(capsys, kind, "--format", "table")

    top_border = next(line for line in buffer.getvalue().splitlines() if line.startswith("┏"))
    cells = top_border.strip("┏┓").split("┳")
    assert len(cells) == {"models": 5, "tasks": 4, "groups": 2, "pes": 6}[kind]
    assert min(len(cell) for cell in cells) >= 3  # one character between the padding


def test_table_in_a_subprocess_at_forty_columns_keeps_names_whole():
    proc = run_cli(
        "list", "models", "--format", "table", stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )

    assert proc.returncode == 0, proc.stderr
    for name in models.names():
        assert re.search(rf"^│ {re.escape(name)} +│", proc.stdout, re.MULTILINE), name


def test_table_cells_are_text_not_rich_markup(console_of_width):
    buffer = console_of_width(120)
    console_module.print_listing_table(
        "registered models",
        ("name", "description"),
        [("demo", "loads [bold]weights[/bold] from runs/[v1]/model")],
    )

    assert "loads [bold]weights[/bold] from runs/[v1]/model" in buffer.getvalue()


def test_task_table_lists_each_group_under_it(capsys, console_of_width):
    buffer = console_of_width(400)
    list_output(capsys, "tasks", "--format", "table")

    for group in tasks.groups():
        assert f"group {group} → {', '.join(tasks.expand([group]))}" in buffer.getvalue()


def test_compare_table_keeps_keys_numbers_and_test_names_whole(tmp_path, console_of_width):
    from posharness.boards import leaderboard
    from posharness.boards.compare import RowFilter
    from tests.unit.core.test_leaderboard_compare import write_run

    write_run(tmp_path / "ra", "m1", "f1", {0: [1] * 30 + [0] * 10})
    write_run(tmp_path / "rb", "m2", "f2", {0: [1] * 40})
    for name in ("ra", "rb"):
        path = tmp_path / f"{name}.json"
        board = leaderboard.build(leaderboard.collect_results(tmp_path / name), name, path)
        leaderboard.save(board, path)
    buffer = console_of_width(40)

    from posharness.cli.compare_print import print_comparison

    print_comparison(tmp_path / "ra.json", tmp_path / "rb.json", True, RowFilter())

    row = next(line for line in buffer.getvalue().splitlines() if "probe/acc" in line)
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[:4] == ["probe/acc", "0.7500", "1.0000", "+0.2500"]
    low, high = (float(v) for v in cells[4].strip("[]").split(","))
    assert low <= 0.25 <= high  # the interval, whole and holding the printed Δ
    # `probe` declares nothing: a mean of continuous values, never McNemar by its values
    assert cells[5] == "paired-permutation (Monte Carlo)" and cells[9:] == ["40", "p < 0.05"]


# -- json: every field, in a fixed order --------------------------------------------------
KEYS = {
    "models": ["name", "family", "modes", "description", "origin", "source", "builder"],
    "tasks": [
        "name",
        "kind",
        "description",
        "origin",
        "source",
        "version",
        "main_metric",
        "groups",
        "implementation",
        "options",
    ],
    "groups": ["name", "members"],
    "pes": [
        "name",
        "kind",
        "contextual",
        "positional",
        "code",
        "origin",
        "source",
        "implementation",
        "options",
    ],
}


@pytest.mark.parametrize("kind", KINDS)
def test_json_lists_the_registry_with_keys_in_a_fixed_order(capsys, kind):
    records = json.loads(list_output(capsys, kind, "--format", "json"))

    assert [record["name"] for record in records] == registered_names(kind)
    assert all(list(record) == KEYS[kind] for record in records)


def test_json_models_carry_every_field_the_plain_row_shows(capsys):
    records = json.loads(list_output(capsys, "models", "--format", "json"))
    rows = [line.split("\t") for line in list_output(capsys, "models").splitlines()]

    for record, row in zip(records, rows, strict=True):
        origin = record["origin"]
        shown_origin = origin if origin == "built-in" else f"{origin}: {record['source']}"
        modes = ", ".join(record["modes"])
        assert row == [record["name"], record["family"], modes, record["description"], shown_origin]
        assert re.fullmatch(r"[\w.]+:[\w.<>]+", record["builder"]), record["builder"]


def test_json_tasks_name_their_groups_and_groups_their_tasks(capsys):
    task_records = json.loads(list_output(capsys, "tasks", "--format", "json"))
    group_records = json.loads(list_output(capsys, "groups", "--format", "json"))

    members = {record["name"]: record["members"] for record in group_records}
    assert members == {group: tasks.expand([group]) for group in tasks.groups()}
    for record in task_records:
        expected = sorted(group for group, names in members.items() if record["name"] in names)
        assert record["groups"] == expected
        if record["origin"] == "built-in":
            assert record["implementation"].startswith("posharness.tasks."), record


def test_json_tasks_carry_their_declared_options_with_help(capsys):
    records = json.loads(list_output(capsys, "tasks", "--format", "json"))

    for record in records:
        spec = tasks.get(record["name"])().spec
        assert [o["name"] for o in record["options"]] == list(spec.defaults), record["name"]
        for option in record["options"]:
            assert list(option) == ["name", "type", "default", "help"]
            assert option["default"] == spec.defaults[option["name"]]
            assert option["help"], (record["name"], option["name"])  # built-ins document all


def test_describe_shows_a_task_its_metrics_data_and_options(capsys):
    assert cli("describe", "toeplitz") == 0
    text = capsys.readouterr().out
    assert text.startswith("toeplitz: ") and "version     3" in text
    assert "options (--task-arg toeplitz.KEY=VALUE):" in text
    assert re.search(r"controls +int +20 +Permutations in the shuffled control\.", text)

    assert cli("describe", "toeplitz", "--format", "json") == 0
    record = json.loads(capsys.readouterr().out)
    assert record["main_metric"] == "attention_r2" and record["groups"] == ["geometry"]
    assert {"data_source", "headline_metrics", "options"} <= set(record)


def test_describe_an_unknown_task_is_one_line_with_close_matches(capsys):
    assert cli("describe", "toeplits") == 2
    assert "toeplitz" in one_line_error(capsys)


# -- bad input ----------------------------------------------------------------------------
def test_an_unknown_format_is_clicks_one_line_error(capsys):
    assert cli("list", "models", "--format", "xml") == 2

    line = one_line_error(capsys)
    assert "--format" in line and "'xml'" in line and "table" in line


def test_list_help_names_the_three_formats(capsys):
    assert cli("list", "--help") == 0

    help_text = capsys.readouterr().out
    assert "--format [table|plain|json]" in help_text


def test_describe_a_group_names_the_tasks_it_runs(capsys):
    assert cli("describe", "geometry") == 0
    text = capsys.readouterr().out
    assert text.startswith("geometry: a group of 2 tasks") and "toeplitz" in text
    assert cli("describe", "geometry", "--format", "json") == 0
    assert json.loads(capsys.readouterr().out)["members"] == tasks.expand(["geometry"])


def test_pes_list_each_scheme_with_the_modes_its_kind_gives(capsys):
    records = {r["name"]: r for r in json.loads(list_output(capsys, "pes", "--format", "json"))}

    assert records["t5"]["kind"] == "logit term"
    assert records["t5"]["positional"] == "t5-bias (exact)"
    assert records["rope"]["positional"] == "bias-qk-rotation (approximation)"
    assert records["nope"]["positional"] == "none"
    assert records["tupe-r"]["options"] == [
        ["tie_cls", "False"],
        ["relative_buckets", "32"],
        ["relative_max_distance", "128"],
    ]
    assert {record["code"] for record in records.values()} == {"v1"}
