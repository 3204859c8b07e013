"""Any number of runs on one results folder, one leaderboard and one cache.

The leaderboard is read, merged and written under its lock; a cell is computed and
written under its own, so two runs given the same cell produce one result; a lock dies
with its process. The slow test starts eight ``posharness run`` processes at once, four
on cells of their own and four on cells they share, and checks what they leave.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from posharness.base.errors import OutputError
from posharness.boards import leaderboard as lb
from posharness.contracts.results import Metric, read_result
from posharness.run.config import RunConfig
from posharness.run.plan import plan
from posharness.run.runner import SilentReporter, execute, run
from posharness.storage.cache import FeatureCache
from posharness.storage.io import claimed, exclusive, lock_file_of, sweep_stale_temporaries
from tests.result_factory import save_cell, synthetic_result

GUARD_S = 120  # how long a test waits for a thread or process before calling it stuck


def fresh_board(tmp_path: Path, model: str, board: Path) -> lb.Leaderboard:
    """A one-row board for ``model``, as a run that computed one cell builds it."""
    result = synthetic_result(
        spec=model, fingerprint=f"fp-{model}", task="locality", metrics={"m": Metric(value=0.5)}
    )
    return lb.build([(save_cell(tmp_path / "results", result), result)], "board", board)


def models_on(board: Path) -> list[str]:
    return sorted(row.model for row in lb.load(board).rows)


# -- the lock ------------------------------------------------------------------------------


def test_a_lock_dies_with_the_process_that_held_it(tmp_path):
    target = tmp_path / "board.json"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from posharness.storage.io import exclusive\n"
            f"with exclusive(Path({str(target)!r}), timeout=None, what='test'):\n"
            "    print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError) as refused, exclusive(target, timeout=0, what="board"):
            pass
        message = str(refused.value)
        assert str(lock_file_of(target)) in message and "\n" not in message
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(GUARD_S)
    assert holder.returncode == -signal.SIGKILL
    with exclusive(target, timeout=0, what="board"):  # no stale lock after kill -9
        assert lock_file_of(target).exists()


def test_a_held_lock_is_not_claimed_and_a_free_one_is(tmp_path):
    target = tmp_path / "cell.json"
    with exclusive(target, timeout=0, what="cell"), claimed(target, what="cell") as held:
        assert held is False
    with claimed(target, what="cell") as held:
        assert held is True


def test_lock_files_are_hidden_and_neither_swept_nor_read_as_results(tmp_path):
    board = tmp_path / "results" / "board.json"
    lb.merge_and_save(fresh_board(tmp_path, "m1", board), board)
    lock = lock_file_of(board)
    assert lock.name == ".board.json.lock" and lock.exists()
    assert sweep_stale_temporaries(tmp_path) == 0 and lock.exists()
    found = lb.collect_results(tmp_path / "results")
    assert [read.model.spec for _, read in found] == ["m1"]


# -- the leaderboard merge -----------------------------------------------------------------


def test_a_merge_reads_the_board_under_the_lock_not_before(tmp_path, monkeypatch):
    """Another run saves its row while this merge waits for the lock: both rows stay."""
    import posharness.storage.io as io

    board = tmp_path / "board.json"
    other, mine = fresh_board(tmp_path, "other", board), fresh_board(tmp_path, "mine", board)
    waiting = threading.Event()
    real_file_lock = io._file_lock

    def signalled_file_lock(target, what):
        lock = real_file_lock(target, what)
        real_acquire = lock.acquire

        def acquire(*args, **kwargs):
            waiting.set()
            return real_acquire(*args, **kwargs)

        lock.acquire = acquire
        return lock

    failures: list[BaseException] = []

    def merge_mine() -> None:
        try:
            lb.merge_and_save(mine, board)
        except BaseException as exc:  # reported below, not lost in the thread
            failures.append(exc)

    with exclusive(board, timeout=0, what="board"):
        monkeypatch.setattr(io, "_file_lock", signalled_file_lock)
        merging = threading.Thread(target=merge_mine)
        merging.start()
        assert waiting.wait(GUARD_S)
        lb.save(other, board)  # the other run's save, while this merge waits
    merging.join(GUARD_S)
    assert not merging.is_alive() and failures == []
    assert models_on(board) == ["mine", "other"]


def test_merges_started_together_keep_every_row(tmp_path):
    board = tmp_path / "board.json"
    names = [f"m{i}" for i in range(8)]
    boards = [fresh_board(tmp_path, name, board) for name in names]
    start = threading.Barrier(len(boards))
    failures: list[BaseException] = []

    def merge(fresh: lb.Leaderboard) -> None:
        start.wait(GUARD_S)
        try:
            lb.merge_and_save(fresh, board)
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=merge, args=(b,)) for b in boards]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GUARD_S)
    assert failures == []
    assert models_on(board) == names


def test_a_board_held_too_long_is_one_line_naming_the_lock(tmp_path):
    board = tmp_path / "board.json"
    with exclusive(board, timeout=0, what="board"), pytest.raises(OutputError) as refused:
        lb.merge_and_save(fresh_board(tmp_path, "m1", board), board, timeout=0)
    assert str(lock_file_of(board)) in str(refused.value)
    assert not board.exists()


# -- cells held by another process ---------------------------------------------------------


def geometry_config(tiny_bert: Path, output_dir: Path, cache_dir: Path) -> RunConfig:
    return RunConfig(
        models=[f"hf:{tiny_bert}"],
        tasks=["locality_symmetry", "toeplitz"],
        output_dir=output_dir,
        cache_dir=cache_dir,
        device="cpu",
        task_args={
            "locality_symmetry": {"length": "16", "words": "6", "figures": "false"},
            "toeplitz": {"length": "16", "words": "6", "controls": "3", "figures": "false"},
        },
    )


class Recorder(SilentReporter):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.finished = threading.Event()

    def cell_skipped(self, cell) -> None:
        self.events.append(("skipped", cell.task.spec.name))

    def cell_started(self, cell, index: int, total: int) -> None:
        self.events.append(("started", cell.task.spec.name))

    def cell_finished(self, cell, result) -> None:
        self.events.append(("finished", cell.task.spec.name))
        self.finished.set()


def test_a_cell_another_process_holds_waits_and_is_read_back_when_it_finishes(tiny_bert, tmp_path):
    elsewhere = run(geometry_config(tiny_bert, tmp_path / "elsewhere", tmp_path / "cache"))
    config = geometry_config(tiny_bert, tmp_path / "shared", tmp_path / "cache")
    held = next(c for c in plan(config, "cpu") if c.task.spec.name == "locality_symmetry")
    reporter, outcomes, failures = Recorder(), [], []

    def run_shared() -> None:
        try:
            outcomes.extend(run(config, reporter))
        except BaseException as exc:
            failures.append(exc)

    with exclusive(held.path, timeout=0, what="cell"):  # another process computes it
        runner = threading.Thread(target=run_shared)
        runner.start()
        assert reporter.finished.wait(GUARD_S)  # the free cell ran while that one was held
        shutil.copyfile(elsewhere[0].cell.path, held.path)  # the other process's result
    runner.join(GUARD_S)
    assert failures == []
    assert reporter.events == [
        ("started", "toeplitz"),
        ("finished", "toeplitz"),
        ("skipped", "locality_symmetry"),
    ]
    assert [o.skipped for o in outcomes] == [True, False]
    assert outcomes[0].result == read_result(elsewhere[0].cell.path)


def test_execute_reads_back_a_cell_finished_before_it_got_the_lock(tiny_bert, tmp_path):
    config = geometry_config(tiny_bert, tmp_path / "results", tmp_path / "cache")
    cell = run(config)[0].cell
    before = cell.path.read_bytes()
    again = execute(cell, config, "cpu", FeatureCache(None), SilentReporter())
    assert again == read_result(cell.path) and cell.path.read_bytes() == before


# -- eight processes -----------------------------------------------------------------------

TASK_ARGS = {  # small probes: each cell takes well under a second once the model is loaded
    "locality_symmetry": ["words=6", "length=16"],
    "toeplitz": ["words=6", "length=16", "controls=3"],
}
OWN_CELLS = [  # (tasks, modes): one cell each, no two alike
    ("locality_symmetry", "both"),
    ("locality_symmetry", "positional"),
    ("toeplitz", "both"),
    ("toeplitz", "positional"),
]
SHARED_CELLS = [("locality_symmetry,toeplitz", "both,positional,contextual")] * 4
JOBS = OWN_CELLS + SHARED_CELLS  # benchmarks/concurrent_runs.py times the same eight
MODES = ["both", "contextual", "positional"]
TASKS = ["locality_symmetry", "toeplitz"]


def run_command(model: Path, out: Path, tasks: str, modes: str) -> list[str]:
    return [
        sys.executable, "-m", "posharness", "run", "--model", f"hf:{model}",
        "--model-arg", "absolute=mean-word-stream", "--tasks", tasks, "--mode", modes,
        "--device", "cpu", "--batch-size", "2", *task_args(tasks),
        "--output-dir", str(out / "results"), "--cache-dir", str(out / "cache"),
        "--leaderboard", str(out / "board.json"),
    ]  # fmt: skip


def task_args(tasks: str) -> list[str]:
    return [
        arg
        for task in tasks.split(",")
        for option in TASK_ARGS[task]
        for arg in ("--task-arg", f"{task}.{option}")
    ]


def start_all(commands: list[list[str]], logs: Path) -> list[tuple[int, str]]:
    """Every command started before any is waited for; each one's exit status and output.
    Output goes to files: a run blocked on a full pipe while it holds a cell's lock would
    stall every run waiting for that cell."""
    env = {**os.environ, "MPLBACKEND": "Agg", "HF_HUB_OFFLINE": "1"}
    logs.mkdir()
    files = [(logs / f"run{i}.log").open("w+") for i in range(len(commands))]
    procs = [
        subprocess.Popen(c, env=env, stdout=f, stderr=subprocess.STDOUT)
        for c, f in zip(commands, files, strict=True)
    ]
    done = []
    for proc, handle in zip(procs, files, strict=True):
        code = proc.wait(GUARD_S * 5)
        handle.seek(0)
        done.append((code, handle.read()))
        handle.close()
    return done


def leftovers(out: Path) -> list[str]:
    """Temporaries and write probes; lock files are expected and named as documented."""
    found = [p for p in out.rglob("*") if p.is_file()]
    stale = [
        str(p)
        for p in found
        if "ph-" in p.name or p.suffix in {".tmp", ".probe"} or "write-test" in p.name
    ]
    stale += [str(p) for p in found if p.name.endswith(".lock") and not p.name.startswith(".")]
    return stale


@pytest.mark.slow
def test_eight_runs_at_once_on_one_folder_board_and_cache(tiny_bert, tmp_path):
    commands = [run_command(tiny_bert, tmp_path, t, m) for t, m in JOBS]
    for code, output in start_all(commands, tmp_path / "logs"):
        assert code == 0, output[-2000:]
    results = [
        p for p in (tmp_path / "results").rglob("*.json") if "cell_id" in json.loads(p.read_text())
    ]
    assert len(results) == len(TASKS) * len(MODES)  # one file per cell, however many ran it
    for path in results:
        result = read_result(path)
        if result.task.name == "locality_symmetry":  # the task that keeps per-word rows
            assert result.examples_file and (path.parent / result.examples_file).is_file()
        assert all((path.parent / a).is_file() for a in result.artifacts)
    board = lb.load(tmp_path / "board.json")
    assert sorted(row.mode for row in board.rows) == MODES
    for row in board.rows:
        assert {key.split("/")[0] for key in row.scores} == set(TASKS)
        assert len(row.results) == len(TASKS)
        assert all((tmp_path / r).is_file() for r in row.results)
    assert leftovers(tmp_path) == []
