"""One SentEval probing task on a frozen encoder in one attention mode (Conneau et al.
2018; Chen et al. App. C.3, Table 9).

Per layer (embeddings output included) a sentence vector is pooled from the frozen model
in the cell's mode, SentEval's classifier grid is trained on the train split and chosen on
dev; the layer with the best dev accuracy is the task's score, reported on test. Beside
it: every layer's dev and test accuracy, the majority and chance baselines, and a control
— the chosen probe retrained on the training labels permuted across sentences, scored on
the real test labels — so a probe that memorises is told from one that reads the vector
(after Hewitt & Liang 2019's selectivity). See docs/tasks/senteval.md.

Options: ``probes`` (a folder from ``posharness build-probes senteval``, or one file;
empty: ``<data-dir>/senteval/probing/``), ``pooling`` (mean | cls), ``classifier`` (auto:
logistic regression for WC, the MLP otherwise, as the paper), ``search`` (full: SentEval's
whole grid to early stopping; halving: successive halving over it), ``tenacity_reset``
(false: SentEval's early stopping; true: patience reset on improvement), ``control``.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posharness.base.errors import OptionError
from posharness.contracts.adapter import HIDDEN, mode_identity
from posharness.contracts.metric_types import MEAN_BINARY, MEAN_CONTINUOUS, PER_CELL
from posharness.contracts.task import TaskContext, TaskResult, TaskSpec
from posharness.contracts.task_options import TaskOption
from posharness.tasks.senteval.catalog import BY_NAME, ProbingTask

if TYPE_CHECKING:
    from posharness.contracts.adapter import ModelAdapter
    from posharness.tasks.senteval.features import SentenceFeatureStore
    from posharness.tasks.senteval.probing_files import ProbingData

VERSION = "2"  # 2: SentEval's early stopping (count never reset) and rounded dev choice
STORE_KIND = "sentence-features"
LIMIT_SEED = 20180715  # which examples --limit / --train-limit keep (fixed across models)
OPTIONS: tuple[TaskOption, ...] = (
    TaskOption("probes", "", "Probing folder or file [default: senteval/probing in --data-dir]."),
    TaskOption("pooling", "mean", "Sentence vector: mean of the words' states, or cls."),
    TaskOption("classifier", "auto", "auto (SentEval's: logreg for WC, else MLP), mlp or logreg."),
    TaskOption("search", "full", "Configuration search: full grid, or halving."),
    TaskOption("tenacity_reset", False, "An improvement resets early stopping's count."),
    TaskOption("control", True, "Train the label-shuffled control (control_accuracy)."),
)
DEFAULTS: dict[str, Any] = {option.name: option.default for option in OPTIONS}


class ProbingTaskRunner:
    """One of the ten tasks (``name`` in ``catalog.BY_NAME``)."""

    summary_group = "senteval_probing"  # Table 9 is drawn across the ten tasks

    def __init__(self, name: str) -> None:
        self.task: ProbingTask = BY_NAME[name]
        self.spec = task_spec(self.task)

    # -- data ---------------------------------------------------------------------------
    def data_identity(self, options: Mapping[str, Any], data_dir: Path | None) -> Any:
        """The probing file's content hash and size, after every line is validated."""
        _check_options(self.task.name, options)
        data = self._data(options, data_dir)
        return {"file": str(data.path), "sha256": data.sha256, "size": len(data.sentences)}

    def _data(self, options: Mapping[str, Any], data_dir: Path | None) -> ProbingData:
        from posharness.tasks.senteval.probing_files import probing_path, read_probing_file

        return read_probing_file(
            self.task, probing_path(self.task, str(options["probes"]), data_dir)
        )

    # -- running ------------------------------------------------------------------------
    def run(self, model: ModelAdapter, ctx: TaskContext) -> TaskResult:
        from posharness.tasks.senteval.scoring import probe_all_layers

        data = self._data(ctx.options, ctx.data_dir)
        chosen = _limited(data, ctx.limit, ctx.train_limit)
        sentences = [data.sentences[i] for i in chosen]
        pooling = str(ctx.options["pooling"])
        with _feature_store(model, ctx, pooling) as store:
            log = _encode(model, ctx, store, sentences, pooling)
            result = probe_all_layers(self.task, data, chosen, store, ctx, self._classifier(ctx))
        result.data_hash = data.sha256
        result.settings.update(
            {
                "probing_file": str(data.path),
                "pooling": pooling,
                "sentences_encoded": log.encoded,
                "sentences_reused": log.reused,
            }
        )
        return result

    def _classifier(self, ctx: TaskContext) -> str:
        name = str(ctx.options["classifier"])
        if name == "auto":
            return "logreg" if self.task.name == "wc" else "mlp"
        return name

    def summarize_group(self, results: list, folder: Path) -> list[Path]:
        """Chen et al.'s Table 9 across the ten tasks and the modes of one model."""
        from posharness.tasks.senteval.report import write_table9

        return write_table9(results, folder)


