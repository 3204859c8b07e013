"""The seed papers' study tables: columns name real tasks and metrics, published rows fit
their tables, and the published numbers are the papers' (spot values here; every number
against the papers' text in test_published_provenance.py)."""

from __future__ import annotations

import pytest

import posharness
from posharness.study.table_spec import StudyTable
from posharness.tasks.papers import published
from posharness.tasks.papers.tables import all_tables

TABLES = {table.id: table for table in all_tables()}
MODES = {"both", "contextual", "positional"}


def _metrics(task: str) -> set[str]:
    """The metrics a task declares: its main one and its headline (what `describe` shows)."""
    spec = posharness.get_task(task).spec
    return {spec.main_metric, *spec.headline_metrics}


def test_the_tables_the_brief_names_exist_once() -> None:
    ids = [table.id for table in all_tables()]
    assert len(ids) == len(set(ids))
    assert set(ids) == {
        "chen2023.table1",
        "chen2023.table3",
        "chen2023.fig2",
        "chen2023.table9",
        "chen2023.tablea3",
        "tupe2021.glue",
        "tisa2021.toeplitz",
    }


@pytest.mark.parametrize("table", TABLES.values(), ids=TABLES)
def test_every_column_reads_a_registered_task_metric(table: StudyTable) -> None:
    keys = [column.key for column in table.columns]
    assert len(keys) == len(set(keys))
    for column in table.columns:
        assert column.metric in _metrics(column.task), (column.task, column.metric)
        assert column.mode is None or column.mode in MODES


@pytest.mark.parametrize("table", TABLES.values(), ids=TABLES)
def test_published_rows_fit_their_table(table: StudyTable) -> None:
    keys = {column.key for column in table.columns}
    assert table.source.paper and table.source.table and table.source.page
    assert set(table.modes) <= MODES
    for row in table.published:
        assert row.model and row.values
        assert set(row.values) <= keys, set(row.values) - keys
        assert row.mode in table.modes
    if table.kind == "scatter":
        assert len(table.columns) == 2


@pytest.mark.parametrize(
    "table", [t for t in TABLES.values() if t.kind == "table"], ids=lambda t: t.id
)
def test_published_values_follow_the_columns_printed_order(table: StudyTable) -> None:
    """Columns are declared in the paper's order and the data lists values in that order,
    so the provenance test, which finds each row's numbers in order on the paper's line,
    also checks that each number sits under the right column."""
    order = [column.key for column in table.columns]
    for row in table.published:
        assert list(row.values) == [key for key in order if key in row.values]


def test_chen_table1_spot_values() -> None:
    rows = published.document("chen2023")["tables"]["table1"]["rows"]
    bert = next(row for row in rows if row["model"] == "BERT")
    assert bert["average"] == 77.8
    assert bert["values"]["mr"] == 72.5 and bert["spread"]["mr"] == 5.3
    assert [row["average"] for row in rows] == [77.8, 81.6, 81.7]
    assert {row["pe"] for row in rows} == {"bert-a", "bert-a-star-s", "bert-a-star"}


def test_chen_table3_spot_values() -> None:
    bert = next(row for row in TABLES["chen2023.table3"].published if row.model == "BERT")
    assert bert.values["shuffle_sr"] == -63.9
    assert (bert.values["symmetry"], bert.values["locality"]) == (87.9, 16.2)
    structbert = next(r for r in TABLES["chen2023.fig2"].published if r.model == "StrucBERT")
    assert structbert.values == {"symmetry": 96.3, "locality": 7.5}


def test_tupe_glue_spot_values() -> None:
    rows = {row["model"]: row for row in published.document("tupe2021")["tables"]["table1"]["rows"]}
    assert rows["TUPE-R"]["average"] == 85.04
    assert rows["BERT-A"]["values"]["cola"] == 55.19
    assert rows["TUPE-R"]["values"]["mnli_mm"] == 86.19


def test_chen_draft_table9_and_a3_spot_values() -> None:
    rows = {(r.model, r.mode): r for r in TABLES["chen2023.table9"].published}
    assert rows["BERT-p", "positional"].values["bshift"] == 53.68
    assert rows["TUPE", "both"].values["bshift"] == 79.44
    (tupe,) = TABLES["chen2023.tablea3"].published
    assert [tupe.values[f"macro_{m}"] for m in ("contextual", "positional", "both")] == [
        27.5,
        46.0,
        55.4,
    ]


@pytest.mark.parametrize(("paper", "table"), [("chen2023", "table1"), ("tupe2021", "table1")])
def test_printed_averages_are_the_mean_of_the_columns(paper: str, table: str) -> None:
    """The average column a study computes (mean over the columns) is the paper's own."""
    for row in published.document(paper)["tables"][table]["rows"]:
        values = row["values"].values()
        assert round(sum(values) / len(values), 2) == pytest.approx(row["average"], abs=0.051)


def test_table_a3_columns_read_one_mode_each() -> None:
    columns = TABLES["chen2023.tablea3"].columns
    assert {column.mode for column in columns} == MODES
    assert all(column.key.endswith(column.mode or "") for column in columns)


def test_tisa_publishes_no_number_read_off_a_figure() -> None:
    table = TABLES["tisa2021.toeplitz"]
    assert table.published == ()
    assert "figures" in table.caption


def test_a_misspelt_key_in_the_data_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown key"):
        published._known({"model": "X", "valeus": {}}, published.ROW_KEYS, "row")
