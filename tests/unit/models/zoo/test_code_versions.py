"""Built-in schemes and the zoo encoder carry explicit versions; their source is recorded.

A built-in's version 1 adds nothing to a model's fingerprint (the committed boards' ids
stay valid), so an edit that changes numbers without a bump would silently reuse old
cells. tests/unit/core/code_versions/schemes.json holds a hash of each one's normalised
source (docstrings, comments and formatting do not count); the test fails when the
source changed while the version did not. After a deliberate change: bump the version
(``register_pe(..., version=2)`` or ``ENCODER_VERSION``) and re-record with
``python tests/unit/core/code_versions/record.py schemes``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from posharness.models.zoo.identity import current_versions, scheme_files
from posharness.pe import declaration, scheme
from posharness.plugins.code_identity import source_digest
from tests.unit.core.code_versions import check_recorded, problems


def test_no_builtin_scheme_changed_without_a_version_bump() -> None:
    check_recorded("schemes", current_versions())


def test_every_builtin_scheme_is_versioned_and_starts_at_one() -> None:
    now = current_versions()
    assert len(now) == 19 and "encoder" in now  # the encoder and the 18 built-in schemes
    assert {version for version, _digest in now.values()} == {"1"}


def test_a_scheme_covers_the_zoo_modules_it_uses() -> None:
    files = {path.name for path in scheme_files(scheme("tupe-r"))}
    assert files == {"tupe.py", "relative_bias.py"}
    assert {path.name for path in scheme_files(scheme("attenuated"))} == {
        "attenuated.py",
        "attenuation.py",
    }


def test_an_edited_builtin_without_a_bump_is_caught(tmp_path: Path) -> None:
    source = scheme_files(scheme("alibi"))[0]
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    was = {"alibi": {"version": "1", "digest": source_digest([copy])}}
    copy.write_text(copy.read_text().replace('"""-m_h |i - j|', '"""Reworded: -m_h |i - j|'))
    assert not problems("schemes", {"alibi": ("1", source_digest([copy]))}, was)
    copy.write_text(copy.read_text().replace("return -slopes", "return -2 * slopes"))
    edited = source_digest([copy])
    assert problems("schemes", {"alibi": ("1", edited)}, was) == [
        "scheme alibi: its source changed but its version is still 1: bump its version if any "
        "number can change, then run `python tests/unit/core/code_versions/record.py schemes`"
    ]


def test_a_bumped_builtin_changes_the_fingerprint(monkeypatch) -> None:
    from posharness.models.zoo.encoder import config_for
    from posharness.models.zoo.model_code import code_identity

    config = config_for("tupe-r", "tiny", vocab_size=64)
    assert code_identity(config) == {}
    tupe = scheme("tupe-r")
    bumped = declaration(tupe).__class__(**{**declaration(tupe).__dict__, "version": "2"})
    monkeypatch.setattr(tupe, "__pe__", bumped)
    assert code_identity(config) == {"scheme": "tupe-r:v2"}
    monkeypatch.setattr("posharness.models.zoo.identity.ENCODER_VERSION", 2)
    assert code_identity(config)["encoder"] == "v2"
