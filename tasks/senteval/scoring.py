"""A probe per layer, the layer chosen on dev, and what the score is compared against.

Conneau et al. 2018 (§4) and Chen et al. (App. C.3): train SentEval's classifier on every
layer's sentence vectors, choose the layer with the best dev accuracy, report its test
accuracy. The baselines answer "better than what?": the majority class of the training
split, chance (one over the classes), and the control — the chosen layer's chosen
configuration trained on training labels permuted across sentences (Hewitt & Liang 2019's
selectivity, at sentence level): what the same probe reaches on the real test labels when
the vector-label link is broken, i.e. through class priors alone. Selectivity is the
accuracy minus the control.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from posharness.contracts.examples import Example
from posharness.contracts.results import Metric
from posharness.contracts.task import TaskContext, TaskResult

if TYPE_CHECKING:
    from posharness.tasks.senteval.catalog import ProbingTask
    from posharness.tasks.senteval.features import SentenceFeatureStore
    from posharness.tasks.senteval.probing_files import ProbingData

CONTROL_SEED = 7


def probe_all_layers(
    task: ProbingTask,
    data: ProbingData,
    chosen: np.ndarray,
    store: SentenceFeatureStore,
    ctx: TaskContext,
    classifier: str,
) -> TaskResult:
    from posharness.tasks.senteval.probe_grid import Protocol, fit_grid

    search = str(ctx.options.get("search", "full"))
    protocol = Protocol(
        classifier=classifier,
        seed=1111 + ctx.seed,
        search=search,
        tenacity_reset=bool(ctx.options.get("tenacity_reset", False)),
    )
    classes = data.classes
    class_id = {label: i for i, label in enumerate(classes)}
    labels = np.array([class_id[label] for label in data.labels[chosen]], dtype=np.int64)
    splits = data.splits[chosen]
    parts = {code: np.flatnonzero(splits == code) for code in ("tr", "va", "te")}
    sentences = [data.sentences[i] for i in chosen]
    layers = store.layers(sentences)
    advance = ctx.progress(f"{task.name}: probes per layer", layers)
    curve, fits, classifier_seconds = [], [], 0.0
    for layer in range(layers):
        x = store.layer(sentences, layer)
        fit = fit_grid(
            (x[parts["tr"]], labels[parts["tr"]]),
            (x[parts["va"]], labels[parts["va"]]),
            x[parts["te"]],
            len(classes),
            protocol,
        )
        classifier_seconds += fit.seconds
        test_accuracy = float((fit.test_predictions == labels[parts["te"]]).mean())
        curve.append(
            {
                "layer": layer,
                "dev_accuracy": float(fit.dev_accuracy[fit.best]),
                "test_accuracy": test_accuracy,
                "train_accuracy": fit.train_accuracy,
                "config": fit.chosen.describe(),
                "passes": int(fit.total_passes),
            }
        )
        fits.append(fit)
        advance(1)
    best = int(np.argmax([point["dev_accuracy"] for point in curve]))  # ties: lower layer
    fit = fits[best]
    test_gold = labels[parts["te"]]
    n_test = len(test_gold)
    metrics = {
        "accuracy": _accuracy(curve[best]["test_accuracy"], n_test),
        "best_layer": Metric(float(best)),
        "dev_accuracy": _accuracy(curve[best]["dev_accuracy"], len(parts["va"])),
        "majority": _accuracy(_majority(labels[parts["tr"]], test_gold), n_test),
        "chance": Metric(1.0 / len(classes)),
    }
    details: dict[str, Any] = {
        "layers": curve,
        "classes": classes,
        "sizes": {code: int(len(p)) for code, p in parts.items()},
        "protocol": {
            "classifier": classifier,
            "grid": [c.describe() for c in fit.configs],
            "batch_size": protocol.batch_size,
            "epoch_size": protocol.epoch_size,
            "tenacity": protocol.tenacity,
            "tenacity_reset": protocol.tenacity_reset,
            "max_epoch": protocol.max_epoch,
            "seed": protocol.seed,
            "search": protocol.search,
        },
    }
    if ctx.options["control"]:
        x = store.layer(sentences, best)
        permuted = np.random.default_rng(CONTROL_SEED + ctx.seed).permutation(labels[parts["tr"]])
        clock = time.perf_counter()
        control = fit_grid(
            (x[parts["tr"]], permuted),
            (x[parts["va"]], labels[parts["va"]]),
            x[parts["te"]],
            len(classes),
            protocol,
            configs=[fit.chosen],
        )
        classifier_seconds += time.perf_counter() - clock
        control_accuracy = float((control.test_predictions == test_gold).mean())
        metrics["control_accuracy"] = _accuracy(control_accuracy, n_test)
        metrics["selectivity"] = Metric(metrics["accuracy"].value - control_accuracy, n=n_test)
        details["control"] = {
            "layer": best,
            "config": fit.chosen.describe(),
            "train_accuracy_on_permuted_labels": control.train_accuracy,
            "permutation_seed": CONTROL_SEED + ctx.seed,
        }
    control_correct = control.test_predictions == test_gold if ctx.options["control"] else None
    encode_seconds = sum(encoder.log.seconds for encoder in ctx.encoders)
    details["timing"] = {"encode_seconds": encode_seconds, "classifier_seconds": classifier_seconds}
    examples = [
        Example(
            id=str(int(data.ids[chosen[position]])),
            label=classes[int(gold)],
            prediction=classes[int(predicted)],
            accuracy=1.0 if gold == predicted else 0.0,
            # selectivity is a mean of per-sentence differences (real-label probe right,
            # control probe right) over the same test sentences: kept per sentence, so
            # compare tests its Δ paired (sign-flip), as the difference of two paired means
            **(
                {}
                if control_correct is None
                else {
                    "control_accuracy": float(control_correct[index]),
                    "selectivity": float(gold == predicted) - float(control_correct[index]),
                }
            ),
        )
        for index, (position, gold, predicted) in enumerate(
            zip(parts["te"], test_gold, fit.test_predictions, strict=True)
        )
    ]
    artifacts = [_curve_figure(task, curve, metrics, ctx.artifact_dir, examples)]
    return TaskResult(
        metrics=metrics,
        data_hash="",
        details=details,
        examples=examples,
        artifacts=[Path(a.name) for a in artifacts],
        settings={"classifier": classifier},
    )


def _accuracy(value: float, n: int) -> Metric:
    """An accuracy with its binomial standard error."""
    return Metric(
        float(value), stderr=float(np.sqrt(max(value * (1 - value), 0.0) / max(n, 1))), n=n
    )


def _majority(train_labels: np.ndarray, test_gold: np.ndarray) -> float:
    """Test accuracy of always answering the training split's most frequent class."""
    majority = int(np.bincount(train_labels).argmax())
    return float((test_gold == majority).mean())


def _curve_figure(
    task: ProbingTask, curve: list[dict], metrics: dict, folder: Path, examples: list[Example]
) -> Path:
    """``layers.png``, marked when the cell will be flagged: it is drawn before the runner
    adds the generic flags, which are this same function of these metrics and examples."""
    from posharness.run.flags import degenerate_flags
    from posharness.tasks.senteval.figures import layer_curve

    return layer_curve(
        task.title,
        [p["dev_accuracy"] for p in curve],
        [p["test_accuracy"] for p in curve],
        {
            "majority": metrics["majority"].value,
            "chance": metrics["chance"].value,
            **(
                {"control": metrics["control_accuracy"].value}
                if "control_accuracy" in metrics
                else {}
            ),
        },
        folder / "layers.png",
        flagged=bool(degenerate_flags("accuracy", metrics, examples)),
    )
