"""Readers for the original file layouts of GLUE, SentEval and SNLI.

Each reader turns one located split (a file, or a folder for datasets split over several
files) into a stream of :class:`Example` and drop reasons (``str``): rows skipped on
purpose, such as SNLI pairs without a gold label, are counted by the caller, never hidden.
Anything else that does not fit the layout is a :class:`DataError` naming file and line.
Texts are stripped of surrounding whitespace (SST-2 and SentEval lines end in a space);
nothing inside a text is changed, quotes included.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Protocol, TypeAlias

from posharness.base.errors import DataError
from posharness.storage.io import parse_json_object
from posharness.tasks.finetune.data.labels import class_index, score
from posharness.tasks.finetune.types import DatasetSpec, Example
from posharness.tasks.text_lines import numbered_lines

EMPTY_LINE = "empty line"
NO_GOLD_LABEL = "no gold label"

Row: TypeAlias = Example | str  # an example, or the reason a row was skipped


class SplitReader(Protocol):
    """How one dataset's splits are laid out on disk and read."""

    def files_for(self, split: str) -> tuple[str, ...]:
        """File names of a split inside the dataset folder; several: the split is a folder."""
        ...

    def read(self, source: Path, spec: DatasetSpec) -> Iterator[Row]: ...


class _UniqueIds:
    """Ids given by the data itself must be unique within a split: they key predictions."""

    def __init__(self) -> None:
        self._first_line: dict[str, int] = {}

    def check(self, example_id: str, path: Path, number: int) -> None:
        first = self._first_line.setdefault(example_id, number)
        if first != number:
            raise DataError(
                f"{path}:{number}: duplicate id {example_id!r} (first on line {first}): "
                "remove the repeated row or re-download the file"
            )


def _name_values(spec: DatasetSpec) -> dict[str, int]:
    return {name: index for index, name in enumerate(spec.labels)}


@dataclass(frozen=True)
class TsvFormat:
    """A tab-separated table: GLUE tasks, SICK, SentEval SST.

    Columns are found by header name where the file has a header (GLUE's MNLI has 12 or 16
    columns depending on the split, so positions are not stable), by position otherwise.
    """

    files: Mapping[str, str]  # split -> file name
    text_a: str | int
    label: str | int
    text_b: str | int | None = None
    id_column: str | int | None = None  # None: "<file name>:<line>"
    label_values: Mapping[str, int] | None = None  # as written -> index; None: spec.labels
    header: bool = True
    width: int | None = None  # the column count of a file without header
    drop_labels: Mapping[str, str] = field(default_factory=dict)  # label as written -> reason
    drop_malformed: str | None = None  # reason to skip rows of the wrong width; None: error

    def files_for(self, split: str) -> tuple[str, ...]:
        return (self.files[split],)

    def read(self, source: Path, spec: DatasetSpec) -> Iterator[Row]:
        lines = numbered_lines(source)
        if self.header:
            first = next(lines, None)
            if first is None:
                return
            width, positions = len(first[1].split("\t")), self._positions(first[1], source, spec)
        else:
            width, positions = self.width or 0, self._fixed_positions()
        values = self.label_values if self.label_values is not None else _name_values(spec)
        label_name = f"column {self.label!r}"
        ids = _UniqueIds()
        for number, line in lines:
            if not line.strip():
                yield EMPTY_LINE
                continue
            fields = line.split("\t")
            if len(fields) != width:
                if self.drop_malformed is not None:
                    yield self.drop_malformed
                    continue
                raise DataError(
                    f"{source}:{number}: expected {width} tab-separated columns, found "
                    f"{len(fields)}: fix the row or re-download {spec.title}"
                )
            raw_label = fields[positions["label"]].strip()
            if raw_label in self.drop_labels:
                yield self.drop_labels[raw_label]
                continue
            where = f"{source}:{number}"
            if spec.is_regression:
                label: int | float = score(raw_label, spec.range, where, label_name)
            else:
                label = class_index(raw_label, values, where, label_name)
            if "id" in positions:
                example_id = fields[positions["id"]].strip()
                ids.check(example_id, source, number)
            else:
                example_id = f"{source.name}:{number}"
            text_b = fields[positions["text_b"]].strip() if "text_b" in positions else None
            yield Example(example_id, fields[positions["text_a"]].strip(), text_b, label)

    def _roles(self) -> dict[str, str | int]:
        roles = {"text_a": self.text_a, "label": self.label}
        if self.text_b is not None:
            roles["text_b"] = self.text_b
        if self.id_column is not None:
            roles["id"] = self.id_column
        return roles

    def _fixed_positions(self) -> dict[str, int]:
        return {role: int(column) for role, column in self._roles().items()}

    def _positions(self, header: str, source: Path, spec: DatasetSpec) -> dict[str, int]:
        names = [name.strip() for name in header.split("\t")]
        positions = {}
        for role, column in self._roles().items():
            if column not in names:
                raise DataError(
                    f"{source}:1: the header has no column {column!r} (found: "
                    f"{', '.join(names)}): give the {spec.title} file in its original layout"
                )
            positions[role] = names.index(str(column))
        return positions


