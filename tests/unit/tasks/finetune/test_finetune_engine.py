"""The fine-tuning loop and the protocols' arithmetic, on a tiny random BERT."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from posharness.base.errors import OptionError
from posharness.contracts.adapter import Mode
from posharness.contracts.model_spec import LoadOptions
from posharness.models.hf.adapter import HFEncoderAdapter
from posharness.stats.classification import score
from posharness.tasks.finetune.engine import (
    EncodedSplit,
    TrainingSettings,
    epoch_batches,
    fine_tune,
    predict,
)
from posharness.tasks.finetune.protocols import (
    PROTOCOLS,
    PlannedRun,
    aggregate,
    plan_runs,
    protocol_named,
)
from tests.conftest import WORDS


def adapter(folder: Path, **args: str) -> HFEncoderAdapter:
    options = LoadOptions(dtype="float32", device="cpu", model_args=tuple(args.items()))
    return HFEncoderAdapter(folder, options)


def dog_sentences(n: int, seed: int) -> tuple[list[str], np.ndarray]:
    """Label 1 when "dog" occurs: learnable in a few epochs even by a 2-layer model."""
    rng = random.Random(seed)
    others = [w for w in WORDS[:40] if w != "dog"]
    texts, labels = [], []
    for i in range(n):
        words = rng.sample(others, rng.randint(3, 9))
        if i % 2:
            words.insert(rng.randrange(len(words) + 1), "dog")
        texts.append(" ".join(words))
        labels.append(i % 2)
    return texts, np.array(labels, dtype=np.int64)


def split(model: HFEncoderAdapter, name: str, n: int, seed: int) -> EncodedSplit:
    texts, labels = dog_sentences(n, seed)
    items = model.tokenize_pairs(texts, None, 128)
    return EncodedSplit(name, items, labels, [f"{name}{i}" for i in range(n)])


def train(model: HFEncoderAdapter, settings: TrainingSettings, mode: Mode = Mode.BOTH):
    return fine_tune(
        lambda: model.for_classification(2, mode),
        split(model, "train", 64, 0),
        split(model, "dev", 24, 1),
        [split(model, "test", 16, 2)],
        settings,
        regression=False,
        scorer=lambda gold, predicted: score(("accuracy",), gold, predicted),
        selection_metric="accuracy",
        pad_token_id=model.pad_token_id,
    )


SETTINGS = TrainingSettings(learning_rate=1e-2, epochs=4, batch_size=8, warmup_ratio=0.1)


def test_training_lowers_the_loss_and_learns_the_rule(tiny_bert: Path) -> None:
    outcome = train(adapter(tiny_bert), SETTINGS)
    losses = [epoch["train_loss"] for epoch in outcome.epochs]
    assert losses[-1] < losses[0] * 0.8, losses
    assert max(epoch["accuracy"] for epoch in outcome.epochs) >= 0.75


def test_the_best_epoch_is_kept_and_its_weights_reproduce_its_predictions(tiny_bert: Path) -> None:
    model = adapter(tiny_bert)
    outcome = train(model, SETTINGS)
    scores = [epoch["accuracy"] for epoch in outcome.epochs]
    assert outcome.best_epoch == 1 + scores.index(max(scores))
    fresh = model.for_classification(2, Mode.BOTH)
    fresh.load_state_dict(outcome.state)
    dev = split(model, "dev", 24, 1)
    again = predict(fresh, dev, model.pad_token_id, "cpu", 7, regression=False)
    assert np.array_equal(again, outcome.predictions["dev"])
    assert set(outcome.predictions) == {"dev", "test"}


def test_a_seed_fixes_the_run_and_another_seed_changes_it(tiny_bert: Path) -> None:
    model = adapter(tiny_bert)
    short = TrainingSettings(learning_rate=1e-3, epochs=1, batch_size=8)
    first, second = train(model, short), train(model, short)
    assert first.epochs == second.epochs
    other = train(model, TrainingSettings(learning_rate=1e-3, epochs=1, batch_size=8, seed=1))
    assert other.epochs[0]["train_loss"] != first.epochs[0]["train_loss"]


def test_positional_mode_trains_with_delta_fixed(tiny_bert: Path) -> None:
    model = adapter(tiny_bert, absolute="mean-word-stream")
    classifier = model.for_classification(2, Mode.POSITIONAL)
    items = model.tokenize_pairs(["the dog runs", "a cat sits on the road"], None, 128)
    from posharness.compute.batching import pad_batch

    batch = pad_batch(items, model.pad_token_id)
    classifier(batch.input_ids, batch.attention_mask, batch.token_type_ids).sum().backward()
    without = {n for n, p in classifier.named_parameters() if p.grad is None}
    # softmax(delta) ignores the tokens, so only the query/key projections get no gradient
    assert without and all(".query." in n or ".key." in n for n in without)
    outcome = train(
        model, TrainingSettings(learning_rate=1e-3, epochs=1, batch_size=8), Mode.POSITIONAL
    )
    assert np.isfinite(outcome.epochs[0]["train_loss"])


def test_regression_heads_predict_scores(tiny_bert: Path) -> None:
    model = adapter(tiny_bert)
    texts, labels = dog_sentences(32, 0)
    items = model.tokenize_pairs(texts, texts[::-1], 128)
    data = EncodedSplit("train", items, labels.astype(np.float32) * 5, [str(i) for i in range(32)])
    outcome = fine_tune(
        lambda: model.for_classification(1, Mode.BOTH),
        data,
        EncodedSplit("dev", items[:8], data.labels[:8], data.ids[:8]),
        [],
        TrainingSettings(learning_rate=1e-3, epochs=1, batch_size=8),
        regression=True,
        scorer=lambda gold, predicted: score(("pearson",), gold, predicted),
        selection_metric="pearson",
        pad_token_id=model.pad_token_id,
    )
    assert outcome.predictions["dev"].dtype == np.float32
    assert len(np.unique(outcome.predictions["dev"])) > 1


def test_length_grouped_batches_cover_every_example_once() -> None:
    lengths = [random.Random(i).randint(5, 120) for i in range(300)]
    batches = epoch_batches(lengths, 16, seed=0, epoch=1)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(300))
    spread = np.mean([np.ptp([lengths[i] for i in b]) for b in batches])
    assert spread < 0.5 * np.ptp(lengths)  # similar lengths share a batch
    assert batches != epoch_batches(lengths, 16, seed=0, epoch=2)
    assert batches == epoch_batches(lengths, 16, seed=0, epoch=1)


# -- protocols --------------------------------------------------------------------------
def test_tupe_takes_the_median_per_rate_then_the_best_rate() -> None:
    protocol = PROTOCOLS["tupe2021"]
    runs = plan_runs(protocol, 0, (2e-5, 3e-5), 3)
    assert [r.seed for r in runs] == [0, 1, 2, 0, 1, 2]
    acc = [0.60, 0.90, 0.61, 0.70, 0.71, 0.10]  # 2e-5 median .61 ; 3e-5 median .70
    result = aggregate(protocol, runs, [{"accuracy": a} for a in acc], "accuracy")
    assert result.values["accuracy"] == pytest.approx(0.70)
    assert result.used == [3, 4, 5] and result.combine == "median"
    assert result.representative == 3  # the run that scored the median
    assert result.per_rate["2e-05"]["accuracy"]["median"] == pytest.approx(0.61)


def test_chen_averages_over_learning_rates() -> None:
    protocol = PROTOCOLS["chen2023"]
    runs = plan_runs(protocol, 4, protocol.learning_rates, 1)
    assert len(runs) == 5 and {r.seed for r in runs} == {4}
    scores = [{"accuracy": a, "f1": 1 - a} for a in (0.5, 0.6, 0.7, 0.8, 0.9)]
    result = aggregate(protocol, runs, scores, "accuracy")
    assert result.values == pytest.approx({"accuracy": 0.7, "f1": 0.3})
    assert result.representative == 4 and result.combine == "mean"


def test_tupe_trains_the_large_glue_tasks_for_five_epochs() -> None:
    tupe = protocol_named("tupe2021")
    assert tupe.epochs_for("mnli") == 5 and tupe.epochs_for("rte") == 10
    assert tupe.selection_metric["stsb"] == "pearson"
    assert PlannedRun(2e-5, 1).label == "lr=2e-05 seed=1"


def test_an_unknown_protocol_names_the_known_ones() -> None:
    with pytest.raises(OptionError, match="quick, chen2023, tupe2021"):
        protocol_named("glue2019")


def test_classifier_heads_start_from_the_pretrained_encoder(tiny_bert: Path) -> None:
    model = adapter(tiny_bert)
    classifier = model.for_classification(3, Mode.BOTH)
    encoder = dict(model.model.named_parameters())
    mine = dict(classifier.model.base_model.named_parameters())
    name = "encoder.layer.0.attention.self.query.weight"
    assert torch.equal(mine[name], encoder[name])
    assert classifier.model.classifier.out_features == 3
