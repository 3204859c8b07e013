"""Ke, He, Liu 2021 (TUPE, ICLR) as a study table: their GLUE dev table (the one the text
calls Table 1), published rows in ``published/tupe2021.toml``."""

from __future__ import annotations

from posharness.study.table_spec import StudyColumn, StudyTable
from posharness.tasks.papers.paper_table import paper_table, task_column

# The paper's order; MNLI-m/mm is one printed cell, two columns here. Its Avg. is the mean
# of these nine numbers (checked in the tests), so every column is in the average.
GLUE_COLUMNS = (
    StudyColumn("mnli_m", "MNLI-m", "mnli", "matched_accuracy"),
    StudyColumn("mnli_mm", "MNLI-mm", "mnli", "mismatched_accuracy"),
    task_column("qnli", "QNLI"),
    task_column("qqp", "QQP"),
    task_column("sst2", "SST"),
    task_column("cola", "CoLA", "matthews"),
    task_column("mrpc", "MRPC"),
    task_column("rte", "RTE"),
    task_column("stsb", "STS", "pearson"),
)


def glue() -> StudyTable:
    return paper_table(
        "tupe2021.glue",
        "Ke et al. 2021 (TUPE), Table 1: GLUE dev",
        GLUE_COLUMNS,
        ("tupe2021", "table1"),
        """
        GLUE dev x100: CoLA Matthews, STS-B Pearson, others accuracy. The paper's protocol is
        tupe2021 (--task-arg X.protocol=tupe2021; the one ours used is named with our
        settings): learning rates {2, 3, 4, 5}e-5 x 5 seeds, 10 epochs (5 for MNLI, QNLI,
        QQP), batch 32; each rate scores the median over its seeds and the best rate is
        reported, as the paper does. Avg.: mean of the nine columns (MNLI-m and -mm counted
        apart), as printed. Published rows: BERT-Base size, 1M pre-training steps (^mid:
        300k).
        """,
        average="Avg.",
        digits=2,
    )


def tables() -> tuple[StudyTable, ...]:
    return (glue(),)
