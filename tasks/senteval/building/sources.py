"""The four source readers (``--snli``, ``--ptb``, ``--conllu``, ``--text``).

Each turns one file into :class:`~.corpus.Sentence` records of 5-28 tokens, with the parse
the file has, plus the corpus counts of every sentence it read (any length) and the
sentences it left out by reason. A file that is missing, not UTF-8 or malformed stops the
build with one line naming the file and the line, before anything is built.
"""

from __future__ import annotations

import bisect
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from posharness.base.errors import DataError
from posharness.tasks.senteval.building.corpus import (
    MAX_TOKENS,
    MIN_TOKENS,
    CorpusCounts,
    Origin,
    Sentence,
    SourceFile,
)

if TYPE_CHECKING:
    from posharness.tasks.senteval.building.text import TextChunk

_HINTS = {
    "snli": "an SNLI jsonl file, e.g. snli_1.0_dev.jsonl",
    "ptb": "a file of Penn-Treebank bracketed trees",
    "conllu": "a CoNLL-U file, e.g. en_ewt-ud-train.conllu",
    "text": "a UTF-8 text file",
}
TEXT_CHUNK_CHARS = 1 << 20  # lines per worker job: about 1 MB of text
Job = tuple[str, list[tuple[int, str]]]  # (text layout, numbered lines)


@dataclass
class SourceRead:
    """One file's sentences (5-28 tokens, file order) and what the manifest says of it."""

    source: SourceFile
    sentences: list[Sentence] = field(default_factory=list)
    counts: CorpusCounts = field(default_factory=CorpusCounts)
    read: int = 0  # sentences seen, before any filter
    excluded: Counter[str] = field(default_factory=Counter)
    layout: str = ""  # raw text: wikitext | wikiextractor | plain

    @property
    def parsed(self) -> int:
        """Sentences that carry a constituency or dependency parse."""
        return sum(1 for s in self.sentences if s.tree is not None or s.words is not None)


def open_source(kind: str, path: Path) -> SourceFile:
    """The file's identity (name as given, sha256); a missing file is one line."""
    from posharness.storage.hashing import hash_file

    if not path.is_file():
        raise DataError(f"--{kind} {path}: no such file: pass {_HINTS[kind]}")
    return SourceFile(kind=kind, path=path, name=str(path), sha256=hash_file(path))


def snli_has_parses(path: Path, probe_records: int = 50) -> bool:
    """Whether the first records of an SNLI file carry ``sentence1_parse``."""
    from posharness.storage.io import json_object_lines

    for seen, (_, record) in enumerate(json_object_lines(path, "one SNLI record"), start=1):
        if record.get("sentence1_parse") or record.get("sentence2_parse"):
            return True
        if seen >= probe_records:
            break
    return False


def read_parsed_source(source: SourceFile, number: int) -> SourceRead:
    """An ``--snli``, ``--ptb`` or ``--conllu`` file; ``number`` is the source's position in
    the build (the ``source`` of every Origin)."""
    readers = {"snli": _read_snli, "ptb": _read_ptb, "conllu": _read_conllu}
    return readers[source.kind](source, number)


def _keep(read: SourceRead, sentence: Sentence) -> None:
    """Count the sentence's words, then keep it when it is 5-28 tokens long."""
    read.read += 1
    if any(not token or any(ch.isspace() for ch in token) for token in sentence.tokens):
        read.excluded["token_with_space"] += 1
        return
    read.counts.add(sentence.tokens, sentence.tags)
    if len(sentence.tokens) < MIN_TOKENS:
        read.excluded["too_short"] += 1
    elif len(sentence.tokens) > MAX_TOKENS:
        read.excluded["too_long"] += 1
    else:
        read.sentences.append(sentence)


# -- SNLI --------------------------------------------------------------------------------
def _read_snli(source: SourceFile, number: int) -> SourceRead:
    from posharness.storage.io import json_object_lines
    from posharness.tasks.senteval.building.text import tokenize
    from posharness.tasks.senteval.building.trees import BracketError, read_tree

    read = SourceRead(source)
    seen: set[str] = set()
    expected = "one SNLI record (sentence1, sentence2, sentence1_parse, ...)"
    for line, record in json_object_lines(source.path, expected):
        for index, key in ((1, "sentence1"), (2, "sentence2")):
            parse, text = record.get(f"{key}_parse"), record.get(key)
            has_parse = isinstance(parse, str) and bool(parse.strip())
            identity = parse if has_parse else text
            if not isinstance(identity, str):
                raise DataError(
                    f"{source.path}:{line}: no {key!r} field: each line must be {expected}"
                )
            if identity in seen:
                read.excluded["repeated_in_file"] += 1
                continue
            seen.add(identity)
            origin = Origin(number, line, index, str(record.get("pairID", "")))
            if has_parse:
                try:
                    tree = read_tree(identity)
                except BracketError as err:
                    raise DataError(
                        f"{source.path}:{line}: {key}_parse is not a bracketed tree ({err})"
                    ) from None
                sentence = Sentence(tree.words(), origin, tags=tree.tags(), tree=tree)
            else:
                sentence = Sentence(tuple(tokenize(identity)), origin)
            _keep(read, sentence)
    if read.read == 0:
        raise DataError(f"--snli {source.path}: the file has no records: pass {_HINTS['snli']}")
    return read