def _limited(data: ProbingData, limit: int | None, train_limit: int | None) -> np.ndarray:
    """Positions kept: at most ``train_limit`` train and ``limit`` dev and test examples,
    drawn with a fixed seed so every model and mode sees the same subset."""
    rng = np.random.default_rng(LIMIT_SEED)
    kept = []
    for code, cap in (("tr", train_limit), ("va", limit), ("te", limit)):
        positions = data.split(code)
        if cap is not None and len(positions) > cap:
            positions = np.sort(rng.choice(positions, cap, replace=False))
        kept.append(positions)
    return np.concatenate(kept)


@contextlib.contextmanager
def _feature_store(
    model: ModelAdapter, ctx: TaskContext, pooling: str
) -> Iterator[SentenceFeatureStore]:
    """The (model, mode, pooling) feature store: in the cache, or a temporary folder
    removed afterwards when caching is off (``--no-cache``)."""
    from posharness.tasks.senteval.features import STORE_VERSION, SentenceFeatureStore

    cache = ctx.cache
    if cache.root is None:
        with tempfile.TemporaryDirectory(prefix="posharness-senteval-") as temporary:
            yield SentenceFeatureStore(Path(temporary))
        return
    key = cache.key(
        model.fingerprint(),
        mode_identity(model, ctx.mode, frozenset({HIDDEN})),
        "any sentence",
        STORE_KIND,
        extra={"pooling": pooling, "store": STORE_VERSION},
    )
    yield SentenceFeatureStore(cache.root / STORE_KIND / key[:2] / key)


def _encode(
    model: ModelAdapter,
    ctx: TaskContext,
    store: SentenceFeatureStore,
    sentences: list[str],
    pooling: str,
) -> Any:
    from posharness.tasks.senteval.features import encode_missing

    missing = len(store.missing(sentences))
    encoder = ctx.encoder(frozenset({HIDDEN}))
    advance = ctx.progress("encoding sentences", missing) if missing else None
    return encode_missing(
        store,
        sentences,
        lambda texts: model.tokenize(texts),
        lambda items, on_progress: encoder.batches(items, on_progress=on_progress),
        pooling,
        advance,
    )


def _check_options(name: str, options: Mapping[str, Any]) -> None:
    from posharness.tasks.senteval.features import check_pooling
    from posharness.tasks.senteval.probe_grid import CLASSIFIERS, SEARCHES

    check_pooling(str(options["pooling"]), name)
    if str(options["classifier"]) not in ("auto", *CLASSIFIERS):
        raise OptionError(
            f"--task-arg {name}.classifier={options['classifier']}: unknown classifier, "
            f"expected one of auto, {', '.join(CLASSIFIERS)}"
        )
    if str(options["search"]) not in SEARCHES:
        raise OptionError(
            f"--task-arg {name}.search={options['search']}: unknown search, expected one of "
            f"{', '.join(SEARCHES)}"
        )


def task_spec(task: ProbingTask) -> TaskSpec:
    return TaskSpec(
        name=task.name,
        version=VERSION,
        kind="probe",
        description=f"SentEval probing {task.title}: {task.description} (Conneau et al. 2018)",
        main_metric="accuracy",
        headline_metrics=("accuracy", "best_layer", "control_accuracy"),
        needs=frozenset({HIDDEN}),
        data_source="SentEval probing files (senteval/probing) or build-probes senteval",
        options=OPTIONS,
        # test accuracy at the layer picked on dev: a mean of per-sentence correctness;
        # selectivity is the mean of per-sentence differences of two classifiers'
        # correctness on the same sentences (a paired difference), the rest are one
        # number per cell
        metric_types={
            **{name: MEAN_BINARY for name in ("accuracy", "control_accuracy", "dev_accuracy")},
            "selectivity": MEAN_CONTINUOUS,
            **{name: PER_CELL for name in ("best_layer", "chance", "majority")},
        },
    )
