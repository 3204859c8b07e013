"""The report folder, written all or nothing.

Everything is written into a hidden sibling folder named with ``temporary_tag()`` — so
``sweep_stale_temporaries`` removes what a killed build left — and renamed into place.
A previous report is recognised by its manifest (``report.json``) and replaced; any other
existing folder is refused unless ``--overwrite``, and never one that holds the report's
own inputs or the working directory.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from posharness.base.errors import OutputError
from posharness.storage.io import (
    read_json_or_none,
    sweep_stale_temporaries,
    temporary_tag,
    write_errors_in_one_line,
)

MANIFEST = "report.json"
FORMAT = "posharness-report/1"

_UMASK = os.umask(0)
os.umask(_UMASK)


def is_report(folder: Path) -> bool:
    data = read_json_or_none(folder / MANIFEST)
    return isinstance(data, dict) and str(data.get("format", "")).startswith("posharness-report/")


def check_target(target: Path, overwrite: bool, inputs: list[Path]) -> None:
    """Fail now, in one line, when ``target`` may not be (re)placed."""
    resolved = target.resolve()
    for kept in [Path.cwd(), Path.home(), *inputs]:
        if kept.resolve().is_relative_to(resolved):
            raise OutputError(
                f"-o {target} holds {kept}, which the report must not replace: "
                "pass an output folder of its own, e.g. -o report/"
            )
    if not target.exists() and not target.is_symlink():
        return
    if target.is_dir() and not target.is_symlink():
        if is_report(target) or not any(target.iterdir()):
            return
        what = f"exists and is not a posharness report (no {MANIFEST})"
    else:
        what = "exists and is not a folder"
    if not overwrite:
        raise OutputError(f"-o {target} {what}: pass another folder, or --overwrite to replace it")


def write_folder(
    target: Path, texts: dict[str, str], copies: dict[str, Path], manifest: dict[str, Any]
) -> None:
    """``texts`` and ``copies`` (relative path → source) become ``target``, all at once."""
    parent = target.parent
    hint = "pass -o with a folder you can write to"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_temporaries(parent, of=target.name)
        staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.{temporary_tag()}"))
    except OSError as exc:
        raise OutputError(f"cannot write to {parent} ({exc.strerror}): {hint}") from exc
    try:
        with write_errors_in_one_line(f"the report to {target}", hint):
            for relative, text in sorted(texts.items()):
                path = staging / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            for relative, source in sorted(copies.items()):
                path = staging / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, path)
            (staging / MANIFEST).write_text(
                json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8"
            )
            os.chmod(staging, 0o777 & ~_UMASK)  # mkdtemp makes 0700; a report is shared
            _replace(staging, target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def _replace(staging: Path, target: Path) -> None:
    """Rename ``staging`` onto ``target``; an old one is moved aside first and removed
    after, so a reader sees the old report or the new one, each complete."""
    if not target.exists() and not target.is_symlink():
        os.rename(staging, target)
        return
    aside = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{temporary_tag()}"))
    old = aside / "old"
    os.rename(target, old)
    try:
        os.rename(staging, target)
    except OSError:
        os.rename(old, target)  # put the previous report back
        raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
