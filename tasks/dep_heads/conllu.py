"""Gold dependency trees from CoNLL-U treebanks, streamed and validated sentence by sentence.

Written by hand rather than with the ``conllu`` package because every problem must be
reported as one line naming the file and line, and a treebank of any size must be read in
constant memory: one sentence is held at a time and yielded only once it is fully checked.
Only the basic tree is kept (syntactic words, HEAD, DEPREL); multi-word token lines
(``1-2``) and empty nodes of enhanced UD (``8.1``) are skipped, since basic heads never
point at them. Format: https://universaldependencies.org/format.html
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from posharness.base.errors import DataError
from posharness.storage.hashing import hash_file
from posharness.tasks.dep_heads.tree import ROOT, Sentence

COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
_FORMAT_HINT = (
    "expected CoNLL-U (10 tab-separated columns per word, a blank line after each sentence)"
)
_WORD_ID = re.compile(r"[1-9][0-9]*")
_MULTIWORD_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[1-9][0-9]*")
_HEAD = re.compile(r"-?[0-9]+")
_SENT_ID = re.compile(r"#\s*sent_id\s*=\s*(.*?)\s*")
_CYCLE_WORDS_SHOWN = 8


@dataclass(frozen=True)
class TreebankStats:
    path: str  # as the caller gave it
    sentences: int
    words: int  # syntactic words (multi-word tokens and empty nodes not counted)
    sha256: str  # of the file's bytes: the identity of the data behind a result


def iter_conllu(path: str | Path) -> Iterator[Sentence]:
    """The file's sentences in order, each validated in full before it is yielded.

    A missing file is reported at once; everything else as iteration reaches it, so a
    problem in sentence 900 surfaces after the first 899 sentences have been yielded.
    """
    path = Path(path)
    if not path.is_file():
        reason = "is a directory" if path.is_dir() else "no such file"
        raise DataError(f"{path}: {reason}: give the path of a CoNLL-U treebank file")
    return _read_sentences(path)


_scanned: dict[tuple[str, int, int], TreebankStats] = {}


def scan_conllu(path: str | Path) -> TreebankStats:
    """Validate the whole file in one constant-memory pass and count what it holds.

    Run before any model work, so a broken sentence at the end of a treebank fails in
    seconds instead of after an hour of attention maps.
    """
    stat = Path(path).stat() if Path(path).is_file() else None
    key = (str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns) if stat else None
    if key in _scanned:
        return _scanned[key]
    sentences = words = 0
    for sentence in iter_conllu(path):
        sentences += 1
        words += len(sentence)
    if sentences == 0:
        raise DataError(f"{path}: no sentences found: {_FORMAT_HINT}")
    stats = TreebankStats(path=str(path), sentences=sentences, words=words, sha256=hash_file(path))
    if key is not None:
        _scanned[key] = stats  # planning and every mode's cell scan the same file once
    return stats


@dataclass
class _Block:
    """The lines of one sentence as they are read; checked as a whole at its blank line."""

    sent_id: str | None = None
    words: list[str] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    relations: list[str] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)  # the file line of each word


def _read_sentences(path: Path) -> Iterator[Sentence]:
    block = _Block()
    try:
        handle = path.open("rb")
    except OSError as error:
        raise DataError(
            f"{path}: cannot be read ({error.strerror}): check its permissions"
        ) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            line = _decode(raw, path, number)
            if not line.strip():
                if block.words:
                    yield _finish(block, path)
                block = _Block()
            elif line.startswith("#"):
                match = _SENT_ID.fullmatch(line)
                if match and match.group(1) and block.sent_id is None:
                    block.sent_id = match.group(1)
            else:
                _add_word_line(block, line, path, number)
    if block.words:
        yield _finish(block, path)


def _decode(raw: bytes, path: Path, number: int) -> str:
    """One line as text, without its ``\\n`` or ``\\r\\n`` (CRLF treebanks exist)."""
    if number == 1 and raw.startswith(b"\x1f\x8b"):
        raise DataError(f"{path}:1: the file is gzip-compressed: decompress it first (gunzip)")
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = raw[error.start]
        raise DataError(
            f"{path}:{number}: not UTF-8 (byte 0x{byte:02x} at column {error.start + 1}): "
            "CoNLL-U files are UTF-8; convert the file (e.g. iconv -t UTF-8)"
        ) from None
    if number == 1:
        line = line.removeprefix("\ufeff")  # a byte-order mark some editors write
    return line.removesuffix("\n").removesuffix("\r")


def _add_word_line(block: _Block, line: str, path: Path, number: int) -> None:
    columns = line.split("\t")
    if len(columns) != len(COLUMNS):
        cause = (
            "the line has no tabs, so spaces were probably used instead"
            if len(columns) == 1
            else "spaces instead of tabs, or a tab inside a field, are the usual cause"
        )
        raise DataError(
            f"{path}:{number}: found {len(columns)} tab-separated column(s), expected 10 "
            f"({' '.join(COLUMNS)}): {cause}; separate the columns with single tabs"
        )
    word_id, form, head, relation = columns[0], columns[1], columns[6], columns[7]
    if _MULTIWORD_ID.fullmatch(word_id) or _EMPTY_NODE_ID.fullmatch(word_id):
        return  # the syntactic words of a token follow it; basic heads skip empty nodes
    if not _WORD_ID.fullmatch(word_id):
        raise DataError(
            f"{path}:{number}: ID {word_id!r} is not a word number (1, 2, ...), a multi-word "
            "range (1-2) or an empty node (1.1): fix the first column"
        )
    expected = len(block.words) + 1
    if int(word_id) != expected:
        missing_blank = " (is a blank line missing before this line?)" if word_id == "1" else ""
        raise DataError(
            f"{path}:{number}: word ID {word_id} where {expected} was expected{missing_blank}: "
            "word IDs must count 1, 2, 3, ... within each sentence"
        )
    if not form:
        raise DataError(f"{path}:{number}: word {word_id} has an empty FORM: give the word")
    if not _HEAD.fullmatch(head):
        raise DataError(
            f"{path}:{number}: HEAD {head!r} of word {word_id} is not an integer: the basic "
            "tree needs HEAD = 0 for the root or the ID of the word's head"
        )
    if relation in ("", "_"):
        raise DataError(
            f"{path}:{number}: DEPREL of word {word_id} is {relation!r}: the probe scores "
            "heads per relation, so every word needs a relation label (e.g. nsubj, obj)"
        )
    block.words.append(form)
    block.heads.append(int(head))
    block.relations.append(relation)
    block.lines.append(number)


def _finish(block: _Block, path: Path) -> Sentence:
    """Check the tree as a whole (heads in range, a root, no cycle) and freeze it."""
    first_line = block.lines[0]
    sent_id = block.sent_id or f"{path.name}:{first_line}"
    size = len(block.words)
    for index, head in enumerate(block.heads):
        if not ROOT <= head <= size:
            raise DataError(
                f"{path}:{block.lines[index]}: HEAD {head} of word {index + 1} is outside "
                f"0..{size} (sentence {sent_id!r} has {size} words): HEAD must be 0 for the "
                "root or the ID of a word in the same sentence"
            )
    cycle = _first_cycle(block.heads)
    if cycle is not None:
        through = _describe_cycle(cycle, block.words)
        if ROOT not in block.heads:
            problem = f"has no root (no word with HEAD 0), so its heads form a cycle {through}"
        else:
            problem = f"has a cycle in its heads {through}"
        raise DataError(
            f"{path}:{first_line}: sentence {sent_id!r} {problem}: every word must reach "
            "a root word (HEAD 0) by following heads; fix the HEAD column"
        )
    return Sentence(
        sent_id=sent_id,
        words=tuple(block.words),
        heads=tuple(block.heads),
        relations=tuple(block.relations),
        line=first_line,
    )


def _first_cycle(heads: list[int]) -> list[int] | None:
    """The word IDs of the first cycle met when following heads, or None for a tree.

    Every word has one head, so walking from each word either reaches the root or loops;
    each word is walked once, so this is linear in the sentence length.
    """
    done = [False] * (len(heads) + 1)
    for start in range(1, len(heads) + 1):
        path: list[int] = []
        on_path: set[int] = set()
        word = start
        while word != ROOT and not done[word]:
            if word in on_path:
                return path[path.index(word) :]
            path.append(word)
            on_path.add(word)
            word = heads[word - 1]
        for visited in path:
            done[visited] = True
    return None


def _describe_cycle(cycle: list[int], words: list[str]) -> str:
    shown = [f"{word_id} {words[word_id - 1]!r}" for word_id in cycle[:_CYCLE_WORDS_SHOWN]]
    if len(cycle) > _CYCLE_WORDS_SHOWN:
        shown.append(f"... ({len(cycle)} words)")
    return "through words " + " -> ".join([*shown, shown[0]])
