"""The plugins a study needs, recorded in its folder and loaded again on every rerun.

A study whose PE (or task) comes from a plugin must find it again when ``study run`` is
rerun in a new process, without the user remembering the ``--include`` of the first run
(issue 39, part 5: the rerun a study file's header prints failed with ``unknown model``).
Two things carry them:

* ``[study] include = ["my_pe.py"]`` in the study file: ``.py`` files or folders of them,
  read from the study file's folder, imported before any name in the file is checked —
  what ``--include`` does, written once where the study is.
* ``plugins.json`` in the study folder, written by every ``study run``: each included file
  a model or task of the study was registered from (its scheme's file for a PE), named
  relative to the study file's folder with its SHA-256, and each installed distribution
  one came from, with its version. The next run imports the recorded files before it
  checks anything, and says in one line what changed since: a file whose bytes differ
  (the cells of its models are then recomputed, their code identity being new) or a
  distribution at another version. A recorded file or distribution that is gone is named
  in the error of the model or task it would have provided.

Paths are relative to the study file's folder, as the study file names its own files:
the folder names no path of the machine that ran it (docs/studies.md).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from posharness.base.errors import PosharnessError
from posharness.storage.io import atomic_write_json, read_json_or_none

PLUGINS_FILE = "plugins.json"


@dataclass(frozen=True)
class StudyPlugins:
    """What loading a study's plugins found: lines to say, and plugins that are gone."""

    notes: tuple[str, ...] = ()  # one line per change since the last run
    gone: tuple[str, ...] = ()  # recorded plugins not found here, as a fix to name
    declared: tuple[str, ...] = ()  # the [study] include entries, as given

    def hint(self) -> str:
        """What an unknown model or task name adds: the plugin it may have come from."""
        if self.gone:
            return f"; this study last ran with {', '.join(self.gone)}"
        if self.declared:
            return ""
        return (
            '; a plugin\'s name: list its file in [study] include = ["FILE.py"] (or pass '
            "--include FILE.py)"
        )


def file_digest(path: Path) -> str:
    """SHA-256 of a plugin file's bytes (a folder: of its ``.py`` files, by name)."""
    if path.is_dir():
        digest = hashlib.sha256()
        for file in sorted(path.glob("*.py")):
            digest.update(file.name.encode() + b"\0" + file_digest(file).encode())
        return digest.hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_study_plugins(declared: Iterable[str], base: Path, folder: Path) -> StudyPlugins:
    """Import the study file's ``include`` entries, then the files the last run recorded.

    ``base``: the study file's folder, which both are relative to; ``folder``: the study
    folder. A declared file that cannot be imported raises (a mistake in the file, the
    caller names its line); a recorded one is said in one line and skipped, since the
    user's own ``--include`` may now provide its names."""
    from posharness.plugins import include_paths

    declared = tuple(declared)
    for entry in declared:
        include_paths([_from_base(entry, base)])
    record = read_record(folder)
    notes: list[str] = []
    gone: list[str] = []
    for item in record.get("include", []):
        name, path = str(item.get("path", "")), _from_base(str(item.get("path", "")), base)
        if not name:
            continue
        if not path.exists():
            gone.append(f"plugin file {name} (missing now: restore it, or --include its copy)")
            continue
        was, now = item.get("sha256"), file_digest(path)
        if was and was != now:
            notes.append(
                f"plugin file {name} changed since this study last ran (sha256 {was[:12]} → "
                f"{now[:12]}): cells whose code changed are recomputed; finished pretraining "
                "runs are kept (remove pretrain/LABEL-seedN to retrain one)"
            )
        try:
            include_paths([path])
        except PosharnessError as exc:
            notes.append(f"plugin file {name}, recorded by the last run, not loaded: {exc}")
    for item in record.get("distributions", []):
        dist, was = str(item.get("name", "")), item.get("version")
        try:
            now = version(dist)
        except PackageNotFoundError:
            gone.append(f"plugin distribution {dist} {was} (not installed: pip install {dist})")
            continue
        if was and now != was:
            notes.append(
                f"plugin distribution {dist} is at {now}, this study last ran with {was}: "
                "cells of the models whose code changed are recomputed"
            )
    return StudyPlugins(tuple(notes), tuple(gone), declared)


def read_record(folder: Path) -> dict[str, Any]:
    record = read_json_or_none(folder / PLUGINS_FILE)
    return record if isinstance(record, dict) else {}


