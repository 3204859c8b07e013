"""Each table's caption names the limits and fine-tuning protocol of the cells that table
shows, defaults included, and nothing from the [[run]] sections that feed other tables."""

from __future__ import annotations

from pathlib import Path

from posharness.study.plan import make_plan
from posharness.study.publish import publish
from posharness.study.stages import training_stage
from posharness.study.study_file import read_study
from tests.unit.study.conftest import write_study

STUDY = """
[study]
name = "captions"
tables = ["chen2023.fig2", "tisa2021.toeplitz", "chen2023.table1", "chen2023.table3"]

[[model]]
name = "bert-a"
seeds = []

[[run]]
tasks = ["locality_symmetry"]
limit = 100
model_args = { init = "random", size = "tiny" }

[[run]]
tasks = ["toeplitz"]
limit = 7
train_limit = 9
model_args = { init = "random", size = "tiny" }

[[run]]
tasks = ["rte", "snli"]
model_args = { init = "random", size = "tiny" }
task_args = { snli = { protocol = "chen2023" } }
"""


def _captions(tmp_path: Path) -> dict[str, str]:
    """The caption of every table, as ``study report`` writes it (no stage has run: the
    cells read "not run", the captions are already those of the study's cells)."""
    study = read_study(write_study(tmp_path, STUDY), training_stage())
    publish(make_plan(study, training_stage(), {}))
    tables = study.folder / "tables"
    return {table: (tables / f"{table}.md").read_text().split("\n\n")[1] for table in study.tables}


def test_each_caption_names_only_the_limits_and_protocol_of_its_own_cells(
    tmp_path: Path,
) -> None:
    captions = _captions(tmp_path)
    fig2, toeplitz = captions["chen2023.fig2"], captions["tisa2021.toeplitz"]
    assert "evaluated with --limit 100." in fig2
    assert "--limit 7" not in fig2 and "--train-limit" not in fig2 and "protocol" not in fig2
    assert "evaluated with --limit 7 --train-limit 9." in toeplitz
    assert "--limit 100" not in toeplitz and "fine-tuned" not in toeplitz


def test_a_fine_tune_table_names_the_default_protocol_it_ran_with(tmp_path: Path) -> None:
    table1 = _captions(tmp_path)["chen2023.table1"]
    assert "fine-tuned with the quick protocol." in table1
    assert "evaluated with" not in table1  # its cells ran without limits
    assert "chen2023 protocol" not in table1  # snli's protocol is Table 3's, not Table 1's


def test_a_table_fed_by_two_runs_says_which_cells_ran_with_which_settings(
    tmp_path: Path,
) -> None:
    table3 = _captions(tmp_path)["chen2023.table3"]
    assert "evaluated with --limit 100 (locality_symmetry), without limits (snli);" in table3
    assert "fine-tuned with the chen2023 protocol." in table3
