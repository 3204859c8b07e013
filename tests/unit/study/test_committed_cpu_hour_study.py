"""The committed cpu-hour study (issue 41) is what its README says it is.

The folder ``leaderboards/cpu-hour-study`` is a finding, so three things must stay true
on every clone: it names no folder of the machine that made it; ``posharness study
report`` rebuilds its tables from the folder alone, to the byte; and the headline its
README reads off the folder — the PEs that must have learned to attend carry no
near-uniform flag in mode ``both`` and end pretraining below the corpus's unigram
entropy — holds in the committed boards and loss logs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from posharness.boards.portable import MACHINE_PATH
from posharness.study.workflow import rebuild_report

STUDY = Path(__file__).resolve().parents[3] / "leaderboards" / "cpu-hour-study"
# Entropy of the non-special tokens of the study's prepared corpus (corpus/, not
# committed): -sum p log p over the 8,192-piece WordPiece's counts in the 32-token blocks,
# [PAD] [UNK] [CLS] [SEP] [MASK] left out because masking never picks them. The README
# gives the computation; a model that predicts every masked token from its frequency
# alone scores this loss.
UNIGRAM_ENTROPY = 6.756
MUST_ATTEND = ("BERT", "TUPE-R", "RoPE", "ALiBi")  # issue 41, "Done means"
TEXT_SUFFIXES = {".json", ".md", ".toml", ".log", ".tex", ".html", ".txt", ".csv", ".svg"}


def _left_out(relative: Path) -> bool:
    """The parts .gitignore keeps out of the repository: rebuilt by `study run`."""
    parts = relative.parts
    return (
        parts[0] == "corpus"
        or relative.name.startswith(".")
        or any(p.startswith("checkpoint-") or p == "tokenizer" for p in parts)
        or relative.suffix == ".safetensors"
        or (len(parts) > 1 and parts[-2] == "final" and relative.name.startswith("tokenizer"))
    )


def _committed() -> list[Path]:
    return sorted(
        p for p in STUDY.rglob("*") if p.is_file() and not _left_out(p.relative_to(STUDY))
    )


def test_the_study_folder_is_committed_with_its_tables_and_readme() -> None:
    tables = {p.name for p in (STUDY / "tables").glob("*.md")}
    assert {"chen2023.table3.md", "chen2023.tablea3.md", "tisa2021.toeplitz.md"} <= tables
    assert (STUDY / "README.md").is_file() and (STUDY / "study.toml").is_file()


def test_no_committed_file_of_the_study_names_a_machine_path() -> None:
    found = [
        f"{path.relative_to(STUDY)}: {match.group(0)}"
        for path in _committed()
        if path.suffix in TEXT_SUFFIXES
        # plan.json writes paths inside the study as "<study>/…": a placeholder, not a path
        for match in MACHINE_PATH.finditer(path.read_text(encoding="utf-8").replace("<study>/", ""))
    ]
    assert found == []


@pytest.mark.slow  # the whole report again: about 2.5 min on 2 cores
def test_study_report_rebuilds_the_committed_tables_from_the_folder_alone(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "elsewhere" / "cpu-hour-study"
    for path in _committed():
        target = copy / path.relative_to(STUDY)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    shutil.rmtree(copy / "tables")
    rebuild_report(copy)
    rebuilt = sorted(p.name for p in (copy / "tables").iterdir())
    assert rebuilt == sorted(p.name for p in (STUDY / "tables").iterdir())
    for name in rebuilt:
        if name.endswith((".md", ".tex")):
            assert (copy / "tables" / name).read_text() == (STUDY / "tables" / name).read_text()


def _final_loss(run: Path) -> float:
    records = json.loads((run / "loss_log.json").read_text(encoding="utf-8"))["records"]
    assert records[-1]["step"] == 1500, run.name  # the cpu-hour recipe's last step
    return float(records[-1]["loss"])


@pytest.mark.parametrize("label", MUST_ATTEND)
def test_the_pes_that_must_attend_end_below_the_unigram_entropy(label: str) -> None:
    runs = sorted((STUDY / "pretrain").glob(f"{label}-seed*"))
    assert len(runs) >= 2  # at least two pretraining seeds
    assert all(_final_loss(run) < UNIGRAM_ENTROPY for run in runs)


@pytest.mark.parametrize("label", MUST_ATTEND)
def test_the_pes_that_must_attend_carry_no_near_uniform_flag_in_mode_both(label: str) -> None:
    rows = [
        row
        for board in sorted((STUDY / "boards").glob(f"{label}-s*.json"))
        for row in json.loads(board.read_text(encoding="utf-8"))["rows"]
        if row["mode"] == "both" and "locality_symmetry/locality" in row["scores"]
    ]
    assert len(rows) >= 2  # one per seed
    flags = [f for row in rows for f in row["flags"].get("locality_symmetry", [])]
    assert not [f for f in flags if f.startswith("near-uniform")]
