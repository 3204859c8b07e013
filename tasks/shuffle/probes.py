"""Build the word-swap probe sets from SNLI, write them as jsonl, and read them back.

Chen et al. never released their shuffled sets, so the harness makes them: Shuffle-x
(x = 3..6) reorders the words of one phrase of length x in the premise, Random reorders
every premise word, and Shuffle-SR swaps agent and patient in an entailment pair. Each
record keeps the original pair beside the changed one, so a model's accuracy on both is
measured on the same items. A build is a pure function of (file bytes, seed): the same
inputs give byte-identical files, and the provenance in every record says so.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError
from posharness.base.faults import kill_point
from posharness.storage.io import (
    OutputError,
    json_object_lines,
    sweep_stale_temporaries,
    temporary_tag,
)
from posharness.tasks.shuffle.snli import SnliPair, SnliSource

BUILDER = "posharness-shuffle/1"  # bump when a builder's output would change
LENGTHS = (3, 4, 5, 6)
PROBES = (*(f"shuffle_{x}" for x in LENGTHS), "shuffle_random", "shuffle_sr")
RULES = {
    **{
        f"shuffle_{x}": f"reorder the words of one NP/VP/PP/ADVP/ADJP of exactly {x} words "
        "in the premise; hypothesis and label unchanged"
        for x in LENGTHS
    },
    "shuffle_random": "reorder every premise word; hypothesis and label unchanged",
    "shuffle_sr": "entailment pairs: swap the subject (agent) and object (patient) NPs of a "
    "non-auxiliary verb in the premise, else the hypothesis, fix pronoun case; label "
    "becomes contradiction",
}
SUMMARY = "summary.json"


@dataclass(frozen=True)
class ProbeBuild:
    """Every probe's records, and per probe how many pairs were left out and why."""

    records: dict[str, list[dict[str, Any]]]
    excluded: dict[str, dict[str, int]]
    summary: dict[str, Any]


def build_probes(
    source: SnliSource,
    seed: int = 0,
    probes: Iterable[str] = PROBES,
    parsed: dict[tuple[str, str], Any] | None = None,
) -> ProbeBuild:
    """Apply each probe's builder to every pair; a pair a builder cannot use is counted.

    Only the ``probes`` asked for are built (a plan of ``shuffle_sr`` alone parses only
    entailment pairs); ``parsed`` is a parse memo to share between builds from one file.
    """
    from posharness.tasks.shuffle.trees import ParseProblem, read_parse

    wanted = list(probes)
    unknown = sorted(set(wanted) - set(PROBES))
    if unknown:
        raise DataError(f"unknown probe {unknown[0]!r}: choose from {', '.join(PROBES)}")
    parsed = {} if parsed is None else parsed

    def parse(text: str, bracketing: str) -> Any:
        key = (text, bracketing)
        if key not in parsed:
            try:
                parsed[key] = read_parse(bracketing, text)
            except ParseProblem as problem:
                parsed[key] = problem
        return parsed[key]

    records: dict[str, list[dict[str, Any]]] = {name: [] for name in wanted}
    excluded: dict[str, Counter[str]] = {name: Counter(source.dropped) for name in wanted}
    for pair in source.pairs:
        for name in wanted:
            outcome = _apply(name, pair, parse, seed)
            if isinstance(outcome, str):
                excluded[name][outcome] += 1
            else:
                outcome["provenance"] = _provenance(source, seed, name)
                records[name].append(outcome)
    summary = {
        "builder": BUILDER,
        "source": str(source.path),
        "source_sha256": source.sha256,
        "parser": source.parser,
        "seed": seed,
        "pairs_read": len(source.pairs) + sum(source.dropped.values()),
        "probes": {
            name: {
                "rule": RULES[name],
                "size": len(records[name]),
                "excluded": dict(sorted(excluded[name].items())),
            }
            for name in wanted
        },
    }
    counts = {name: dict(c) for name, c in excluded.items()}
    return ProbeBuild(records, counts, summary)


