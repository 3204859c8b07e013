"""One cell's key: the named fields that identify a cell, name its result file and place
it in a leaderboard row (issue 28, part 1).

A cell is one (model, mode, task, seed) under its settings. ``CellKey`` is built in one
place from a plan's inputs (``posharness.run.identity.key_of``), recorded in the cell's
result file (``CellResult.key``), and is the only thing that makes

- the cell id (``cell_id``: the hash of everything the result depends on, computed when
  the key is built — ``posharness.run.identity.cell_identity``),
- the result file name (``file_name``) and its folder (``folder``),
- the leaderboard row key (``row``: a :class:`RowKey`, by named fields),
- the row's human label (``RowKey.label``) and
- the pairing key ``compare`` pairs rows by (``RowKey.pairing``: a :class:`PairKey`).

Result files written before the key was recorded have none; ``results.key_of_result``
derives it from their recorded fields, so their rows and pairs are what they were.
This module sits in ``contracts`` so the result schema, the boards and the report all
read the one type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from pydantic.dataclasses import dataclass

from posharness.storage.hashing import hash_obj

# How the embedded reference corpus (models/decompose/reference_text/english.txt) labels
# itself: the corpus of a run without --data-dir or reference_corpus, whose files keep
# their plain names.
EMBEDDED_CORPUS_LABEL = "reference_text/english.txt "


class PairKey(NamedTuple):
    """What two rows of two boards must share to be paired by ``compare``: the mode, the
    same evaluation and training cuts, and the same split definition and reference corpus
    (two corpora give two rows of one model and mode, which must each find their own
    partner). A forced attention path or the device kind may differ: eager against SDPA,
    GPU against CPU are comparisons worth making. The model is matched apart (by spec,
    registered name, or the one model of each board)."""

    mode: str
    limit: int | None
    train_limit: int | None
    split: str | None
    reference: str | None


class RowKey(NamedTuple):
    """One leaderboard row: the model fingerprint, the mode and every row setting.

    Two cells share a row only when their numbers are comparable: the same cuts
    (``--limit``, ``--train-limit``), attention path (a forced ``attention=eager|sdpa``
    agrees with the default only to float tolerance), kind of device (a GPU's kernels are
    not the CPU's), split definition and reference corpus. The fields after ``mode`` are
    the row settings a board stores (``Row.settings``), in the order tables name them.
    """

    fingerprint: str
    mode: str
    limit: int | None = None
    train_limit: int | None = None
    attention: str | None = None
    device: str | None = None
    split: str | None = None
    reference: str | None = None

    @classmethod
    def of(cls, fingerprint: str, mode: str, settings: Mapping[str, Any]) -> RowKey:
        """The key of a row as a board stores it (its settings by name)."""
        return cls(fingerprint, mode, **{key: settings.get(key) for key in ROW_SETTINGS})

    def settings(self) -> dict[str, Any]:
        """The row settings that are set, by name (what ``Row.settings`` holds besides
        task options)."""
        return {key: getattr(self, key) for key in ROW_SETTINGS if getattr(self, key) is not None}

    @property
    def pairing(self) -> PairKey:
        return PairKey(self.mode, self.limit, self.train_limit, self.split, self.reference)

    def label(
        self,
        exact: bool = True,
        definition: str | None = None,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        settings: bool = True,
    ) -> str:
        """The mode, its definition where not exact and, with ``settings``, the row's
        settings and non-default task options (``options``: task → key → value)."""
        label = self.mode if exact else f"{self.mode} ({definition})"
        if not settings:
            return label
        if self.limit is not None:
            label += f" · limit {self.limit}"
        if self.train_limit is not None:
            label += f" · train limit {self.train_limit}"
        if self.attention is not None:
            label += f" · attention {self.attention}"
        if self.device is not None:
            label += f" · on {self.device}"
        if self.split is not None and self.split != definition:
            label += f" · split {self.split}"  # mode both: its positional term's
        if self.reference is not None:
            label += f" · corpus {self.reference}"
        for task, values in sorted((options or {}).items()):
            label += " · " + ", ".join(f"{task}.{k}={v}" for k, v in sorted(values.items()))
        return label


# The row settings besides task options, in the order tables name them.
ROW_SETTINGS: tuple[str, ...] = RowKey._fields[2:]


@dataclass(frozen=True)
class CellKey:
    """A cell's key by named fields (see the module docstring for what it produces)."""

    fingerprint: str  # the model: weights, config, tokenizer, dtype, attention code
    mode: str  # both | contextual | positional
    task: str
    seed: int
    limit: int | None = None  # --limit: evaluation examples
    train_limit: int | None = None  # --train-limit: training examples
    dtype: str = "float32"  # the resolved dtype (names the file; the fingerprint has it)
    device: str | None = None  # the kind of accelerator (``cuda``); None on the CPU
    attention: str | None = None  # a forced attention path (--model-arg attention=…)
    split: str | None = None  # the split definition (None in mode both)
    reference: str | None = None  # the reference corpus the row is under (None in both)
    corpus: str | None = None  # a named (not the embedded) corpus: keeps the file apart
    folder: str | None = None  # the model's results folder (ModelSpec.results_slug)
    cell_id: str = ""  # the hash of every input the result depends on

    @property
    def row(self) -> RowKey:
        return RowKey(
            self.fingerprint,
            self.mode,
            self.limit,
            self.train_limit,
            self.attention,
            self.device,
            self.split,
            self.reference,
        )

    @property
    def pairing(self) -> PairKey:
        return self.row.pairing

    @property
    def suffix(self) -> str:
        """What keeps a limited, half-precision, GPU or other-corpus cell's file apart from
        the full float32 CPU one (``__limit10``, ``__train500``, ``__bfloat16``,
        ``__cuda``, ``__corpus<8 hex>``); empty for a plain run, so names written before
        a part existed stay valid."""
        parts = [f"limit{self.limit}"] if self.limit is not None else []
        if self.train_limit is not None:
            parts.append(f"train{self.train_limit}")
        if self.dtype != "float32":
            parts.append(self.dtype)
        if self.device is not None:
            parts.append(self.device)
        if self.corpus is not None:
            parts.append(f"corpus{hash_obj(self.corpus)[:8]}")
        return "".join(f"__{part}" for part in parts)

    @property
    def file_name(self) -> str:
        """``<task>__<mode>__seed<N><suffix>.json``: read back only by :func:`task_of_file`."""
        return f"{self.task}{SEPARATOR}{self.mode}{SEPARATOR}seed{self.seed}{self.suffix}.json"


SEPARATOR = "__"


def task_of_file(name: str) -> str:
    """The task a result file is of, from its name alone: for the paths a board names
    whose files are not at hand (a committed board's results are not shipped with it),
    so a merge can drop a rerun task's earlier paths. The one reader of
    :attr:`CellKey.file_name`'s format; a file at hand is read by its recorded key."""
    return name.rsplit("/", 1)[-1].split(SEPARATOR, 1)[0]


def device_class(device: str) -> str:
    """``cuda`` for ``cuda:1``: the kind of device, whose kernels decide the numbers (two
    GPUs of one kind give the same ones, so the index is left out)."""
    return device.split(":")[0]


def accelerator(device: str) -> str | None:
    """The kind of device (``cuda``, ``mps``) when it is not a CPU."""
    kind = device_class(device)
    return kind if kind != "cpu" else None


def forced_attention(details: Mapping[str, Any]) -> str | None:
    """``--model-arg attention=eager|sdpa`` when the cell was run with it; None under the
    default ``auto`` (and for models without the choice)."""
    choice = details.get("attention")
    return str(choice) if choice not in (None, "auto") else None


def decomposition(details: Mapping[str, Any]) -> Mapping[str, Any]:
    """The split a model was loaded with (``--model-arg absolute=…``) and the reference
    corpus it was prepared over (``name (sha256 …)``), for every mode: one checkpoint
    under two of them has one fingerprint, and the positional term that mode ``both``
    reports is computed under them too. Empty for models with no configurable split."""
    found = details.get("decomposition")
    return found if isinstance(found, Mapping) else {}


def split_and_reference(
    mode: str, details: Mapping[str, Any], reference: str | None
) -> tuple[str | None, str | None]:
    """A row's ``split`` and ``reference``: kept whenever the model has them (which corpus
    is "plain" depends on ``--data-dir``, so none is assumed), except in mode ``both``.

    Mode ``both`` has no split, but the positional-term metrics every mode reports
    (``locality_symmetry``'s ``positional_term_*``) are computed under the positional
    mode's split, which reads the reference corpus (issue 40, part 6: a ``--data-dir`` run
    replaced a ``both`` row's positional-term locality 0.1051 with 0.0989). So a ``both``
    row keeps the corpus by the rule that names result files (:func:`named_corpus`): the
    embedded corpus adds nothing, so rows written before keep their key, and a ``both``
    cell that never reads the corpus (a fine-tune) shares its row with one that does."""
    found = decomposition(details)
    if mode == "both":
        return None, named_corpus({found["reference"]} if found.get("reference") else set())
    return found.get("definition"), reference or found.get("reference")


def named_corpus(labels: set[str]) -> str | None:
    """The reference corpus that keeps a model's result files apart (``__corpus…``): a
    run with ``--data-dir`` (WikiText-2) and one without (the embedded corpus) into one
    results folder must not share a file name, or the second overwrites the result the
    first one's row still names. None for the embedded corpus and models with none."""
    label = min(labels) if labels else None
    return None if label is None or label.startswith(EMBEDDED_CORPUS_LABEL) else label