# -- PTB ---------------------------------------------------------------------------------
def _read_ptb(source: SourceFile, number: int) -> SourceRead:
    from posharness.tasks.senteval.building.trees import BracketError, read_trees

    text = _utf8(source)
    line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    read = SourceRead(source)
    trees = read_trees(text)
    while True:
        try:
            offset, tree = next(trees)
        except StopIteration:
            break
        except BracketError as err:
            line = bisect.bisect_right(line_starts, err.offset)
            raise DataError(
                f"{source.path}:{line}: not a bracketed tree ({err}): pass {_HINTS['ptb']}"
            ) from None
        line = bisect.bisect_right(line_starts, offset)
        _keep(read, Sentence(tree.words(), Origin(number, line, 1), tags=tree.tags(), tree=tree))
    if read.read == 0:
        raise DataError(f"--ptb {source.path}: no trees in the file: pass {_HINTS['ptb']}")
    return read


# -- CoNLL-U -----------------------------------------------------------------------------
def _read_conllu(source: SourceFile, number: int) -> SourceRead:
    from posharness.tasks.senteval.building.conllu import read_conllu

    read = SourceRead(source)
    for block in read_conllu(source.path, _utf8(source)):
        tokens = tuple(word.form for word in block.words)
        tags = tuple(word.xpos for word in block.words)
        origin = Origin(number, block.line, 1, block.sent_id)
        has_tags = all(tag != "_" for tag in tags)
        _keep(read, Sentence(tokens, origin, tags=tags if has_tags else None, words=block.words))
    if read.read == 0:
        raise DataError(f"--conllu {source.path}: no sentences in the file: pass a CoNLL-U file")
    return read


# -- raw text ----------------------------------------------------------------------------
def read_texts(
    sources: list[tuple[SourceFile, int]], budget: int | None = None
) -> tuple[list[SourceRead], CorpusCounts]:
    """Every ``--text`` file, split and tokenised in worker processes, and the corpus
    counts of all of them. The lines are cut into jobs of about 1 MB (all files together)
    and the jobs into consecutive shards, a few per worker; results are taken in file
    order, so the number of workers never changes what is read.

    ``budget`` caps the sentences read from all text files together
    (``--max-text-sentences``): then jobs are taken one by one, and the one where the cap
    falls is read again with the exact remainder, so the cap is exact too.
    """
    from posharness.tasks.senteval.building.text import read_chunk, text_layout, text_units

    reads: list[SourceRead] = []
    jobs: list[tuple[int, str, list[tuple[int, str]]]] = []
    for source, _ in sources:
        lines = _utf8(source).split("\n")
        read = SourceRead(source)
        read.layout = text_layout([line for line in lines[:400] if line.strip()][:200])
        units = text_units(read.layout, lines, read.excluded)
        jobs.extend((len(reads), read.layout, chunk) for chunk in _chunks(units))
        reads.append(read)
    counts = CorpusCounts()
    arguments = [(layout, units) for _, layout, units in jobs]
    results = _in_shards(arguments, counts) if budget is None else _one_by_one(arguments)
    total = 0
    for (which, layout, units), chunk in zip(jobs, results, strict=False):
        if budget is not None:
            if total + chunk.read > budget:
                chunk = read_chunk(layout, units, limit=budget - total)
            counts.merge(chunk.counts)
        total += chunk.read
        read = reads[which]
        read.read += chunk.read
        read.excluded.update(chunk.excluded)
        number = sources[which][1]
        read.sentences.extend(
            Sentence(tokens, Origin(number, line, index)) for line, index, tokens in chunk.sentences
        )
        if budget is not None and total >= budget:
            break
    return reads, counts


def _chunks(units: list[tuple[int, str]]) -> Iterable[list[tuple[int, str]]]:
    chunk: list[tuple[int, str]] = []
    size = 0
    for unit in units:
        chunk.append(unit)
        size += len(unit[1])
        if size >= TEXT_CHUNK_CHARS:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _workers(jobs: int) -> int:
    return min(jobs, os.cpu_count() or 1, 8)


def _in_shards(arguments: list[Job], counts: CorpusCounts) -> Iterator[TextChunk]:
    """The jobs' results in order, their counts merged into ``counts``."""
    from posharness.tasks.senteval.building.text import read_chunk, read_shard

    workers = _workers(len(arguments))
    if workers <= 1:
        for layout, units in arguments:
            yield read_chunk(layout, units, counts=counts)
        return
    pieces = min(len(arguments), 2 * workers)
    bounds = [round(i * len(arguments) / pieces) for i in range(pieces + 1)]
    shards = [arguments[start:end] for start, end in zip(bounds, bounds[1:], strict=False)]
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for chunks, shard_counts in pool.imap(read_shard, shards):
            counts.merge(shard_counts)
            yield from chunks


def _one_by_one(arguments: list[Job]) -> Iterator[TextChunk]:
    """The jobs' results in order, each with its own counts (for an exact cap)."""
    from posharness.tasks.senteval.building.text import read_chunk_args

    workers = _workers(len(arguments))
    if workers <= 1:
        yield from map(read_chunk_args, arguments)
        return
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield from pool.imap(read_chunk_args, arguments)


def _utf8(source: SourceFile) -> str:
    data = source.path.read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DataError(
            f"{source.path}:{line}: not UTF-8 (byte {exc.start}): pass {_HINTS[source.kind]}"
        ) from None
