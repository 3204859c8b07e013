"""``build_senteval``: the Python API behind ``posharness build-probes senteval``.

Reads the sources, pools their sentences, runs each task's builder and returns everything
the files and the manifest hold; :func:`~.write.write_senteval` writes it. Every check that
can fail (options, files, missing parses, a task the sources cannot fill) runs before the
first byte is written.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError, OptionError
from posharness.tasks.senteval.building.balance import Sizes
from posharness.tasks.senteval.building.pool import SentencePool
from posharness.tasks.senteval.building.task import TaskResult
from posharness.tasks.senteval.catalog import BY_NAME, OFFICIAL_SIZES, SPLITS, TASKS

BUILDER = "posharness-senteval/1"  # bump when the files a build writes would change
ALL_TASKS = tuple(task.name for task in TASKS)


@dataclass(frozen=True)
class BuildRequest:
    """What to build from what; the defaults are the paper's."""

    snli: tuple[Path, ...] = ()
    ptb: tuple[Path, ...] = ()
    conllu: tuple[Path, ...] = ()
    text: tuple[Path, ...] = ()
    seed: int = 0
    tasks: tuple[str, ...] = ALL_TASKS
    sizes: Sizes = field(default_factory=lambda: dict(OFFICIAL_SIZES))
    max_text_sentences: int | None = None
    options: dict[str, Any] = field(default_factory=dict)  # see task.TaskContext.options


@dataclass
class SentevalBuild:
    request: BuildRequest
    pool: SentencePool
    results: dict[str, TaskResult]  # in catalogue order


def build_senteval(
    request: BuildRequest, report: Callable[[str], None] | None = None
) -> SentevalBuild:
    """Every requested task built in memory; ``report`` hears what is being done."""
    say = report or (lambda message: None)
    tasks = check_request(request)
    # Millions of small acyclic objects: the cyclic collector would rescan them again and
    # again while they are made (a fifth of the build); nothing here needs it.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build(request, tasks, say)
    finally:
        if collecting:
            gc.enable()


def _build(
    request: BuildRequest, tasks: tuple[str, ...], say: Callable[[str], None]
) -> SentevalBuild:
    from posharness.tasks.senteval.building.pool import build_pool
    from posharness.tasks.senteval.building.sources import (
        open_source,
        read_parsed_source,
        read_texts,
    )
    from posharness.tasks.senteval.building.task import TaskContext, builder

    # Parsed sources first: a sentence that is also in raw text keeps its parse.
    given = [
        (kind, path)
        for kind in ("snli", "ptb", "conllu", "text")
        for path in getattr(request, kind)
    ]
    sources = [open_source(kind, path) for kind, path in given]
    _check_needs(tasks, sources)
    reads = []
    for number, source in enumerate(sources):
        if source.kind != "text":
            say(f"reading {source.name}")
            reads.append(read_parsed_source(source, number))
    texts = [(s, n) for n, s in enumerate(sources) if s.kind == "text"]
    text_counts = None
    if texts:
        say(f"reading {len(texts)} text file(s)")
        text_reads, text_counts = read_texts(texts, request.max_text_sentences)
        reads.extend(text_reads)
    pool = build_pool(reads, text_counts)
    say(f"{len(pool.sentences):,} distinct sentences of 5-28 tokens")
    _check_pool(tasks, pool)
    context = TaskContext(pool, request.seed, dict(request.sizes), dict(request.options))
    results = {}
    for name in tasks:
        say(f"building {name}")
        results[name] = builder(name)(context)
        _check_result(results[name])
    return SentevalBuild(request, pool, results)


def check_request(request: BuildRequest) -> tuple[str, ...]:
    """The tasks to build, in catalogue order; a bad option is one line."""
    unknown = [name for name in request.tasks if name not in BY_NAME]
    if unknown:
        raise OptionError(
            f"--tasks {unknown[0]}: unknown SentEval probing task; known: {', '.join(ALL_TASKS)}"
        )
    if not request.tasks:
        raise OptionError(f"--tasks: name at least one of {', '.join(ALL_TASKS)}")
    if request.seed < 0:
        raise OptionError(f"--seed {request.seed}: must not be negative")
    if set(request.sizes) != set(SPLITS) or any(
        not isinstance(size, int) or size < 1 for size in request.sizes.values()
    ):
        shown = ",".join(str(request.sizes.get(split)) for split in SPLITS)
        raise OptionError(f"--sizes {shown}: give three positive sizes TRAIN,DEV,TEST")
    if request.max_text_sentences is not None and request.max_text_sentences < 1:
        raise OptionError(f"--max-text-sentences {request.max_text_sentences}: must be positive")
    if not (request.snli or request.ptb or request.conllu or request.text):
        raise OptionError("no source: pass at least one of --snli, --ptb, --conllu, --text FILE")
    return tuple(name for name in ALL_TASKS if name in request.tasks)


def _check_needs(tasks: tuple[str, ...], sources: list) -> None:
    """Before reading: refuse a task whose annotation no source can have."""
    from posharness.tasks.senteval.building.sources import snli_has_parses
    from posharness.tasks.senteval.building.task import NEED_HINTS, NEEDS, PARSE, TAGS, TREE

    unparsed = [s for s in sources if s.kind == "snli" and not snli_has_parses(s.path)]
    trees = any(s.kind == "ptb" for s in sources) or any(
        s.kind == "snli" and s not in unparsed for s in sources
    )
    parses = trees or any(s.kind == "conllu" for s in sources)
    having = {TREE: trees, PARSE: parses, TAGS: parses}
    for name in tasks:
        need = NEEDS[name]
        if need in having and not having[need]:
            note = f" ({unparsed[0].name} has no sentence1_parse)" if unparsed else ""
            raise DataError(f"{name} needs {NEED_HINTS[need]}{note}")


def _check_pool(tasks: tuple[str, ...], pool: SentencePool) -> None:
    """After reading: the parses must also be there among the 5-28-token sentences."""
    from posharness.tasks.senteval.building.task import NEED_HINTS, NEEDS, PARSE, TAGS, TREE

    if not pool.sentences:
        raise DataError(
            "no sentence of 5-28 tokens in the sources "
            f"(excluded: {_reasons(pool.excluded)}): pass larger files"
        )
    trees = any(s.tree is not None for s in pool.sentences)
    parses = trees or any(s.words is not None for s in pool.sentences)
    having = {TREE: trees, PARSE: parses, TAGS: parses}
    for name in tasks:
        need = NEEDS[name]
        if need in having and not having[need]:
            raise DataError(f"{name} needs {NEED_HINTS[need]} among the sentences of 5-28 tokens")


def _check_result(result: TaskResult) -> None:
    """Every split holds every kept class (at least two), or the build stops here."""
    per_class = result.allocation.per_class
    present = [label for label in per_class[SPLITS[0]] if per_class[SPLITS[0]][label]]
    short = [
        split for split in SPLITS if sum(1 for count in per_class[split].values() if count) < 2
    ]
    if short or len(present) < 2:
        raise DataError(
            f"{result.name}: too few sentences qualify ({result.candidates:,} candidates, "
            f"split {short[0] if short else SPLITS[0]!r} would not hold two classes; "
            f"excluded: {_reasons(result.excluded)}): pass more or larger sources, or "
            "smaller --sizes"
        )


def _reasons(counts: Counter[str] | dict[str, int], top: int = 3) -> str:
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]
    return ", ".join(f"{reason} {count:,}" for reason, count in ranked) or "none"