@dataclass(frozen=True)
class SentenceListFormat:
    """SentEval's MR, SUBJ, CR, MPQA: one sentence per line, the label is the file.

    The single split "all" (SentEval cross-validates these) is the folder holding all
    files. Their lines are interleaved, one from each file in turn, so that the first N
    examples (a ``limit``) hold every class rather than only the first file's.
    """

    files: tuple[str, ...]  # file i holds the sentences of label i

    def files_for(self, split: str) -> tuple[str, ...]:
        return self.files

    def read(self, source: Path, spec: DatasetSpec) -> Iterator[Row]:
        if not source.is_dir():
            raise DataError(
                f"{source}: {spec.title} is read from the folder holding "
                f"{', '.join(self.files)}: give that folder"
            )
        streams = [self._file_rows(source / name, label) for label, name in enumerate(self.files)]
        for rows in zip_longest(*streams):
            yield from (row for row in rows if row is not None)

    @staticmethod
    def _file_rows(path: Path, label: int) -> Iterator[Row]:
        for number, line in numbered_lines(path, latin1_fallback=True):
            text = line.strip()
            yield Example(f"{path.name}:{number}", text, None, label) if text else EMPTY_LINE


@dataclass(frozen=True)
class TrecFormat:
    """TREC question classification: ``COARSE:fine question`` per line; the coarse class is
    the label (6 classes, as in SentEval). The train file is Latin-1, so each file is read
    as UTF-8 when it is valid UTF-8 and as Latin-1 otherwise."""

    files: Mapping[str, str]

    def files_for(self, split: str) -> tuple[str, ...]:
        return (self.files[split],)

    def read(self, source: Path, spec: DatasetSpec) -> Iterator[Row]:
        values = _name_values(spec)
        for number, line in numbered_lines(source, latin1_fallback=True):
            if not line.strip():
                yield EMPTY_LINE
                continue
            head, space, question = line.partition(" ")
            coarse, colon, fine = head.partition(":")
            where = f"{source}:{number}"
            if not (space and colon and fine and question.strip()):
                raise DataError(
                    f"{where}: expected 'COARSE:fine question' (e.g. 'NUM:dist How far is "
                    f"it ?'), found {line[:40]!r}: fix the line or re-download {spec.title}"
                )
            label = class_index(coarse, values, where, "the coarse label")
            yield Example(f"{source.name}:{number}", question.strip(), None, label)


@dataclass(frozen=True)
class SnliFormat:
    """SNLI 1.0 jsonl: one JSON object per line; pairs whose gold label is "-" (the
    annotators did not agree) are dropped, as in every published SNLI result."""

    files: Mapping[str, str]

    def files_for(self, split: str) -> tuple[str, ...]:
        return (self.files[split],)

    def read(self, source: Path, spec: DatasetSpec) -> Iterator[Row]:
        values = _name_values(spec)
        ids = _UniqueIds()
        for number, line in numbered_lines(source):
            if not line.strip():
                yield EMPTY_LINE
                continue
            where = f"{source}:{number}"
            pair = parse_json_object(line, where, "one SNLI pair as a JSON object")
            for key in ("sentence1", "sentence2", "gold_label"):
                if not isinstance(pair.get(key), str):
                    problem = "no" if key not in pair else "a non-string"
                    raise DataError(
                        f"{where}: {problem} {key!r} field: expected SNLI jsonl with "
                        "sentence1, sentence2 and gold_label on every line"
                    )
            if pair["gold_label"] == "-":
                yield NO_GOLD_LABEL
                continue
            label = class_index(pair["gold_label"], values, where, "gold_label")
            pair_id = pair.get("pairID")
            if isinstance(pair_id, str) and pair_id:
                ids.check(pair_id, source, number)
            else:
                pair_id = f"{source.name}:{number}"
            yield Example(pair_id, pair["sentence1"].strip(), pair["sentence2"].strip(), label)
