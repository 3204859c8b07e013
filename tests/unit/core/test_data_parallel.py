"""Data-parallel cells under a two-process launch on the CPU (gloo) (issue 20, part 3).

Two processes share a cell's batches: encoding gives every process the single-process
outputs in the single-process order, a fine-tune without dropout gives the same metrics
and predictions (weights and losses to float tolerance: DDP adds the two halves of each
gradient in another order), and ``posharness run`` under ``torchrun`` leaves exactly the
files of a single-process run, with the same metrics, written by the main process alone.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

pytest.importorskip("accelerate", reason="accelerate is not installed: pip install accelerate")

from posharness.base.errors import DistributedLaunchError  # noqa: E402
from posharness.compute.batching import BatchedEncoder  # noqa: E402
from posharness.contracts.adapter import ATTENTIONS, HIDDEN, Mode  # noqa: E402
from posharness.contracts.model_spec import LoadOptions  # noqa: E402
from posharness.models.hf.adapter import HFEncoderAdapter  # noqa: E402
from posharness.stats.classification import score  # noqa: E402
from posharness.tasks.finetune.engine import (  # noqa: E402
    EncodedSplit,
    TrainingSettings,
    fine_tune,
)
from tests.cli_helpers import cli  # noqa: E402
from tests.unit.tasks.finetune.test_finetune_engine import dog_sentences  # noqa: E402
from tests.unit.tasks.finetune.test_finetune_task import write_rte  # noqa: E402

PROCESSES = 2
SENTENCES = 23  # with batches of 4: six batches, the last one short
SETTINGS = TrainingSettings(learning_rate=1e-2, epochs=2, batch_size=8, warmup_ratio=0.1)
TRAIN = 57  # seven batches of 8 and one of a single example: process 1 gets none of it


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def without_dropout(tiny_bert: Path, folder: Path) -> Path:
    """The tiny checkpoint with dropout off: training is then a function of the data."""
    shutil.copytree(tiny_bert, folder)
    config = json.loads((folder / "config.json").read_text())
    config.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def adapter(folder: Path) -> HFEncoderAdapter:
    return HFEncoderAdapter(folder, LoadOptions(dtype="float32", device="cpu"))


def encode_everything(folder: Path) -> dict[str, Any]:
    """Every batch the encoder yields (indices, last hidden layer, first attention map),
    and how many forward passes this process ran."""
    model = adapter(folder)
    texts, _ = dog_sentences(SENTENCES, seed=3)
    items = model.tokenize_pairs(texts, None, 64)
    passes = [0]
    forward = model.encode

    def counted(*args: Any) -> Any:
        passes[0] += 1
        return forward(*args)

    model.encode = counted  # type: ignore[method-assign]
    encoder = BatchedEncoder(model, Mode.BOTH, frozenset({HIDDEN, ATTENTIONS}), batch_size=4)
    batches = []
    for indices, output in encoder.batches(items):
        assert output.hidden_states is not None and output.attentions is not None
        batches.append((indices, output.hidden_states[-1].clone(), output.attentions[0].clone()))
    return {"batches": batches, "passes": passes[0], "sizes": encoder.log.sizes_used}


def train_without_dropout(folder: Path) -> dict[str, Any]:
    model = adapter(folder)

    def part(name: str, n: int, seed: int) -> EncodedSplit:
        texts, labels = dog_sentences(n, seed)
        items = model.tokenize_pairs(texts, None, 64)
        return EncodedSplit(name, items, labels, [f"{name}{i}" for i in range(n)])

    outcome = fine_tune(
        lambda: model.for_classification(2, Mode.BOTH),
        part("train", TRAIN, 0),
        part("dev", 21, 1),
        [part("test", 15, 2)],
        SETTINGS,
        regression=False,
        scorer=lambda gold, predicted: score(("accuracy",), gold, predicted),
        selection_metric="accuracy",
        pad_token_id=model.pad_token_id,
        eval_batch_size=4,
    )
    return {
        "epochs": outcome.epochs,
        "best_epoch": outcome.best_epoch,
        "predictions": outcome.predictions,
        "state": outcome.state,
        "train_examples": outcome.train_examples,
    }


def _process(rank: int, port: int, folder: str, out: str) -> None:
    """One process of the launch (what ``torchrun`` would start), spawned by the test."""
    os.environ.update(
        WORLD_SIZE=str(PROCESSES),
        RANK=str(rank),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(PROCESSES),
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
    )
    torch.set_num_threads(1)
    found = {
        "encoded": encode_everything(Path(folder)),
        "tuned": train_without_dropout(Path(folder)),
    }
    torch.save(found, Path(out) / f"rank{rank}.pt")


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory, tiny_bert: Path) -> dict[str, Any]:
    """The single-process results and each launched process's, from one launch."""
    import torch.multiprocessing as mp

    root = tmp_path_factory.mktemp("data-parallel")
    folder = without_dropout(tiny_bert, root / "model")
    mp.spawn(_process, args=(free_port(), str(folder), str(root)), nprocs=PROCESSES, join=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the processes' setting, so float sums run alike
    try:
        single = {"encoded": encode_everything(folder), "tuned": train_without_dropout(folder)}
    finally:
        torch.set_num_threads(threads)
    ranks = [torch.load(root / f"rank{r}.pt", weights_only=False) for r in range(PROCESSES)]
    return {"single": single, "ranks": ranks}


def test_encoding_gives_every_process_the_single_process_batches_in_order(
    launched: dict[str, Any],
) -> None:
    single = launched["single"]["encoded"]
    for found in (r["encoded"] for r in launched["ranks"]):
        assert [b[0] for b in found["batches"]] == [b[0] for b in single["batches"]]
        assert found["sizes"] == single["sizes"] == [4, 4, 4, 4, 4, 3]
        for (_, hidden, attention), (_, hidden1, attention1) in zip(
            found["batches"], single["batches"], strict=True
        ):
            torch.testing.assert_close(hidden, hidden1, atol=1e-5, rtol=0)
            torch.testing.assert_close(attention, attention1, atol=1e-5, rtol=0)
    # the work was shared: batch k ran on process k mod 2
    assert [r["encoded"]["passes"] for r in launched["ranks"]] == [3, 3]
    indices = [i for batch in single["batches"] for i in batch[0]]
    assert sorted(indices) == list(range(SENTENCES))


def test_a_fine_tune_without_dropout_gives_the_single_process_metrics(
    launched: dict[str, Any],
) -> None:
    single = launched["single"]["tuned"]
    for tuned in (r["tuned"] for r in launched["ranks"]):
        assert tuned["best_epoch"] == single["best_epoch"]
        assert tuned["train_examples"] == single["train_examples"] == 2 * TRAIN
        for epoch, epoch1 in zip(tuned["epochs"], single["epochs"], strict=True):
            assert epoch["accuracy"] == epoch1["accuracy"]  # identical
            assert epoch["train_loss"] == pytest.approx(epoch1["train_loss"], rel=1e-5)
        for name, predicted in single["predictions"].items():
            assert np.array_equal(tuned["predictions"][name], predicted), name
        for name, weights in single["state"].items():
            torch.testing.assert_close(tuned["state"][name], weights, atol=1e-5, rtol=1e-4)
    first, second = (r["tuned"]["state"] for r in launched["ranks"])
    assert all(torch.equal(first[name], second[name]) for name in first)  # DDP: one model


def posharness_run(
    out: Path, model: Path, launcher: list[str], *extra: str
) -> subprocess.CompletedProcess:
    command = [
        *launcher, "-m", "posharness", "run", "--model", f"hf:{model}", "--device", "cpu",
        "--tasks", "locality_symmetry,rte", "--data-dir", str(out / "data"),
        "--output-dir", str(out / "results"), "--cache-dir", str(out / "cache"),
        "--leaderboard", str(out / "board.json"), "--batch-size", "3",
        "--task-arg", "locality_symmetry.words=5", "--task-arg", "locality_symmetry.length=12",
        "--task-arg", "locality_symmetry.bootstrap=0", "--task-arg", "rte.epochs=2",
        "--task-arg", "rte.batch_size=8", "--task-arg", "rte.bootstrap=20", *extra,
    ]  # fmt: skip
    scratch = out / "tmp"
    scratch.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "TMPDIR": str(scratch), "OMP_NUM_THREADS": "1"}
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK"):
        env.pop(name, None)
    return subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)


