"""A run with --data-dir and one without, into one results folder, keep their own result
files: the reference corpus is a row setting, so the second run must not overwrite the
result file that the first run's row still names (found by the README tour test: the
report refused the quickstart's row, whose file now held the WikiText run's numbers)."""

from __future__ import annotations

from pathlib import Path

from posharness.run.config import RunConfig
from posharness.run.plan import plan
from tests.unit.models.hf.test_hf_modes import write_corpus


def planned_paths(tiny_bert: Path, tmp_path: Path, **model_args: str) -> list[str]:
    return [cell.key.file_name for cell in plan_cells(tiny_bert, tmp_path, **model_args)]


def plan_cells(tiny_bert: Path, tmp_path: Path, **model_args: str) -> list:
    config = RunConfig(
        models=[f"hf:{tiny_bert}"],
        tasks=["locality_symmetry"],
        modes=["both", "positional"],
        model_args=model_args,
        output_dir=tmp_path / "results",
    )
    return plan(config, "cpu")


def test_the_embedded_corpus_keeps_plain_names_and_another_corpus_its_own(
    tiny_bert: Path, tmp_path: Path
) -> None:
    embedded = planned_paths(tiny_bert, tmp_path)
    assert embedded == [
        "locality_symmetry__both__seed0.json",
        "locality_symmetry__positional__seed0.json",
    ]
    corpus = write_corpus(tmp_path)
    named = planned_paths(tiny_bert, tmp_path, reference_corpus=str(corpus))
    keys = [cell.key for cell in plan_cells(tiny_bert, tmp_path, reference_corpus=str(corpus))]
    assert all(key.corpus and key.suffix.startswith("__corpus") for key in keys), named
    assert set(named).isdisjoint(embedded)  # every mode's file, `both` included
    corpus.write_text(corpus.read_text() + "one more line\n")  # other content, other file
    assert set(planned_paths(tiny_bert, tmp_path, reference_corpus=str(corpus))).isdisjoint(named)
