"""Fine-tune tasks: GLUE, SentEval transfer and SNLI, for any model in any attention mode.

One class, one instance per task name (``rte``, ``sickr``, ``snli`` …), all driven by
the same engine and protocols. A cell runs its protocol's runs (each cached on its own),
aggregates them as the protocol says, attaches bootstrap confidence intervals over the
evaluation examples and writes the representative run's per-example predictions for
paired comparison. Options (``--task-arg TASK.KEY=VALUE``, or ``GROUP.KEY`` for every
member of a group): ``protocol`` (quick | chen2023 | tupe2021), ``learning_rate``,
``epochs``, ``batch_size``, ``seeds`` (0 = the protocol's), ``max_length``, ``path``
(a folder in the dataset's original layout), one option per split naming its file
(e.g. ``snli.train=snli_1.0_train_0.01.jsonl``), ``folds`` for cross-validated tasks,
``keep_checkpoints`` (selected | all | none) and ``bootstrap`` (resamples; 0 = none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from posharness.base.errors import OptionError
from posharness.contracts.adapter import FineTunable
from posharness.contracts.metric_types import MEAN_BINARY, MEAN_CONTINUOUS, OF_EXAMPLES
from posharness.contracts.task import TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.tasks.finetune.data.locate import DATASETS
from posharness.tasks.finetune.profiles import PROFILES, Profile

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter
    from posharness.tasks.finetune.engine import EncodedSplit
    from posharness.tasks.finetune.protocols import Aggregate, PlannedRun, Protocol
    from posharness.tasks.finetune.runs import RunContext, RunResult
    from posharness.tasks.finetune.types import LoadedSplit

VERSION = "1"  # every task's, unless its profile names its own (Profile.version)
CHECKPOINT_CHOICES = ("selected", "all", "none")
EVAL_BATCH = {"cpu": 64, "cuda": 256, "mps": 128}


def _options(profile: Profile) -> tuple[TaskOption, ...]:
    declared = [
        TaskOption("protocol", "quick", "Training recipe: quick, chen2023 or tupe2021."),
        TaskOption("learning_rate", 0.0, "Learning rate; 0 = the protocol's."),
        TaskOption("epochs", 0, "Training epochs; 0 = the protocol's."),
        TaskOption("batch_size", 0, "Training batch size; 0 = the protocol's."),
        TaskOption("seeds", 0, "Training seeds per learning rate; 0 = the protocol's."),
        TaskOption("max_length", 128, "Longest input in pieces (8-4096)."),
        TaskOption("path", "", "Folder of the dataset's files [default: under --data-dir]."),
        TaskOption("keep_checkpoints", "selected", "Fine-tuned weights kept: selected, all, none."),
        TaskOption("bootstrap", 1000, "Resamples for the intervals; 0 = no intervals."),
    ]
    if profile.folds:
        declared.append(TaskOption("folds", profile.folds, "Cross-validation folds (at least 3)."))
    for split in DATASETS[profile.name].splits:  # a file for this split, overriding the folder
        declared.append(TaskOption(split, "", f"File of the {split} split [default: in path]."))
    return tuple(declared)


class FineTuneTask:
    """A fine-tune task; ``profile`` says what it measures (``profiles.py``), the dataset
    of the same name in ``data/catalogue.py`` where its files are and how they read."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.spec = task_spec(profile)

    # -- data ---------------------------------------------------------------------------
    def _sources(self, options: Mapping[str, Any], data_dir: Path | None) -> dict[str, Any]:
        from posharness.tasks.finetune.data.locate import locate_splits

        dataset = DATASETS[self.profile.name]
        files = {s: str(options[s]) for s in dataset.splits if options.get(s)}
        return locate_splits(dataset, data_dir, options.get("path") or None, files)

    def _load(self, options: Mapping[str, Any], data_dir: Path | None) -> dict[str, LoadedSplit]:
        from posharness.tasks.finetune.data.loading import load_cached

        dataset = DATASETS[self.profile.name]
        sources = self._sources(options, data_dir)
        return {name: load_cached(dataset, name, source) for name, source in sources.items()}

    def data_identity(self, options: Mapping[str, Any], data_dir: Path | None) -> Any:
        """Validate every split before any model loads; their hashes join the cell id."""
        _check_options(self.profile, options)
        return {name: split.content_hash for name, split in self._load(options, data_dir).items()}

    # -- running ------------------------------------------------------------------------
    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        return self._result(model, ctx, self.execute(model, ctx))

    def run_count(self, options: dict[str, Any], seed: int) -> int:
        """How many trainings the cell's protocol makes (``SplitsIntoRuns``)."""
        return len(self._planned_runs(options, seed))

    def planned_examples(
        self,
        options: Mapping[str, Any],
        data_dir: Path | None,
        seed: int,
        limit: int | None,
        train_limit: int | None,
    ) -> tuple[int, int]:
        """(training examples × epochs summed over the protocol's runs, examples scored):
        the work ``posharness run``'s whole-run estimate counts (``posharness.run.estimate``). The
        splits are those planning already read and validated (``load_cached``); a
        cross-validated task trains on (k-1)/k of its one split k times and scores it."""
        from posharness.tasks.finetune.protocols import protocol_named

        splits = {
            name: len(split.examples) for name, split in self._load(options, data_dir).items()
        }
        protocol = protocol_named(str(options["protocol"]))
        epochs = int(options["epochs"]) or protocol.epochs_for(self.profile.name)
        runs = len(self._planned_runs(options, seed))
        if self.profile.folds:
            rows = min(splits.get("all", 0), limit or splits.get("all", 0))
            return runs * epochs * rows, runs * epochs * rows
        train = splits.get("train", 0)
        train = min(train, train_limit) if train_limit else train
        scored = sum(min(n, limit) if limit else n for name, n in splits.items() if name != "train")
        return runs * epochs * train, runs * epochs * scored

    def warm_run(self, model: ModelAdapter, ctx: TaskContext, index: int) -> None:
        """Train run ``index`` of the cell alone, into the cache (``SplitsIntoRuns``)."""
        protocol, runs, _, encoded, rc = self._prepare(model, ctx)
        self._one_run(rc, protocol, runs[index], encoded, ctx.options)

    def _planned_runs(self, options: Mapping[str, Any], seed: int) -> list[PlannedRun]:
        from posharness.tasks.finetune.protocols import plan_runs, protocol_named

        protocol = protocol_named(str(options["protocol"]))
        rates = (float(options["learning_rate"]),) if options["learning_rate"] else None
        return plan_runs(
            protocol,
            seed,
            rates or protocol.learning_rates,
            int(options["seeds"]) or protocol.seeds_per_rate,
        )

    def execute(self, model: ModelAdapter, ctx: TaskContext) -> Execution:
        """Every run of the protocol (trained or read from the cache) and their aggregate."""
        from posharness.tasks.finetune.protocols import aggregate

        protocol, runs, loaded, encoded, rc = self._prepare(model, ctx)
        results = [self._one_run(rc, protocol, run, encoded, ctx.options) for run in runs]
        scores = [self._scores(r, encoded) for r in results]
        summary = aggregate(protocol, runs, scores, self._selection_key(rc))
        return Execution(protocol, runs, results, scores, summary, loaded, encoded, rc)

    def _prepare(
        self, model: ModelAdapter, ctx: TaskContext
    ) -> tuple[
        Protocol,
        list[PlannedRun],
        dict[str, LoadedSplit],
        dict[str, EncodedSplit],
        RunContext,
    ]:
        """The protocol, its planned runs, the data loaded and encoded, the run context."""
        from posharness.run.plan import check_capabilities
        from posharness.tasks.finetune.data.loading import encode_split, limited
        from posharness.tasks.finetune.protocols import protocol_named

        profile, options = self.profile, ctx.options
        _check_options(profile, options)
        check_capabilities(model.spec, model, self)  # also reached from the word-swap probes
        protocol = protocol_named(str(options["protocol"]))
        # --limit cuts evaluation splits, --train-limit the training split; a cross-validated
        # task's one split ("all") is both, and takes --limit.
        loaded = {
            name: limited(split, ctx.train_limit if name == "train" else ctx.limit)
            for name, split in self._load(options, ctx.data_dir).items()
        }
        encoded = {
            name: encode_split(model, split, DATASETS[profile.name], int(options["max_length"]))
            for name, split in loaded.items()
        }
        if profile.carve_dev:
            from posharness.tasks.finetune.runs import carve_dev

            encoded["train"], encoded["dev"] = carve_dev(encoded["train"])
        runs = self._planned_runs(options, ctx.seed)
        return protocol, runs, loaded, encoded, self._run_context(model, ctx, loaded, protocol)

    def _run_context(
        self,
        model: ModelAdapter,
        ctx: TaskContext,
        loaded: Mapping[str, LoadedSplit],
        protocol: Protocol,
    ) -> RunContext:
        from posharness.contracts.adapter import mode_identity
        from posharness.tasks.finetune.runs import RunContext

        profile = self.profile
        device_kind = ctx.device.split(":")[0]
        batch = (
            ctx.batch_size if isinstance(ctx.batch_size, int) else EVAL_BATCH.get(device_kind, 64)
        )
        num_labels = 1 if profile.regression else len(DATASETS[profile.name].labels)
        data: dict[str, Any] = {name: split.content_hash for name, split in loaded.items()}
        data["limit"] = ctx.limit
        if ctx.train_limit is not None:
            data["train_limit"] = ctx.train_limit
        return RunContext(
            cache=ctx.cache,
            fingerprint=model.fingerprint(),
            mode=mode_identity(model, ctx.mode, frozenset()),
            task=profile.name,
            data=data,
            build=lambda: model.for_classification(num_labels, ctx.mode),
            metrics=profile.metrics,
            selection_metric=protocol.selection_metric.get(profile.name, profile.selection_metric),
            regression=profile.regression,
            pad_token_id=model.pad_token_id,
            device=ctx.device,
            bf16=model.describe().get("dtype") == "bfloat16",
            eval_batch_size=batch,
            keep_weights=ctx.options["keep_checkpoints"] != "none" and not profile.folds,
            progress=ctx.progress,
        )

    def _one_run(
        self,
        rc: RunContext,
        protocol: Protocol,
        run: PlannedRun,
        encoded: Mapping[str, EncodedSplit],
        options: Mapping[str, Any],
    ) -> RunResult:
        from posharness.tasks.finetune.run_settings import training_settings
        from posharness.tasks.finetune.runs import cross_validated_run, plain_run

        settings = training_settings(self.profile, protocol, run, options)
        if self.profile.folds:
            return cross_validated_run(
                rc, settings, encoded["all"], int(options["folds"]), run.label
            )
        report = list(self.profile.report.values())
        return plain_run(rc, settings, encoded, self.profile.select_split, report, run.label)

    # -- scoring ------------------------------------------------------------------------
    def _scores(self, result: RunResult, encoded: Mapping[str, EncodedSplit]) -> dict[str, float]:
        from posharness.stats.classification import score

        out = dict(result.extra_scores)
        for prefix, split in self.profile.report.items():
            values = score(self.profile.metrics, encoded[split].labels, result.predictions[split])
            out.update({f"{prefix}{m}": v for m, v in values.items()})
        for name, parts in self.profile.derived.items():  # per run, so protocols combine it
            out[name] = sum(out[key] for key in parts) / len(parts)
        return out

    def _selection_key(self, rc: RunContext) -> str:
        profile = self.profile
        if profile.folds:
            return f"dev_{rc.selection_metric}"
        prefix = next(p for p, s in profile.report.items() if s == profile.select_split)
        return f"{prefix}{rc.selection_metric}"

    def _result(self, model: ModelAdapter, ctx: TaskContext, done: Execution) -> TaskResult:
        from posharness.tasks.finetune.report import (
            confidence_metrics,
            per_example_rows,
            prune_weights,
            run_details,
        )

        summary, results = done.summary, done.results
        metrics = confidence_metrics(
            self.profile,
            summary,
            results,
            done.encoded.__getitem__,
            int(ctx.options["bootstrap"]),
            ctx.seed,
        )
        chosen = results[summary.representative]
        examples = per_example_rows(self.profile, chosen, done.encoded.__getitem__)
        policy = str(ctx.options["keep_checkpoints"])
        prune_weights(done.rc, results, summary.representative, policy)
        trained = [r for r in results if r.trained]
        seconds = sum(r.train_seconds for r in trained)
        seen = sum(r.train_examples for r in trained)
        details = run_details(done.protocol, done.runs, results, done.scores, summary, done.loaded)
        settings = {
            "protocol": done.protocol.name,
            "runs": len(done.runs),
            "runs_trained_now": sum(1 for r in results if r.trained),
            "selection_metric": self._selection_key(done.rc),
            "device": ctx.device,
            "bf16": done.rc.bf16,
            "train_examples_per_second": round(seen / seconds, 2) if seconds else None,
            "mode_statistics": _mode_statistics(model, ctx),
        }
        data_hash = _combined_hash({n: s.content_hash for n, s in done.loaded.items()})
        return TaskResult(metrics, data_hash, details, examples, [], settings)

    # -- reuse --------------------------------------------------------------------------
    def trained_classifier(self, model: ModelAdapter, ctx: TaskContext) -> Any:
        """The representative fine-tuned classifier of (model, mode), trained only if needed.

        The word-swap probes call this for ``snli``: with the cache on, a cell that already
        ran (or a previous probe) leaves the weights behind and nothing is retrained.
        """
        from posharness.tasks.finetune.reuse import trained_classifier

        return trained_classifier(self, model, ctx)


