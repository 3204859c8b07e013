"""The files a run already wrote — result JSONs, the figures each cell lists, the views
across modes a run writes beside its cells — and where the report keeps its copies.

The core knows no family's figures: it copies what a ``CellResult`` lists in
``artifacts`` and what sits in a run's ``*__summary`` folders, and files it under the
task's family. Copies are named by content, so the same file reached from two boards is
copied once and the report's layout does not depend on where the results lay.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from posharness.report.locate import Found
from posharness.report.model import FigureRef, FileCopy

IMAGES = (".png", ".svg", ".jpg", ".jpeg", ".gif", ".webp")
TABLES = (".md", ".csv", ".tsv", ".json", ".txt")
SUMMARY = "__summary"


def is_image(href: str) -> bool:
    return href.lower().endswith(IMAGES)


@dataclass(frozen=True)
class CellFiles:
    copies: tuple[FileCopy, ...]
    figures: tuple[FigureRef, ...]
    missing: tuple[str, ...]  # listed by the result, not in its folder


def cell_files(found: Found, caption: str) -> CellFiles:
    """The result JSON and every artifact it lists that is really there."""
    copies = [FileCopy(f"{found.prefix}.json", found.path)]
    figures, missing = [], []
    base = found.path.parent.resolve()
    for artifact in found.result.artifacts:
        source = found.path.parent / artifact
        resolved = source.resolve()
        if not resolved.is_relative_to(base) or not resolved.is_file():
            missing.append(str(source))
            continue
        target = found.copy_name(resolved.relative_to(base).as_posix())
        copies.append(FileCopy(target, source))
        figures.append(FigureRef(target, f"{caption} · {source.name}", "artifact"))
    return CellFiles(tuple(copies), tuple(figures), tuple(missing))


@dataclass(frozen=True)
class SummaryFolder:
    prefix: str  # the task or task group it summarises
    name: str  # the folder's name, e.g. ``dep_heads__seed0__summary``
    copies: tuple[FileCopy, ...]
    figures: tuple[FigureRef, ...]
    tables: tuple[FigureRef, ...]


def summary_folders(result_folders: list[Path], caption: dict[Path, str]) -> list[SummaryFolder]:
    """The ``<task or group>__seed<N>__summary`` folders beside the given cells' results."""
    out = []
    for folder in result_folders:
        for summary in sorted(folder.glob(f"*{SUMMARY}")):
            if not summary.is_dir():
                continue
            copies, figures, tables = [], [], []
            for source in sorted(p for p in summary.iterdir() if p.is_file()):
                suffix = source.suffix.lower()
                if suffix not in IMAGES + TABLES:
                    continue
                digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
                target = f"summaries/{digest}-{source.name}"
                copies.append(FileCopy(target, source))
                ref = FigureRef(
                    target, f"{caption[folder]} · {summary.name} · {source.name}", "summary"
                )
                (figures if suffix in IMAGES else tables).append(ref)
            if copies:
                prefix = summary.name.split("__", 1)[0]
                out.append(
                    SummaryFolder(
                        prefix, summary.name, tuple(copies), tuple(figures), tuple(tables)
                    )
                )
    return out
