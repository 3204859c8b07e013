"""Raw text to PTB-style sentences: the ``--text`` reader.

Three layouts are recognised from a file's first lines:

* **WikiText** (``wiki.*.tokens``): already tokenised; `` = Heading = `` lines are skipped,
  ``@-@``/``@,@``/``@.@`` are joined back (``state-of-the-art``, ``1,000``, ``2.5``), a
  sentence ends at a stand-alone ``.``/``!``/``?`` (plus a closing quote), sentences with
  ``<unk>`` are dropped, and ``don 't`` becomes the PTB pair ``do n't``.
* **WikiExtractor** (``<doc ...>`` blocks): the ``<doc>`` tags, each article's title line
  and section headings (short lines ending in ``.`` without a comma, which is how
  WikiExtractor writes them) are skipped; the rest is plain text.
* **plain text**: one or many sentences per line.

Plain text is split with pysbd (rule-based, no download) and tokenised with nltk's
``TreebankWordTokenizer`` (regular expressions, no download). pysbd reads about 0.3 MB/s,
too slow for a corpus of tens of MB, so a line is first cut at the boundaries no rule
could dispute — a lower-case word of two or more letters that is not a known abbreviation,
then ``.``/``!``/``?``, a space and a capital — and pysbd decides only the pieces that
still hold a possible boundary (``U.S. Army``, ``Dr. Smith``, ``3 p.m. The``).
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from posharness.tasks.senteval.building.corpus import MAX_TOKENS, MIN_TOKENS, CorpusCounts

WIKITEXT, WIKIEXTRACTOR, PLAIN = "wikitext", "wikiextractor", "plain"
UNKNOWN_WORD = "<unk>"
_WIKITEXT_HEADING = re.compile(r"^\s*=(?:\s*=)*\s.*\s=\s*$")
_WIKITEXT_JOINERS = re.compile(r" @([-,.])@ ")
_WIKITEXT_MARKS = ("@-@", "@,@", "@.@")
_SENTENCE_END = frozenset({".", "!", "?"})
# A boundary no rule disputes: a word of two or more letters (or digits, or a closing
# bracket) that is not an abbreviation, then .!?, a space and a capital: "...Draft. He".
_SAFE_BOUNDARY = re.compile(
    r"(?:(?<![\w.'’-])([A-Za-z]{2,}|\d{2,})|[)\]])[.!?]+[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z])"
)
_POSSIBLE_BOUNDARY = re.compile(r"[.!?][\"')\]]*\s")
_MORE_ABBREVIATIONS = frozenset(
    ("approx", "ca", "cf", "ed", "eds", "est", "figs", "ibid", "incl", "resp", "sq", "vol", "vols")
)
_MARKUP = re.compile(r"(?:formula|codice)_\d+|&lt;|&gt;|&amp;")


def text_layout(first_lines: list[str]) -> str:
    """WIKITEXT, WIKIEXTRACTOR or PLAIN, from a file's first non-empty lines."""
    if any(line.startswith("<doc ") for line in first_lines):
        return WIKIEXTRACTOR
    for line in first_lines:
        if _WIKITEXT_HEADING.match(line) or any(mark in line for mark in _WIKITEXT_MARKS):
            return WIKITEXT
    return PLAIN


def text_units(layout: str, lines: list[str], skipped: Counter[str]) -> list[tuple[int, str]]:
    """(line number, text) of every line that holds running text; markup lines counted."""
    units: list[tuple[int, str]] = []
    awaiting_title = False
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if layout == WIKIEXTRACTOR:
            if line.startswith("<doc ") or line == "</doc>":
                awaiting_title = line.startswith("<doc ")
                skipped["markup_line"] += 1
                continue
            if awaiting_title:
                awaiting_title = False
                skipped["title_line"] += 1
                continue
            if _looks_like_heading(line):
                skipped["heading_line"] += 1
                continue
        elif layout == WIKITEXT and _WIKITEXT_HEADING.match(raw):
            skipped["heading_line"] += 1
            continue
        units.append((number, line))
    return units


def _looks_like_heading(line: str) -> bool:
    return (
        line.endswith(".")
        and "," not in line
        and len(line.split()) < 8
        and (_POSSIBLE_BOUNDARY.search(line[:-1] + " ") is None)
    )


@dataclass
class TextChunk:
    """What one run over some lines of a text file yields."""

    sentences: list[tuple[int, int, tuple[str, ...]]] = field(default_factory=list)
    counts: CorpusCounts = field(default_factory=CorpusCounts)
    excluded: Counter[str] = field(default_factory=Counter)
    read: int = 0  # sentences split off, before any filter


def read_chunk(
    layout: str,
    units: list[tuple[int, str]],
    limit: int | None = None,
    counts: CorpusCounts | None = None,
) -> TextChunk:
    """Split and tokenise ``units``; keep the 5-28-token sentences, count every token
    (into ``counts`` when given, so several chunks can share one tally).

    With ``limit``, stop after that many sentences (``--max-text-sentences``).
    """
    chunk = TextChunk() if counts is None else TextChunk(counts=counts)
    splitter = _wikitext_sentences if layout == WIKITEXT else _plain_sentences
    for number, line in units:
        for index, tokens in enumerate(splitter(line), start=1):
            if limit is not None and chunk.read >= limit:
                return chunk
            chunk.read += 1
            reason = _unusable(tokens)
            if reason:
                chunk.excluded[reason] += 1
                continue
            chunk.counts.add(tokens)
            if len(tokens) < MIN_TOKENS:
                chunk.excluded["too_short"] += 1
            elif len(tokens) > MAX_TOKENS:
                chunk.excluded["too_long"] += 1
            else:
                chunk.sentences.append((number, index, tokens))
    return chunk


