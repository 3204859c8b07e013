"""Recorded hashes of built-in code that carries an explicit version (issue 29, part 4).

A built-in's version 1 adds nothing to a fingerprint or cell id, so the committed boards
keep their ids; the price is that an edit changing numbers without a bump would silently
reuse old cells. Each kind of versioned code has a JSON file here, ``<kind>.json``,
mapping a name to ``{"version": V, "digest": D}`` (``D`` is
``posharness.plugins.code_identity.source_digest`` of the files it covers: comments,
docstrings and formatting do not count). :func:`check_recorded` fails when a digest
differs while the version did not change, one line per name. An edit that cannot change
any number (a new error message, a refactor shown bit-identical) is re-recorded without a
bump; the commit says why.

To add a kind: a function returning ``{name: (version, digest)}`` under its name in
:data:`KINDS`, a test calling ``check_recorded(kind, that_function())``, and
``python tests/unit/core/code_versions/record.py KIND`` to write its file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
RECORD = "python tests/unit/core/code_versions/record.py"

# kind -> "module:function" returning {name: (version, digest)} for that kind's built-ins.
KINDS = {
    "splits": "posharness.models.decompose.versions:current_versions",
    "schemes": "posharness.models.zoo.identity:current_versions",
}

Current = Mapping[str, tuple[int | str, str]]


def current(kind: str) -> dict[str, tuple[int | str, str]]:
    """The versions and digests of ``kind``'s built-ins now (from :data:`KINDS`)."""
    module_name, _, function = KINDS[kind].partition(":")
    found = getattr(import_module(module_name), function)()
    return {name: (version, str(digest)) for name, (version, digest) in found.items()}


def recorded(kind: str) -> dict[str, dict[str, str]]:
    path = FOLDER / f"{kind}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def problems(
    kind: str, now: Current, was: Mapping[str, Mapping[str, object]] | None = None
) -> list[str]:
    """One line per name whose recorded state does not match ``now`` (``was``: the
    recorded state, read from ``<kind>.json`` when not given)."""
    was = recorded(kind) if was is None else was
    noun = kind.removesuffix("s")
    lines = []
    for name, (version, digest) in sorted(now.items()):
        old = was.get(name)
        if old is None:
            lines.append(f"{noun} {name} is not recorded: run `{RECORD} {kind}`")
        elif str(old["version"]) == str(version) and old["digest"] != digest:
            lines.append(
                f"{noun} {name}: its source changed but its version is still {version}: "
                f"bump its version if any number can change, then run `{RECORD} {kind}`"
            )
        elif str(old["version"]) != str(version):
            lines.append(
                f"{noun} {name} is at version {version} but recorded at {old['version']}: "
                f"run `{RECORD} {kind}`"
            )
    for name in sorted(set(was) - set(now)):
        lines.append(f"{noun} {name} is recorded but no longer exists: run `{RECORD} {kind}`")
    return lines


def check_recorded(
    kind: str, now: Current, was: Mapping[str, Mapping[str, object]] | None = None
) -> None:
    """Fail (AssertionError, one line per name) unless ``now`` matches the record."""
    found = problems(kind, now, was)
    assert not found, "\n".join(found)


def record(kind: str) -> Path:
    """Write ``<kind>.json`` from the current state."""
    path = FOLDER / f"{kind}.json"
    state = {
        name: {"version": version, "digest": digest}
        for name, (version, digest) in sorted(current(kind).items())
    }
    path.write_text(json.dumps(state, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
