"""``posharness run --executor ray`` on a local Ray cluster the test starts (issue 20).

The grid run on Ray must give the serial run's numbers cell for cell, including a
fine-tune cell whose two protocol runs are trained as separate Ray tasks and assembled
from the per-run cache; bad input is one line within seconds; a worker that dies fails
its cell only, and a rerun retries it. Marked ``slow``: starting Ray and its workers
costs tens of seconds on two cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install 'posharness[ray]'")

from tests.cli_helpers import cli, one_line_error  # noqa: E402
from tests.unit.tasks.finetune.test_finetune_task import write_rte  # noqa: E402

pytestmark = pytest.mark.slow

GEOMETRY = (
    "--tasks", "locality_symmetry,toeplitz", "--mode", "both,contextual,positional",
    "--model-arg", "absolute=mean-word-stream",
    "--task-arg", "locality_symmetry.words=4", "--task-arg", "locality_symmetry.length=16",
    "--task-arg", "locality_symmetry.bootstrap=0",
    "--task-arg", "toeplitz.words=4", "--task-arg", "toeplitz.length=16",
    "--task-arg", "toeplitz.controls=2",
)  # fmt: skip
FINETUNE = (
    "--tasks", "rte", "--task-arg", "rte.seeds=2", "--task-arg", "rte.epochs=1",
    "--task-arg", "rte.batch_size=8", "--task-arg", "rte.bootstrap=20",
)  # fmt: skip
DYING_TASK = '''
import os
from posharness.plugins import register_task
from posharness.contracts.task import TaskSpec


@register_task("dies")
class Dies:
    """A task whose process dies: a worker killed by the OOM killer, a segfault."""

    spec = TaskSpec("dies", "1", "test", "kills its worker", "x")

    def run(self, model, ctx):
        os._exit(3)
'''


def posharness(out: Path, model: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [
        sys.executable, "-m", "posharness", "run", "--model", f"hf:{model}", "--device", "cpu",
        "--output-dir", str(out / "results"), "--cache-dir", str(out / "cache"),
        "--leaderboard", str(out / "board.json"), *args,
    ]  # fmt: skip
    return subprocess.run(command, capture_output=True, text=True, timeout=900)


def metrics(out: Path) -> dict[str, dict]:
    found = {}
    for path in sorted((out / "results").rglob("*.json")):
        data = json.loads(path.read_text())
        if "cell_id" in data:
            found[path.name] = (data["cell_id"], data["metrics"])
    return found


def test_the_grid_on_ray_gives_the_serial_numbers(tmp_path: Path, tiny_bert: Path) -> None:
    for out in (tmp_path / "serial", tmp_path / "ray"):
        write_rte(out / "data")
    serial = tmp_path / "serial"
    data = ("--data-dir", str(serial / "data"))
    assert posharness(serial, tiny_bert, *GEOMETRY).returncode == 0
    assert posharness(serial, tiny_bert, *FINETUNE, *data).returncode == 0

    distributed = tmp_path / "ray"
    data = ("--data-dir", str(distributed / "data"))
    proc = posharness(distributed, tiny_bert, *GEOMETRY, "--executor", "ray")
    assert proc.returncode == 0, proc.stderr[-3000:]
    proc = posharness(distributed, tiny_bert, *FINETUNE, *data, "--executor", "ray")
    assert proc.returncode == 0, proc.stderr[-3000:]

    ours, theirs = metrics(distributed), metrics(serial)
    assert len(ours) == 3 * 2 + 1 and ours.keys() == theirs.keys()
    for name in ours:  # the data folders differ in path, not in content
        assert ours[name][1] == theirs[name][1], name
    rte = json.loads(next((distributed / "results").rglob("rte__both__seed0.json")).read_text())
    settings = rte["task"]["settings"]
    assert settings["runs"] == 2 and settings["runs_trained_now"] == 0  # trained by run jobs
    board = json.loads((distributed / "board.json").read_text())
    assert len(board["rows"]) == 3


def test_a_dead_worker_fails_its_cell_only_and_a_rerun_retries_it(
    tmp_path: Path, tiny_bert: Path
) -> None:
    plugin = tmp_path / "dies.py"
    plugin.write_text(DYING_TASK)
    args = (
        "--tasks", "locality_symmetry,dies", "--task-arg", "locality_symmetry.words=4",
        "--task-arg", "locality_symmetry.length=16", "--task-arg", "locality_symmetry.bootstrap=0",
        "--executor", "ray", "--include", str(plugin),
    )  # fmt: skip
    first = posharness(tmp_path, tiny_bert, *args)
    assert first.returncode == 1, first.stderr[-3000:]
    assert "1 cell(s) failed, 1 finished" in first.stderr and "dies" in first.stderr
    assert "Traceback" not in first.stderr
    assert [name for name in metrics(tmp_path)] == ["locality_symmetry__both__seed0.json"]
    assert len(json.loads((tmp_path / "board.json").read_text())["rows"]) == 1
    again = posharness(tmp_path, tiny_bert, *args)
    assert again.returncode == 1 and "1 cell(s) failed, 1 finished" in again.stderr
    assert "skip" in again.stdout  # the finished cell is not run again; the dead one is


def test_an_unreachable_ray_address_is_one_line(
    tmp_path: Path, tiny_bert: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli(
        "run", "--model", f"hf:{tiny_bert}", "--tasks", "locality_symmetry",
        "--output-dir", str(tmp_path), "--executor", "ray", "--ray-address", "127.0.0.1:9",
    )  # fmt: skip
    assert code == 2
    assert "--ray-address 127.0.0.1:9: nothing answers there" in one_line_error(capsys)


def test_a_gpu_request_on_a_cluster_without_gpus_is_one_line(
    tmp_path: Path, tiny_bert: Path
) -> None:
    proc = posharness(
        tmp_path, tiny_bert, "--tasks", "locality_symmetry", "--executor", "ray",
        "--gpus-per-cell", "1",
    )  # fmt: skip
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert "--gpus-per-cell 1: no node of this Ray cluster has that many GPUs" in lines[-1]
    assert "Traceback" not in proc.stderr


def test_ray_missing_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    code = cli("run", "--model", "minilm", "--tasks", "toeplitz", "--executor", "ray")
    assert code == 2
    assert "pip install 'posharness[ray]'" in one_line_error(capsys)
