"""Word-swap probes (Chen et al. 2023 §3.5, Table 3): does the SNLI classifier notice order?

``shuffle_3`` … ``shuffle_6`` and ``shuffle_random`` keep the meaning (and the label) while
reordering words; ``shuffle_sr`` swaps agent and patient, which turns an entailment into a
contradiction. Each task takes the SNLI classifier of (model, mode) from the ``snli``
fine-tune task (trained once, then reused from the cache), predicts every probe item
twice (original pair and changed pair) and reports both accuracies, their difference,
the prediction flips and an exact McNemar test on the same items.

Options: ``probes`` (a folder from ``posharness build-probes shuffle``; empty = build from
``source``), ``source`` (SNLI jsonl with parses; default ``<data-dir>/snli/snli_1.0/
snli_1.0_test.jsonl``), ``probe_seed``, ``bootstrap``, and the ``snli`` task's training
options under the same names (``train``, ``dev``, ``test``, ``path``, ``protocol``,
``learning_rate``, ``epochs``, ``batch_size``, ``seeds``, ``max_length``,
``keep_checkpoints``): the same values reach the same cached classifier as a ``snli`` run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posharness.base.errors import DataError, OptionError, PlanProblems, PosharnessError
from posharness.contracts.adapter import FineTunable
from posharness.contracts.metric_types import MEAN_BINARY, MEAN_CONTINUOUS, PER_CELL
from posharness.contracts.task import TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.tasks.shuffle.probes import RULES

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter

VERSION = "1"
DEFAULT_SOURCE = ("snli", "snli_1.0", "snli_1.0_test.jsonl")
SNLI_OPTIONS = (
    "train",
    "dev",
    "test",
    "path",
    "protocol",
    "learning_rate",
    "epochs",
    "batch_size",
    "seeds",
    "max_length",
    "keep_checkpoints",
)
TITLES = {
    **{f"shuffle_{x}": f"Shuffle-{x}" for x in (3, 4, 5, 6)},
    "shuffle_random": "Random",
    "shuffle_sr": "Shuffle-SR",
}


def _options() -> tuple[TaskOption, ...]:
    """The probe's own options, then the ``snli`` classifier's training options it takes
    (declared there, help included)."""
    from posharness.tasks.finetune.task import fine_tune_task

    snli = {option.name: option for option in fine_tune_task("snli").spec.options}
    return (
        TaskOption("probes", "", "Folder from build-probes shuffle (or one probe file)."),
        TaskOption("source", "", "SNLI jsonl to build from [default: SNLI test in --data-dir]."),
        TaskOption("probe_seed", 0, "Seed of the shuffles when building on the fly."),
        TaskOption("bootstrap", 1000, "Paired bootstrap replicates."),
        *(snli[key] for key in SNLI_OPTIONS),
    )


class ShuffleTask:
    """One word-swap probe (``probe`` is a name in ``probes.PROBES``)."""

    summary_group = "shuffle"  # Table 3 is drawn across the six probes

    def __init__(self, probe: str) -> None:
        self.probe = probe
        self.spec = task_spec(probe)

    # -- data ---------------------------------------------------------------------------
    def data_identity(self, options: Mapping[str, Any], data_dir: Path | None) -> Any:
        """The probe's records and the SNLI splits, checked before any model loads.

        Both are checked even when the first fails, so the first error list of a run names
        the SNLI training data the classifier needs beside the probe's own source.
        """
        _check(self.spec.name, options)
        problems: list[PosharnessError] = []
        from posharness.storage.cache import run_cache_dir

        try:
            records, identity = self._records(options, data_dir, run_cache_dir())
        except PosharnessError as exc:
            problems.append(exc)
        try:
            snli = _snli_task().data_identity(_snli_options(options), data_dir)
        except PosharnessError as exc:
            problems.append(exc)
        if problems:
            raise problems[0] if len(problems) == 1 else PlanProblems([str(p) for p in problems])
        return {"probe": identity, "size": _size(records), "snli": snli}

    def _records(
        self, options: Mapping[str, Any], data_dir: Path | None, cache_root: Path | None
    ) -> tuple[Any, dict[str, Any]]:
        """The probe's records (a prebuilt file's, as a list) or its ``ProbeSet`` (built
        from SNLI; records read on first use, the set kept under ``cache_root``, the run's
        cache folder, None under --no-cache), and the identity a cell records of them."""
        from posharness.storage.hashing import hash_file
        from posharness.tasks.shuffle.probe_sets import probe_set
        from posharness.tasks.shuffle.probes import read_probe

        if options["probes"]:
            folder = Path(str(options["probes"])).expanduser()
            path = folder if folder.is_file() else folder / f"{self.probe}.jsonl"
            return read_probe(path, self.probe), {"file": str(path), "sha256": hash_file(path)}
        source = _source_path(options, data_dir)
        built = probe_set(source, int(options["probe_seed"]), self.probe, cache_root)
        if not built.size:
            raise DataError(
                f"probe {self.probe} is empty for {built.summary['source']} (excluded: "
                f"{built.excluded}): use a larger SNLI file"
            )
        return built, built.identity

    # -- running ------------------------------------------------------------------------
    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        from posharness.tasks.finetune.data.loading import limited
        from posharness.tasks.shuffle.scoring import probe_result

        found, identity = self._records(ctx.options, ctx.data_dir, ctx.cache.root)
        records = found if isinstance(found, list) else found.records()
        snli_ctx = replace(ctx, options=_snli_options(ctx.options))
        classifier = _snli_task().trained_classifier(model, snli_ctx)
        pairs = limited(_as_split(records), ctx.limit)
        kept = {e.id for e in pairs.examples}
        records = [r for r in records if r["id"] in kept]
        original, changed = _predict_both(model, classifier, records, ctx)
        result = probe_result(
            self.probe, records, original, changed, int(ctx.options["bootstrap"]), ctx.seed
        )
        result.data_hash = _hash(identity)
        result.settings.update(
            {"probe": self.probe, "rule": RULES[self.probe], "probe_source": identity}
        )
        return result

    def summarize_group(self, results: list, folder: Path) -> list[Path]:
        """Table 3 of Chen et al. across the probes and modes of one model."""
        from posharness.tasks.shuffle.report import write_table3

        return write_table3(results, folder)


def _predict_both(
    model: ModelAdapter, classifier: Any, records: list[dict[str, Any]], ctx: TaskContext
) -> tuple[np.ndarray, np.ndarray]:
    """SNLI class ids for the original pairs and the changed pairs, in record order."""
    from posharness.tasks.finetune.data.locate import DATASETS
    from posharness.tasks.finetune.engine import EncodedSplit, predict
    from posharness.tasks.finetune.task import EVAL_BATCH

    max_length = int(ctx.options["max_length"])
    device_kind = ctx.device.split(":")[0]
    batch = ctx.batch_size if isinstance(ctx.batch_size, int) else EVAL_BATCH.get(device_kind, 64)
    labels = DATASETS["snli"].labels
    ids = [str(r["id"]) for r in records]
    predictions = []
    for pairs in ([r["original"] for r in records], records):
        items = model.tokenize_pairs(
            [p["premise"] for p in pairs], [p["hypothesis"] for p in pairs], max_length
        )
        gold = np.array([labels.index(p["label"]) for p in pairs], dtype=np.int64)
        split = EncodedSplit("probe", items, gold, ids)
        predictions.append(
            predict(classifier, split, model.pad_token_id, ctx.device, batch, regression=False)
        )
    return predictions[0], predictions[1]


def _as_split(records: list[dict[str, Any]]) -> Any:
    """The records as a LoadedSplit, so --limit draws the same subset the fine-tune tasks do."""
    from posharness.tasks.finetune.types import Example, LoadedSplit

    examples = tuple(Example(str(r["id"]), r["premise"], r["hypothesis"], 0) for r in records)
    return LoadedSplit("probe", examples, "probe", "")


def _snli_task() -> Any:
    from posharness.tasks.finetune.task import fine_tune_task

    return fine_tune_task("snli")


def _snli_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The ``snli`` task's options with this probe's training choices laid over them."""
    snli = dict(_snli_task().spec.defaults)
    snli.update({key: options[key] for key in SNLI_OPTIONS})
    return snli


