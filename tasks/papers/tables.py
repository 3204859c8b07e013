"""Every seed paper's study tables, for the ``posharness.study_tables`` entry point
(``papers = posharness.tasks.papers.tables:all_tables``): Chen et al. 2023 (Tables 1, 3, A3,
Fig. 2 and the ICLR draft's Tables 2, 3, 7 and 9), Ke et al. 2021 (TUPE's GLUE table) and
Wennberg & Henter 2021 (TISA's Toeplitz analysis). One module per paper holds its columns; the
published numbers are data in ``published/``."""

from __future__ import annotations

from posharness.study.table_spec import StudyTable
from posharness.tasks.papers import chen2023, tisa2021, tupe2021


def all_tables() -> tuple[StudyTable, ...]:
    return (*chen2023.tables(), *tupe2021.tables(), *tisa2021.tables())