def files_under(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def test_posharness_run_under_torchrun_writes_one_set_of_files_with_the_same_metrics(
    tmp_path: Path, tiny_bert: Path
) -> None:
    model = without_dropout(tiny_bert, tmp_path / "model")
    single, launched = tmp_path / "single", tmp_path / "launched"
    for out in (single, launched):
        write_rte(out / "data", train=25)  # the last training batch holds one example
    proc = posharness_run(single, model, [sys.executable])
    assert proc.returncode == 0, proc.stderr[-3000:]
    torchrun = [
        sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={PROCESSES}",
        "--master-addr=127.0.0.1", f"--master-port={free_port()}",
    ]  # fmt: skip
    proc = posharness_run(launched, model, torchrun)
    assert proc.returncode == 0, proc.stderr[-3000:]

    ours, theirs = files_under(launched / "results"), files_under(single / "results")
    assert ours.keys() == theirs.keys()  # nothing more: no second copy, no temporary
    assert not [name for name in ours if ".ph-" in name or name.endswith(".tmp")]
    results = [name for name in ours if name.endswith(".json")]
    assert len(results) == 2
    for name in results:
        mine, reference = json.loads(ours[name].read_text()), json.loads(theirs[name].read_text())
        assert mine["cell_id"] == reference["cell_id"]
        assert mine["metrics"] == reference["metrics"], name
    board, board1 = (json.loads((o / "board.json").read_text()) for o in (launched, single))
    assert [row["scores"] for row in board["rows"]] == [row["scores"] for row in board1["rows"]]
    assert not list((launched / "tmp").rglob("posharness-*"))  # process 1's scratch is gone
    assert proc.stdout.count("done ") == 2  # one process reports the cells

    # Every disk check again, now with something on disk: the finished check and the
    # board's admission (a rerun skips both cells), then the cell locks and the cache's
    # existence checks with entries present (--overwrite recomputes from the cache). Each
    # is decided by the main process for all; a process that looked for itself could take
    # another branch around a collective call, and the launch would hang (timeout).
    written = {name: path.read_bytes() for name, path in ours.items()}
    proc = posharness_run(launched, model, torchrun)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "0 cell(s) run, 2 already finished" in proc.stdout
    assert {n: p.read_bytes() for n, p in files_under(launched / "results").items()} == written
    proc = posharness_run(launched, model, torchrun, "--overwrite")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in results:
        again = json.loads((launched / "results" / name).read_text())
        assert again["metrics"] == json.loads(theirs[name].read_text())["metrics"], name
    assert not list((launched / "tmp").rglob("posharness-*"))


def test_a_process_other_than_the_main_one_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from posharness.base.distributed import is_main_process
    from posharness.storage.io import atomic_write_text

    assert is_main_process()  # no launch: the one process writes
    monkeypatch.setenv("TMPDIR", str(tmp_path / "scratch"))
    (tmp_path / "scratch").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    assert not is_main_process()
    atomic_write_text(tmp_path / "results" / "cell.json", "{}")
    assert not (tmp_path / "results").exists()
    assert not list((tmp_path / "scratch").iterdir())
    monkeypatch.setenv("RANK", "0")
    atomic_write_text(tmp_path / "results" / "cell.json", "{}")
    assert (tmp_path / "results" / "cell.json").read_text() == "{}"


def test_a_launch_without_accelerate_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from posharness.base.distributed import join

    monkeypatch.setitem(sys.modules, "accelerate", None)  # import accelerate fails
    join("cpu")  # no launch: nothing to join, nothing imported
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "0")
    with pytest.raises(DistributedLaunchError, match=r"pip install 'posharness\[accelerate\]'"):
        join("cpu")
    code = cli("run", "--model", "hf:/nowhere", "--tasks", "toeplitz", "--device", "cpu",
               "--output-dir", str(tmp_path / "results"))  # fmt: skip
    error = capsys.readouterr().err.strip()
    assert code == 2 and error.count("\n") == 0, error
    assert "posharness[accelerate]" in error