def read_chunk_args(args: tuple[str, list[tuple[int, str]]]) -> TextChunk:
    """:func:`read_chunk` for ``multiprocessing.Pool.imap`` (one picklable argument)."""
    return read_chunk(*args)


def read_shard(
    jobs: list[tuple[str, list[tuple[int, str]]]],
) -> tuple[list[TextChunk], CorpusCounts]:
    """Several consecutive chunks in one worker, counted into one tally: a worker sends
    back one set of counts rather than one per chunk (merging those was the bottleneck)."""
    counts = CorpusCounts()
    chunks = [read_chunk(layout, units, counts=counts) for layout, units in jobs]
    return chunks, counts


def _unusable(tokens: tuple[str, ...]) -> str | None:
    if not tokens:
        return "empty"
    for token in tokens:
        if token == UNKNOWN_WORD:
            return "unknown_word"
        if _MARKUP.search(token):
            return "markup"
    return None


# -- WikiText ----------------------------------------------------------------------------
def _wikitext_sentences(line: str) -> list[tuple[str, ...]]:
    tokens = _WIKITEXT_JOINERS.sub(r"\1", f" {line} ").split()
    tokens = _ptb_negations(tokens)
    sentences: list[tuple[str, ...]] = []
    current: list[str] = []
    quotes, position = 0, 0
    while position < len(tokens):
        token = tokens[position]
        current.append(token)
        quotes += token == '"'
        if token in _SENTENCE_END:
            following = tokens[position + 1] if position + 1 < len(tokens) else ""
            if following == '"' and quotes % 2 == 1:
                current.append(following)  # the closing quote belongs to this sentence
                position += 1
            sentences.append(tuple(current))
            current, quotes = [], 0
        position += 1
    if current:
        sentences.append(tuple(current))
    return sentences


def _ptb_negations(tokens: list[str]) -> list[str]:
    """WikiText's ``don 't`` -> PTB ``do n't`` (``can 't`` -> ``ca n't``, as PTB writes it)."""
    if "'t" not in tokens:
        return tokens
    fixed: list[str] = []
    for token in tokens:
        if token == "'t" and fixed and fixed[-1].lower().endswith("n") and len(fixed[-1]) > 1:
            fixed[-1] = fixed[-1][:-1]
            fixed.append("n't")
        else:
            fixed.append(token)
    return fixed


# -- plain text --------------------------------------------------------------------------
def _plain_sentences(line: str) -> list[tuple[str, ...]]:
    tokenize_one = _tokenizer()
    return [tuple(tokenize_one(sentence)) for sentence in split_sentences(line)]


def split_sentences(line: str) -> list[str]:
    """Sentences of one line of running text (module doc: safe cuts, then pysbd)."""
    pieces, start = [], 0
    for match in _SAFE_BOUNDARY.finditer(line):
        word = match.group(1)
        if word is not None and word.lower() in _abbreviations():
            continue
        pieces.append(line[start : match.end()].strip())
        start = match.end()
    pieces.append(line[start:].strip())
    sentences: list[str] = []
    for piece in pieces:
        if not piece:
            continue
        if _POSSIBLE_BOUNDARY.search(piece) is None:
            sentences.append(piece)
        else:
            sentences.extend(s.strip() for s in _segmenter().segment(piece) if s.strip())
    return sentences


@functools.cache
def _abbreviations() -> frozenset[str]:
    """pysbd's English abbreviations (``dr``, ``inc``, ``jan``...) and a few more."""
    from pysbd.lang.english import English

    return frozenset(English.Abbreviation.ABBREVIATIONS) | _MORE_ABBREVIATIONS


def tokenize(sentence: str) -> list[str]:
    """PTB tokens of one sentence (nltk's TreebankWordTokenizer: ``can't`` -> ``ca n't``)."""
    return _tokenizer()(sentence)


@functools.cache
def _segmenter() -> Any:
    import re as stdlib_re

    import pysbd

    # pysbd builds about a thousand distinct patterns per call; with Python's default
    # cache of 512 compiled patterns every call compiles them again (half its time).
    stdlib_re._MAXCACHE = max(stdlib_re._MAXCACHE, 4096)  # type: ignore[attr-defined]
    return pysbd.Segmenter(language="en", clean=False)


@functools.cache
def _tokenizer() -> Any:
    """nltk's TreebankWordTokenizer with its own rules compiled by Python's ``re``.

    nltk >= 3.9 runs every pattern through ``nltk.redos`` (the ``regex`` engine under a
    timeout, a guard against caller-supplied patterns); for the tokenizer's fixed,
    linear patterns that guard only costs time: a third of a raw-text build. The rules,
    their order and the ``tokenize`` method are nltk's own (tests check equal output).
    """
    import re as stdlib_re

    from nltk.tokenize import TreebankWordTokenizer

    def plain(rule: Any) -> Any:
        pattern, substitution = rule
        return stdlib_re.compile(getattr(pattern, "pattern", pattern)), substitution

    class StdlibTreebankWordTokenizer(TreebankWordTokenizer):
        STARTING_QUOTES = [plain(rule) for rule in TreebankWordTokenizer.STARTING_QUOTES]
        PUNCTUATION = [plain(rule) for rule in TreebankWordTokenizer.PUNCTUATION]
        PARENS_BRACKETS = plain(TreebankWordTokenizer.PARENS_BRACKETS)
        CONVERT_PARENTHESES = [plain(rule) for rule in TreebankWordTokenizer.CONVERT_PARENTHESES]
        DOUBLE_DASHES = plain(TreebankWordTokenizer.DOUBLE_DASHES)
        ENDING_QUOTES = [plain(rule) for rule in TreebankWordTokenizer.ENDING_QUOTES]

    return StdlibTreebankWordTokenizer().tokenize