@dataclass
class Execution:
    """A cell's protocol after its runs: what ``run`` reports and ``trained_classifier`` reuses."""

    protocol: Protocol
    runs: list[PlannedRun]
    results: list[RunResult]
    scores: list[dict[str, float]]
    summary: Aggregate
    loaded: dict[str, LoadedSplit]
    encoded: dict[str, EncodedSplit]
    rc: RunContext


def _mode_statistics(model: ModelAdapter, ctx: TaskContext) -> str | None:
    support = model.modes.get(ctx.mode)
    if support is None or support.exact or str(ctx.mode) == "both":
        return None
    return (
        f"{support.definition}: split statistics taken from the pretrained weights and held "
        "fixed during fine-tuning"
    )


def _combined_hash(hashes: Mapping[str, str]) -> str:
    from posharness.storage.hashing import hash_obj

    return hash_obj(dict(sorted(hashes.items())))


def _check_options(profile: Profile, options: Mapping[str, Any]) -> None:
    from posharness.tasks.finetune.protocols import protocol_named

    protocol_named(str(options["protocol"]))
    name = profile.name
    if options["keep_checkpoints"] not in CHECKPOINT_CHOICES:
        raise OptionError(
            f"--task-arg {name}.keep_checkpoints={options['keep_checkpoints']}: choose from "
            f"{', '.join(CHECKPOINT_CHOICES)}"
        )
    for key in ("epochs", "batch_size", "seeds", "bootstrap"):
        if int(options[key]) < 0:
            raise OptionError(f"--task-arg {name}.{key}={options[key]}: must not be negative")
    if float(options["learning_rate"]) < 0:
        raise OptionError(f"--task-arg {name}.learning_rate: must be positive (0 = protocol's)")
    if not 8 <= int(options["max_length"]) <= 4096:
        raise OptionError(f"--task-arg {name}.max_length={options['max_length']}: use 8..4096")
    if profile.folds and int(options["folds"]) < 3:
        raise OptionError(f"--task-arg {name}.folds={options['folds']}: use at least 3 folds")


def task_spec(profile: Profile) -> TaskSpec:
    dataset = DATASETS[profile.name]
    return TaskSpec(
        name=profile.name,
        version=profile.version or VERSION,
        kind="fine-tune",
        description=profile.description,
        main_metric=profile.main_metric,
        headline_metrics=profile.headline,
        needs=frozenset(),
        requires=(FineTunable,),
        data_source=f"{dataset.title} ({dataset.folder})",
        options=_options(profile),
        # accuracy is a mean of per-example correctness (McNemar); F1, Matthews and the
        # correlations are computed on every prediction at once (paired bootstrap)
        metric_types={
            "accuracy": MEAN_BINARY,
            **{name: OF_EXAMPLES for name in ("f1", "matthews", "pearson", "spearman")},
            # a mean of split accuracies: each example's correctness weighted by its split's
            # share (report.per_example_rows), so a mean of continuous values
            **dict.fromkeys(profile.derived, MEAN_CONTINUOUS),
        },
    )


def fine_tune_task(name: str) -> FineTuneTask:
    """The fine-tune task of that name, e.g. ``fine_tune_task("snli")``."""
    return FineTuneTask(PROFILES[name])
