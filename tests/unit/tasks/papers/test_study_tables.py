"""The seed papers' study tables: columns name real tasks and metrics, published rows fit
their tables, and the published numbers are the papers' (spot values here; every number
against the papers' text in test_published_provenance.py)."""

from __future__ import annotations

import pytest

import posharness
from posharness.study.table_spec import StudyTable
from posharness.tasks.finetune.profiles import PROFILES
from posharness.tasks.papers import published
from posharness.tasks.papers.tables import all_tables

TABLES = {table.id: table for table in all_tables()}
MODES = {"both", "contextual", "positional"}
# Metrics a task records only under an option, and that option: Table A3's with-Root
# averages (dep_heads.score_root, which the chen2023 study sets).
OPTIONAL_METRICS = {
    ("dep_heads", "macro_with_root"): "score_root",
    ("dep_heads", "macro_short_with_root"): "score_root",
    ("dep_heads", "macro_long_with_root"): "score_root",
}


def _metrics(task: str) -> set[str]:
    """The metrics a task records: its main one and its headline (what `describe` shows),
    a fine-tune task's every reported one (SICK-R's ``dev_spearman``), and those it records
    under an option it declares."""
    spec = posharness.get_task(task).spec
    reported = PROFILES[task].reported if task in PROFILES else ()
    gated = {m for (t, m), option in OPTIONAL_METRICS.items() if t == task and spec.option(option)}
    return {spec.main_metric, *spec.headline_metrics, *reported, *gated}


def test_the_tables_the_brief_names_exist_once() -> None:
    ids = [table.id for table in all_tables()]
    assert len(ids) == len(set(ids))
    assert set(ids) == {
        "chen2023.table1",
        "chen2023.table3",
        "chen2023.fig2",
        "chen2023.table9",
        "chen2023.tablea3",
        "chen2023.draft_table2",
        "chen2023.draft_table3",
        "chen2023.draft_table7",
        "tupe2021.glue",
        "tisa2021.toeplitz",
        "chen2023.dynamics",  # issue 46: the paper's metrics against tokens seen
    }


@pytest.mark.parametrize("table", TABLES.values(), ids=TABLES)
def test_every_column_reads_a_registered_task_metric(table: StudyTable) -> None:
    keys = [column.key for column in table.columns]
    assert len(keys) == len(set(keys))
    for column in table.columns:
        assert column.mode is None or column.mode in MODES
        if column.source != "board":  # a dynamics table's MLM loss: the run's loss log
            assert column.source == "loss_log" and not column.task, column
            continue
        assert column.metric in _metrics(column.task), (column.task, column.metric)


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
    printed, recomputed = TABLES["chen2023.tablea3"].published
    assert [printed.values[f"macro_{m}"] for m in ("contextual", "positional", "both")] == [
        27.5,
        46.0,
        55.4,
    ]
    assert [recomputed.values[f"macro_{m}"] for m in ("contextual", "positional", "both")] == [
        23.7,
        48.2,
        53.8,
    ]
    assert "without Root" in recomputed.model and "recomputed, not printed" in recomputed.note


def test_chen_draft_tables_spot_values() -> None:
    rows = {r.model: r for r in TABLES["chen2023.draft_table2"].published}
    shuffle_6 = [rows[m].values["shuffle_6"] for m in ("BERT", "ALBERT", "DeBERTa", "XLNet")]
    assert shuffle_6 == [-0.5, -1.7, -1.1, -1.2] and rows["StrucBERT"].values["shuffle_6"] == -1.1
    rows = {r.model: r for r in TABLES["chen2023.draft_table3"].published}
    assert [rows[m].pe for m in ("A*", "A*-Seq", "ALiBi", "ALiBi-Seq")] == [
        "bert-a-star",
        "bert-a-star-seq",
        "alibi-softmax",  # App. B.5: a softmax of ALiBi's biases, added to the logits
        "alibi-seq",
    ]
    assert rows["A*-Seq"].values["rte"] == 64.1 and rows["ALiBi-Seq"].average == 80.4
    assert rows["A*"].values["sickr"] == 77.0  # the draft's; the final Table 1 prints 76.0
    rows = {r.model: r for r in TABLES["chen2023.draft_table7"].published}
    assert rows["BERT-only-p"].values["stsb"] == 47.1 and rows["BERT-only-p"].spread["stsb"] == 18
    assert [rows[m].pe for m in ("BERT", "BERT-only-c", "BERT-only-p")] == [
        "bert-a",
        "bert-only-c",
        "bert-only-p",
    ]


