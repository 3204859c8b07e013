"""SNLI records with constituency parses, read and checked for the word-swap probes.

SNLI's own jsonl carries a Penn-Treebank parse of both sentences; the probes are built
from those. A file without parses is parsed with benepar when it is installed, and
refused with the install step when it is not. Every malformed line is reported with its
file and line number before anything is built, so a build never stops half-way.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from posharness.base.errors import DataError
from posharness.storage.io import json_object_lines

LABELS = ("entailment", "neutral", "contradiction")
NO_GOLD = "-"  # SNLI's label when the annotators did not agree


@dataclass(frozen=True)
class SnliPair:
    """One SNLI pair as the builders need it; ``line`` points back into the source file."""

    pair_id: str
    premise: str
    hypothesis: str
    label: str
    premise_parse: str
    hypothesis_parse: str
    line: int


@dataclass(frozen=True)
class SnliSource:
    """The pairs of one file plus what the build summary and provenance record about it."""

    path: Path
    sha256: str
    pairs: tuple[SnliPair, ...]
    dropped: dict[str, int]  # pairs left out before any probe saw them, by reason
    parser: str  # "snli" when the file's own parses were used, else the parser's name


def read_snli(path: Path) -> SnliSource:
    """Every gold-labelled pair of an SNLI-style jsonl file (SNLI, MultiNLI layouts)."""
    if not path.is_file():
        raise DataError(
            f"{path}: no such file: pass SNLI's jsonl, e.g. "
            "../shared/data/snli/snli_1.0/snli_1.0_test.jsonl"
        )
    records = [
        (number, _checked(path, number, record))
        for number, record in json_object_lines(path, "one SNLI record as a JSON object")
    ]
    if not records:
        raise DataError(f"{path}: the file has no records: pass a non-empty SNLI jsonl file")
    dropped: Counter[str] = Counter()
    unparsed = [
        (n, r) for n, r in records if not r.get("sentence1_parse") or not r.get("sentence2_parse")
    ]
    parser = "snli"
    if unparsed:
        parser = _parse_missing(path, records, unparsed)
    pairs = []
    for number, record in records:
        label = record["gold_label"]
        if label == NO_GOLD:
            dropped["no_gold_label"] += 1
            continue
        pairs.append(
            SnliPair(
                pair_id=str(record.get("pairID") or f"{path.name}:{number}"),
                premise=record["sentence1"],
                hypothesis=record["sentence2"],
                label=label,
                premise_parse=record["sentence1_parse"],
                hypothesis_parse=record["sentence2_parse"],
                line=number,
            )
        )
    if not pairs:
        raise DataError(f"{path}: no pair has a gold label: the probes need labelled pairs")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return SnliSource(path, digest, tuple(pairs), dict(dropped), parser)


def _checked(path: Path, number: int, record: dict) -> dict:
    for key in ("sentence1", "sentence2", "gold_label"):
        if not isinstance(record.get(key), str):
            raise DataError(
                f"{path}:{number}: field {key!r} is missing or not text: "
                "SNLI records have sentence1, sentence2 and gold_label"
            )
    if record["gold_label"] not in (*LABELS, NO_GOLD):
        raise DataError(
            f"{path}:{number}: unknown gold_label {record['gold_label']!r}: "
            f"expected one of {', '.join(LABELS)} or '-'"
        )
    for key in ("sentence1_parse", "sentence2_parse", "pairID"):
        if record.get(key) is not None and not isinstance(record[key], str):
            raise DataError(
                f"{path}:{number}: field {key!r} is a JSON {type(record[key]).__name__}, "
                "not text: SNLI parses are bracketed strings"
            )
    return record


def _parse_missing(path: Path, records: list[tuple[int, dict]], unparsed: list) -> str:
    """Fill in the parses the file lacks, or say how to get a parser."""
    from posharness.tasks.shuffle.parsing import constituency_parser

    first, record = unparsed[0]
    missing = "sentence1_parse" if not record.get("sentence1_parse") else "sentence2_parse"
    parse = constituency_parser(f"{path}:{first}: the record has no {missing}")
    sentences = sorted(
        {r[k] for _, r in records for k in ("sentence1", "sentence2") if not r.get(f"{k}_parse")}
    )
    parses = dict(zip(sentences, parse(sentences), strict=True))
    for _, record in records:
        for key in ("sentence1", "sentence2"):
            if not record.get(f"{key}_parse"):
                record[f"{key}_parse"] = parses[record[key]]
    return parse.name
