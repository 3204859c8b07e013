"""The mode splits of the Hugging Face families carry explicit versions, guarded by a
recorded hash of their source (issue 29, part 4; models/decompose/versions.py).

A split at version 1 adds nothing to its models' fingerprints, so every committed board
keeps its ids; a split whose source changes must bump its version, which then enters the
fingerprint and makes new cells.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from posharness.contracts.model_spec import LoadOptions
from posharness.models.decompose.absolute import AbsoluteSplit
from posharness.models.decompose.versions import current_versions, split_classes, split_files
from posharness.models.hf.adapter import ATTN_IMPLEMENTATION, HFEncoderAdapter
from posharness.models.hf.checkpoint import checkpoint_fingerprint
from posharness.plugins.code_identity import source_digest
from tests.unit.core.code_versions import check_recorded, problems


def test_no_split_changed_without_a_version_bump():
    check_recorded("splits", current_versions())


def test_every_split_declares_its_own_version():
    classes = split_classes()
    assert len(classes) == 7
    for name, cls in classes.items():
        assert isinstance(cls.__dict__.get("version"), int), f"{name}: declare version = 1"
        assert cls.version >= 1


def test_an_edited_split_without_a_bump_is_caught(tmp_path: Path):
    """Part 4's "the bump test fails on an edited built-in", on a copy of the real split."""
    files = split_files(AbsoluteSplit)
    for file in files:
        shutil.copy(file, tmp_path / file.name)
    copies = [tmp_path / file.name for file in files]
    assert source_digest(copies) == current_versions()["AbsoluteSplit"][1]  # a faithful copy
    was = {"AbsoluteSplit": {"version": 1, "digest": source_digest(copies)}}
    module = tmp_path / "absolute.py"
    text = module.read_text()

    module.write_text(text.replace("class AbsoluteSplit:\n", "class AbsoluteSplit:  # noted\n"))
    assert problems("splits", {"AbsoluteSplit": (1, source_digest(copies))}, was) == []

    assert "    def prepare(" in text
    extra = "    def unused(self):\n        return 0\n\n    def prepare("
    module.write_text(text.replace("    def prepare(", extra, 1))
    edited = source_digest(copies)
    assert problems("splits", {"AbsoluteSplit": (1, edited)}, was) == [
        "split AbsoluteSplit: its source changed but its version is still 1: bump its "
        "version if any number can change, then run "
        "`python tests/unit/core/code_versions/record.py splits`"
    ]
    with pytest.raises(AssertionError, match="split AbsoluteSplit: its source changed"):
        check_recorded("splits", {"AbsoluteSplit": (1, edited)}, was)
    # Bumped but not re-recorded: still one line, asking to record.
    assert problems("splits", {"AbsoluteSplit": (2, edited)}, was) == [
        "split AbsoluteSplit is at version 2 but recorded at 1: run "
        "`python tests/unit/core/code_versions/record.py splits`"
    ]
    assert (
        problems(
            "splits",
            {"AbsoluteSplit": (2, edited)},
            {"AbsoluteSplit": {"version": 2, "digest": edited}},
        )
        == []
    )


def test_an_edit_of_the_shared_machinery_counts_for_every_split_using_it():
    shared = {"core.py", "fused.py", "mode_split.py", "controller.py", "reference.py"}
    for name, cls in split_classes().items():
        assert shared <= {file.name for file in split_files(cls)}, name
    assert "split_table.py" not in {
        f.name for cls in split_classes().values() for f in split_files(cls)
    }


def adapter(tiny_bert: Path) -> HFEncoderAdapter:
    return HFEncoderAdapter(tiny_bert, LoadOptions(device="cpu"))


def test_a_split_at_version_one_keeps_the_old_fingerprint(tiny_bert):
    """Every committed id (leaderboards/minilm*.json) was made before splits had versions:
    at version 1 the fingerprint is the old formula's."""
    model = adapter(tiny_bert)
    assert isinstance(model.decomposition.family, AbsoluteSplit)
    assert model.fingerprint() == checkpoint_fingerprint(
        tiny_bert, None, model.dtype, ATTN_IMPLEMENTATION
    )


def test_a_bumped_split_changes_the_fingerprint(tiny_bert, monkeypatch):
    before = adapter(tiny_bert).fingerprint()
    monkeypatch.setattr(AbsoluteSplit, "version", 2)
    bumped = adapter(tiny_bert).fingerprint()
    assert bumped != before
    monkeypatch.setattr(AbsoluteSplit, "version", 3)
    assert adapter(tiny_bert).fingerprint() not in (before, bumped)