def _source_path(options: Mapping[str, Any], data_dir: Path | None) -> Path:
    if options["source"]:
        return Path(str(options["source"])).expanduser()
    if data_dir is None:
        raise DataError(
            "the shuffle probes need SNLI with parses: pass --data-dir (with "
            f"{'/'.join(DEFAULT_SOURCE)}), --task-arg shuffle.source=FILE or "
            "--task-arg shuffle.probes=DIR from `posharness build-probes shuffle`"
        )
    return data_dir.joinpath(*DEFAULT_SOURCE)


def _size(records: Any) -> int:
    return len(records) if isinstance(records, list) else int(records.size)


def _check(name: str, options: Mapping[str, Any]) -> None:
    if int(options["bootstrap"]) < 0:
        raise OptionError(f"--task-arg {name}.bootstrap: must not be negative")
    if int(options["probe_seed"]) < 0:
        raise OptionError(f"--task-arg {name}.probe_seed: must not be negative")


def _hash(identity: Mapping[str, Any]) -> str:
    from posharness.storage.hashing import hash_obj

    return hash_obj(dict(identity))


BINARY_METRICS = (
    "original_accuracy",
    "shuffled_accuracy",
    "still_entailment",
    "prediction_changed",
)


def task_spec(probe: str) -> TaskSpec:
    return TaskSpec(
        name=probe,
        version=VERSION,
        kind="perturbation",
        description=f"{TITLES[probe]} word-swap probe on SNLI (Chen et al. 2023 Table 3)",
        main_metric="delta",
        headline_metrics=("original_accuracy", "shuffled_accuracy", "delta"),
        needs=frozenset(),
        requires=(FineTunable,),  # the probes are scored by a fine-tuned SNLI classifier
        data_source="SNLI 1.0 test with parses (snli/snli_1.0)",
        options=_options(),
        borrows={"snli": tuple(SNLI_OPTIONS)},
        # accuracies are means of per-pair correctness; delta a mean of per-pair changes in
        # {-1, 0, +1}; the p-value and the flip counts are one number per cell
        metric_types={
            **{name: MEAN_BINARY for name in BINARY_METRICS},
            "delta": MEAN_CONTINUOUS,
            **{name: PER_CELL for name in ("mcnemar_p", "flipped_to_wrong", "flipped_to_right")},
        },
    )
