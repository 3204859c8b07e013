"""The result file of one cell, written down as types: the schema is the documentation.

One JSON file per (model, mode, task, seed). Files are written to a temporary name and
renamed, so a reader never sees half a result; a reader refuses files of another
``schema_version`` with a one-line error instead of misreading them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, field
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator
from pydantic.dataclasses import dataclass

from posharness.base.errors import SchemaError
from posharness.contracts.adapter import ModeSupport
from posharness.contracts.cell_key import (
    CellKey,
    accelerator,
    decomposition,
    forced_attention,
    named_corpus,
    split_and_reference,
)
from posharness.storage.io import atomic_write_text

SCHEMA_VERSION = 1
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Metric:
    """One number with its uncertainty where the task can give one.

    The one type from a task's ``TaskResult`` to the result file and back: a validated
    dataclass, so tasks write ``Metric(0.5, n=100)`` and the file stores the same fields.
    """

    value: float
    stderr: float | None = None  # when the task can estimate it
    ci_low: float | None = None  # 95 % interval, when the task computes one
    ci_high: float | None = None
    # examples behind the value (arcs, sentence pairs, sentences, probe words), never the
    # groups an average runs over (see posharness.run.flags)
    n: int | None = None


class ModelInfo(BaseModel):
    spec: str  # as the user wrote it, with a checkpoint path made portable (portable_spec)
    fingerprint: str  # weights + config + tokenizer + dtype + attention code
    pe_card: dict[str, Any]  # the PE in the survey's terms
    details: dict[str, Any] = {}  # adapter facts: family, checkpoint, dtype, device …

    @field_validator("spec")
    @classmethod
    def _portable_spec(cls, value: str) -> str:
        return portable_spec(value)

    @field_validator("details")
    @classmethod
    def _portable_details(cls, value: dict[str, Any]) -> dict[str, Any]:
        return portable_values(value)


@dataclass(frozen=True)
class ModeInfo(ModeSupport):
    """The mode a cell ran in: its name and how the model realised it (``ModeSupport``)."""

    name: Literal["both", "contextual", "positional"] = field(kw_only=True)
    # "sdpa" or "eager": the attention code the cell ran (ReportsAttentionPath); None in
    # results written before it was recorded, or from a model that does not say.
    attention_path: str | None = field(default=None, kw_only=True)

    @classmethod
    def of(cls, mode: str, support: ModeSupport, attention_path: str | None = None) -> ModeInfo:
        return cls(**asdict(support), name=str(mode), attention_path=attention_path)  # type: ignore[arg-type]


class TaskIdentity(Protocol):
    """What a result records of a task's spec (``contracts.task.TaskSpec`` has it), named
    here so the result schema does not import the task contract that imports it."""

    name: str
    version: str
    kind: str
    main_metric: str
    headline_metrics: Sequence[str]


class TaskInfo(BaseModel):
    """The task a cell ran: its spec's identity, and what this run used."""

    name: str
    version: str
    kind: str  # TaskSpec.kind: attention-geometry, fine-tune, probe, perturbation …
    main_metric: str
    headline_metrics: list[str] = []  # the metrics tables show by default
    data_hash: str  # content hash of the inputs the task used
    # resolved task options (defaults + --task-arg), a data file as a portable name and hash
    options: dict[str, Any] = {}
    settings: dict[str, Any] = {}  # what the task reports it actually used

    @model_validator(mode="before")
    @classmethod
    def _kind_was_family(cls, data: Any) -> Any:
        """Results written before 0.1's layering call the kind "family"; they still read."""
        if isinstance(data, dict) and "family" in data and "kind" not in data:
            data = {("kind" if k == "family" else k): v for k, v in data.items()}
        return data

    @field_validator("options")
    @classmethod
    def _portable_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        return portable_options(value)

    @field_validator("settings")
    @classmethod
    def _portable_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        return portable_values(value)

    @classmethod
    def of(
        cls, spec: TaskIdentity, data_hash: str, options: dict[str, Any], settings: dict[str, Any]
    ) -> TaskInfo:
        return cls(
            name=spec.name,
            version=spec.version,
            kind=spec.kind,
            main_metric=spec.main_metric,
            headline_metrics=list(spec.headline_metrics or (spec.main_metric,)),
            data_hash=data_hash,
            options=options,
            settings=settings,
        )


class Environment(BaseModel):
    posharness: str
    python: str
    platform: str
    packages: dict[str, str]
    git_hash: str | None = None  # of the posharness checkout, when it is one
    device: str
    dtype: str | None = None
    attn_implementation: str | None = None
    batch: dict[str, Any] = {}  # requested size, sizes used, halvings on OOM, padding


class Timings(BaseModel):
    started_at: str  # ISO 8601, UTC
    finished_at: str
    total_s: float
    encode_s: float | None = None  # time inside the batched encoder


class CellResult(BaseModel):
    schema_version: Literal[1] = SCHEMA_VERSION
    # hash of every input the result depends on (run/identity.py, cell_identity): model
    # fingerprint, mode and its split definition, task name, version and options, seed,
    # limits, data identity, the positional term's definition, the device kind
    cell_id: str
    # the cell's key by named fields (contracts/cell_key.py); None in results written
    # before it was recorded: key_of_result derives it from the fields below
    key: CellKey | None = None
    model: ModelInfo
    mode: ModeInfo
    task: TaskInfo
    seed: int
    limit: int | None = None  # --limit: at most this many evaluation examples
    train_limit: int | None = None  # --train-limit: at most this many training examples
    metrics: dict[str, Metric]
    details: dict[str, Any] = {}  # per-layer / per-head values and other structured output
    examples_file: str | None = None  # jsonl of per-example outputs, relative to this file
    artifacts: list[str] = Field(default_factory=list)  # figures, relative to this file
    flags: list[str] = Field(default_factory=list)  # degenerate outcomes (posharness.run.flags)
    environment: Environment
    timings: Timings


