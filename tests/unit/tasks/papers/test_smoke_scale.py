"""`posharness reproduce PAPER --recipe smoke` writes a study of minutes: the mini recipe's
pretraining for a few steps, tiny evaluation limits, and every table of the paper (issue 40,
part 5: a smoke study used to need --write-only and a hand edit)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from posharness.tasks.papers.studies import SCALES, STUDIES, study_text


@pytest.mark.parametrize("paper", sorted(STUDIES))
def test_the_smoke_study_is_the_mini_study_made_small(paper: str) -> None:
    smoke = tomllib.loads(study_text(paper, ["nope"], "smoke", "corpus.txt", "data"))
    mini = tomllib.loads(study_text(paper, ["nope"], "mini", "corpus.txt", "data"))
    assert smoke["pretrain"]["recipe"] == "mini"  # a real pretraining recipe
    assert smoke["pretrain"]["steps"] == SCALES["smoke"].steps == 20
    assert smoke["pretrain"]["size"] == "tiny"
    assert smoke["study"]["tables"] == mini["study"]["tables"]  # every table still written
    assert [m["name"] for m in smoke["model"]] == [m["name"] for m in mini["model"]]
    for run in smoke["run"]:
        assert run["limit"] == 50 and run["train_limit"] == 200
    assert any("smoke test" in note for note in smoke["study"]["notes"])


def test_the_command_offers_the_smoke_scale(tmp_path: Path, monkeypatch) -> None:
    from tests.cli_helpers import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "corpus.txt").write_text("a few words\n")
    code = cli(
        "reproduce", "tisa2021", "--pe", "nope", "--recipe", "smoke",
        "--corpus", "corpus.txt", "--write-only",
    )  # fmt: skip
    assert code == 0
    assert 'recipe = "mini"' in (tmp_path / "tisa2021-smoke.toml").read_text()