def record_plugins(folder: Path, base: Path, specs: Iterable[str], tasks: Iterable[str]) -> Path:
    """Write ``plugins.json``: the included files and distributions the study's models
    (``specs``) and ``tasks`` were registered from; built-in names record nothing."""
    files, dists = needed_plugins(specs, tasks)
    record = {
        "include": [
            {"path": _to_base(path, base), "sha256": file_digest(path)} for path in sorted(files)
        ],
        "distributions": [{"name": d, "version": _version(d)} for d in sorted(dists)],
    }
    path = folder / PLUGINS_FILE
    atomic_write_json(path, record)
    return path


def needed_plugins(specs: Iterable[str], tasks: Iterable[str]) -> tuple[set[Path], set[str]]:
    """(included files, distributions) that registered the names a study uses: each
    model's name, for a PE model the scheme behind it, and each task."""
    from posharness.contracts.model_spec import parse_model_spec
    from posharness.plugins import models, pe_variants, positional_encodings
    from posharness.plugins import tasks as task_registry
    from posharness.plugins.registry import INCLUDE, PLUGIN

    entries = []
    for spec in specs:
        name = parse_model_spec(spec).name
        entries.append(_entry(models, name))
        if name in pe_variants:
            variant = pe_variants.get(name)
            entries.append(_entry(pe_variants, name))
            entries.append(_entry(positional_encodings, variant.scheme))
    entries += [_entry(task_registry, task) for task in tasks]
    files = {Path(e.source).resolve() for e in entries if e is not None and e.origin == INCLUDE}
    dists = {e.source for e in entries if e is not None and e.origin == PLUGIN}
    return files, dists


def plugin_code(specs: Iterable[str], tasks: Iterable[str]) -> dict[str, str]:
    """The code identity (``plugins.code_identity``) of every plugin name a stage uses:
    ``scheme NAME`` behind a PE model (with the variant's option values), ``model NAME``
    for another plugin model, ``task NAME``. In an evaluation stage's settings, an edit of
    a plugin's code makes the stage run again, and its runner recomputes exactly the cells
    whose identity changed; built-in names add nothing, so other studies keep their
    digests."""
    from posharness.contracts.model_spec import parse_model_spec
    from posharness.plugins import models, pe_variants, positional_encodings
    from posharness.plugins import tasks as task_registry
    from posharness.plugins.code_identity import code_identity
    from posharness.plugins.registry import BUILTIN

    code: dict[str, str] = {}
    for spec in specs:
        name = parse_model_spec(spec).name
        if name in pe_variants:
            variant = pe_variants.get(name)
            scheme = _entry(positional_encodings, variant.scheme)
            if scheme is not None and scheme.origin != BUILTIN:
                identity = code_identity(positional_encodings.get(variant.scheme))
                code[f"scheme {variant.scheme}"] = identity
            if _origin(pe_variants, name) != BUILTIN and variant.options:
                code[f"variant {name}"] = json.dumps(variant.options, sort_keys=True, default=str)
        elif _origin(models, name) not in (None, BUILTIN):
            code[f"model {name}"] = code_identity(models.get(name))
    for task in tasks:
        if _origin(task_registry, task) not in (None, BUILTIN):
            code[f"task {task}"] = code_identity(task_registry.get(task))
    return code


def _origin(registry: Any, name: str) -> str | None:
    entry = _entry(registry, name)
    return None if entry is None else entry.origin


def _entry(registry: Any, name: str) -> Any:
    try:
        return registry.entry(name)
    except PosharnessError:
        return None


def include_line(study_file: Path) -> str | None:
    """``include = ["my_pe.py"]``: the ``[study]`` key naming this process's ``--include``
    files relative to ``study_file``'s folder, for a command that writes a study file
    (``reproduce``); None without any."""
    from posharness.plugins import INCLUDED

    if not INCLUDED:
        return None
    base = study_file.resolve().parent
    return "include = [" + ", ".join(json.dumps(_to_base(Path(p), base)) for p in INCLUDED) + "]"


def _from_base(entry: str, base: Path) -> Path:
    path = Path(entry).expanduser()
    return path if path.is_absolute() else base / path


def _to_base(path: Path, base: Path) -> str:
    return Path(os.path.relpath(path.resolve(), base.resolve())).as_posix()


def _version(dist: str) -> str | None:
    try:
        return version(dist)
    except PackageNotFoundError:
        return None