def write_result(result: CellResult, path: Path) -> None:
    atomic_write_text(path, result.model_dump_json(indent=2) + "\n")


def read_json_file(path: Path, what: str) -> dict[str, Any]:
    if Path(path).is_dir():
        raise SchemaError(
            f"{what} file {path} is a folder: give the {what} JSON file itself "
            f"(e.g. {Path(path) / 'NAME.json'})"
        )
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(f"{what} file {path} does not exist: check the path") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SchemaError(f"{what} file {path} is not valid JSON ({exc}): regenerate it") from exc
    if not isinstance(data, dict):
        raise SchemaError(f"{what} file {path} is not a JSON object: regenerate it")
    return data


def check_schema_version(data: dict[str, Any], path: Path, what: str, expected: int) -> None:
    found = data.get("schema_version")
    if found != expected:
        raise SchemaError(
            f"{what} file {path} has schema_version {found!r}, this posharness reads "
            f"{expected}: regenerate it with this version (or use the posharness that wrote it)"
        )


def read_versioned(path: Path, schema: type[M], what: str, version: int) -> M:
    """Read a JSON file of one of our schemas: right version first, then the fields."""
    data = read_json_file(path, what)
    check_schema_version(data, path, what, version)
    try:
        return schema.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise SchemaError(
            f"{what} file {path} is malformed at {where}: {first['msg']}; regenerate it"
        ) from exc


def read_result(path: Path) -> CellResult:
    return read_versioned(path, CellResult, "result", SCHEMA_VERSION)


# -- portable provenance ---------------------------------------------------------------
# A result or board is read on other machines: it names files by where they are in the
# working tree, or by their last two path parts after "…/" when they lie outside it,
# never by an absolute path of the machine that ran them (issue 27, part 6). The content
# is identified by a hash (data files) or the model's fingerprint (checkpoints).
ELIDED = "…/"


def portable_path(text: str, with_hash: bool = False) -> str:
    """``text`` unchanged unless it names a path: then relative to the working directory
    when inside it, else ``…/<parent>/<name>``; with ``with_hash``, a file gains
    `` (sha256 <12 hex>)`` (the label form of the reference corpus, ``ReferenceCorpus``)."""
    if not text or "\n" in text or text.startswith(ELIDED):
        return text
    try:
        path = Path(text).expanduser()
        if not (path.is_absolute() or path.exists()):
            return text  # a hub id, a word, or a relative name already portable
        resolved = path.resolve()
        here = Path.cwd().resolve()
    except (OSError, ValueError):
        return text
    if resolved.is_relative_to(here) and resolved != here:
        name = resolved.relative_to(here).as_posix()
    else:
        name = ELIDED + "/".join(resolved.parts[-2:]).lstrip("/")
    if with_hash and resolved.is_file():
        from posharness.storage.hashing import hash_file

        name += f" (sha256 {hash_file(resolved)[:12]})"
    return name


def portable_spec(spec: str) -> str:
    """``bert-a@…/bert-a-mini/final`` for ``bert-a@/tmp/run/bert-a-mini/final``: the
    checkpoint's place made portable, the model name kept (``hf:`` hub ids unchanged)."""
    match = re.match(r"^([A-Za-z0-9][A-Za-z0-9_.+-]*?)([:@])(.+)$", spec)
    if match is None:
        return spec
    return f"{match[1]}{match[2]}{portable_path(match[3])}"


def portable_values(value: Any) -> Any:
    """Every absolute path among nested values made portable (model details, the settings
    a task reports): they describe, and nothing reads them back as paths."""
    if isinstance(value, dict):
        return {key: portable_values(item) for key, item in value.items()}
    if isinstance(value, list):
        return [portable_values(item) for item in value]
    if isinstance(value, str) and is_machine_path(value):
        return portable_path(value)
    return value


def portable_options(options: dict[str, Any]) -> dict[str, Any]:
    """Task options with each data file named portably, with its sha256: two machines that
    ran one file get one row setting, and another file under the same name does not."""
    return {
        key: portable_path(value, with_hash=True) if isinstance(value, str) else value
        for key, value in options.items()
    }


def is_machine_path(text: str) -> bool:
    """An absolute path (``/…``, ``~/…``, ``C:\\…``): meaningful only on the machine that
    wrote it."""
    return text.startswith(("/", "~/")) or re.match(r"^[A-Za-z]:[\\/]", text) is not None


def key_of_result(result: CellResult) -> CellKey:
    """The key a result file records, or for a file written before keys were recorded,
    the key derived from its recorded fields: its cell id, row and pairing key are
    exactly what they were; its file name too where the result records the model's
    reference corpus, and its ``folder`` (the spec's ``--model-arg`` values, which no
    result records) is None."""
    if result.key is not None:
        return result.key
    mode = result.mode.name
    details = result.model.details
    split, reference = split_and_reference(mode, details, result.mode.reference_corpus)
    corpora = {result.mode.reference_corpus, decomposition(details).get("reference")}
    return CellKey(
        fingerprint=result.model.fingerprint,
        mode=mode,
        task=result.task.name,
        seed=result.seed,
        limit=result.limit,
        train_limit=result.train_limit,
        dtype=result.environment.dtype or "float32",
        device=accelerator(result.environment.device),
        attention=forced_attention(details),
        split=split,
        reference=reference,
        corpus=named_corpus({c for c in corpora if isinstance(c, str) and c}),
        cell_id=result.cell_id,
    )
