"""Wennberg & Henter 2021 (TISA, ACL) as a study table: the Toeplitz analysis per
positional encoding. The paper shows it only as figures, so no row is published."""

from __future__ import annotations

from posharness.study.table_spec import StudyColumn, StudyTable
from posharness.tasks.papers.paper_table import paper_table

# R² = 1 - RSS/TSS against the best Toeplitz fit (each diagonal replaced by its mean; TISA
# App. B), in [0, 1] as the paper plots it: no x100.
TOEPLITZ_COLUMNS = (
    StudyColumn("gram_r2", "R² of P = E_P E_P^T", "toeplitz", "gram_r2", scale=1.0),
    StudyColumn(
        "positional_term_r2", "R² of positional scores", "toeplitz", "positional_term_r2", scale=1.0
    ),
    StudyColumn("attention_r2", "R² of probe attention", "toeplitz", "attention_r2", scale=1.0),
)


def toeplitz() -> StudyTable:
    return paper_table(
        "tisa2021.toeplitz",
        "Wennberg & Henter 2021 (TISA): Toeplitzness of each encoding",
        TOEPLITZ_COLUMNS,
        ("tisa2021", "toeplitz"),
        """
        Toeplitz R² (1 = every diagonal constant, translation invariant) of the learned
        position embeddings' Gram matrix P = E_P E_P^T over the whole table (TISA Fig. 2), of
        the model's content-free positional logits where it defines them (mean over layers
        and heads: TISA's R² of extracted positional scores, App. C), and of the
        identical-word-probe attention. A PE without a position table has no Gram R²; each
        value's shuffled-positions control is on the boards. No published row: the paper
        shows these analyses only as figures (Fig. 1-5, 8) and prints no R² value.
        """,
        digits=3,
    )


def tables() -> tuple[StudyTable, ...]:
    return (toeplitz(),)
