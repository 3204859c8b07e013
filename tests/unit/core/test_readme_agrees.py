"""The README agrees with itself and with the tools (issue 40, part 7): each group's row
names exactly the tasks `posharness list groups` gives it, each test tier's time is stated
once (in docs/testing.md since issue 45), examples load checkpoints from the runs folder
`pretrain` writes, every zoo size is listed, and the messages the README quotes read as the
code writes them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from posharness.base.errors import OptionError
from posharness.contracts.examples import Example
from posharness.contracts.results import Metric
from posharness.plugins import tasks as task_registry
from posharness.run.flags import degenerate_flags
from posharness.run.task_checks import check_option_names

README = Path(__file__).resolve().parents[3] / "README.md"
TESTING = README.parent / "docs" / "testing.md"
TEXT = README.read_text(encoding="utf-8")


def _group_row(group: str) -> str:
    rows = [
        line
        for line in TEXT.splitlines()
        if line.startswith("|") and (f"`{group}` (group)" in line or f"(group `{group}`)" in line)
    ]
    assert len(rows) == 1, f"README's task table has {len(rows)} rows for group {group}"
    return rows[0]


@pytest.mark.parametrize("group", sorted(task_registry.groups()))
def test_each_group_row_names_exactly_its_members(group: str) -> None:
    named = set(re.findall(r"`([a-z0-9_]+)`", _group_row(group))) - {group}
    tasks = set(task_registry.names())
    assert named & tasks == set(task_registry.expand([group]))


def test_each_test_tier_has_its_time_once_with_the_load() -> None:
    """The tier table moved to docs/testing.md (issue 45); its times are the timings
    table's, and neither page states a tier's time anywhere else."""
    from posharness.base.timings import TIERS

    testing = TESTING.read_text(encoding="utf-8")
    for tier in ("fast", "integration", "slow", "browser"):
        rows = [line for line in testing.splitlines() if line.startswith(f"| {tier} |")]
        assert len(rows) == 1 and TIERS[tier].quote() in rows[0], tier
        assert re.search(r"\d+ (min|s)", rows[0]) and "load" in rows[0], tier
        assert testing.count(TIERS[tier].quote()) == 1, tier
    assert not re.search(r"(fast tier|tests?)[^.\n]{0,40}~?\d+ min", TEXT), "a tier time twice"


def test_the_readme_lists_every_size() -> None:
    from posharness.models.zoo.encoder.config import SIZES

    rows = {line.split("|")[1].strip(" `") for line in TEXT.splitlines() if line.startswith("| `")}
    assert set(SIZES) <= rows, set(SIZES) - rows


def test_the_readme_stays_short_and_links_the_docs_index() -> None:
    """Issue 45: a README a newcomer reads in ten minutes; the rest is one click away."""
    assert len(TEXT.splitlines()) <= 450
    assert "(docs/README.md)" in TEXT


def test_examples_load_checkpoints_from_the_runs_folder_pretrain_writes() -> None:
    assert "@runs/" not in TEXT
    assert "~/.local/share/posharness/runs" in TEXT


def test_an_unknown_task_option_names_its_task_and_close_matches() -> None:
    task = task_registry.get("locality_symmetry")()
    with pytest.raises(OptionError) as caught:
        check_option_names(task, {"word": "30"})
    message = str(caught.value)
    assert message.startswith(
        "--task-arg locality_symmetry.word: did you mean locality_symmetry.words? "
        "task locality_symmetry has no option 'word'"
    )
    assert "\n" not in message


def test_a_degenerate_classifier_reads_alike_for_label_ids_and_label_names() -> None:
    def flag(value: object) -> str:
        rows = [Example(id=str(i), split="dev", prediction=value) for i in range(40)]
        (text,) = degenerate_flags("accuracy", {"accuracy": Metric(0.5, n=40)}, rows)
        return text

    assert flag(1).startswith("degenerate classifier: prediction is '1' for 100 % of 40")
    assert flag("neutral").startswith("degenerate classifier: prediction is 'neutral' for 100 %")