def _apply(
    name: str, pair: SnliPair, parse: Callable[[str, str], Any], seed: int
) -> dict[str, Any] | str:
    """The probe record for ``pair``, or the reason it has none."""
    from posharness.tasks.shuffle.builders import (
        NotApplicable,
        rng_for,
        shuffle_all,
        shuffle_constituent,
    )
    from posharness.tasks.shuffle.trees import ParseProblem, render

    if name == "shuffle_sr" and pair.label != "entailment":
        return "not_entailment"  # before parsing: Shuffle-SR reads entailment pairs only
    premise = parse(pair.premise, pair.premise_parse)
    hypothesis = parse(pair.hypothesis, pair.hypothesis_parse)
    for sentence in (premise, hypothesis):
        if isinstance(sentence, ParseProblem):
            return sentence.reason
    try:
        if name == "shuffle_sr":
            side, change = _swap_either(premise, hypothesis)
        else:
            rng = rng_for(seed, name, pair.premise)
            side = "premise"
            if name == "shuffle_random":
                change = shuffle_all(premise.tokens, rng)
            else:
                change = shuffle_constituent(premise, int(name.rsplit("_", 1)[1]), rng)
    except NotApplicable as reason:
        return reason.reason
    sentences = {"premise": premise.tokens, "hypothesis": hypothesis.tokens}
    original = {key: render(tokens) for key, tokens in sentences.items()}
    changed = dict(original, **{side: render(change.tokens)})
    return {
        "id": pair.pair_id,
        "probe": name,
        "premise": changed["premise"],
        "hypothesis": changed["hypothesis"],
        "label": "contradiction" if name == "shuffle_sr" else pair.label,
        "original": {**original, "label": pair.label},
        "change": {
            "side": side,
            "before": list(sentences[side]),
            "after": list(change.tokens),
            **change.detail,
        },
        "source_line": pair.line,
    }


def _swap_either(premise: Any, hypothesis: Any) -> tuple[str, Any]:
    """Algorithm 1 of Chen et al.: the premise if it has agent and patient, else the hypothesis."""
    from posharness.tasks.shuffle.builders import NotApplicable, swap_roles

    try:
        return "premise", swap_roles(premise)
    except NotApplicable:
        return "hypothesis", swap_roles(hypothesis)


def _provenance(source: SnliSource, seed: int, name: str) -> dict[str, Any]:
    return {
        "source": source.path.name,
        "source_sha256": source.sha256,
        "seed": seed,
        "rule": RULES[name],
        "builder": BUILDER,
        "parser": source.parser,
    }


# -- files -------------------------------------------------------------------------------
def write_probes(build: ProbeBuild, out_dir: Path) -> list[Path]:
    """One jsonl per probe plus ``summary.json``, all or nothing.

    An empty probe is an error, raised before anything is written; the files are written
    into a temporary folder beside ``out_dir`` and moved in one by one only when all exist.
    """
    empty = [name for name, records in build.records.items() if not records]
    if empty:
        reasons = build.summary["probes"][empty[0]]["excluded"]
        raise DataError(
            f"probe {empty[0]} would be empty (excluded: {_reasons(reasons)}): "
            "pass a larger SNLI file with parses"
        )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        sweep_stale_temporaries(out_dir)  # a killed build's staging folder
        staging = Path(tempfile.mkdtemp(prefix=f".probes-{temporary_tag()}", dir=out_dir))
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot write there ({exc.strerror})") from None
    written = []
    try:
        for name, records in build.records.items():
            with (staging / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
                for record in records:
                    handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
                    kill_point("probe-record")  # a kill mid-file leaves a torn staged file
        (staging / SUMMARY).write_text(json.dumps(build.summary, indent=2) + "\n")
        for file in sorted(staging.iterdir()):
            os.replace(file, out_dir / file.name)
            written.append(out_dir / file.name)
            kill_point("probe-file")
    finally:
        for leftover in staging.iterdir():
            leftover.unlink()
        staging.rmdir()
    return written


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


def read_probe(path: Path, name: str) -> list[dict[str, Any]]:
    """A probe file written by :func:`write_probes`, checked line by line."""
    if not path.is_file():
        raise DataError(
            f"{path}: no such probe file: build it with `posharness build-probes shuffle "
            f"--snli FILE --out {path.parent}`"
        )
    records = []
    rebuild = "rebuild it with `posharness build-probes shuffle`"
    for number, record in json_object_lines(path, f"one {name} probe record: {rebuild}"):
        missing = _missing_fields(record)
        if missing:
            raise DataError(
                f"{path}:{number}: not a {name} probe record (missing {missing}): {rebuild}"
            )
        records.append(record)
    if not records:
        raise DataError(f"{path}: probe {name} has no records: rebuild it with more SNLI pairs")
    return records


def _missing_fields(record: Any) -> str | None:
    if not isinstance(record, dict):
        return "a JSON object"
    for key in ("id", "premise", "hypothesis", "label", "original"):
        if key not in record:
            return key
    for key in ("premise", "hypothesis", "label"):
        if key not in record["original"]:
            return f"original.{key}"
    return None
