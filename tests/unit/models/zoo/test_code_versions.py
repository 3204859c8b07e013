"""Built-in schemes and the zoo encoder carry explicit versions; their source is recorded.

A built-in's version 1 adds nothing to a model's fingerprint (the committed boards' ids
stay valid), so an edit that changes numbers without a bump would silently reuse old
cells. This test holds a hash of each one's normalised source (docstrings, comments and
formatting do not count) and fails when the source changed while the version did not.
After a deliberate change: bump the version (``register_pe(..., version=2)`` or
``ENCODER_VERSION``) and re-record with ``python tests/unit/models/zoo/test_code_versions.py``.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from posharness.models.zoo.identity import ENCODER_VERSION, encoder_digest, scheme_files
from posharness.pe import declaration, scheme, scheme_names
from posharness.plugins.code_identity import source_digest
from posharness.plugins.registry import BUILTIN

RECORD = Path(__file__).with_name("code_versions.json")


def current() -> dict[str, dict[str, str]]:
    """Version and source digest of the encoder and of every built-in scheme."""
    found = {"encoder": {"version": str(ENCODER_VERSION), "digest": encoder_digest()}}
    for name in scheme_names():
        obj = scheme(name)
        declared = declaration(obj)
        if declared.origin == BUILTIN:
            files = scheme_files(obj)
            found[f"scheme:{name}"] = {"version": declared.version, "digest": source_digest(files)}
    return found


def stale(recorded: dict, now: dict) -> list[str]:
    """One line per piece of code whose source changed while its version did not."""
    lines = []
    for key, entry in sorted(now.items()):
        old = recorded.get(key)
        if old is None:
            lines.append(f"{key}: not recorded yet: re-record (see this test's docstring)")
        elif old["digest"] != entry["digest"] and old["version"] == entry["version"]:
            lines.append(
                f"{key}: its source changed but its version is still {entry['version']}: bump "
                "the version, then re-record (see this test's docstring)"
            )
    return lines


def test_no_builtin_changed_without_a_version_bump() -> None:
    recorded = json.loads(RECORD.read_text())
    assert not stale(recorded, current()), "\n".join(stale(recorded, current()))


def test_every_builtin_scheme_is_versioned_and_starts_at_one() -> None:
    now = current()
    assert len([key for key in now if key.startswith("scheme:")]) == 12
    assert {entry["version"] for entry in now.values()} == {"1"}


def test_an_edited_builtin_without_a_bump_is_caught(tmp_path: Path) -> None:
    source = scheme_files(scheme("alibi"))[0]
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    recorded = {"scheme:alibi": {"version": "1", "digest": source_digest([copy])}}
    copy.write_text(copy.read_text().replace('"""-m_h |i - j|', '"""Reworded: -m_h |i - j|'))
    assert not stale(recorded, {"scheme:alibi": {"version": "1", "digest": source_digest([copy])}})
    copy.write_text(copy.read_text().replace("return -slopes", "return -2 * slopes"))
    edited = {"scheme:alibi": {"version": "1", "digest": source_digest([copy])}}
    assert stale(recorded, edited) == [
        "scheme:alibi: its source changed but its version is still 1: bump the version, then "
        "re-record (see this test's docstring)"
    ]
    bumped = {"scheme:alibi": {"version": "2", "digest": edited["scheme:alibi"]["digest"]}}
    assert not stale(recorded, bumped)


def test_a_bumped_builtin_changes_the_fingerprint(monkeypatch) -> None:
    from posharness.models.zoo.encoder import config_for
    from posharness.models.zoo.identity import code_identity

    config = config_for("tupe-r", "tiny", vocab_size=64)
    assert code_identity(config) == {}
    tupe = scheme("tupe-r")
    monkeypatch.setattr(tupe, "__pe__", declaration(tupe).__class__(
        **{**declaration(tupe).__dict__, "version": "2"}
    ))  # fmt: skip
    assert code_identity(config) == {"scheme": "tupe-r:v2"}
    monkeypatch.setattr("posharness.models.zoo.identity.ENCODER_VERSION", 2)
    assert code_identity(config)["encoder"] == "v2"


if __name__ == "__main__":  # re-record after a deliberate, version-bumped change
    RECORD.write_text(json.dumps(current(), indent=2, sort_keys=True) + "\n")
    sys.stdout.write(f"recorded {RECORD}\n")