# A printed average the paper's own columns do not give (the data's note says so).
AVERAGE_MISPRINTS = {("chen2023-draft", "table7", "BERT-only-c"): 76.43}


@pytest.mark.parametrize(
    ("paper", "table"),
    [
        ("chen2023", "table1"),
        ("tupe2021", "table1"),
        ("chen2023-draft", "table3"),
        ("chen2023-draft", "table7"),
    ],
)
def test_printed_averages_are_the_mean_of_the_columns(paper: str, table: str) -> None:
    """The average column a study computes (mean over the columns) is the paper's own, up
    to rounding: the printed columns and the printed average are each rounded to the last
    digit shown (0.05 each at one decimal), so they may differ by 0.1 at most."""
    data = published.document(paper)["tables"][table]
    for row in data["rows"]:
        values = row["values"].values()
        mean = sum(values) / len(values)
        misprint = AVERAGE_MISPRINTS.get((paper, table, row["model"]))
        if misprint is not None:
            assert round(mean, 2) == misprint and str(misprint) in data["note"]
            continue
        assert mean == pytest.approx(row["average"], abs=0.1001), row["model"]


def test_table_a3_columns_read_one_mode_each() -> None:
    columns = TABLES["chen2023.tablea3"].columns
    assert {column.mode for column in columns} == MODES
    assert all(column.key.endswith(column.mode or "") for column in columns)


def test_table_a3_compares_the_papers_relation_set_with_root() -> None:
    """The paper's averages include its Root row; ours read the with-Root averages."""
    table = TABLES["chen2023.tablea3"]
    assert {c.metric for c in table.columns} == {
        "macro_with_root",
        "macro_short_with_root",
        "macro_long_with_root",
    }
    assert "with Root among them" in table.caption and "without Root" in table.caption


def test_table1_reads_what_the_paper_printed() -> None:
    """SICK-R on dev (App. A.2) and MNLI as the mean of matched and mismatched (App. A.4),
    in Table 1 and the draft's tables that share its columns."""
    for table_id in ("chen2023.table1", "chen2023.draft_table3", "chen2023.draft_table7"):
        columns = {c.key: c for c in TABLES[table_id].columns}
        assert (columns["sickr"].metric, columns["mnli"].metric) == (
            "dev_spearman",
            "mean_accuracy",
        )
        caption = TABLES[table_id].caption
        assert "10-fold cross-validation" in caption and "two test sets of MNLI" in caption
    note = published.document("chen2023")["tables"]["table1"]["note"]
    assert "Note that we report the average score for the two test sets of MNLI." in note
    assert "presumably" not in note


def test_the_chen_study_runs_shuffle_6_and_scores_root() -> None:
    from posharness.tasks.papers.studies import STUDIES

    chen = STUDIES["chen2023"]
    assert "chen2023.draft_table2" in chen.tables
    dep_heads = next(run for run in chen.runs if "dep_heads" in run["tasks"])
    assert dep_heads["task_args"]["dep_heads"]["score_root"] == "true"


def test_tisa_publishes_no_number_read_off_a_figure() -> None:
    table = TABLES["tisa2021.toeplitz"]
    assert table.published == ()
    assert "figures" in table.caption


def test_a_misspelt_key_in_the_data_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown key"):
        published._known({"model": "X", "valeus": {}}, published.ROW_KEYS, "row")
