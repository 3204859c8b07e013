"""The loss log of a pretraining run and its curves.

``loss_log.json`` carries what is needed to compare runs (Chen et al. and Ke et al. compare
positional encodings pretrained under one recipe, docs/pretraining.md): the settings, the corpus
(its name and content hash: no path of the machine, so a run folder can be shared as it is;
logs written before issue 39 carry the absolute ``path`` and read the same), the model's
config and one record per logged step. It is
rewritten whole, under a temporary name and then renamed, at every record, so a killed run
leaves a readable log. Curves are PNGs drawn headless (matplotlib's Agg backend).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from posharness.base.errors import DataError
from posharness.stats.plotting import pyplot, save_figure
from posharness.storage.io import atomic_write_json

LOG_NAME = "loss_log.json"
CURVE_NAME = "loss_curve.png"
LOG_FORMAT = "posharness-pretrain-log/1"
# Settings that do not change the weights; two runs that differ only here share a recipe.
# How a step's global batch is split (accumulation) and compiled changes no weight beyond
# float summation order (parallel.py), so a run may resume with other values of these.
NOT_RECIPE = frozenset(
    {"device", "save_every", "log_every", "keep_checkpoints", "accumulation", "compile"}
)


@dataclass(frozen=True)
class LossRecord:
    """Mean masked-LM loss over the steps since the previous record."""

    step: int
    loss: float
    learning_rate: float
    seconds: float  # training time since the run began, resumed parts added up


class LossLog:
    """The JSON log of one run: a fixed header and the growing list of records."""

    def __init__(self, path: Path, header: Mapping[str, Any]) -> None:
        self.path = Path(path)
        self.header = portable_header(header)
        self.records: list[LossRecord] = []

    def append(self, record: LossRecord) -> None:
        self.records.append(record)
        self.write()

    def keep_until(self, step: int) -> None:
        """Drop the records after ``step``: a resumed run redoes them from its checkpoint."""
        self.records = [r for r in self.records if r.step <= step]
        self.write()

    def write(self) -> None:
        document = {
            "format": LOG_FORMAT,
            **self.header,
            "records": [asdict(r) for r in self.records],
        }
        atomic_write_json(self.path, document)

    @classmethod
    def resume(cls, path: Path, header: Mapping[str, Any]) -> LossLog:
        """The records an earlier part of the run wrote under this header (none if absent)."""
        log = cls(path, header)
        if Path(path).exists():
            log.records = [LossRecord(**r) for r in read_log(path)["records"]]
        return log


def portable_header(header: Mapping[str, Any]) -> dict[str, Any]:
    """``header`` with its corpus named, not located: ``{"name", "sha256"}``.

    The content hash says which corpus it was wherever the run folder is read; the name is
    for people. A corpus given as a dataset spec (``hf:NAME``) keeps its spec as its name.
    """
    portable = dict(header)
    corpus = portable.get("corpus")
    if isinstance(corpus, Mapping) and "path" in corpus:
        given = str(corpus["path"])
        name = given if given.startswith("hf:") else Path(given).name or given
        portable["corpus"] = {"name": name} | {k: v for k, v in corpus.items() if k != "path"}
    return portable


def read_log(path: Path) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise DataError(f"loss log {path} does not exist: give the loss_log.json of a run")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a JSON loss log ({exc}): rerun or restore the file") from exc
    if not isinstance(document, dict) or document.get("format") != LOG_FORMAT:
        raise DataError(f"{path}: not a posharness pretraining loss log ({LOG_FORMAT})")
    try:
        for record in document["records"]:
            LossRecord(**record)
    except (KeyError, TypeError) as exc:
        raise DataError(f"{path}: malformed record ({exc}): rerun or restore the file") from exc
    return document


def plot_loss(log_path: Path, png_path: Path) -> Path:
    """One run's loss against step, with the learning-rate schedule on a second axis."""
    document = read_log(log_path)
    records = document["records"]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([r["step"] for r in records], [r["loss"] for r in records], color="tab:blue")
    ax.set_xlabel("step")
    ax.set_ylabel("masked-LM loss", color="tab:blue")
    rate_axis = ax.twinx()
    rate_axis.plot(
        [r["step"] for r in records],
        [r["learning_rate"] for r in records],
        color="tab:gray",
        linestyle="--",
        linewidth=0.8,
    )
    rate_axis.set_ylabel("learning rate", color="tab:gray")
    model_type = document.get("model", {}).get("model_type", "model")
    ax.set_title(f"{model_type}: {Path(log_path).parent.name}")
    fig.tight_layout()
    return save_figure(fig, Path(png_path), dpi=100, bbox_inches="tight")


def compare_curves(
    logs: Sequence[Path], png_path: Path, labels: Sequence[str] | None = None
) -> Path:
    """Several runs' losses on one axis; the title names any recipe setting that differs."""
    if not logs:
        raise DataError("no loss logs to compare: give at least one loss_log.json")
    if labels is not None and len(labels) != len(logs):
        raise DataError(f"{len(labels)} labels for {len(logs)} loss logs: give one label per log")
    documents = [read_log(path) for path in logs]
    names = list(labels) if labels is not None else [Path(p).parent.name for p in logs]
    return draw_curves(documents, names, Path(png_path))


def draw_curves(
    documents: Sequence[Mapping[str, Any]], names: Sequence[str], png_path: Path
) -> Path:
    """The figure of :func:`compare_curves`, for callers that have read the logs already."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, document in zip(names, documents, strict=True):
        records = document["records"]
        ax.plot([r["step"] for r in records], [r["loss"] for r in records], label=name)
    ax.set_xlabel("step")
    ax.set_ylabel("masked-LM loss")
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)  # off the curves
    differing = recipe_differences(documents)
    title = "masked-LM pretraining loss"
    if differing:
        title += f"\n(recipes differ in: {', '.join(differing)})"
    ax.set_title(title)
    fig.tight_layout()
    return save_figure(fig, Path(png_path), dpi=100, bbox_inches="tight")


def recipe_differences(documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """Settings (and the corpus) that are not the same in every run."""
    keys = sorted({k for d in documents for k in d.get("settings", {})} - NOT_RECIPE)
    differing = [
        k for k in keys if len({json.dumps(d.get("settings", {}).get(k)) for d in documents}) > 1
    ]
    if len({d.get("corpus", {}).get("sha256") for d in documents}) > 1:
        differing.append("corpus")
    return differing


def earlier_sessions(log_path: Path, start: int) -> list[dict[str, Any]]:
    """The launches recorded by the parts of this run before ``start`` (resumes)."""
    if start == 0 or not log_path.exists():
        return []
    return [s for s in read_log(log_path).get("sessions", []) if s["from_step"] < start]
