"""``chen_controlled``: Chen et al.'s controlled experiment (§3.3.1) as a harness task.

The experiment needs no pretrained model: its encoder is a fixed Eq. 8 attention over
static word vectors (encoder.py). The task therefore reads no output of the model it is
run with (its cells are equal whatever the model); it exists so that ``posharness
describe chen_controlled`` documents the options and ``posharness run`` can place the sweep
in a grid. The usual way to run it is ``posharness controlled sweep`` (commands.py), which
writes a study folder with per-repeat results, tables and a figure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from posharness.base.errors import OptionError
from posharness.contracts.metric_types import PER_CELL
from posharness.contracts.task import TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter
    from posharness.tasks.controlled.sweep import SweepConfig

NAME = "chen_controlled"
OPTIONS: tuple[TaskOption, ...] = (
    TaskOption(
        "vectors", "", "Static word vectors: GloVe .txt, word2vec .txt/.bin or fastText .vec."
    ),
    TaskOption("vectors_format", "auto", "auto, glove, word2vec, word2vec-binary or fasttext."),
    TaskOption("vectors_name", "", "Name printed for the vectors [default: sidecar or file name]."),
    TaskOption(
        "data", "", "SentEval downstream folder [default: senteval/downstream in --data-dir]."
    ),
    TaskOption("datasets", "mr,subj", "Comma-separated: mr, subj."),
    TaskOption("curves", "locality,symmetry", "Comma-separated: locality, symmetry."),
    TaskOption("settings", 100, "Encoders per curve (the draft: around 100)."),
    TaskOption("symmetry_min", 0.01, "Lowest symmetry of the symmetry curve (the draft: 0.01)."),
    TaskOption("symmetry_locality", 0.2, "Locality of the symmetry curve (paper: in [0.15, 0.3])."),
    TaskOption("max_length", 64, "Table length (Eq. 8 fitted here); longer sentences truncated."),
    TaskOption("pooling", "max", "Sentence vector from the encoder's states: max or mean."),
    TaskOption("oov", "zero", "Out-of-vocabulary words: zero (kept as zero vectors) or drop."),
    TaskOption("repeats", 5, "Training repeats per setting (paper: 5)."),
    TaskOption("epochs", 5, "Epochs; the best dev epoch is scored on test (paper: 5)."),
    TaskOption("lr_decay", 0.8, "Adam's rate 0.002 is multiplied by this after every epoch."),
    TaskOption("batch_size", 64, "Mini-batch size of the classifier."),
    TaskOption("coverage_threshold", 0.9, "Token coverage below this flags the dataset."),
)


def config_from(options: Mapping[str, Any], seed: int = 0) -> SweepConfig:
    """A ``SweepConfig`` from the task's options (also used by the command)."""
    from posharness.tasks.controlled.sweep import SweepConfig
    from posharness.tasks.controlled.training import TrainConfig

    if not str(options["vectors"]):
        raise OptionError(
            f"{NAME} needs vectors: pass --task-arg {NAME}.vectors=FILE (GloVe, word2vec, "
            ".vec), e.g. the stand-in from `posharness controlled train-vectors`"
        )
    return SweepConfig(
        vectors=str(options["vectors"]),
        vectors_format=str(options["vectors_format"]),
        vectors_name=str(options["vectors_name"]),
        datasets=_listed(options["datasets"]),
        curves=_listed(options["curves"]),
        settings=int(options["settings"]),
        symmetry_locality=float(options["symmetry_locality"]),
        symmetry_range=(float(options["symmetry_min"]), 1.0),
        max_length=int(options["max_length"]),
        pooling=str(options["pooling"]),
        oov=str(options["oov"]),
        coverage_threshold=float(options["coverage_threshold"]),
        train=TrainConfig(
            repeats=int(options["repeats"]),
            epochs=int(options["epochs"]),
            lr_decay=float(options["lr_decay"]),
            batch_size=int(options["batch_size"]),
            seed=seed,
        ),
    )


def _listed(value: Any) -> tuple[str, ...]:
    return tuple(part.strip() for part in str(value).split(",") if part.strip())


class ControlledSweep:
    """The whole sweep in one cell; metrics are the statements' statistics."""

    spec = TaskSpec(
        name=NAME,
        version="1",
        kind="controlled",
        description="Chen et al. 2023 §3.3.1: accuracy vs locality/symmetry of a fixed Eq. 8 "
        "attention over static vectors (MR, SUBJ); the model is not used",
        main_metric="mr_locality_rho",
        data_source="SentEval MR/SUBJ (senteval/downstream) and a static vectors file",
        options=OPTIONS,
        # one number per cell: the statistics of the statements (statements.py)
        metric_types={
            f"{d}_{m}": PER_CELL
            for d in ("mr", "subj")
            for m in ("locality_rho", "leveloff_drop", "symmetry_rho_above")
        },
    )

    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        from posharness.contracts.results import Metric
        from posharness.tasks.controlled.data import downstream_dir
        from posharness.tasks.controlled.statements import check_statements
        from posharness.tasks.controlled.sweep import run_sweep

        config = config_from(ctx.options, ctx.seed)
        result = run_sweep(config, downstream_dir(ctx.data_dir, str(ctx.options["data"])))
        metrics: dict[str, Metric] = {}
        for row in check_statements(result):
            for key in ("rho", "drop", "rho_above"):
                if key in row:
                    i = row[key]
                    name = f"{row['dataset']}_{_short(row['statement'])}_{key}"
                    metrics[name] = Metric(i["value"], ci_low=i["low"], ci_high=i["high"])
        flags = [
            f"{name}: vectors cover {d['coverage']['tokens']:.1%} of tokens"
            for name, d in result["datasets"].items()
            if d["coverage_flag"]
        ]
        return TaskResult(
            metrics=metrics,
            data_hash=",".join(d["sha256"][:16] for d in result["datasets"].values()),
            details=result,
            settings={"vectors": result["vectors"], "model_used": False},
            flags=flags,
        )


def _short(statement: str) -> str:
    return {"accuracy": "locality", "gain": "leveloff", "symmetry": "symmetry"}[
        statement.split()[0]
    ]
