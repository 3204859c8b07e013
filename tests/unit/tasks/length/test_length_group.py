"""The ``length`` group runs what each model can: a checkpoint saved without a masked-LM
head (sentence-transformers' MiniLM is a ``BertModel``) gets passkey and length_geometry,
and length_mlm is left out while the run is planned, never half-way through it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from posharness.base.errors import UnsupportedModeError
from posharness.run.config import RunConfig
from posharness.run.plan import plan


def _config(tiny_bert: Path, tmp_path: Path, tasks: list[str]) -> RunConfig:
    return RunConfig(
        models=[f"hf:{tiny_bert}"], tasks=tasks, output_dir=tmp_path / "results", cache_dir=None
    )


def test_the_group_leaves_out_length_mlm_for_a_checkpoint_without_a_head(
    tiny_bert: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        cells = plan(_config(tiny_bert, tmp_path, ["length"]), "cpu")
    assert {cell.task.spec.name for cell in cells} == {"passkey", "length_geometry"}
    assert "length_mlm needs a masked-LM head" in caplog.text and "BertModel" in caplog.text


def test_length_mlm_named_on_its_own_stops_the_plan_in_one_line(
    tiny_bert: Path, tmp_path: Path
) -> None:
    with pytest.raises(UnsupportedModeError) as caught:
        plan(_config(tiny_bert, tmp_path, ["length_mlm", "passkey"]), "cpu")
    assert "saved as BertModel" in str(caught.value) and "\n" not in str(caught.value)
