"""``posharness run --tasks rte|mr|snli`` as a user meets it, on files the tests write.

Each cell trains a tiny random BERT for an epoch on a few dozen examples, so these read
as specifications of what a fine-tune cell records, caches and refuses.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.cli_helpers import one_line_error, run_isolated
from tests.conftest import WORDS

RTE_HEADER = "index\tsentence1\tsentence2\tlabel\n"


def sentence(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS[:40], rng.randint(3, 8)))


def write_rte(root: Path, train: int = 24, dev: int = 12, bad: str | None = None) -> Path:
    folder = root / "glue_data" / "RTE"
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    for name, size in (("train", train), ("dev", dev)):
        rows = [
            f"{i}\t{sentence(rng)}\t{sentence(rng)}\t{('entailment', 'not_entailment')[i % 2]}"
            for i in range(size)
        ]
        if bad is not None and name == "train":
            rows[3] = bad
        (folder / f"{name}.tsv").write_text(RTE_HEADER + "\n".join(rows) + "\n")
    return root


def write_mr(root: Path, per_class: int = 15) -> Path:
    folder = root / "senteval" / "downstream" / "MR"
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(1)
    for name in ("rt-polarity.pos", "rt-polarity.neg"):
        (folder / name).write_text("".join(f"{sentence(rng)} .\n" for _ in range(per_class)))
    return root


def write_snli(root: Path) -> Path:
    folder = root / "snli" / "snli_1.0"
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2)
    labels = ("entailment", "neutral", "contradiction")
    for name, size in (("train", 30), ("dev", 12), ("test", 12)):
        rows = [
            json.dumps(
                {
                    "pairID": f"{name}{i}",
                    "sentence1": sentence(rng),
                    "sentence2": sentence(rng),
                    "gold_label": labels[i % 3] if i != 5 else "-",
                }
            )
            for i in range(size)
        ]
        (folder / f"snli_1.0_{name}.jsonl").write_text("\n".join(rows) + "\n")
    return root


def run(tmp_path: Path, model: Path, tasks: str, *args: str) -> int:
    first = tasks.split(",")[0]
    return run_isolated(
        tmp_path, "--model", f"hf:{model}", "--tasks", tasks,
        "--task-arg", f"{first}.bootstrap=200", *args,
    )  # fmt: skip


def result(tmp_path: Path, model: Path, task: str, mode: str = "both", suffix: str = "") -> dict:
    path = next((tmp_path / "results").rglob(f"{task}__{mode}__seed0{suffix}.json"))
    return json.loads(path.read_text())


def example_rows(tmp_path: Path, out: dict) -> list[dict]:
    folder = next((tmp_path / "results").rglob(f"{out['task']['name']}__*.json")).parent
    return [json.loads(line) for line in (folder / out["examples_file"]).read_text().splitlines()]


def cached(tmp_path: Path, kind: str) -> list[Path]:
    return list((tmp_path / "cache" / kind).rglob("*.safetensors"))


def test_a_cell_records_metrics_intervals_runs_and_per_example_predictions(
    tmp_path: Path, tiny_bert: Path
) -> None:
    write_rte(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.epochs=2") == 0
    out = result(tmp_path, tiny_bert, "rte")
    accuracy = out["metrics"]["accuracy"]
    assert accuracy["ci_low"] <= accuracy["value"] <= accuracy["ci_high"] and accuracy["n"] == 12
    assert out["task"]["settings"]["protocol"] == "quick"
    [only] = out["details"]["runs"]
    assert only["learning_rate"] == 5e-5 and len(only["epochs"]) == 2 and not only["from_cache"]
    assert out["details"]["data"]["train"]["examples"] == 24
    rows = example_rows(tmp_path, out)
    assert len(rows) == 12 and {"id", "split", "label", "prediction", "accuracy"} <= set(rows[0])
    assert sum(r["accuracy"] for r in rows) / 12 == pytest.approx(accuracy["value"])
    assert len(cached(tmp_path, "finetune-checkpoint")) == 1


def test_a_rerun_reads_every_run_from_the_cache(tmp_path: Path, tiny_bert: Path) -> None:
    write_rte(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.epochs=1") == 0
    first = result(tmp_path, tiny_bert, "rte")
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.epochs=1", "--overwrite") == 0
    second = result(tmp_path, tiny_bert, "rte")
    assert second["task"]["settings"]["runs_trained_now"] == 0
    assert second["details"]["runs"][0]["from_cache"]
    assert second["metrics"]["accuracy"] == first["metrics"]["accuracy"]


def test_seeds_are_kept_one_by_one_with_only_the_representative_checkpoint(
    tmp_path: Path, tiny_bert: Path
) -> None:
    write_rte(tmp_path / "data")
    args = ["--task-arg", "rte.protocol=tupe2021", "--task-arg", "rte.learning_rate=1e-4"]
    args += ["--task-arg", "rte.seeds=3", "--task-arg", "rte.epochs=1"]
    assert run(tmp_path, tiny_bert, "rte", *args) == 0
    out = result(tmp_path, tiny_bert, "rte")
    assert [r["seed"] for r in out["details"]["runs"]] == [0, 1, 2]
    assert out["details"]["aggregate"]["combine"] == "median"
    per_rate = out["details"]["per_rate"]["0.0001"]["accuracy"]
    assert per_rate["n"] == 3 and out["metrics"]["accuracy"]["value"] == per_rate["median"]
    assert len(cached(tmp_path, "finetune-run")) == 3
    assert len(cached(tmp_path, "finetune-checkpoint")) == 1


def test_a_group_option_reaches_its_members_and_a_task_option_wins(
    tmp_path: Path, tiny_bert: Path
) -> None:
    write_rte(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "glue.epochs=3") == 0
    assert len(result(tmp_path, tiny_bert, "rte")["details"]["runs"][0]["epochs"]) == 3
    args = ["--task-arg", "glue.epochs=3", "--task-arg", "rte.epochs=1", "--overwrite"]
    assert run(tmp_path, tiny_bert, "rte", *args) == 0
    assert len(result(tmp_path, tiny_bert, "rte")["details"]["runs"][0]["epochs"]) == 1


def test_cross_validation_predicts_every_example_once(tmp_path: Path, tiny_bert: Path) -> None:
    write_mr(tmp_path / "data")
    assert (
        run(tmp_path, tiny_bert, "mr", "--task-arg", "mr.folds=3", "--task-arg", "mr.epochs=1") == 0
    )
    out = result(tmp_path, tiny_bert, "mr")
    assert out["metrics"]["accuracy"]["n"] == 30 and "dev_accuracy" in out["metrics"]
    assert len(out["details"]["runs"][0]["folds"]) == 3
    assert len({row["id"] for row in example_rows(tmp_path, out)}) == 30
    assert len(cached(tmp_path, "finetune-run")) == 3 and not cached(
        tmp_path, "finetune-checkpoint"
    )


def test_positional_mode_fine_tunes_and_says_how_its_split_was_made(
    tmp_path: Path, tiny_bert: Path
) -> None:
    write_rte(tmp_path / "data")
    args = ["--mode", "positional", "--model-arg", "absolute=mean-word-stream"]
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.epochs=1", *args) == 0
    out = result(tmp_path, tiny_bert, "rte", "positional")
    assert "held fixed during fine-tuning" in out["task"]["settings"]["mode_statistics"]


def test_snli_drops_unlabelled_pairs_and_its_classifier_is_reused_untrained(
    tmp_path: Path, tiny_bert: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_snli(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "snli", "--task-arg", "snli.epochs=1") == 0
    out = result(tmp_path, tiny_bert, "snli")
    assert out["details"]["data"]["train"]["dropped"] == {"no gold label": 1}
    assert {"accuracy", "dev_accuracy"} <= set(out["metrics"])

    import posharness.tasks.finetune.runs as runs
    from posharness.contracts.model_spec import LoadOptions
    from posharness.contracts.task import TaskContext
    from posharness.models.hf.adapter import HFEncoderAdapter
    from posharness.storage.cache import FeatureCache
    from posharness.tasks.finetune.task import fine_tune_task

    def no_training(*args, **kwargs):
        raise AssertionError("the cached SNLI classifier should have been reused")

    monkeypatch.setattr(runs, "fine_tune", no_training)
    task = fine_tune_task("snli")
    options = dict(task.spec.defaults, epochs=1, bootstrap=200)
    ctx = TaskContext(
        mode=__import__("posharness.contracts.adapter", fromlist=["Mode"]).Mode.BOTH,
        seed=0,
        device="cpu",
        batch_size="auto",
        limit=None,
        cache=FeatureCache(tmp_path / "cache"),
        artifact_dir=tmp_path / "unused",
        options=options,
        make_encoder=lambda want: None,  # type: ignore[arg-type,return-value]
        progress=lambda label, total: lambda n: None,
        data_dir=tmp_path / "data",
    )
    model = HFEncoderAdapter(tiny_bert, LoadOptions(dtype="float32", device="cpu"))
    classifier = task.trained_classifier(model, ctx)
    assert classifier.model.classifier.out_features == 3 and not classifier.training


def test_a_malformed_row_fails_in_one_line_before_training_and_caches_nothing(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rte(tmp_path / "data", bad="3\tonly two columns")
    assert run(tmp_path, tiny_bert, "rte") == 2
    err = one_line_error(capsys)
    assert "train.tsv:5" in err and "columns" in err
    assert not (tmp_path / "cache").exists() or not list(
        (tmp_path / "cache").rglob("*.safetensors")
    )
    assert not list((tmp_path / "results").rglob("*.json"))


def test_an_unknown_label_is_named_with_its_file_and_line(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rte(tmp_path / "data", bad="3\tthe man plays\tthe dog runs\tmaybe")
    assert run(tmp_path, tiny_bert, "rte") == 2
    err = one_line_error(capsys)
    assert "train.tsv:5" in err and "maybe" in err


def test_a_missing_split_says_what_to_download_and_where(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rte(tmp_path / "data")
    (tmp_path / "data" / "glue_data" / "RTE" / "train.tsv").unlink()
    assert run(tmp_path, tiny_bert, "rte") == 2
    err = one_line_error(capsys)
    assert "train" in err and "glue_data/RTE" in err


def test_bad_options_are_refused_before_any_model_loads(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rte(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.protocol=fast") == 2
    assert "quick, chen2023, tupe2021" in one_line_error(capsys)
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.keep_checkpoints=some") == 2
    assert "selected, all, none" in one_line_error(capsys)


def test_limit_cuts_evaluation_and_train_limit_cuts_training(
    tmp_path: Path, tiny_bert: Path
) -> None:
    write_rte(tmp_path / "data")
    assert run(tmp_path, tiny_bert, "rte", "--task-arg", "rte.epochs=1", "--limit", "4") == 0
    limited_eval = result(tmp_path, tiny_bert, "rte", suffix="__limit4")
    train_rows = limited_eval["details"]["data"]["train"]["examples"]
    assert limited_eval["metrics"]["accuracy"]["n"] == 4
    assert limited_eval["limit"] == 4 and limited_eval["train_limit"] is None
    args = ["--task-arg", "rte.epochs=1", "--limit", "4", "--train-limit", "6"]
    assert run(tmp_path, tiny_bert, "rte", *args) == 0
    both = result(tmp_path, tiny_bert, "rte", suffix="__limit4__train6")
    assert both["details"]["data"]["train"]["examples"] == 6 < train_rows
    assert both["train_limit"] == 6
