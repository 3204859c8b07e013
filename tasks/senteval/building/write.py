"""A built SentEval folder, written all or nothing: the ten official-named files, a
``<stem>.provenance.jsonl`` beside each (line for line), and ``manifest.json``.

Everything is written into a hidden staging folder beside ``--out`` (named with
:func:`posharness.storage.io.temporary_tag`) that replaces ``--out`` by renames only once every file
is complete. A build that fails or is killed leaves no partial file in ``--out``; its
staging folder is swept by the next build. A previous build in ``--out`` (it has a
``manifest.json``) is replaced; any other non-empty folder is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from posharness.base.errors import OutputError
from posharness.base.faults import kill_point
from posharness.storage.io import WRITE_ERRORS, sweep_stale_temporaries, temporary_tag
from posharness.tasks.senteval.building.balance import Candidate, per_class_wanted
from posharness.tasks.senteval.building.build import BUILDER, SentevalBuild
from posharness.tasks.senteval.building.corpus import SourceFile
from posharness.tasks.senteval.building.task import TaskResult
from posharness.tasks.senteval.catalog import BY_NAME, SPLITS

MANIFEST = "manifest.json"
FAULT_POINT = "senteval-file"  # between the files of a build (POSHARNESS_KILL_AT)
_QUOTES = {"``": '"', "''": '"'}  # PTB quotes back to the official files' plain quote


def check_out(out: Path) -> None:
    """Refuse, in one line, a folder that holds something other than a previous build."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out}: is a file: pass a folder for the probing files")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise OutputError(
            f"--out {out}: the folder is not empty and holds no previous build ({MANIFEST}): "
            "pass a new or empty folder"
        )


def write_senteval(build: SentevalBuild, out: Path) -> list[Path]:
    """Write the folder (module doc); the paths written, inside ``out``."""
    check_out(out)
    out = Path(os.path.abspath(out))
    parent = out.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        sweep_stale_temporaries(parent, of=out.name)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.{temporary_tag()}", dir=parent))
    except OSError as exc:
        raise OutputError(f"--out {out}: cannot write there ({exc.strerror})") from None
    try:
        names = []
        for result in build.results.values():
            names.extend(_write_task(staging, result, build.pool.sources))
            kill_point(FAULT_POINT)
        manifest = build_manifest(build)
        (staging / MANIFEST).write_text(
            json.dumps(manifest, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        names.append(MANIFEST)
        kill_point(FAULT_POINT)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)
        _replace(staging, out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if exc.errno not in WRITE_ERRORS:
            raise
        raise OutputError(f"--out {out}: cannot write the files ({exc.strerror})") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [out / name for name in names]


def _replace(staging: Path, out: Path) -> None:
    """``staging`` becomes ``out``; a previous build is moved aside first, then removed."""
    previous = None
    if out.is_dir() and any(out.iterdir()):
        previous = out.parent / f".{out.name}.{temporary_tag()}previous"
        os.rename(out, previous)
    elif out.is_dir():
        out.rmdir()
    os.rename(staging, out)
    if previous is not None:
        shutil.rmtree(previous, ignore_errors=True)


def _write_task(folder: Path, result: TaskResult, sources: list[SourceFile]) -> list[str]:
    file = BY_NAME[result.name].file
    stem = file.rsplit(".", 1)[0]
    with (
        (folder / file).open("w", encoding="utf-8", newline="\n") as examples,
        (folder / f"{stem}.provenance.jsonl").open("w", encoding="utf-8", newline="\n") as notes,
    ):
        for split, candidate in _in_file_order(result):
            sentence = " ".join(_QUOTES.get(token, token) for token in candidate.tokens)
            examples.write(f"{split}\t{candidate.label}\t{sentence}\n")
            notes.write(json.dumps(provenance(candidate, sources), ensure_ascii=False) + "\n")
    return [file, f"{stem}.provenance.jsonl"]


def _in_file_order(result: TaskResult) -> Iterator[tuple[str, Candidate]]:
    for split in SPLITS:
        for candidate in result.allocation.examples[split]:
            yield split, candidate


def provenance(candidate: Candidate, sources: list[SourceFile]) -> dict[str, Any]:
    """One provenance line: the source file, where the sentence is in it, and what changed."""
    origin = candidate.sentence.origin
    source = sources[origin.source]
    record: dict[str, Any] = {
        "source": source.name,
        "sha256": source.short_sha,
        "line": origin.line,
        "sentence": origin.index,
    }
    if origin.ident:
        record["id"] = origin.ident
    if candidate.basis:
        record["basis"] = candidate.basis
    record["change"] = candidate.change
    return record


def build_manifest(build: SentevalBuild) -> dict[str, Any]:
    request = build.request
    return {
        "builder": BUILDER,
        "seed": request.seed,
        "requested_sizes": dict(request.sizes),
        "max_text_sentences": request.max_text_sentences,
        "options": dict(request.options),
        "sources": build.pool.per_source,
        "pool": {
            "sentences": len(build.pool.sentences),
            "with_constituency_parse": sum(1 for s in build.pool.sentences if s.tree is not None),
            "with_dependency_parse": sum(1 for s in build.pool.sentences if s.words is not None),
            "excluded": dict(sorted(build.pool.excluded.items())),
        },
        "tasks": {
            name: task_record(result, request.sizes, build.pool.sources)
            for name, result in build.results.items()
        },
    }


def task_record(
    result: TaskResult, requested: dict[str, int], sources: list[SourceFile]
) -> dict[str, Any]:
    allocation = result.allocation
    classes = [label for label in result.classes if label not in allocation.missing]
    wanted = per_class_wanted(requested, max(len(classes), 1))
    full = {split: wanted[split] * len(classes) for split in SPLITS}
    sizes = allocation.sizes
    per_source = [0] * len(sources)
    for split in SPLITS:
        for candidate in allocation.examples[split]:
            per_source[candidate.sentence.origin.source] += 1
    return {
        "file": BY_NAME[result.name].file,
        "sizes": sizes,
        "requested": dict(requested),
        "balanced_full_size": full,
        "shortfall": {split: max(requested[split] - sizes[split], 0) for split in SPLITS},
        "classes": len(classes),
        "missing_classes": list(allocation.missing),
        "per_class": allocation.per_class,
        "candidates": result.candidates,
        "unused_after_balancing": allocation.unused,
        "excluded": dict(sorted(result.excluded.items(), key=lambda item: (-item[1], item[0]))),
        "examples_per_source": {
            source.name: count for source, count in zip(sources, per_source, strict=True) if count
        },
        "parameters": result.parameters,
    }
