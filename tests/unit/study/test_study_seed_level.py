"""A study table's claims about PEs rest on pretraining seeds (issue 46, part 1): a PE's
mean row over its seeds, a test of PE against baseline PE over the seeds, none with
fewer than three seeds a side (and the reason), within-model tests labelled so."""

from __future__ import annotations

from pathlib import Path

from posharness.study.render import to_markdown
from posharness.study.table_spec import PublishedSource, StudyColumn, StudyTable
from posharness.study.tables import Cell, ComputedTable, ModelRow, TableRow, _pe_rows

SPEC = StudyTable(
    "t.table",
    "t",
    (StudyColumn("locality", "Locality", "locality_symmetry", "locality"),),
    PublishedSource("p", "t", "1"),
)
LOCALITY = {
    "BERT": (8.6, 8.4, 8.5),
    "TUPE-R": (44.4, 40.2, 39.1),
    "NoPE": (8.5, 8.6, 8.4),
}


def _table(seeds: int) -> tuple[list[ModelRow], list[TableRow]]:
    models, rows = [], []
    for pe, values in LOCALITY.items():
        for seed, value in enumerate(values[:seeds]):
            label = f"{pe} s{seed}"
            models.append(ModelRow(label, Path(f"{label}.json"), pe == "BERT", None, pe, seed))
            rows.append(TableRow(label, "both", [Cell(f"{value:.1f}", value)]))
    return models, rows


def test_a_pe_row_gives_the_mean_of_its_seed_rows_after_them() -> None:
    models, rows = _table(3)
    out, _, notes = _pe_rows(SPEC, models, rows)
    labels = [row.label for row in out]
    assert labels[:4] == ["BERT s0", "BERT s1", "BERT s2", "BERT (mean of 3 seeds)"]
    tupe = next(row for row in out if row.label == "TUPE-R (mean of 3 seeds)")
    assert tupe.cells[0].text.startswith("41.2") and tupe.seeds == 3
    assert any("mean over its pretraining seeds" in note for note in notes)


def test_pes_are_tested_over_their_seeds_and_marked_on_the_mean_row() -> None:
    models, rows = _table(3)
    out, lines, notes = _pe_rows(SPEC, models, rows)
    by_pe = {line.pe: line for line in lines}
    assert set(by_pe) == {"TUPE-R", "NoPE"}
    assert by_pe["TUPE-R"].test is not None and by_pe["TUPE-R"].test.p_adjusted < 0.05
    assert by_pe["NoPE"].test is None or by_pe["NoPE"].test.p_adjusted >= 0.05
    tupe = next(row for row in out if row.label == "TUPE-R (mean of 3 seeds)")
    assert tupe.cells[0].mark == "▲"
    assert all(row.cells[0].mark == "" for row in out if not row.seeds)  # seed rows: untouched
    assert any("over pretraining seeds" in note and "Holm" in note for note in notes)


def test_with_two_seeds_a_side_there_is_no_pe_level_mark_and_the_reason_is_printed() -> None:
    models, rows = _table(2)
    out, lines, notes = _pe_rows(SPEC, models, rows)
    assert lines == []
    assert all(cell.mark == "" for row in out for cell in row.cells)
    assert any("no ▲/▼ between PEs" in note and "BERT 2" in note for note in notes)


def test_the_markdown_lists_pe_level_tests_and_labels_the_others_within_one_model() -> None:
    models, rows = _table(3)
    out, lines, notes = _pe_rows(SPEC, models, rows)
    table = ComputedTable(SPEC, ["model", "mode", "Locality"], out, "c", notes, [], lines)
    text = to_markdown(table)
    assert "PE-level tests over pretraining seeds" in text
    assert "| TUPE-R (both) | Locality | BERT |" in text
