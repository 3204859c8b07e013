"""Data-parallel pretraining (issue 30, part 1): a 2-process gloo launch of
``posharness pretrain`` equals the 1-process run with the same global batch, writes one
set of files, and a launch killed with SIGKILL resumes on another number of processes
to the loss curve of an uninterrupted run. Dropout is off in these runs: each process
draws dropout masks for its own rows, which no split can match (docs/pretraining.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from posharness.base.errors import OptionError
from posharness.models.pretrain.loop import pretrain
from posharness.models.pretrain.parallel import Layout, layout_for
from tests.unit.core.test_data_parallel import free_port
from tests.unit.models.pretrain.test_pretrain_loop import (
    dropout_free_bert,
    losses,
    settings,
    tiny_bert,
)

pytestmark = pytest.mark.usefixtures("one_thread")  # tests/unit/models/conftest.py

STEPS = 6
NO_DROPOUT = ("hidden_dropout_prob=0", "attention_probs_dropout_prob=0")
VOCABULARY = ("--vocab-size", "5000")  # more than the toy corpus yields: a warning


def run_pretrain(
    out: Path,
    corpus: Path,
    processes: int,
    *extra: str,
    kill_at: str | None = None,
    environment: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    launcher = [sys.executable]
    if processes > 1:
        launcher += [
            "-m", "torch.distributed.run", f"--nproc-per-node={processes}",
            "--master-addr=127.0.0.1", f"--master-port={free_port()}",
        ]  # fmt: skip
    command = [
        *launcher, "-m", "posharness", "pretrain", "--model", "bert-a", "--size", "tiny",
        "--corpus", str(corpus), "--steps", str(STEPS), "--batch-size", "8",
        "--block-size", "16", "--vocab-size", "100", "--save-every", "3", "--log-every", "1",
        "--device", "cpu", "--out", str(out), "--prepared-dir", str(out.parent / "corpora"),
        *(arg for option in NO_DROPOUT for arg in ("--model-arg", option)), *extra,
    ]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1", "POSHARNESS_RUNS": str(out.parent / "runs")}
    for name in ("WORLD_SIZE", "RANK", "LOCAL_RANK", "POSHARNESS_KILL_AT"):
        env.pop(name, None)
    if kill_at:
        env["POSHARNESS_KILL_AT"] = kill_at
    env |= environment or {}
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env=env)


def final_weights(out: Path) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return load_file(str(out / "final" / "model.safetensors"))


def test_two_processes_equal_one_with_the_same_global_batch(corpus, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    proc = run_pretrain(one, corpus, 1, *VOCABULARY)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run_pretrain(two, corpus, 2, *VOCABULARY)
    assert proc.returncode == 0, proc.stderr[-2000:]

    assert len(losses(two / "loss_log.json")) == STEPS
    assert losses(two / "loss_log.json") == pytest.approx(losses(one / "loss_log.json"), rel=1e-5)
    mine, reference = final_weights(two), final_weights(one)
    for name, weights in reference.items():
        torch.testing.assert_close(mine[name], weights, rtol=1e-4, atol=1e-5)
    log = json.loads((two / "loss_log.json").read_text())
    assert log["sessions"] == [
        {
            "from_step": 0,
            "world_size": 2,
            "per_device_batch": 4,
            "accumulation": 1,
            "global_batch": 8,
            "device": "cpu",
        }
    ]
    state = json.loads((two / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["launch"]["world_size"] == 2 and state["tokens_seen"] == 6 * 8 * 16
    # One process wrote: the same files as the single run, nothing half-written.
    names = {p.relative_to(two).as_posix() for p in two.rglob("*")}
    assert names == {p.relative_to(one).as_posix() for p in one.rglob("*")}
    assert proc.stdout.count("6 steps, final loss") == 1  # one process reports
    # Warnings once, from the main process (launch_output.py): the corpus yields fewer
    # pieces than --vocab-size asks, which every process used to say.
    assert proc.stderr.count("WordPiece pieces") == 1, proc.stderr[-2000:]


def test_a_killed_launch_resumes_on_another_number_of_processes(corpus, tmp_path):
    straight, killed = tmp_path / "straight", tmp_path / "killed"
    proc = run_pretrain(straight, corpus, 1)
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run_pretrain(killed, corpus, 2, kill_at="pretrain-step:5")  # after checkpoint-3
    assert proc.returncode != 0
    assert sorted(p.name for p in killed.glob("checkpoint-*")) == ["checkpoint-3"]

    proc = run_pretrain(killed, corpus, 1, "--accumulation", "2")  # one process, 2 x 4 rows
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "resumed from step 3" in proc.stdout
    log = json.loads((killed / "loss_log.json").read_text())
    assert [r["step"] for r in log["records"]] == list(range(1, STEPS + 1))
    assert losses(killed / "loss_log.json") == pytest.approx(
        losses(straight / "loss_log.json"), rel=1e-5
    )
    assert [(s["from_step"], s["world_size"], s["accumulation"]) for s in log["sessions"]] == [
        (0, 2, 1),
        (3, 1, 2),
    ]
    mine, reference = final_weights(killed), final_weights(straight)
    for name, weights in reference.items():
        torch.testing.assert_close(mine[name], weights, rtol=1e-4, atol=1e-5)


def test_accumulation_in_one_process_matches_the_whole_batch(tokenizer, corpus, tmp_path):
    whole = pretrain(dropout_free_bert, tokenizer, corpus, tmp_path / "whole", settings())
    split = pretrain(
        dropout_free_bert, tokenizer, corpus, tmp_path / "split", settings(accumulation=4)
    )
    assert losses(split.log_path) == pytest.approx(losses(whole.log_path), rel=1e-5)
    sessions = json.loads(split.log_path.read_text())["sessions"]
    assert [(s["per_device_batch"], s["accumulation"]) for s in sessions] == [(2, 4)]


def test_a_global_batch_the_launch_cannot_split_names_the_accumulations_that_can(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    with pytest.raises(OptionError, match=r"use --accumulation 1 \(per-device batch 12\), 2"):
        layout_for(24, 5)
    monkeypatch.setenv("WORLD_SIZE", "3")
    with pytest.raises(OptionError, match="multiple of 3"):
        layout_for(32, 1)
    layout = layout_for(24, 2)
    assert (layout.per_device_batch, layout.rank) == (4, 1)


def test_each_micro_batch_is_weighted_by_its_share_of_the_masked_tokens():
    layout = Layout(global_batch=8, accumulation=2, world_size=2, rank=1)
    rows = torch.arange(8)
    assert [rows[s].tolist() for s in layout.my_micro_batches()] == [[4, 5], [6, 7]]
    # Means of 3 and 5 masked tokens out of 16, DDP dividing by 2: 2*(3+5)/16 per process.
    assert layout.weight(3, 16) == pytest.approx(3 * 2 / 16)
    assert Layout(8, 1, 1, 0).weight(16, 16) == 1.0  # one process: the loss untouched


def test_out_of_device_memory_suggests_the_same_global_batch_by_accumulation(
    tokenizer, corpus, tmp_path
):
    def build(vocabulary: int):
        model = tiny_bert(vocabulary)

        def exhausted(**batch):
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")

        model.forward = exhausted
        return model

    with pytest.raises(OptionError) as refused:
        pretrain(build, tokenizer, corpus, tmp_path / "run", settings(accumulation=2))
    message = str(refused.value)
    assert "out of device memory at step 1 with a per-device batch of 4" in message
    assert "keep --batch-size 8 and raise --accumulation to 4 (per-device batch 2" in message
    assert "\n" not in message


def test_an_fsdp_launch_is_refused_in_one_line(monkeypatch):
    from posharness.models.pretrain.parallel import accelerator

    monkeypatch.setenv("ACCELERATE_USE_FSDP", "true")
    with pytest.raises(OptionError, match="does not run under FSDP yet"):
        accelerator("cpu", "no", False)
